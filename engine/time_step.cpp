#include "engine/time_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace dem {

double contact_stiffness_at_one_percent(double k_contact, double r_i, double r_j) {
  const double s = r_i + r_j;
  // F = K^pp / s (delta/s)^{3/2}  =>  dF/d(delta) = 1.5 K^pp / s^2 (delta/s)^{1/2}.
  return 1.5 * k_contact / (s * s) * std::sqrt(0.01);
}

double critical_time_step(const ParticleStore& particles, const BondList& bonds,
                          const ContactSettings& contact) {
  const std::size_t n = particles.size();
  std::vector<double> k(n, 0.0), kr(n, 0.0);
  for (std::size_t b = 0; b < bonds.size(); ++b) {
    const double r0 = bonds.rest_length[b];
    const double ka = bonds.stiffness(b).axial / (r0 * r0);
    for (const std::uint32_t i : {bonds.first[b], bonds.second[b]}) {
      k[i] += ka;
      kr[i] += bonds.stiffness(b).bending;
    }
  }
  double h = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    const double r = particles.radius[i];
    const double ki = k[i] + contact_stiffness_at_one_percent(contact.stiffness, r, r);
    if (ki > 0.0) h = std::min(h, std::sqrt(particles.mass[i] / ki));
    if (kr[i] > 0.0) h = std::min(h, std::sqrt(particles.inertia[i] / kr[i]));
  }
  return h;
}

}  // namespace dem
