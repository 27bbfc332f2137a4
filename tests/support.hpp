#pragma once
// Shared helpers for the tests: random configurations and rigid motions.

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/particle_store.hpp"
#include "core/rotation.hpp"
#include "core/types.hpp"
#include "engine/groups.hpp"

namespace dem::testing {

/// A group `name` of the particles `ids` held fixed (of infinite mass).
inline ParticleGroup fixed_group(std::string name, std::vector<std::uint32_t> ids) {
  ParticleGroup g;
  g.name = std::move(name);
  g.motion = ParticleGroup::Motion::fixed;
  g.ids = std::move(ids);
  return g;
}

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

/// A solid sphere of radius r and density rho (mass 4/3 pi rho r³, inertia
/// 2/5 m r²) at x with velocity v and angular velocity w: the particle of
/// the contact-law tests.
inline ParticleSpec solid_sphere(double r, double rho, const Vec3& x, const Vec3& v, const Vec3& w = Vec3::Zero()) {
  ParticleSpec p;
  p.position = x;
  p.velocity = v;
  p.angular_velocity = w;
  p.diameter = 2 * r;
  p.mass = rho * 4.0 / 3.0 * M_PI * r * r * r;
  p.inertia = 0.4 * p.mass * r * r;
  return p;
}

}  // namespace dem::testing
