#include "core/particle_store.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/format.hpp"

namespace dem {

namespace {
void require_positive(double value, const char* what, std::size_t index) {
  if (!(std::isfinite(value) && value > 0.0))
    throw std::invalid_argument("particle " + std::to_string(index) + ": " + what +
                                " must be a finite positive number, got " +
                                format_g(value));
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
  for_each_field([](const char*, auto& v) {
    v.push_back(zero_value<typename std::decay_t<decltype(v)>::value_type>());
  });
  position[index] = spec.position;
  velocity[index] = spec.velocity;
  attitude[index] = q;
  angular_velocity[index] = spec.angular_velocity;
  mass[index] = spec.mass;
  inertia[index] = spec.inertia;
  radius[index] = 0.5 * spec.diameter;
  reference_position[index] = spec.position;
  reference_attitude[index] = q;
  id[index] = static_cast<std::uint32_t>(index);
  material[index] = spec.material;
  return index;
}

void ParticleStore::append(const ParticleStore& p) {
  const std::size_t first = size();
  p.for_each_field([&](const char* name, const auto& from) {
    this->for_each_field([&](const char* here, auto& to) {
      if constexpr (std::is_same_v<std::decay_t<decltype(from)>, std::decay_t<decltype(to)>>)
        if (std::string_view(here) == name) to.insert(to.end(), from.begin(), from.end());
    });
  });
  for (std::size_t k = 0; k < p.size(); ++k) id[first + k] = static_cast<std::uint32_t>(first + k);
}

void ParticleStore::reserve(std::size_t n) {
  for_each_field([n](const char*, auto& v) { v.reserve(n); });
}

}  // namespace dem
