// The Lie group variational integrator (engine/lgvi.hpp, docs/model.md §8)
// and the two-dumbbell full body problem (scene/dumbbells.hpp): the Newton
// solve against its defining equation, force and moment against the
// potential, and the paper's figures (E_0, energy error at h = 0.01 and
// 2e-4, slope 2, momenta, orthogonality, time reversibility).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "scene/dumbbells.hpp"
#include "engine/rigid_rk4.hpp"
#include "core/rotation.hpp"

using namespace dem;

namespace {

struct RunFigures {
  double max_energy_error = 0.0, max_orthogonality = 0.0, max_p = 0.0, max_l = 0.0;
  int max_iterations = 0;
  double e0 = 0.0;
};

double total_energy(const DumbbellPair& p, const std::vector<RigidBody>& b) {
  return rigid_kinetic_energy(b) + dumbbell_potential(p, b);
}

RunFigures run(double h, double t_end) {
  const DumbbellPair pair;
  std::vector<RigidBody> b = paper_dumbbells();
  dumbbell_forces(pair, b);
  RunFigures r;
  r.e0 = total_energy(pair, b);
  const Vec3 p0 = rigid_linear_momentum(b), l0 = rigid_angular_momentum(b);
  const auto forces = [&](std::vector<RigidBody>& bodies) { dumbbell_forces(pair, bodies); };
  const long steps = std::lround(t_end / h);
  for (long k = 0; k < steps; ++k) {
    r.max_iterations = std::max(r.max_iterations, lgvi_step(b, forces, h));
    r.max_energy_error = std::max(r.max_energy_error, std::abs(total_energy(pair, b) - r.e0));
    for (const RigidBody& body : b) r.max_orthogonality = std::max(r.max_orthogonality, orthogonality_error(body.attitude));
    r.max_p = std::max(r.max_p, (rigid_linear_momentum(b) - p0).norm());
    r.max_l = std::max(r.max_l, (rigid_angular_momentum(b) - l0).norm());
  }
  return r;
}

}  // namespace

TEST(Lgvi, NewtonSolvesTheImplicitEquation) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    // A random physical inertia tensor: principal moments that satisfy the
    // triangle inequality (J_d positive definite), in random principal axes.
    std::uniform_real_distribution<double> w(0.05, 1.0);
    const double p = w(rng), q = w(rng), r = (p + q) * (0.02 + 0.97 * std::abs(u(rng)));
    const Mat3 axes = rotation_from_vector(Vec3(u(rng), u(rng), u(rng)) * 3.0);
    const Mat3 j = axes * Vec3(p, q, std::max(r, std::abs(p - q) + 1e-3)).asDiagonal() * axes.transpose();
    ASSERT_NO_THROW(validate_inertia(j));
    // g = J w h with rotations per step |w h| from 1e-8 to 0.5 rad.
    const double angle = 0.5 * std::pow(10.0, -7.7 + 7.7 * (trial % 9) / 8.0);
    const Vec3 g = j * (angle * Vec3(u(rng), u(rng), u(rng)).normalized());
    int it = -1;
    const Mat3 f = lgvi_rotation_increment(j, g, &it);
    const Mat3 jd = 0.5 * j.trace() * Mat3::Identity() - j;
    EXPECT_LT((f * jd - jd * f.transpose() - skew(g)).norm(), 1e-13 * (1.0 + g.norm())) << trial;
    EXPECT_LT(orthogonality_error(f), 1e-14);
    EXPECT_NEAR(f.determinant(), 1.0, 1e-14);
    EXPECT_LE(it, 6);
  }
  // Non-physical tensors are refused.
  EXPECT_THROW(validate_inertia(Vec3(0.2, 1.2, 2.0).asDiagonal()), std::invalid_argument);
  EXPECT_THROW(validate_inertia(Vec3(0.0, 1.0, 1.0).asDiagonal()), std::invalid_argument);
  Mat3 skewed = Mat3::Identity();
  skewed(0, 1) = 0.1;
  EXPECT_THROW(validate_inertia(skewed), std::invalid_argument);
  // g = 0 gives the identity, exactly.
  EXPECT_EQ(lgvi_rotation_increment(Mat3::Identity(), Vec3::Zero()), Mat3::Identity());
}

TEST(Lgvi, SeriesAndClosedFormsAgreeAcrossTheSwitch) {
  const Mat3 j = Vec3(0.3, 1.0, 2.0).asDiagonal();
  for (double n : {0.999e-3, 1.001e-3}) {
    const Vec3 f = n * Vec3(1, 2, 2) / 3.0;
    const Vec3 g = lgvi_residual_map(j, f);
    const Vec3 ref = (std::sin(n) / n) * (j * f) + ((1 - std::cos(n)) / (n * n)) * f.cross(j * f);
    EXPECT_LT((g - ref).norm(), 1e-15);
  }
}

