// The BDEM bond law of docs/model.md §9 (bonds/bdem_bond.hpp):
//  - forces and spatial moments against central differences of an energy
//    computed here by a separate route (rotation matrices, Eigen's
//    AngleAxis for the relative rotation, the twist axis Q_j d0), at random
//    large relative rotations (up to 2.5 rad), shear angles (up to 1.5 rad)
//    and both quaternion sign branches;
//  - the properties of 9.5: rest, objectivity, end swap, zero total force
//    and moment, independence of the quaternion signs;
//  - the small-strain limits of 9.3, the lambda^3 scaling of the energy
//    (which the printed shear energy of eq. 9 fails) and the full-angle
//    bend/twist measure (the printed half-angle form gives a quarter);
//  - the stiffnesses of 9.2 (13.3's numbers) and the stresses of 10.1.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bdem_support.hpp"
#include "bonds/bdem_bond.hpp"

using namespace dem;
using namespace dem::bdem_test;

namespace {

/// The energy of 9.3 by another route: matrices, not quaternions.
/// Theta from the matrix logarithm of Q_i Q_j^T (AngleAxis), the common
/// rotation as exp(S(Theta/2)) Q_j, t = 2 sin(theta/2) axis, twist t.(Q c).
double energy_by_matrices(const Vec3& xi, const Vec3& xj, const Mat3& Qi, const Mat3& Qj, const Vec3& d0, double l0,
                          const BdemStiffness& k) {
  const Eigen::AngleAxisd rel(Qi * Qj.transpose());
  const double theta = rel.angle();  // in [0, pi]
  const Vec3 axis = rel.axis();
  const Vec3 t = 2.0 * std::sin(theta / 2) * axis;
  const Mat3 Qc = Eigen::AngleAxisd(theta / 2, axis).toRotationMatrix() * Qj;
  const Vec3 c = Qc * d0;
  const Vec3 d = (xi - xj).normalized();
  const double theta_s = std::acos(std::clamp(c.dot(d), -1.0, 1.0));
  // Twist: t along the bond axis carried by either particle (Q_j d0 here).
  const Vec3 cj = Qj * d0;
  const double tw = t.dot(cj);
  const double r = (xi - xj).norm();
  return 0.5 * k.normal * (r - l0) * (r - l0) + 0.5 * k.shear * theta_s * theta_s +
         0.5 * (k.twist * tw * tw + k.bending * (t.squaredNorm() - tw * tw));
}

}  // namespace

TEST(BdemBond, StiffnessesOfSection9_2MatchTheNumbersOf13_3) {
  const BdemStiffness k = stiffness();
  EXPECT_NEAR(k.normal, 1.570796e6, 0.5);
  EXPECT_NEAR(k.shear, 2.416610, 5e-7);
  EXPECT_NEAR(k.bending, 0.3926991, 5e-8);
  EXPECT_NEAR(k.twist, 0.3020762, 5e-8);
  EXPECT_THROW(bdem_stiffness(-1, 0.3, kRb, kL0), std::invalid_argument);
  EXPECT_THROW(bdem_stiffness(kE, 0.6, kRb, kL0), std::invalid_argument);
  EXPECT_THROW(bdem_stiffness(kE, 0.3, 0.0, kL0), std::invalid_argument);
}

