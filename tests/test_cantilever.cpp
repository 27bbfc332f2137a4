// A cantilever of BDEM bonds (docs/model.md §9) against beam theory: a
// straight chain of N bonds, clamped at one end (the first particle held in
// position and attitude), under a small transverse tip force F. Each bond is
// a round bar of radius r_b and length l0 = L/N with four springs (9.2), so
// the chain is a discretised Timoshenko beam; its static tip deflection
// must tend to F L^3/(3 E I) + F L/(G S) as N grows, at least as fast as
// 1/N, and be within 5% at N = 40.
//
// The static state is found by Newton's method on the gathered forces and
// moments of the engine's own providers (a finite-difference Jacobian of
// the 6N free degrees of freedom, fine for these sizes), with the tip load
// from fields/load_provider.hpp.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <vector>

#include "bonds/bdem_provider.hpp"
#include "engine/force_field.hpp"
#include "fields/load_provider.hpp"

using namespace dem;

namespace {

constexpr double kLength = 0.4;      // L (m), clamp centre to tip centre
constexpr double kBondRadius = 0.004;  // r_b (m), the same at every N
constexpr double kE = 1e7, kNu = 0.3;
constexpr double kTipForce = 1e-4;   // N, along -z: a deflection of about 1e-3 L

struct Chain {
  ParticleStore particles;
  ForceField forces;
};

Chain make_chain(int bonds) {
  Chain c;
  const double l0 = kLength / bonds, r = 0.5 * l0;
  for (int i = 0; i <= bonds; ++i) {
    ParticleSpec p;
    p.position = Vec3(i * l0, 0, 0);
    p.diameter = l0;
    p.mass = 1.0;
    p.inertia = 1.0;
    c.particles.add(p);
  }
  BondList list;
  for (int i = 0; i < bonds; ++i) list.add(c.particles, i, i + 1, BondStiffness{});
  BdemMaterial m;
  m.youngs_modulus = kE;
  m.poisson_ratio = kNu;
  m.bond_radius_factor = kBondRadius / r;
  const std::vector<BdemMaterial> mats = {m};
  c.forces.add(std::make_unique<BdemBondProvider>(c.particles, std::move(list), mats));
  c.forces.add(std::make_unique<LoadProvider>(c.particles, std::vector<std::uint32_t>{static_cast<std::uint32_t>(bonds)},
                                              std::vector<Vec3>{Vec3(0, 0, -kTipForce)}));
  return c;
}

/// Moves the free particles (1..N) by dq = (dx, phi) per particle.
void displace(ParticleStore& s, const Eigen::VectorXd& dq) {
  for (std::size_t i = 1; i < s.size(); ++i) {
    const Eigen::Index o = 6 * static_cast<Eigen::Index>(i - 1);
    s.position[i] += dq.segment<3>(o);
    const Vec3 phi = dq.segment<3>(o + 3);
    const double a = phi.norm();
    if (a > 0) s.attitude[i] = (Quat(Eigen::AngleAxisd(a, phi / a)) * s.attitude[i]).normalized();
  }
}

Eigen::VectorXd residual(ForceField& f, ParticleStore& s) {
  f.compute(s);
  Eigen::VectorXd r(6 * static_cast<Eigen::Index>(s.size() - 1));
  for (std::size_t i = 1; i < s.size(); ++i) {
    r.segment<3>(6 * static_cast<Eigen::Index>(i - 1)) = s.force[i];
    r.segment<3>(6 * static_cast<Eigen::Index>(i - 1) + 3) = s.moment[i];
  }
  return r;
}

/// Static tip deflection (-z, m) of the chain under the tip load.
double tip_deflection(int bonds) {
  Chain c = make_chain(bonds);
  ParticleStore& s = c.particles;
  const Eigen::Index n = 6 * bonds;
  const double l0 = kLength / bonds;
  for (int it = 0; it < 8; ++it) {
    const Eigen::VectorXd r0 = residual(c.forces, s);
    if (r0.norm() < 1e-13) break;
    Eigen::MatrixXd jac(n, n);
    for (Eigen::Index k = 0; k < n; ++k) {
      const double eps = (k % 6 < 3) ? 1e-7 * l0 : 1e-7;
      Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
      ParticleStore plus = s, minus = s;
      e[k] = eps;
      displace(plus, e);
      e[k] = -eps;
      displace(minus, e);
      jac.col(k) = (residual(c.forces, plus) - residual(c.forces, minus)) / (2 * eps);
    }
    const Eigen::VectorXd dq = jac.partialPivLu().solve(-r0);
    displace(s, dq);
  }
  EXPECT_LT(residual(c.forces, s).norm(), 1e-6 * kTipForce) << "Newton did not converge, N = " << bonds;
  return -(s.position.back().z() - s.reference_position.back().z());
}

double timoshenko() {
  const double I = M_PI * std::pow(kBondRadius, 4) / 4, S = M_PI * kBondRadius * kBondRadius;
  const double G = kE / (2 * (1 + kNu));
  return kTipForce * std::pow(kLength, 3) / (3 * kE * I) + kTipForce * kLength / (G * S);
}

}  // namespace

TEST(Cantilever, TipDeflectionTendsToTimoshenkoAtLeastAsOneOverN) {
  const double exact = timoshenko();
  std::vector<double> rel;
  for (int n : {10, 20, 40}) {
    const double d = tip_deflection(n);
    rel.push_back(std::abs(d - exact) / exact);
    std::printf("cantilever: N = %2d bonds, tip deflection %.6e m, Timoshenko %.6e m, relative difference %.4f\n",
                n, d, exact, rel.back());
  }
  // Each doubling of N at least halves the difference (1/N or faster).
  EXPECT_LE(rel[1], 0.5 * rel[0] * 1.02);
  EXPECT_LE(rel[2], 0.5 * rel[1] * 1.02);
  EXPECT_LT(rel[2], 0.05);
}
