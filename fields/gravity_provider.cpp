#include "fields/gravity_provider.hpp"

#include <stdexcept>

#include "core/parallel.hpp"

namespace dem {

GravityProvider::GravityProvider(const Vec3& g) : g_(g) {
  if (!g_.allFinite()) throw std::invalid_argument("gravity is not finite");
}

void GravityProvider::add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end,
                                      std::span<Vec3> force, std::span<Vec3>) const {
  if (g_ == Vec3::Zero()) return;
  for (std::size_t i = begin; i < end; ++i) force[i] += s.mass[i] * g_;
}

void GravityProvider::add_potential_energies(const ParticleStore& s, EnergyReport& r) const {
  if (g_ == Vec3::Zero()) return;
  r.add("U_gravity", exact_sum(s.size(), [&](std::size_t i) { return s.owns(i) ? -s.mass[i] * g_.dot(s.position[i]) : 0.0; }));
  const double g = g_.norm();
  r.add("S_field", exact_sum(s.size(), [&](std::size_t i) { return s.owns(i) ? s.mass[i] * g * s.radius[i] : 0.0; }));
}

std::unique_ptr<GravityProvider> GravityProvider::load(ByteReader& r) {
  const Vec3 g = r.vec3("gravity");
  if (!g.allFinite()) throw StateError("inconsistent: gravity is not finite");
  return std::make_unique<GravityProvider>(g);
}

}  // namespace dem
