// Bond potentials, docs/model.md §4: forces and moments against central
// finite differences of the energy, Newton's third law, zero total torque,
// objectivity and symmetry under swapping the ends.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "bonds/bond_potential.hpp"
#include "support.hpp"

using namespace dem;
using namespace dem::testing;

namespace {

struct Config {
  Vec3 xi, xj;  // current centres
  Quat qi, qj;  // Q = R R0^T
  double r0;
  Vec3 d0;
};

/// Random bond near its reference but with large rotations: the reference
/// pair sits at distance r0 along d0; the current pair is moved, stretched by
/// up to 20 %, and Q_j is any rotation up to 3 rad with Q_i Q_j^T up to 2 rad
/// (the rotation vector is discontinuous at pi).
Config random_config(std::mt19937_64& rng) {
  Config c;
  std::uniform_real_distribution<double> u(0.5, 2.0), s(0.8, 1.2);
  c.r0 = u(rng);
  c.d0 = random_vec(rng).normalized();
  c.xj = random_vec(rng, 3.0);
  const Vec3 dir = (quat_exp(random_vec(rng, 0.5)) * c.d0).normalized();
  c.xi = c.xj + s(rng) * c.r0 * dir;
  c.qj = random_rotation(rng, 3.0);
  c.qi = random_rotation(rng, 2.0) * c.qj;
  return c;
}

using Term = std::function<BondTerms(const Config&)>;

/// Checks F_i, F_j = -F_i, tau_i and tau_j against central differences of
/// the energy, perturbing x by +-eps e_k and R by exp(S(+-eps e_k)) R.
void expect_matches_finite_differences(const Term& term, const Config& c, double tol) {
  const BondTerms t = term(c);
  const double eps = 1e-6;
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = eps * Vec3::Unit(k);
    Config p = c, m = c;
    p.xi += e;
    m.xi -= e;
    const double fi = -(term(p).energy - term(m).energy) / (2 * eps);
    p = c, m = c;
    p.xj += e;
    m.xj -= e;
    const double fj = -(term(p).energy - term(m).energy) / (2 * eps);
    p = c, m = c;
    p.qi = quat_exp(e) * c.qi;
    m.qi = quat_exp(-e) * c.qi;
    const double ti = -(term(p).energy - term(m).energy) / (2 * eps);
    p = c, m = c;
    p.qj = quat_exp(e) * c.qj;
    m.qj = quat_exp(-e) * c.qj;
    const double tj = -(term(p).energy - term(m).energy) / (2 * eps);
    EXPECT_NEAR(t.force_i[k], fi, tol) << "F_i component " << k;
    EXPECT_NEAR(-t.force_i[k], fj, tol) << "F_j component " << k;
    EXPECT_NEAR(t.moment_i[k], ti, tol) << "tau_i component " << k;
    EXPECT_NEAR(t.moment_j[k], tj, tol) << "tau_j component " << k;
  }
}

/// sum (x x F + tau) = 0 for a potential invariant under rigid rotations.
void expect_zero_total_torque(const Term& term, const Config& c) {
  const BondTerms t = term(c);
  const Vec3 total = c.xi.cross(t.force_i) + c.xj.cross(-t.force_i) + t.moment_i + t.moment_j;
  const double scale = 1.0 + t.force_i.norm() * (c.xi.norm() + c.xj.norm()) + t.moment_i.norm();
  EXPECT_LT(total.norm(), 1e-12 * scale);
}

/// Rotating and translating everything rigidly (x -> G x + b, R -> G R, the
/// reference unchanged) keeps the energy and rotates forces and moments.
void expect_objective(const Term& term, const Config& c, std::mt19937_64& rng) {
  const Quat g = random_rotation(rng, 3.0);
  const Vec3 b = random_vec(rng, 5.0);
  Config r = c;
  r.xi = g * c.xi + b;
  r.xj = g * c.xj + b;
  r.qi = g * c.qi;
  r.qj = g * c.qj;
  const BondTerms t = term(c), tr = term(r);
  EXPECT_NEAR(tr.energy, t.energy, 1e-12 * (1 + std::abs(t.energy)));
  EXPECT_LT((tr.force_i - g * t.force_i).norm(), 1e-11 * (1 + t.force_i.norm()));
  EXPECT_LT((tr.moment_i - g * t.moment_i).norm(), 1e-11 * (1 + t.moment_i.norm()));
  EXPECT_LT((tr.moment_j - g * t.moment_j).norm(), 1e-11 * (1 + t.moment_j.norm()));
}

