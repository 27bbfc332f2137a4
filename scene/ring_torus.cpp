#include "scene/ring_torus.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace dem {

namespace {
void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("ring torus: " + message);
}
double particle_diameter(const RingTorusParameters& p) {
  return p.torus_diameter * std::sin(std::numbers::pi / static_cast<double>(p.particles));
}
}  // namespace

Vec3 ring_torus_centre(const RingTorusParameters& p) {
  return Vec3(0.5 * p.torus_diameter + 0.5 * particle_diameter(p) + p.gap, 0.0, 0.0);
}

Scene make_ring_torus(const RingTorusParameters& p) {
  require(p.particles >= 3, "needs at least 3 particles, got " + std::to_string(p.particles));
  require(std::isfinite(p.torus_diameter) && p.torus_diameter > 0.0,
          "torus diameter must be positive");
  require(std::isfinite(p.gap) && p.gap >= 0.0, "gap to the wall must be >= 0");
  require(std::isfinite(p.speed), "speed must be finite");
  require(std::isfinite(p.tilt_deg), "tilt must be finite");
  require(p.spin.allFinite(), "spin must be finite");
  require(std::isfinite(p.skin_fraction) && p.skin_fraction >= 0.0, "skin fraction must be >= 0");
  require(std::isfinite(p.k_contact) && p.k_contact >= 0.0, "K^pp must be >= 0");

  const double dp = particle_diameter(p);
  const Vec3 c = ring_torus_centre(p);
  const double tilt = p.tilt_deg * std::numbers::pi / 180.0;
  const Mat3 ry = Eigen::AngleAxisd(tilt, Vec3::UnitY()).toRotationMatrix();

  Scene scene;
  scene.particles.reserve(p.particles);
  for (std::size_t k = 0; k < p.particles; ++k) {
    const double phi = 2.0 * std::numbers::pi * static_cast<double>(k) /
                       static_cast<double>(p.particles);
    ParticleSpec spec;
    spec.position = c + ry * (0.5 * p.torus_diameter * Vec3(std::cos(phi), std::sin(phi), 0.0));
    spec.velocity = Vec3(-p.speed, 0.0, 0.0) + p.spin.cross(spec.position - c);
    spec.angular_velocity = p.spin;
    spec.mass = p.mass;
    spec.inertia = p.inertia;
    spec.diameter = dp;
    scene.particles.add(spec);  // validates mass, inertia, diameter
  }
  const BondStiffness k{p.k_bending, p.k_axial, p.k_shear};
  for (std::size_t i = 0; i < p.particles; ++i)
    scene.bonds.add(scene.particles, static_cast<std::uint32_t>(i),
                    static_cast<std::uint32_t>((i + 1) % p.particles), k);
  scene.contact = ContactSettings{p.k_contact, p.skin_fraction * dp};
  if (p.wall) {
    Wall w;
    w.point = Vec3::Zero();
    w.normal = Vec3::UnitX();
    w.stiffness = p.k_wall < 0.0 ? p.k_contact : p.k_wall;
    require(std::isfinite(w.stiffness), "K^pw must be finite");
    scene.walls.push_back(w);
  }
  return scene;
}

}  // namespace dem
