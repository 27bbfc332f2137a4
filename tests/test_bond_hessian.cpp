// Bond Hessians for the implicit integrator (docs/model.md §12.4,
// bonds/bond_hessian.hpp), BDEM (section 9) and Baker-Gonzalez (section 4):
//  - H_e against second central differences of the bond energy in the
//    coordinates (delta x_i, phi_i, delta x_j, phi_j), R <- exp(S(phi)) R, at
//    random configurations with large relative rotations and shear angles
//    and both quaternion signs, and at rest;
//  - the rotation-block correction: -d tau_i / d phi_i (central differences
//    of the kernel's moment) equals H_e + ½ S(tau_i), and not H_e alone;
//  - the projection to positive semi-definite;
//  - the Gauss-Newton blocks (at the end of the file).
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>

#include "bdem_support.hpp"
#include "bonds/bond_hessian.hpp"

using namespace dem;
using namespace dem::bdem_test;

namespace {

struct Ends {
  Vec3 xi, xj;
  Quat qi, qj;
  Vec3 d0;
};

/// exp(S(phi)) as a quaternion.
Quat turn(const Vec3& phi) {
  const double a = phi.norm();
  if (a == 0.0) return Quat::Identity();
  return Quat(Eigen::AngleAxisd(a, phi / a));
}

/// The ends moved by the 12 coordinates z = (dx_i, phi_i, dx_j, phi_j).
Ends moved(const Ends& e, const Eigen::Matrix<double, 12, 1>& z) {
  Ends m = e;
  m.xi += z.segment<3>(0);
  m.qi = turn(z.segment<3>(3)) * e.qi;
  m.xj += z.segment<3>(6);
  m.qj = turn(z.segment<3>(9)) * e.qj;
  return m;
}

double energy(const Ends& e, const BdemStiffness& k) {
  const BdemBondResult r = bdem_bond(e.xi, e.xj, e.qi, e.qj, e.d0, kL0, k);
  return r.stretch_energy + r.shear_energy + r.bend_twist_energy;
}

Ends ends_of(const Config& c, bool flip_i, bool flip_j) {
  return Ends{c.xi, c.xj, quat_of(c.Qi, flip_i), quat_of(c.Qj, flip_j), c.d0};
}

/// Step of each coordinate: lengths scale with l0, angles are radians.
double step_of(int a) { return (a % 6) < 3 ? 1e-5 * kL0 : 1e-5; }

template <class Energy>
Mat12 second_differences_of(const Ends& e, Energy&& energy) {
  Mat12 h;
  for (int a = 0; a < 12; ++a)
    for (int b = 0; b < 12; ++b) {
      const double ea = step_of(a), eb = step_of(b);
      Eigen::Matrix<double, 12, 1> z = Eigen::Matrix<double, 12, 1>::Zero();
      const auto v = [&](double sa, double sb) {
        z.setZero();
        z[a] += sa * ea;
        z[b] += sb * eb;
        return energy(moved(e, z));
      };
      h(a, b) = (v(1, 1) - v(1, -1) - v(-1, 1) + v(-1, -1)) / (4 * ea * eb);
    }
  return h;
}

Mat12 second_differences(const Ends& e, const BdemStiffness& k) {
  return second_differences_of(e, [&](const Ends& m) { return energy(m, k); });
}

/// Largest |A - B| of each 3x3 block, relative to the largest entry of B's
/// block row and column type (translation or rotation blocks differ in units).
double worst_block_error(const Mat12& a, const Mat12& b) {
  double worst = 0.0;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      double scale = 0.0;
      for (int rr = 0; rr < 4; ++rr)
        for (int cc = 0; cc < 4; ++cc)
          if (rr % 2 == r % 2 && cc % 2 == c % 2)
            scale = std::max(scale, b.block<3, 3>(3 * rr, 3 * cc).cwiseAbs().maxCoeff());
      const double err = (a.block<3, 3>(3 * r, 3 * c) - b.block<3, 3>(3 * r, 3 * c)).cwiseAbs().maxCoeff();
      worst = std::max(worst, err / scale);
    }
  return worst;
}

}  // namespace