/// Swapping the bond's ends (i <-> j, d0 -> -d0) changes nothing.
void expect_swap_symmetric(const Term& term, const Config& c) {
  Config s = c;
  std::swap(s.xi, s.xj);
  std::swap(s.qi, s.qj);
  s.d0 = -c.d0;
  const BondTerms t = term(c), ts = term(s);
  EXPECT_NEAR(ts.energy, t.energy, 1e-13 * (1 + std::abs(t.energy)));
  EXPECT_LT((ts.force_i + t.force_i).norm(), 1e-12 * (1 + t.force_i.norm()));
  EXPECT_LT((ts.moment_i - t.moment_j).norm(), 1e-12 * (1 + t.moment_j.norm()));
  EXPECT_LT((ts.moment_j - t.moment_i).norm(), 1e-12 * (1 + t.moment_i.norm()));
}

const Term kBending = [](const Config& c) { return bond_bending(c.qi, c.qj, 10.0); };
const Term kAxial = [](const Config& c) { return bond_axial(c.xi, c.xj, c.r0, 200.0); };
const Term kShear = [](const Config& c) { return bond_shear(c.xi, c.xj, c.qi, c.qj, c.d0, 200.0); };
const Term kAll = [](const Config& c) {
  return bond_all(c.xi, c.xj, c.qi, c.qj, c.r0, c.d0, 10.0, 200.0, 200.0);
};

void check_all_properties(const Term& term, unsigned seed) {
  std::mt19937_64 rng(seed);
  for (int n = 0; n < 40; ++n) {
    const Config c = random_config(rng);
    expect_matches_finite_differences(term, c, 2e-6);
    expect_zero_total_torque(term, c);
    expect_objective(term, c, rng);
    expect_swap_symmetric(term, c);
  }
}

}  // namespace

TEST(BondBending, ForcesMomentsAndInvariances) { check_all_properties(kBending, 11); }
TEST(BondAxial, ForcesMomentsAndInvariances) { check_all_properties(kAxial, 12); }
TEST(BondShear, ForcesMomentsAndInvariances) { check_all_properties(kShear, 13); }
TEST(BondAll, ForcesMomentsAndInvariances) { check_all_properties(kAll, 14); }

TEST(BondBending, RelativeRotationVectorConvention) {
  // Q_i Q_j^T = exp(S(theta_ij)): with Q_j = I and Q_i a turn by 0.3 about z,
  // theta_ij = 0.3 e_z and the moment on i turns it back.
  const Quat qi(Eigen::AngleAxisd(0.3, Vec3::UnitZ()));
  const Vec3 theta = bond_rotation_vector(qi, Quat::Identity());
  EXPECT_LT((theta - 0.3 * Vec3::UnitZ()).norm(), 1e-15);
  const BondTerms t = bond_bending(qi, Quat::Identity(), 2.0);
  EXPECT_LT((t.moment_i + 0.6 * Vec3::UnitZ()).norm(), 1e-15);
  EXPECT_NEAR(t.energy, 0.5 * 2.0 * 0.09, 1e-16);
}

TEST(BondShear, EqualsPrintedFormWhileAttitudesStayAtReference) {
  // With Q_i = Q_j = I, U^s = K/4 (s^2 + s^2) = K/2 [1 - d0.d]^2 as in eq. (53).
  std::mt19937_64 rng(15);
  for (int n = 0; n < 10; ++n) {
    Config c = random_config(rng);
    c.qi = c.qj = Quat::Identity();
    const Vec3 d = (c.xi - c.xj).normalized();
    const double s = 1.0 - c.d0.dot(d);
    EXPECT_NEAR(kShear(c).energy, 0.5 * 200.0 * s * s, 1e-12);
  }
}

// The checks above can fail: eq. (53) as printed, [1 - (R_i d0).(R_j d)]^2,
// is not objective, and the objectivity check detects it.
TEST(BondShear, PrintedEquation53FailsObjectivity) {
  const Term printed = [](const Config& c) {
    BondTerms t;
    const Vec3 d = (c.xi - c.xj).normalized();
    const double s = 1.0 - (c.qi * c.d0).dot(c.qj * d);
    t.energy = 0.5 * 200.0 * s * s;
    return t;
  };
  std::mt19937_64 rng(16);
  int detected = 0;
  for (int n = 0; n < 10; ++n) {
    Config c = random_config(rng);
    Config r = c;
    const Quat g = random_rotation(rng, 3.0);
    r.xi = g * c.xi;
    r.xj = g * c.xj;
    r.qi = g * c.qi;
    r.qj = g * c.qj;
    if (std::abs(printed(r).energy - printed(c).energy) > 1e-6) ++detected;
  }
  EXPECT_GE(detected, 8);
}
