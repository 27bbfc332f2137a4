#include "engine/time_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

namespace dem {

double contact_stiffness_at_one_percent(double k_contact, double r_i, double r_j) {
  const double s = r_i + r_j;
  // F = K^pp / s (delta/s)^{3/2}  =>  dF/d(delta) = 1.5 K^pp / s^2 (delta/s)^{1/2}.
  return 1.5 * k_contact / (s * s) * std::sqrt(0.01);
}

double wall_stiffness_at_one_percent(double k_wall, double r_i) {
  // F = K^pw / r (delta/r)^{3/2}  =>  dF/d(delta) = 1.5 K^pw / r^2 (delta/r)^{1/2}.
  return 1.5 * k_wall / (r_i * r_i) * std::sqrt(0.01);
}

CriticalTimeStep critical_time_step_of(const ParticleStore& particles, const BondList& bonds,
                                       const ContactSettings& contact, std::span<const Wall> walls) {
  const std::size_t n = particles.size();
  // Per particle: translation (axial, shear) and rotation (bending, shear) sums.
  std::vector<double> axial(n, 0.0), shear(n, 0.0), bending(n, 0.0), shear_rot(n, 0.0);
  for (std::size_t b = 0; b < bonds.size(); ++b) {
    const double r0 = bonds.rest_length[b];
    const BondStiffness& k = bonds.stiffness(b);
    for (const std::uint32_t i : {bonds.first[b], bonds.second[b]}) {
      axial[i] += k.axial / (r0 * r0);
      shear[i] += kShearTranslationFactor * k.shear / (r0 * r0);
      bending[i] += k.bending;
      shear_rot[i] += kShearRotationFactor * k.shear;
    }
  }
  double k_wall = 0.0;
  for (const Wall& w : walls) k_wall = std::max(k_wall, w.stiffness);
  CriticalTimeStep out;
  out.h = std::numeric_limits<double>::infinity();
  const auto consider = [&](std::size_t i, double inertia, bool rotation,
                            std::initializer_list<std::pair<const char*, double>> terms) {
    double sum = 0.0;
    for (const auto& t : terms) sum += t.second;
    if (!(sum > 0.0)) return;
    const double h = std::isfinite(sum) ? std::sqrt(inertia / sum) : 0.0;
    if (!(h < out.h)) return;
    out.h = h;
    out.particle = i;
    out.rotation = rotation;
    out.stiffness = sum;
    out.term_stiffness = -1.0;
    for (const auto& t : terms)
      if (t.second > out.term_stiffness) out.term = t.first, out.term_stiffness = t.second;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double r = particles.radius[i];
    consider(i, particles.mass[i], false,
             {{"bond axial", axial[i]},
              {"bond shear", shear[i]},
              {"contact", contact_stiffness_at_one_percent(contact.stiffness, r, r)},
              {"wall", k_wall > 0.0 ? wall_stiffness_at_one_percent(k_wall, r) : 0.0}});
    consider(i, particles.inertia[i], true, {{"bond bending", bending[i]}, {"bond shear", shear_rot[i]}});
  }
  return out;
}

double critical_time_step(const ParticleStore& particles, const BondList& bonds, const ContactSettings& contact,
                          std::span<const Wall> walls) {
  return critical_time_step_of(particles, bonds, contact, walls).h;
}

}  // namespace dem