TEST(BdemBond, ForceAndMomentAreMinusTheGradientsOfAnIndependentEnergy) {
  std::mt19937_64 rng(20261124);
  const BdemStiffness k = stiffness();
  double worst = 0.0;
  for (int n = 0; n < 200; ++n) {
    const Config c = random_config(rng);
    for (int signs = 0; signs < 4; ++signs) {
      const Quat qi = quat_of(c.Qi, signs & 1), qj = quat_of(c.Qj, signs & 2);
      const BdemBondResult r = bdem_bond(c.xi, c.xj, qi, qj, c.d0, kL0, k);
      // The kernel's energy is the independent one.
      const double v = energy_by_matrices(c.xi, c.xj, c.Qi, c.Qj, c.d0, kL0, k);
      ASSERT_NEAR(r.stretch_energy + r.shear_energy + r.bend_twist_energy, v, 1e-9 * std::abs(v) + 1e-15);
      if (signs != 0) continue;
      const double hx = 1e-9, hphi = 1e-7;
      Vec3 fi, fj, ti, tj;
      for (int a = 0; a < 3; ++a) {
        Vec3 e = Vec3::Zero();
        e[a] = hx;
        fi[a] = -(energy_by_matrices(c.xi + e, c.xj, c.Qi, c.Qj, c.d0, kL0, k) -
                  energy_by_matrices(c.xi - e, c.xj, c.Qi, c.Qj, c.d0, kL0, k)) / (2 * hx);
        fj[a] = -(energy_by_matrices(c.xi, c.xj + e, c.Qi, c.Qj, c.d0, kL0, k) -
                  energy_by_matrices(c.xi, c.xj - e, c.Qi, c.Qj, c.d0, kL0, k)) / (2 * hx);
        e[a] = hphi;
        ti[a] = -(energy_by_matrices(c.xi, c.xj, rot(e) * c.Qi, c.Qj, c.d0, kL0, k) -
                  energy_by_matrices(c.xi, c.xj, rot(-e) * c.Qi, c.Qj, c.d0, kL0, k)) / (2 * hphi);
        tj[a] = -(energy_by_matrices(c.xi, c.xj, c.Qi, rot(e) * c.Qj, c.d0, kL0, k) -
                  energy_by_matrices(c.xi, c.xj, c.Qi, rot(-e) * c.Qj, c.d0, kL0, k)) / (2 * hphi);
      }
      const double fscale = fi.norm() + 1e-3, tscale = ti.norm() + tj.norm() + 1e-6;
      const double err = std::max({(r.force - fi).norm() / fscale, (-r.force - fj).norm() / fscale,
                                   (r.moment_i - ti).norm() / tscale, (r.moment_j - tj).norm() / tscale});
      worst = std::max(worst, err);
      ASSERT_LT(err, 1e-5) << "configuration " << n << ": F " << r.force.transpose() << " vs " << fi.transpose()
                           << "; tau_i " << r.moment_i.transpose() << " vs " << ti.transpose() << "; tau_j "
                           << r.moment_j.transpose() << " vs " << tj.transpose();
    }
  }
  std::printf("largest relative residual against finite differences: %.2e\n", worst);
}

TEST(BdemBond, TotalForceAndMomentVanishAndTheResultIgnoresQuaternionSigns) {
  std::mt19937_64 rng(7);
  const BdemStiffness k = stiffness();
  for (int n = 0; n < 200; ++n) {
    const Config c = random_config(rng);
    const BdemBondResult r = bdem_bond(c.xi, c.xj, quat_of(c.Qi, false), quat_of(c.Qj, false), c.d0, kL0, k);
    const Vec3 total = r.moment_i + r.moment_j + (c.xi - c.xj).cross(r.force);
    EXPECT_LT(total.norm(), 1e-12 * (r.moment_i.norm() + r.moment_j.norm() + r.force.norm() * kL0) + 1e-18);
    for (int signs = 1; signs < 4; ++signs) {
      const BdemBondResult s = bdem_bond(c.xi, c.xj, quat_of(c.Qi, signs & 1), quat_of(c.Qj, signs & 2), c.d0, kL0, k);
      EXPECT_LT((s.force - r.force).norm(), 1e-12 * r.force.norm() + 1e-15);
      EXPECT_LT((s.moment_i - r.moment_i).norm(), 1e-11 * r.moment_i.norm() + 1e-15);
      EXPECT_NEAR(s.shear_energy + s.bend_twist_energy, r.shear_energy + r.bend_twist_energy,
                  1e-11 * (r.shear_energy + r.bend_twist_energy) + 1e-18);
    }
  }
}

