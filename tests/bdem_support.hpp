#pragma once
// Shared by the BDEM bond tests (test_bdem_bond.cpp, test_bond_hessian.cpp):
// the bond of docs/model.md §13.3 and random configurations with large relative
// rotations and shear angles.
#include <algorithm>
#include <cmath>
#include <random>

#include <limits>

#include "bonds/bdem_bond.hpp"
#include "bonds/bdem_provider.hpp"
#include "core/particle_store.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"

namespace dem::bdem_test {

inline constexpr double kE = 1e9, kNu = 0.3, kRb = 1e-3, kL0 = 2e-3;
/// Particles of the plate's material (docs/model.md §13.3): radius and density.
inline constexpr double kRadius = kRb, kDensity = 2400;

/// A sphere of radius kRadius and density kDensity at x, at rest.
inline ParticleSpec sphere(const Vec3& x) {
  ParticleSpec p;
  p.position = x;
  p.diameter = 2 * kRadius;
  p.mass = kDensity * 4.0 / 3.0 * M_PI * std::pow(kRadius, 3);
  p.inertia = 0.4 * p.mass * kRadius * kRadius;
  return p;
}

/// The BDEM material of kE, kNu (bond radius = particle radius) with these
/// strengths (infinite: unbreakable).
inline BdemMaterial material(double sigma_c = std::numeric_limits<double>::infinity(),
                             double tau_c = std::numeric_limits<double>::infinity(), bool tension_only = false) {
  BdemMaterial m;
  m.youngs_modulus = kE;
  m.poisson_ratio = kNu;
  m.bond_radius_factor = 1.0;
  m.tensile_strength = sigma_c;
  m.shear_strength = tau_c;
  m.tension_only = tension_only;
  return m;
}

inline BdemStiffness stiffness() { return bdem_stiffness(kE, kNu, kRb, kL0); }

inline Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return s;
}

inline Mat3 rot(const Vec3& phi) {
  const double a = phi.norm();
  if (a == 0.0) return Mat3::Identity();
  return Eigen::AngleAxisd(a, phi / a).toRotationMatrix();
}

inline Quat quat_of(const Mat3& m, bool flip) {
  Quat q(m);
  q.normalize();
  if (flip) q.coeffs() = -q.coeffs();
  return q;
}

struct Config {
  Vec3 xi, xj;
  Mat3 Qi, Qj;
  Vec3 d0;
};

/// A random configuration: relative rotation up to 2.5 rad, shear angle up
/// to 1.5 rad, stretch up to 20%.
inline Config random_config(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto unit = [&] {
    Vec3 v(u(rng), u(rng), u(rng));
    while (v.norm() < 0.1) v = Vec3(u(rng), u(rng), u(rng));
    return v.normalized();
  };
  Config c;
  c.d0 = unit();
  const Mat3 base = rot(unit() * 3.0 * std::abs(u(rng)));
  c.Qj = base;
  const double rel = 2.5 * std::abs(u(rng));
  c.Qi = rot(unit() * rel) * base;
  // Current direction: the carried direction turned by up to 1.5 rad.
  const Eigen::AngleAxisd r(c.Qi * c.Qj.transpose());
  const Vec3 carried = Eigen::AngleAxisd(r.angle() / 2, r.axis()).toRotationMatrix() * c.Qj * c.d0;
  Vec3 perp = unit().cross(carried);
  perp.normalize();
  const double shear = 1.5 * std::abs(u(rng));
  const Vec3 d = rot(perp * shear) * carried;
  c.xj = Vec3(u(rng), u(rng), u(rng)) * 1e-3;
  c.xi = c.xj + (kL0 * (1.0 + 0.2 * u(rng))) * d;
  return c;
}

/// A group of one particle `id` moved at the prescribed velocity v.
inline ParticleGroup moved_group(const char* name, std::uint32_t id, const Vec3& v) {
  ParticleGroup g;
  g.name = name;
  g.motion = ParticleGroup::Motion::velocity;
  g.velocity = v;
  g.ids = {id};
  return g;
}

/// A chain of `n` spheres along x bonded by BDEM bonds of strengths
/// sigma_c = tau_c, its ends moved at v_left and v_right, the middle free.
inline Simulation pulled_chain(int n, double sigma_c, IntegratorMap map, double h, const Vec3& v_left,
                               const Vec3& v_right, std::size_t steps_done = 0) {
  ParticleStore s;
  for (int i = 0; i < n; ++i) s.add(sphere(Vec3(2 * kRadius * i, 0, 0)));
  BondList bonds;
  for (int i = 0; i + 1 < n; ++i) bonds.add(s, i, i + 1, BondStiffness{});
  ForceField f;
  f.add(std::make_unique<BdemBondProvider>(s, std::move(bonds), std::vector<BdemMaterial>{material(sigma_c, sigma_c)}));
  Simulation sim(std::move(s), std::move(f), map, h, steps_done);
  sim.set_groups({moved_group("left", 0, v_left), moved_group("right", static_cast<std::uint32_t>(n - 1), v_right)});
  return sim;
}

}  // namespace dem::bdem_test