TEST(BdemHessian, MatchesSecondDifferencesOfTheEnergyAtLargeRotations) {
  const BdemStiffness k = stiffness();
  std::mt19937_64 rng(1124);
  double worst = 0.0;
  for (int n = 0; n < 60; ++n) {
    const Config c = random_config(rng);
    const Ends e = ends_of(c, n % 2 == 1, n % 3 == 1);
    const Mat12 h = bdem_bond_hessian(e.xi, e.xj, e.qi, e.qj, e.d0, kL0, k);
    const Mat12 fd = second_differences(e, k);
    worst = std::max(worst, worst_block_error(h, fd));
  }
  std::printf("largest block error of H_e against second differences: %.3e\n", worst);
  EXPECT_LT(worst, 1e-4);  // second differences of an energy: round-off near 1e-5
}

TEST(BdemHessian, AtRestIsTheStiffnessOfSection9_6) {
  // At rest (identity attitudes, x_i - x_j = l0 d0) the second differences
  // agree too, and H_e is positive semi-definite with the six rigid motions
  // in its null space.
  const BdemStiffness k = stiffness();
  Ends e{Vec3(kL0, 0, 0), Vec3::Zero(), Quat::Identity(), Quat::Identity(), Vec3::UnitX()};
  const Mat12 h = bdem_bond_hessian(e.xi, e.xj, e.qi, e.qj, e.d0, kL0, k);
  EXPECT_LT(worst_block_error(h, second_differences(e, k)), 1e-5);
  EXPECT_NEAR(h(0, 0), k.normal, 1e-9 * k.normal);
  const Eigen::SelfAdjointEigenSolver<Mat12> eig(h);
  EXPECT_GT(eig.eigenvalues().minCoeff(), -1e-9 * eig.eigenvalues().maxCoeff());
  int zero = 0;
  for (int a = 0; a < 12; ++a) zero += std::abs(eig.eigenvalues()[a]) < 1e-9 * eig.eigenvalues().maxCoeff() ? 1 : 0;
  EXPECT_EQ(zero, 6);
}

TEST(BdemHessian, OwnRotationBlockIsMinusTheMomentJacobianLessHalfSkewOfTheMoment) {
  const BdemStiffness k = stiffness();
  std::mt19937_64 rng(2511);
  double worst_with = 0.0, worst_without = 1e300;
  for (int n = 0; n < 40; ++n) {
    const Ends e = ends_of(random_config(rng), false, n % 2 == 0);
    const Mat12 h = bdem_bond_hessian(e.xi, e.xj, e.qi, e.qj, e.d0, kL0, k);
    const BdemBondResult r0 = bdem_bond(e.xi, e.xj, e.qi, e.qj, e.d0, kL0, k);
    Mat3 dtau;  // d tau_i / d phi_i by central differences of the kernel's moment
    for (int a = 0; a < 3; ++a) {
      const double eps = 1e-6;
      const Quat plus = turn(eps * Vec3::Unit(a)) * e.qi, minus = turn(-eps * Vec3::Unit(a)) * e.qi;
      dtau.col(a) = (bdem_bond(e.xi, e.xj, plus, e.qj, e.d0, kL0, k).moment_i -
                     bdem_bond(e.xi, e.xj, minus, e.qj, e.d0, kL0, k).moment_i) /
                    (2 * eps);
    }
    const Mat3 block = h.block<3, 3>(3, 3);
    const double scale = block.cwiseAbs().maxCoeff();
    worst_with = std::max(worst_with, (-dtau - (block + 0.5 * bdem_test::skew(r0.moment_i))).cwiseAbs().maxCoeff() / scale);
    worst_without = std::min(worst_without, std::max(1e-300, (-dtau - block).cwiseAbs().maxCoeff() / scale));
  }
  std::printf("-dtau_i/dphi_i against H_e + S(tau_i)/2: %.3e; against H_e alone: at least %.3e\n", worst_with,
              worst_without);
  EXPECT_LT(worst_with, 1e-6);
  EXPECT_GT(worst_without, 1e-3);
}

