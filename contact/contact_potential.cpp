#include "contact/contact_potential.hpp"

#include <cmath>

namespace dem {

ContactTerms particle_contact(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j,
                              double k_contact) {
  ContactTerms t;
  const Vec3 delta = x_i - x_j;
  const double sum = r_i + r_j;
  const double r2 = delta.squaredNorm();
  if (r2 >= sum * sum) return t;
  const double r = std::sqrt(r2);
  const double overlap = 1.0 - r / sum;  // in (0, 1]
  const double p32 = overlap * std::sqrt(overlap);
  t.force_i = contact_force(x_i, x_j, r_i, r_j, k_contact);
  t.energy = 0.4 * k_contact * overlap * p32;
  return t;
}

ContactTerms wall_contact(const Vec3& x_i, double r_i, const Wall& wall) {
  ContactTerms t;
  const double g = (x_i - wall.point).dot(wall.normal);
  if (g >= r_i) return t;
  const double overlap = 1.0 - g / r_i;  // > 0, unbounded if the wall is passed
  const double p32 = overlap * std::sqrt(overlap);
  t.force_i = (wall.stiffness / r_i * p32) * wall.normal;
  t.energy = 0.4 * wall.stiffness * overlap * p32;
  return t;
}

}  // namespace dem
