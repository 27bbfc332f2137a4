#include "fields/viscous_damping_provider.hpp"

#include <cmath>
#include <stdexcept>

#include "core/parallel.hpp"

namespace dem {

ViscousDampingProvider::ViscousDampingProvider(double alpha) : alpha_(alpha) {
  if (!(std::isfinite(alpha) && alpha > 0.0))
    throw std::invalid_argument("viscous damping: the rate alpha must be finite and > 0");
}

void ViscousDampingProvider::add_filter_changes(const ParticleStore& s, double h, std::span<Vec3> dv,
                                                std::span<Vec3> dw) const {
  // exp(-alpha h) - 1 without the cancellation of a small alpha h.
  const double c = std::expm1(-alpha_ * h);
  parallel_for_ranges(s.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      dv[i] += c * s.velocity[i];
      dw[i] += c * s.angular_velocity[i];
    }
  });
}

std::unique_ptr<ViscousDampingProvider> ViscousDampingProvider::load(ByteReader& r) {
  const double alpha = r.f64("viscous damping rate");
  if (!(std::isfinite(alpha) && alpha > 0.0))
    throw StateError("inconsistent: the viscous damping rate must be finite and > 0");
  return std::make_unique<ViscousDampingProvider>(alpha);
}

}  // namespace dem
