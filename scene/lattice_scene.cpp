#include "scene/lattice_scene.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace dem {

namespace {

void require(bool ok, const char* parameter, const std::string& rule, double value) {
  if (ok) return;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  throw std::invalid_argument(std::string("lattice scene: ") + parameter + " " + rule +
                              ", got " + buf);
}

/// Uniform in [-1/2, 1/2) from the top 53 bits of one draw: the same
/// sequence on every platform (unlike the standard distributions).
double centred_uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53 - 0.5;
}

}  // namespace

double contact_stiffness_from_lammps_hertz(double k_n, double r_i, double r_j) {
  const double s = r_i + r_j;
  return k_n * std::sqrt(r_i * r_j / s) * s * s * std::sqrt(s);
}

Scene make_lattice(const LatticeParameters& p) {
  const double n_max = std::cbrt(static_cast<double>(std::numeric_limits<std::uint32_t>::max()));
  require(p.per_side >= 1, "per_side (spheres per edge n)", "must be >= 1",
          static_cast<double>(p.per_side));
  require(static_cast<double>(p.per_side) <= n_max, "per_side (spheres per edge n)",
          "must keep n^3 below 2^32 (n <= 1625)", static_cast<double>(p.per_side));
  require(std::isfinite(p.diameter) && p.diameter > 0.0, "diameter",
          "must be finite and > 0", p.diameter);
  require(std::isfinite(p.spacing_ratio) && p.spacing_ratio > 0.0, "spacing_ratio",
          "must be finite and > 0", p.spacing_ratio);
  require(std::isfinite(p.density) && p.density > 0.0, "density", "must be finite and > 0",
          p.density);
  require(std::isfinite(p.hertz_kn) && p.hertz_kn >= 0.0, "hertz_kn (LAMMPS k_n)",
          "must be finite and >= 0", p.hertz_kn);
  require(std::isfinite(p.skin) && p.skin >= 0.0, "skin", "must be finite and >= 0", p.skin);
  require(std::isfinite(p.temperature) && p.temperature >= 0.0, "temperature",
          "must be finite and >= 0", p.temperature);

  const std::size_t n = p.per_side;
  const std::size_t count = n * n * n;
  const double d = p.diameter;
  const double spacing = p.spacing_ratio * d;
  const double mass = p.density * std::numbers::pi * d * d * d / 6.0;
  const double inertia = mass * d * d / 10.0;

  // Velocities: uniform components, mean removed, scaled to T (see header).
  std::mt19937_64 rng(p.seed);
  std::vector<Vec3> v(count);
  Vec3 mean = Vec3::Zero();
  for (Vec3& vi : v) {
    const double x = centred_uniform(rng);
    const double y = centred_uniform(rng);
    const double z = centred_uniform(rng);
    vi = Vec3(x, y, z);
    mean += vi;
  }
  mean /= static_cast<double>(count);
  double twice_kinetic = 0.0;
  for (Vec3& vi : v) {
    vi -= mean;
    twice_kinetic += mass * vi.squaredNorm();
  }
  if (count > 1) {
    const double dof = 3.0 * static_cast<double>(count) - 3.0;
    const double scale =
        twice_kinetic > 0.0 ? std::sqrt(p.temperature * dof / twice_kinetic) : 0.0;
    for (Vec3& vi : v) vi *= scale;
  }

  Scene scene;
  scene.particles.reserve(count);
  std::size_t index = 0;
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i, ++index) {
        ParticleSpec spec;
        spec.position = spacing * Vec3(static_cast<double>(i), static_cast<double>(j),
                                       static_cast<double>(k));
        spec.velocity = v[index];
        spec.mass = mass;
        spec.inertia = inertia;
        spec.diameter = d;
        scene.particles.add(spec);
      }
  scene.contact = ContactSettings{contact_stiffness_from_lammps_hertz(p.hertz_kn, 0.5 * d, 0.5 * d),
                                  p.skin};
  return scene;
}

}  // namespace dem
