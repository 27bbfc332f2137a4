// Contact and wall Hessians for the implicit integrator (docs/model.md §12.4): the
// closed forms of ContactProvider::element_hessians (penalty and Hertz pair
// laws, exact and projected) and WallProvider::add_body_hessians (penalty and
// Hertz walls) against second differences of the providers' own energies.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "contact/contact_laws.hpp"
#include "contact/contact_provider.hpp"
#include "contact/plane_wall_law.hpp"
#include "contact/wall_provider.hpp"

using namespace dem;

namespace {

ParticleStore pair_at(const Vec3& xi, const Vec3& xj, double ri, double rj) {
  ParticleStore s;
  ParticleSpec a, b;
  a.position = xi;
  a.diameter = 2 * ri;
  b.position = xj;
  b.diameter = 2 * rj;
  s.add(a);
  s.add(b);
  return s;
}

double energy_of(ForceProvider& p, ParticleStore s) {
  p.rebuild(s);
  p.evaluate(s);
  EnergyReport r;
  p.add_potential_energies(s, r);
  return r.total();
}

/// Second differences of the energy in (x_i, x_j) (6x6).
Eigen::Matrix<double, 6, 6> second_differences(ForceProvider& p, const ParticleStore& s, double eps) {
  Eigen::Matrix<double, 6, 6> h;
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 6; ++b) {
      const auto v = [&](double sa, double sb) {
        ParticleStore m = s;
        m.position[a / 3][a % 3] += sa * eps;
        m.position[b / 3][b % 3] += sb * eps;
        return energy_of(p, m);
      };
      h(a, b) = (v(1, 1) - v(1, -1) - v(-1, 1) + v(-1, -1)) / (4 * eps * eps);
    }
  return h;
}

template <class Law>
void check_pair_law(const Law& law, const char* name) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = 0.0;
  for (int n = 0; n < 20; ++n) {
    const double ri = 1.0 + 0.3 * u(rng), rj = 1.0 + 0.3 * u(rng);
    const Vec3 dir = Vec3(u(rng), u(rng), u(rng)).normalized();
    const double gap = (ri + rj) * (0.9 + 0.08 * u(rng));  // overlapping by 2% to 18%
    const ParticleStore s = pair_at(Vec3::Zero(), gap * dir, ri, rj);
    ContactProvider<Law> p(law, 0.5);
    p.rebuild(s);
    p.evaluate(s);
    ASSERT_EQ(p.pair_results().force.size(), 1u);
    std::vector<Mat12> h(1);
    p.element_hessians(s, 0, h, HessianBlocks::exact);
    Eigen::Matrix<double, 6, 6> translation;
    translation << h[0].block<3, 3>(0, 0), h[0].block<3, 3>(0, 6), h[0].block<3, 3>(6, 0), h[0].block<3, 3>(6, 6);
    const Eigen::Matrix<double, 6, 6> fd = second_differences(p, s, 1e-5);
    worst = std::max(worst, (translation - fd).cwiseAbs().maxCoeff() / fd.cwiseAbs().maxCoeff());
    EXPECT_EQ((h[0].block<3, 3>(3, 3).norm()), 0.0);  // no rotation terms
    // Projected: positive semi-definite, equal on the normal direction.
    std::vector<Mat12> hp(1);
    p.element_hessians(s, 0, hp, HessianBlocks::projected);
    EXPECT_GT(Eigen::SelfAdjointEigenSolver<Mat12>(hp[0]).eigenvalues().minCoeff(), -1e-12 * hp[0].norm());
    const Vec3 d = -dir;  // (x_i - x_j)/r
    EXPECT_NEAR(d.dot(hp[0].block<3, 3>(0, 0) * d), d.dot(h[0].block<3, 3>(0, 0) * d), 1e-9 * hp[0].norm());
  }
  std::printf("%s pair Hessian against second differences: %.3e\n", name, worst);
  EXPECT_LT(worst, 1e-5);
}

}  // namespace

TEST(ContactHessian, PenaltyAndHertzPairsMatchSecondDifferences) {
  PenaltyContactLaw penalty;
  penalty.stiffness = 3.0e3;
  check_pair_law(penalty, "penalty");
  HertzContactLaw hertz;
  hertz.stiffness = 2100.0;
  check_pair_law(hertz, "Hertz");
}

TEST(ContactHessian, WallsMatchSecondDifferences) {
  for (const ContactLawEntry& e : contact_laws()) {
    if (!e.plane_walls) continue;  // walls with history: test_law_conformance.cpp
    const PlaneWallLaw& law = *e.plane_walls;
    const Wall w{Vec3(0.1, -0.2, 0.3), Vec3(1, 2, 2).normalized(), 500.0};
    WallProvider p({w}, law);
    ParticleStore s;
    ParticleSpec a;
    a.diameter = 2.0;
    a.position = w.point + 0.85 * w.normal + Vec3(0.3, -0.1, 0.2).cross(w.normal);  // 15% into the wall
    s.add(a);
    std::vector<Mat6> diag(1, Mat6::Zero());
    p.add_body_hessians(s, 0, 1, diag);
    double worst = 0.0;
    const double eps = 1e-5;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const auto v = [&](double si, double sj) {
          ParticleStore m = s;
          m.position[0][i] += si * eps;
          m.position[0][j] += sj * eps;
          return energy_of(p, m);
        };
        const double fd = (v(1, 1) - v(1, -1) - v(-1, 1) + v(-1, -1)) / (4 * eps * eps);
        worst = std::max(worst, std::abs(fd - diag[0](i, j)));
      }
    std::printf("%s wall Hessian against second differences: %.3e of %.3e\n",
                law.name(), worst, diag[0].norm());
    EXPECT_LT(worst, 1e-5 * diag[0].norm());
    EXPECT_EQ((diag[0].block<3, 3>(3, 3).norm()), 0.0);
  }
}