TEST(BdemBond, RestStateAndRigidMotionsHaveNoEnergyOrForce) {
  std::mt19937_64 rng(3);
  const BdemStiffness k = stiffness();
  const Vec3 d0 = Vec3(1, 2, -0.5).normalized();
  const Vec3 xj(0.1, -0.2, 0.3), xi = xj + kL0 * d0;
  for (int n = 0; n < 20; ++n) {
    std::uniform_real_distribution<double> u(-3.0, 3.0);
    const Mat3 A = n == 0 ? Mat3::Identity() : rot(Vec3(u(rng), u(rng), u(rng)));
    const Vec3 a(u(rng), u(rng), u(rng));
    const BdemBondResult r = bdem_bond(A * xi + a, A * xj + a, quat_of(A, false), quat_of(A, n % 2 == 1), d0, kL0, k);
    EXPECT_LT(r.stretch_energy + r.shear_energy + r.bend_twist_energy, 1e-24);
    EXPECT_LT(r.force.norm(), 1e-6);  // round-off of k_n (r - l0), k_n ~ 1.6e6
    EXPECT_LT(r.moment_i.norm() + r.moment_j.norm(), 1e-12);
  }
}

TEST(BdemBond, ObjectiveAndSymmetricUnderEndSwap) {
  std::mt19937_64 rng(11);
  const BdemStiffness k = stiffness();
  for (int n = 0; n < 100; ++n) {
    const Config c = random_config(rng);
    const BdemBondResult r = bdem_bond(c.xi, c.xj, quat_of(c.Qi, false), quat_of(c.Qj, false), c.d0, kL0, k);
    const double v = r.stretch_energy + r.shear_energy + r.bend_twist_energy;
    // x -> A x + a, R -> A R.
    const Mat3 A = rot(Vec3(0.3 * n, -1.1, 2.0));
    const Vec3 a(1, -2, 3);
    const BdemBondResult o =
        bdem_bond(A * c.xi + a, A * c.xj + a, quat_of(A * c.Qi, false), quat_of(A * c.Qj, false), c.d0, kL0, k);
    EXPECT_NEAR(o.stretch_energy + o.shear_energy + o.bend_twist_energy, v, 1e-10 * v + 1e-18);
    EXPECT_LT((o.force - A * r.force).norm(), 1e-9 * r.force.norm() + 1e-12);
    EXPECT_LT((o.moment_i - A * r.moment_i).norm(), 1e-9 * r.moment_i.norm() + 1e-15);
    EXPECT_LT((o.moment_j - A * r.moment_j).norm(), 1e-9 * r.moment_j.norm() + 1e-15);
    // Swap the ends (d0 -> -d0): the same energy, forces and moments swapped.
    const BdemBondResult s = bdem_bond(c.xj, c.xi, quat_of(c.Qj, false), quat_of(c.Qi, false), -c.d0, kL0, k);
    EXPECT_NEAR(s.stretch_energy + s.shear_energy + s.bend_twist_energy, v, 1e-10 * v + 1e-18);
    EXPECT_LT((s.force + r.force).norm(), 1e-10 * r.force.norm() + 1e-12);
    EXPECT_LT((s.moment_i - r.moment_j).norm(), 1e-10 * r.moment_j.norm() + 1e-15);
    EXPECT_LT((s.moment_j - r.moment_i).norm(), 1e-10 * r.moment_i.norm() + 1e-15);
  }
}

