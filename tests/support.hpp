#pragma once
// Shared helpers for the tests: random configurations and rigid motions.

#include <cmath>
#include <random>

#include "core/rotation.hpp"
#include "core/types.hpp"

namespace dem::testing {

inline Vec3 random_vec(std::mt19937_64& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return scale * Vec3(u(rng), u(rng), u(rng));
}

/// A random rotation with angle up to max_angle (radians).
inline Quat random_rotation(std::mt19937_64& rng, double max_angle = 3.0) {
  Vec3 axis = random_vec(rng);
  while (axis.norm() < 1e-3) axis = random_vec(rng);
  std::uniform_real_distribution<double> u(0.0, max_angle);
  return Quat(Eigen::AngleAxisd(u(rng), axis.normalized()));
}

/// exp(S(phi)) as a unit quaternion.
inline Quat quat_exp(const Vec3& phi) {
  const double t = phi.norm();
  if (t == 0.0) return Quat::Identity();
  return Quat(Eigen::AngleAxisd(t, phi / t));
}

}  // namespace dem::testing
