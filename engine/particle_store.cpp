#include "engine/particle_store.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dem {

namespace {
void require_positive(double value, const char* what, std::size_t index) {
  if (!(std::isfinite(value) && value > 0.0))
    throw std::invalid_argument("particle " + std::to_string(index) + ": " + what +
                                " must be a finite positive number, got " +
                                std::to_string(value));
}
void require_finite(const Vec3& v, const char* what, std::size_t index) {
  if (!v.allFinite())
    throw std::invalid_argument("particle " + std::to_string(index) + ": " + what +
                                " is not finite");
}
}  // namespace

std::size_t ParticleStore::add(const ParticleSpec& spec) {
  const std::size_t index = size();
  require_positive(spec.mass, "mass", index);
  require_positive(spec.inertia, "moment of inertia", index);
  require_positive(spec.diameter, "diameter", index);
  require_finite(spec.position, "position", index);
  require_finite(spec.velocity, "velocity", index);
  require_finite(spec.angular_velocity, "angular velocity", index);
  if (!spec.attitude.coeffs().allFinite() || spec.attitude.norm() < 0.5)
    throw std::invalid_argument("particle " + std::to_string(index) +
                                ": attitude is not a unit quaternion");
  const Quat q = spec.attitude.normalized();
  position.push_back(spec.position);
  velocity.push_back(spec.velocity);
  attitude.push_back(q);
  angular_velocity.push_back(spec.angular_velocity);
  force.push_back(Vec3::Zero());
  moment.push_back(Vec3::Zero());
  mass.push_back(spec.mass);
  inertia.push_back(spec.inertia);
  radius.push_back(0.5 * spec.diameter);
  reference_position.push_back(spec.position);
  reference_attitude.push_back(q);
  id.push_back(static_cast<std::uint32_t>(index));
  return index;
}

void ParticleStore::append(const ParticleStore& p) {
  const std::size_t first = size();
  const auto cat = [](auto& a, const auto& b) { a.insert(a.end(), b.begin(), b.end()); };
  cat(position, p.position);
  cat(velocity, p.velocity);
  cat(attitude, p.attitude);
  cat(angular_velocity, p.angular_velocity);
  cat(force, p.force);
  cat(moment, p.moment);
  cat(mass, p.mass);
  cat(inertia, p.inertia);
  cat(radius, p.radius);
  cat(reference_position, p.reference_position);
  cat(reference_attitude, p.reference_attitude);
  for (std::size_t k = 0; k < p.size(); ++k) id.push_back(static_cast<std::uint32_t>(first + k));
}

void ParticleStore::reserve(std::size_t n) {
  position.reserve(n);
  velocity.reserve(n);
  attitude.reserve(n);
  angular_velocity.reserve(n);
  force.reserve(n);
  moment.reserve(n);
  mass.reserve(n);
  inertia.reserve(n);
  radius.reserve(n);
  reference_position.reserve(n);
  reference_attitude.reserve(n);
  id.reserve(n);
}

}  // namespace dem