TEST(BdemBond, SmallStrainLimitsOfSection9_3) {
  const BdemStiffness k = stiffness();
  const double G = kE / (2 * (1 + kNu)), S = M_PI * kRb * kRb, I = M_PI * std::pow(kRb, 4) / 4, Jp = 2 * I;
  const Vec3 d0 = Vec3::UnitX();
  const Vec3 xj = Vec3::Zero(), xi = kL0 * d0;
  const Quat one = Quat::Identity();
  const double b = 1e-5, delta = 1e-9;
  const auto total = [](const BdemBondResult& r) { return r.stretch_energy + r.shear_energy + r.bend_twist_energy; };
  // Relative bending by b about a transverse axis.
  const double bend = total(bdem_bond(xi, xj, Quat(Eigen::AngleAxisd(b, Vec3::UnitY())), one, d0, kL0, k));
  // The shear angle sees half the relative rotation, so bend the pair
  // symmetrically to isolate V_bt: +b/2 and -b/2.
  const double sym = total(bdem_bond(xi, xj, Quat(Eigen::AngleAxisd(b / 2, Vec3::UnitY())),
                                     Quat(Eigen::AngleAxisd(-b / 2, Vec3::UnitY())), d0, kL0, k));
  EXPECT_NEAR(sym, 0.5 * (kE * I / kL0) * b * b, 1e-6 * 0.5 * (kE * I / kL0) * b * b);
  EXPECT_GT(bend, sym);  // the one-sided bend also shears the bond
  // Twisting by b about the bond axis.
  const double twist = total(bdem_bond(xi, xj, Quat(Eigen::AngleAxisd(b, Vec3::UnitX())), one, d0, kL0, k));
  EXPECT_NEAR(twist, 0.5 * (G * Jp / kL0) * b * b, 1e-6 * 0.5 * (G * Jp / kL0) * b * b);
  // Stretching by delta.
  const double stretch = total(bdem_bond(xi + delta * d0, xj, one, one, d0, kL0, k));
  EXPECT_NEAR(stretch, 0.5 * (kE * S / kL0) * delta * delta, 1e-6 * 0.5 * (kE * S / kL0) * delta * delta);
  // A transverse displacement delta without rotation.
  const double shear = total(bdem_bond(xi + delta * Vec3::UnitY(), xj, one, one, d0, kL0, k));
  EXPECT_NEAR(shear, 0.5 * (G * S / kL0) * delta * delta, 1e-6 * 0.5 * (G * S / kL0) * delta * delta);
}

TEST(BdemBond, EnergyScalesAsLambdaCubedWhichThePrintedShearEnergyFails) {
  // A deformed configuration with shear, bending and stretch.
  const Vec3 d0 = Vec3(1, 0.2, -0.1).normalized();
  const Quat qi(Eigen::AngleAxisd(0.05, Vec3(0, 1, 1).normalized()));
  const Quat qj(Eigen::AngleAxisd(-0.02, Vec3(1, 0, 0)));
  const Vec3 dir = Eigen::AngleAxisd(0.03, Vec3::UnitZ()) * d0;
  const auto energy = [&](double lambda, bool printed_shear) {
    const double l0 = lambda * kL0;
    const BdemStiffness k = bdem_stiffness(kE, kNu, lambda * kRb, l0);
    const BdemBondResult r = bdem_bond(lambda * 1.01 * kL0 * dir, Vec3::Zero(), qi, qj, d0, l0, k);
    if (!printed_shear) return r.stretch_energy + r.shear_energy + r.bend_twist_energy;
    // iBDEM eq. (9) as printed: ½ k_t theta² with k_t = G S / l0 (N/m).
    const double theta = std::sqrt(2 * r.shear_energy / k.shear);
    const double k_t = k.shear / (l0 * l0);
    return r.stretch_energy + 0.5 * k_t * theta * theta + r.bend_twist_energy;
  };
  for (const double lambda : {0.5, 2.0, 10.0}) {
    EXPECT_NEAR(energy(lambda, false), std::pow(lambda, 3) * energy(1.0, false), 1e-9 * std::pow(lambda, 3) * energy(1.0, false));
    const double printed = energy(lambda, true), expected = std::pow(lambda, 3) * energy(1.0, true);
    EXPECT_GT(std::abs(printed - expected), 1e-3 * expected) << "the printed shear energy should fail the scaling";
  }
}

TEST(BdemBond, BendTwistUsesTheFullAngleNotThePrintedHalfAngle) {
  const BdemStiffness k = stiffness();
  const Vec3 d0 = Vec3::UnitX();
  const double b = 1e-4;
  // Symmetric bend (no shear): V_bt only.
  const BdemBondResult r = bdem_bond(kL0 * d0, Vec3::Zero(), Quat(Eigen::AngleAxisd(b / 2, Vec3::UnitZ())),
                                     Quat(Eigen::AngleAxisd(-b / 2, Vec3::UnitZ())), d0, kL0, k);
  const double beam = 0.5 * k.bending * b * b;
  EXPECT_NEAR(r.bend_twist_energy, beam, 1e-6 * beam);
  // The printed form uses vec(q_j^-1 q_i) (length sin(theta/2)): a quarter.
  const Quat rel = Quat(Eigen::AngleAxisd(b / 2, Vec3::UnitZ())) * Quat(Eigen::AngleAxisd(-b / 2, Vec3::UnitZ())).conjugate();
  const Vec3 t_printed = rel.vec();
  const double printed = 0.5 * k.bending * t_printed.squaredNorm();
  EXPECT_NEAR(printed, 0.25 * beam, 1e-6 * beam);
  EXPECT_GT(std::abs(r.bend_twist_energy - printed), 0.5 * beam);
}