TEST(Dumbbells, ForceAndMomentAreMinusTheGradientOfThePotential) {
  const DumbbellPair pair;
  std::vector<RigidBody> b = paper_dumbbells();
  b[0].attitude = rotation_from_vector(Vec3(0.3, -0.5, 0.2));
  b[1].attitude = rotation_from_vector(Vec3(-0.1, 0.4, 0.7));
  dumbbell_forces(pair, b);
  const double eps = 1e-6;
  for (int i = 0; i < 2; ++i)
    for (int a = 0; a < 3; ++a) {
      std::vector<RigidBody> plus = b, minus = b;
      plus[i].position[a] += eps;
      minus[i].position[a] -= eps;
      const double fd = -(dumbbell_potential(pair, plus) - dumbbell_potential(pair, minus)) / (2 * eps);
      EXPECT_NEAR(b[i].force[a], fd, 1e-8) << i << a;
      // Body-frame moment: M = -dU/dtheta for R -> R exp(S(theta e_a)).
      plus = b;
      minus = b;
      Vec3 e = Vec3::Zero();
      e[a] = eps;
      plus[i].attitude = b[i].attitude * rotation_from_vector(e);
      minus[i].attitude = b[i].attitude * rotation_from_vector(-e);
      const double md = -(dumbbell_potential(pair, plus) - dumbbell_potential(pair, minus)) / (2 * eps);
      EXPECT_NEAR(b[i].moment[a], md, 1e-8) << i << a;
    }
}

TEST(Dumbbells, ThePapersFigures) {
  const RunFigures coarse = run(0.01, 20.0);
  EXPECT_NEAR(coarse.e0, 0.440687, 5e-7);
  EXPECT_NEAR(coarse.max_energy_error, 6.15e-4, 0.03 * 6.15e-4);
  const RunFigures fine = run(2e-4, 20.0);
  EXPECT_NEAR(fine.max_energy_error, 2.70e-7, 0.02 * 2.70e-7);
  EXPECT_LT(fine.max_orthogonality, 1e-11);
  EXPECT_LE(fine.max_iterations, 4);
  EXPECT_GE(fine.max_iterations, 1);
  EXPECT_LT(fine.max_p, 1e-12);
  EXPECT_LT(fine.max_l, 1e-12);
}

TEST(Dumbbells, EnergyErrorFallsWithSlopeTwo) {
  const double e1 = run(0.002, 20.0).max_energy_error, e2 = run(0.001, 20.0).max_energy_error;
  const double slope = std::log2(e1 / e2);
  EXPECT_NEAR(slope, 2.0, 0.15) << e1 << " " << e2;
  EXPECT_NEAR(e2, 6.74e-6, 0.03 * 6.74e-6);
}

TEST(Dumbbells, TimeReversible) {
  const DumbbellPair pair;
  std::vector<RigidBody> b = paper_dumbbells();
  dumbbell_forces(pair, b);
  const std::vector<RigidBody> start = b;
  const auto forces = [&](std::vector<RigidBody>& bodies) { dumbbell_forces(pair, bodies); };
  for (int k = 0; k < 1000; ++k) lgvi_step(b, forces, 0.005);
  for (RigidBody& body : b) {
    body.velocity = -body.velocity;
    body.momentum = -body.momentum;
  }
  for (int k = 0; k < 1000; ++k) lgvi_step(b, forces, 0.005);
  for (int i = 0; i < 2; ++i) {
    EXPECT_LT((b[i].position - start[i].position).norm(), 1e-11);
    EXPECT_LT((b[i].attitude - start[i].attitude).norm(), 1e-11);
    EXPECT_LT((b[i].velocity + start[i].velocity).norm(), 1e-11);
  }
}

// The comparison method: RK4 is fourth order in the trajectory but neither
// conserves energy nor stays on SO(3) over long runs.
TEST(Dumbbells, RungeKuttaIsFourthOrderButLeavesSO3) {
  const DumbbellPair pair;
  const auto forces = [&](std::vector<RigidBody>& bodies) { dumbbell_forces(pair, bodies); };
  const auto final_state = [&](double h, bool rk4) {
    std::vector<RigidBody> b = paper_dumbbells();
    dumbbell_forces(pair, b);
    const long steps = std::lround(1.0 / h);
    for (long k = 0; k < steps; ++k) rk4 ? rk4_step(b, forces, h) : (void)lgvi_step(b, forces, h);
    return b;
  };
  const std::vector<RigidBody> ref = final_state(1e-4, true);
  const double e1 = (final_state(0.01, true)[0].position - ref[0].position).norm();
  const double e2 = (final_state(0.005, true)[0].position - ref[0].position).norm();
  EXPECT_NEAR(std::log2(e1 / e2), 4.0, 0.3) << e1 << " " << e2;
  // Over the full run at h = 0.01 RK4 drifts off SO(3) where the LGVI does not.
  std::vector<RigidBody> b = paper_dumbbells();
  dumbbell_forces(pair, b);
  for (int k = 0; k < 2000; ++k) rk4_step(b, forces, 0.01);
  EXPECT_GT(orthogonality_error(b[0].attitude), 1e-9);
  EXPECT_LT(run(0.01, 20.0).max_orthogonality, 1e-12);
}