TEST(BdemHessian, ProjectionClampsNegativeEigenvaluesAndKeepsTheRest) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> g(0.0, 1.0);
  Mat12 a;
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 12; ++c) a(r, c) = g(rng);
  Mat12 h = 0.5 * (a + a.transpose());
  const Eigen::SelfAdjointEigenSolver<Mat12> before(h);
  ASSERT_LT(before.eigenvalues().minCoeff(), 0.0);
  project_positive_semidefinite(h);
  const Eigen::SelfAdjointEigenSolver<Mat12> after(h);
  for (int k = 0; k < 12; ++k)
    EXPECT_NEAR(after.eigenvalues()[k], std::max(0.0, before.eigenvalues()[k]), 1e-12 * 12) << k;
  Mat12 spd = a * a.transpose();
  const Mat12 kept = spd;
  project_positive_semidefinite(spd);
  EXPECT_LT((spd - kept).cwiseAbs().maxCoeff(), 1e-12 * kept.cwiseAbs().maxCoeff());
}

TEST(BdemHessian, BondProjectionEqualsTheFullProjection) {
  // The 9x9 projection of project_bond_hessian against the 12x12 one, on
  // bond Hessians at random configurations (many indefinite).
  const BdemStiffness k = stiffness();
  std::mt19937_64 rng(77);
  int indefinite = 0;
  for (int n = 0; n < 100; ++n) {
    const Config c = random_config(rng);
    const Ends e = ends_of(c, n % 2 == 0, false);
    Mat12 a = bdem_bond_hessian(e.xi, e.xj, e.qi, e.qj, e.d0, kL0, k), b = a;
    const Eigen::SelfAdjointEigenSolver<Mat12> eig(a);
    indefinite += eig.eigenvalues().minCoeff() < -1e-9 * eig.eigenvalues().maxCoeff() ? 1 : 0;
    project_positive_semidefinite(a);
    project_bond_hessian(b);
    EXPECT_LT((a - b).cwiseAbs().maxCoeff(), 1e-9 * a.cwiseAbs().maxCoeff()) << n;
  }
  EXPECT_GT(indefinite, 20);
}

TEST(BondHessian, BakerGonzalezBondMatchesSecondDifferencesOfItsEnergy) {
  // The ring torus's bond (K^m 10, K^a = K^s = 200, r0 = D_p) at random
  // large rotations; the same second differences as for BDEM bonds.
  std::mt19937_64 rng(4242);
  double worst = 0.0;
  const double km = 10, ka = 200, ks = 200;
  for (int n = 0; n < 60; ++n) {
    const Config c = random_config(rng);
    const Ends e = ends_of(c, n % 2 == 1, n % 3 == 1);
    const auto bg_energy = [&](const Ends& m) { return bond_all(m.xi, m.xj, m.qi, m.qj, kL0, m.d0, km, ka, ks).energy; };
    const Mat12 h = bond_hessian(e.xi, e.xj, e.qi, e.qj, kL0, e.d0, km, ka, ks);
    worst = std::max(worst, worst_block_error(h, second_differences_of(e, bg_energy)));
  }
  std::printf("Baker-Gonzalez bond: largest block error against second differences %.3e\n", worst);
  EXPECT_LT(worst, 1e-4);
}