TEST(BdemBond, StressesOfSection10_1) {
  const BdemStiffness k = stiffness();
  const double S = M_PI * kRb * kRb, I = M_PI * std::pow(kRb, 4) / 4, Jp = 2 * I;
  const Vec3 d0 = Vec3::UnitX();
  const Quat one = Quat::Identity();
  // Pure stretch.
  BdemBondResult r = bdem_bond((kL0 + 1e-7) * d0, Vec3::Zero(), one, one, d0, kL0, k);
  EXPECT_NEAR(bdem_stress(r, k, false).sigma, k.normal * 1e-7 / S, 1e-6 * k.normal * 1e-7 / S);
  EXPECT_NEAR(bdem_stress(r, k, false).tau, 0.0, 1e-6);
  // Pure compression: |F_n| by default, nothing with tension_only.
  r = bdem_bond((kL0 - 1e-7) * d0, Vec3::Zero(), one, one, d0, kL0, k);
  EXPECT_NEAR(bdem_stress(r, k, false).sigma, k.normal * 1e-7 / S, 1e-6 * k.normal * 1e-7 / S);
  EXPECT_EQ(bdem_stress(r, k, true).sigma, 0.0);
  // Pure symmetric bend by b: M_b = k_b |t| = k_b 2 sin(b/2).
  const double b = 1e-3;
  r = bdem_bond(kL0 * d0, Vec3::Zero(), Quat(Eigen::AngleAxisd(b / 2, Vec3::UnitY())),
                Quat(Eigen::AngleAxisd(-b / 2, Vec3::UnitY())), d0, kL0, k);
  const double mb = k.bending * 2 * std::sin(b / 2);
  EXPECT_NEAR(r.bending_moment, mb, 1e-9 * mb);
  EXPECT_NEAR(bdem_stress(r, k, false).sigma, mb * kRb / I, 1e-6 * mb * kRb / I);
  // Pure twist by b: M_t = k_tw 2 sin(b/2).
  r = bdem_bond(kL0 * d0, Vec3::Zero(), Quat(Eigen::AngleAxisd(b, Vec3::UnitX())), one, d0, kL0, k);
  const double mt = k.twist * 2 * std::sin(b / 2);
  EXPECT_NEAR(r.twist_moment, mt, 1e-9 * mt);
  EXPECT_NEAR(bdem_stress(r, k, false).tau, mt * kRb / Jp, 1e-6 * mt * kRb / Jp);
}

TEST(BdemBond, StrengthTestWithoutSquareRootsAgreesWithTheStresses) {
  // bdem_over_strength (the force loop's test) against sigma > sigma_c or
  // tau > tau_c from bdem_stress, with strengths drawn around the stresses.
  const BdemStiffness k = stiffness();
  std::mt19937_64 rng(101);
  std::uniform_real_distribution<double> f(0.5, 1.5);
  int disagree = 0, over = 0;
  for (int n = 0; n < 20000; ++n) {
    const Config c = random_config(rng);
    const BdemBondResult r = bdem_bond(c.xi, c.xj, quat_of(c.Qi, false), quat_of(c.Qj, false), c.d0, kL0, k);
    for (const bool tension_only : {false, true}) {
      const BdemStress st = bdem_stress(r, k, tension_only);
      const double sigma_c = st.sigma * f(rng) + 1.0, tau_c = st.tau * f(rng) + 1.0;
      const bool expected = st.sigma > sigma_c || st.tau > tau_c;
      over += expected ? 1 : 0;
      disagree += bdem_over_strength(r, k, tension_only, sigma_c, tau_c) != expected ? 1 : 0;
    }
  }
  EXPECT_EQ(disagree, 0);
  EXPECT_GT(over, 10000);
}
