// Rotation algebra in rescaled Rodrigues parameters, docs/model.md §1.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "engine/integrator.hpp"
#include "core/rotation.hpp"
#include "support.hpp"

using namespace dem;
using dem::testing::random_vec;

namespace {
double max_abs(const Mat3& m) { return m.cwiseAbs().maxCoeff(); }
}  // namespace

TEST(Rotation, SkewMatrixIsCrossProduct) {
  std::mt19937_64 rng(1);
  for (int k = 0; k < 20; ++k) {
    const Vec3 a = random_vec(rng, 3.0), b = random_vec(rng, 3.0);
    EXPECT_LT((skew(a) * b - a.cross(b)).norm(), 1e-14);
  }
}

TEST(Rotation, RrpMatrixIsOrthogonalWithRightAngleAndAxis) {
  std::mt19937_64 rng(2);
  for (int k = 0; k < 200; ++k) {
    const Vec3 n = random_vec(rng).normalized();
    const double theta = 3.1 * (k + 0.5) / 200.0;  // up to almost pi
    const Vec3 alpha = 2.0 * std::tan(0.5 * theta) * n;
    const Mat3 r = rrp_matrix(alpha);
    EXPECT_LT(max_abs(r.transpose() * r - Mat3::Identity()), 1e-13 * (1 + alpha.squaredNorm()));
    EXPECT_NEAR(r.determinant(), 1.0, 1e-12);
    EXPECT_LT(max_abs(r - Eigen::AngleAxisd(theta, n).toRotationMatrix()), 1e-12);
    EXPECT_NEAR(rrp_angle(alpha), theta, 1e-13);
    EXPECT_LT((rrp_rotation_vector(alpha) - theta * n).norm(), 1e-12);
  }
}

TEST(Rotation, CompositionAppliesFirstArgumentFirst) {
  std::mt19937_64 rng(3);
  for (int k = 0; k < 200; ++k) {
    const Vec3 a1 = random_vec(rng, 1.5), a2 = random_vec(rng, 1.5);
    if (std::abs(4.0 - a1.dot(a2)) < 0.5) continue;
    const Mat3 composed = rrp_matrix(rrp_compose(a1, a2));
    EXPECT_LT(max_abs(composed - rrp_matrix(a2) * rrp_matrix(a1)), 1e-12);
    // The reverse order is a different rotation in general: the test can fail.
    if ((a1.cross(a2)).norm() > 0.1) {
      EXPECT_GT(max_abs(composed - rrp_matrix(a1) * rrp_matrix(a2)), 1e-6);
    }
  }
}

TEST(Rotation, InverseIsNegation) {
  std::mt19937_64 rng(4);
  for (int k = 0; k < 50; ++k) {
    const Vec3 a = random_vec(rng, 4.0);
    EXPECT_LT(max_abs(rrp_matrix(rrp_inverse(a)) - rrp_matrix(a).transpose()), 1e-13);
    EXPECT_LT(rrp_compose(a, rrp_inverse(a)).norm(), 1e-13 * (1 + a.squaredNorm()));
  }
}

TEST(Rotation, QuaternionAgreesWithRrpMatrixAndComposition) {
  std::mt19937_64 rng(5);
  for (int k = 0; k < 100; ++k) {
    const Vec3 a = random_vec(rng, 3.0);
    const Quat q = rrp_quaternion(a);
    EXPECT_NEAR(q.norm(), 1.0, 1e-15);
    EXPECT_LT(max_abs(q.toRotationMatrix() - rrp_matrix(a)), 1e-13);
    EXPECT_LT((quaternion_rrp(q) - a).norm(), 1e-12 * (1 + a.norm()));
    EXPECT_LT((quaternion_rrp(Quat(-q.coeffs())) - a).norm(), 1e-12 * (1 + a.norm()));
    const Vec3 b = random_vec(rng, 0.5);
    if (std::abs(4.0 - a.dot(b)) < 0.5) continue;
    // alpha (+) delta as a spatial quaternion composition.
    const Quat composed = compose_spatial(q, b);
    EXPECT_LT(max_abs(composed.toRotationMatrix() - rrp_matrix(rrp_compose(a, b))), 1e-12);
  }
}

TEST(Rotation, RotationVectorOfQuaternionIsSmoothAtZeroAndPi) {
  const Vec3 n = Vec3(1, 2, 3).normalized();
  for (double theta : {0.0, 1e-12, 1e-9, 1e-7, 1e-3, 1.0, 3.0, std::numbers::pi - 1e-9}) {
    const Quat q(Eigen::AngleAxisd(theta, n));
    EXPECT_LT((quaternion_rotation_vector(q) - theta * n).norm(), 1e-14 + 1e-12 * theta)
        << theta;
    EXPECT_NEAR(quaternion_angle(q), theta, 1e-12);
  }
}

// A free particle spinning at 10 rad/s for 1,000 turns keeps a proper
// rotation and the angle the map predicts: each step of map (25) turns by
// 2 atan(h w / 2), each of map (23) by asin(h w), each of map (27) by
// 2 atan(h w / 2). The RRP chart alone would be singular every half turn.
TEST(Rotation, ThousandTurnsStayOrthogonalWithTheRightAngle) {
  const double w = 10.0, h = 1e-3;
  const Vec3 axis = Vec3(1.0, -2.0, 0.5).normalized();
  const long long steps = std::llround(1000.0 * 2.0 * std::numbers::pi / (w * h));
  for (IntegratorMap map : {IntegratorMap::rrp23, IntegratorMap::rrp25, IntegratorMap::rrp27}) {
    ParticleStore s;
    ParticleSpec spec;
    spec.angular_velocity = w * axis;
    s.add(spec);
    for (long long k = 0; k < steps; ++k) {
      advance_configuration(s, map, h);
      complete_step(s, map, h);  // no moments
    }
    const Mat3 r = s.attitude[0].toRotationMatrix();
    EXPECT_LT(max_abs(r.transpose() * r - Mat3::Identity()), 1e-12);
    const double per_step =
        map == IntegratorMap::rrp23 ? std::asin(h * w) : 2.0 * std::atan(0.5 * h * w);
    const double expected = std::remainder(static_cast<double>(steps) * per_step,
                                           2.0 * std::numbers::pi);
    const Mat3 expected_r = Eigen::AngleAxisd(expected, axis).toRotationMatrix();
    EXPECT_LT(max_abs(r - expected_r), 1e-8) << integrator_map_name(map);
    EXPECT_LT((s.angular_velocity[0] - w * axis).norm(), 1e-12);
  }
}
