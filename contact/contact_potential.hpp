#pragma once
/// \file contact_potential.hpp
/// Particle-particle and particle-wall contact, MODEL.md section 4
/// (Baker & Gonzalez 2021, eqs. 56-57, with the energy prefactor 2/5 that
/// makes eq. (57) its gradient; eq. (56) misprints it as 5/2).

#include <cmath>

#include "core/types.hpp"

namespace dem {

/// Force on i and energy of one contact (no moments: frictionless spheres).
struct ContactTerms {
  Vec3 force_i = Vec3::Zero();  ///< F_i (force); F_j = -F_i
  double energy = 0.0;          ///< U (energy)
};

/// Hertz-type particle-particle contact:
/// U = (2/5) K^pp [1 - r/(r_i + r_j)]_+^{5/2},
/// F_i = K^pp/(r_i + r_j) [1 - r/(r_i + r_j)]_+^{3/2} d, d = (x_i - x_j)/r.
/// k_contact: K^pp (energy). Zero when the spheres do not overlap.
ContactTerms particle_contact(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j,
                              double k_contact);

/// The force on i of particle_contact() alone, inline for the force loop;
/// bitwise the same value. Swapping i and j gives exactly -force_i.
inline Vec3 contact_force(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j,
                          double k_contact) {
  const Vec3 delta = x_i - x_j;
  const double sum = r_i + r_j;
  const double r2 = delta.squaredNorm();
  if (r2 >= sum * sum) return Vec3::Zero();
  const double r = std::sqrt(r2);
  // At r = 0 the direction is undefined and the force vanishes by symmetry
  // of the limit; keep it zero rather than NaN.
  if (!(r > 0.0)) return Vec3::Zero();
  const double inv_sum = 1.0 / sum;
  const double overlap = 1.0 - r * inv_sum;  // in (0, 1]
  const double p32 = overlap * std::sqrt(overlap);
  return (k_contact * inv_sum * p32 / r) * delta;
}

/// A rigid plane wall through `point` with unit normal `normal`; particles
/// live on the side the normal points to.
struct Wall {
  Vec3 point = Vec3::Zero();                 ///< x_w (length)
  Vec3 normal = Vec3::UnitX();               ///< n, unit vector
  double stiffness = 0.0;                    ///< K^pw (energy)
};

/// Particle-wall contact, the special case of a particle meeting its mirror
/// image: g = (x_i - x_w).n, U = (2/5) K^pw [1 - g/r_i]_+^{5/2},
/// F_i = K^pw/r_i [1 - g/r_i]_+^{3/2} n.
ContactTerms wall_contact(const Vec3& x_i, double r_i, const Wall& wall);

}  // namespace dem