// Gauss-Newton blocks (docs/model.md §12.4): sum_k w_k grad e_k grad e_kᵀ
// over each law's strains. The strains are checked against the kernel's
// energy, their Jacobian (central differences, independent of the dual
// numbers) against the kernel's forces, and the blocks against that
// Jacobian; then semi-definiteness and equality with H_e at rest.
namespace {

using Vec12 = Eigen::Matrix<double, 12, 1>;

/// Central differences of a strain function over the 12 coordinates.
template <std::size_t N, class Strains>
Eigen::Matrix<double, static_cast<int>(N), 12> strain_jacobian(const Ends& e, Strains&& strains) {
  Eigen::Matrix<double, static_cast<int>(N), 12> j;
  for (int a = 0; a < 12; ++a) {
    Vec12 z = Vec12::Zero();
    z[a] = step_of(a);
    const std::array<double, N> plus = strains(moved(e, z));
    const std::array<double, N> minus = strains(moved(e, -z));
    for (std::size_t k = 0; k < N; ++k) j(static_cast<int>(k), a) = (plus[k] - minus[k]) / (2 * step_of(a));
  }
  return j;
}

template <std::size_t N>
double weighted_half_square(const std::array<double, N>& e, const std::array<double, N>& w) {
  double v = 0.0;
  for (std::size_t k = 0; k < N; ++k) v += 0.5 * w[k] * e[k] * e[k];
  return v;
}

/// Largest |A - B| with each entry (r, c) scaled by sqrt(D_r D_c), D the
/// largest diagonal entry of B of that coordinate's kind (translation or
/// rotation): B's own scale, also for blocks of B that vanish.
double worst_scaled_error(const Mat12& a, const Mat12& b) {
  double d[2] = {0.0, 0.0};
  for (int r = 0; r < 12; ++r) d[(r % 6) / 3] = std::max(d[(r % 6) / 3], std::abs(b(r, r)));
  double worst = 0.0;
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 12; ++c)
      worst = std::max(worst, std::abs(a(r, c) - b(r, c)) / std::sqrt(d[(r % 6) / 3] * d[(c % 6) / 3]));
  return worst;
}

/// Relative gap of the smallest eigenvalue below zero.
double negative_part(const Mat12& h) {
  const Eigen::SelfAdjointEigenSolver<Mat12> eig(h);
  return -eig.eigenvalues().minCoeff() / eig.eigenvalues().cwiseAbs().maxCoeff();
}

/// Checks one law's Gauss-Newton blocks at `e`: strains against energy,
/// w e J against the generalised force, the blocks against Jᵀ W J, the
/// sign of the smallest eigenvalue. Returns the worst relative errors.
template <std::size_t N, class Strains>
std::array<double, 4> check_gauss_newton(const Ends& e, const std::array<double, N>& w, Strains&& strains,
                                         double energy, const Vec12& force, const Mat12& gn) {
  const std::array<double, N> s = strains(e);
  const auto j = strain_jacobian<N>(e, strains);
  Eigen::Matrix<double, static_cast<int>(N), 1> we;
  for (std::size_t k = 0; k < N; ++k) we[static_cast<int>(k)] = w[k] * s[k];
  const Vec12 gradient = j.transpose() * we;
  Eigen::Matrix<double, static_cast<int>(N), static_cast<int>(N)> wd =
      Eigen::Matrix<double, static_cast<int>(N), static_cast<int>(N)>::Zero();
  for (std::size_t k = 0; k < N; ++k) wd(static_cast<int>(k), static_cast<int>(k)) = w[k];
  const Mat12 jwj = j.transpose() * wd * j;
  return {std::abs(weighted_half_square(s, w) - energy) / std::max(energy, 1e-300),
          (gradient + force).cwiseAbs().maxCoeff() / force.cwiseAbs().maxCoeff(), worst_block_error(gn, jwj),
          negative_part(gn)};
}

void expect_gauss_newton(const std::array<double, 4>& worst, const char* law) {
  std::printf("%s Gauss-Newton: energy %.2e, gradient %.2e, blocks %.2e, smallest eigenvalue -%.2e of the largest\n",
              law, worst[0], worst[1], worst[2], worst[3]);
  EXPECT_LT(worst[0], 1e-12);
  EXPECT_LT(worst[1], 1e-6);   // central differences of the strains
  EXPECT_LT(worst[2], 1e-6);
  EXPECT_LE(worst[3], 1e-12);  // positive semi-definite to round-off
}

}  // namespace

TEST(GaussNewtonHessian, BdemBlocksAreTheStrainJacobiansProductAndSemiDefinite) {
  const BdemStiffness k = stiffness();
  std::mt19937_64 rng(1126);
  std::array<double, 4> worst{};
  for (int n = 0; n < 60; ++n) {
    const Ends e = ends_of(random_config(rng), n % 2 == 1, n % 3 == 1);
    const BdemBondResult r = bdem_bond(e.xi, e.xj, e.qi, e.qj, e.d0, kL0, k);
    Vec12 f;
    f << r.force, r.moment_i, -r.force, r.moment_j;
    const auto strains = [&](const Ends& m) { return bdem_bond_strains_t<double>(m.xi, m.xj, m.qi, m.qj, m.d0, kL0, k); };
    const Mat12 gn = bdem_bond_gauss_newton(e.xi, e.xj, e.qi, e.qj, e.d0, kL0, k);
    const auto err = check_gauss_newton<8>(e, bdem_strain_weights(k), strains, energy(e, k), f, gn);
    for (int a = 0; a < 4; ++a) worst[a] = std::max(worst[a], err[a]);
  }
  expect_gauss_newton(worst, "BDEM");
}

TEST(GaussNewtonHessian, BakerGonzalezBlocksAreTheStrainJacobiansProductAndSemiDefinite) {
  std::mt19937_64 rng(2611);
  const double km = 10, ka = 200, ks = 200;
  std::array<double, 4> worst{};
  for (int n = 0; n < 60; ++n) {
    const Ends e = ends_of(random_config(rng), n % 2 == 1, n % 3 == 1);
    const BondTerms t = bond_all(e.xi, e.xj, e.qi, e.qj, kL0, e.d0, km, ka, ks);
    Vec12 f;
    f << t.force_i, t.moment_i, -t.force_i, t.moment_j;
    const auto strains = [&](const Ends& m) {
      return bond_strains_t<double>(m.xi, m.xj, m.qi, m.qj, kL0, m.d0, km, ka, ks);
    };
    const Mat12 gn = bond_gauss_newton(e.xi, e.xj, e.qi, e.qj, kL0, e.d0, km, ka, ks);
    const auto err = check_gauss_newton<6>(e, bond_strain_weights(km, ka, ks), strains, t.energy, f, gn);
    for (int a = 0; a < 4; ++a) worst[a] = std::max(worst[a], err[a]);
  }
  expect_gauss_newton(worst, "Baker-Gonzalez");
}

TEST(GaussNewtonHessian, EqualsTheExactBlocksAtRestAndDiffersAwayFromIt) {
  // Where every strain is zero the dropped terms w_k e_k Hess e_k vanish:
  // the blocks are H_e (section 9.6's stiffness). Turned and stretched, they
  // differ by terms of the order of the strains.
  const BdemStiffness k = stiffness();
  const Quat q = turn(Vec3(0.3, -0.2, 0.5));
  const Ends rest{q * Vec3(kL0, 0, 0) + Vec3(0.1, 0.2, 0.3), Vec3(0.1, 0.2, 0.3), q, q, Vec3::UnitX()};
  const Mat12 exact = bdem_bond_hessian(rest.xi, rest.xj, rest.qi, rest.qj, rest.d0, kL0, k);
  const Mat12 gn = bdem_bond_gauss_newton(rest.xi, rest.xj, rest.qi, rest.qj, rest.d0, kL0, k);
  EXPECT_LT(worst_scaled_error(gn, exact), 1e-12);
  const double km = 10, ka = 200, ks = 200;
  EXPECT_LT(worst_scaled_error(bond_gauss_newton(rest.xi, rest.xj, rest.qi, rest.qj, kL0, rest.d0, km, ka, ks),
                              bond_hessian(rest.xi, rest.xj, rest.qi, rest.qj, kL0, rest.d0, km, ka, ks)),
            1e-12);
  Ends bent = rest;
  bent.xi += 0.05 * kL0 * Vec3::UnitY();
  bent.qi = turn(Vec3(0.0, 0.0, 0.2)) * bent.qi;
  EXPECT_GT(worst_scaled_error(bdem_bond_gauss_newton(bent.xi, bent.xj, bent.qi, bent.qj, bent.d0, kL0, k),
                              bdem_bond_hessian(bent.xi, bent.xj, bent.qi, bent.qj, bent.d0, kL0, k)),
            1e-3);
}
