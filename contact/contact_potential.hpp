#pragma once
/// \file contact_potential.hpp
/// Particle-particle and particle-wall contact, docs/model.md §4
/// (Baker & Gonzalez 2021, eqs. 56-57, with the energy prefactor 2/5 that
/// makes eq. (57) its gradient; eq. (56) misprints it as 5/2).

#include <cmath>
#include <cstdint>

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

namespace lanes {
#include "contact/pair_lanes.inc"

/// The Ops policy of hertz_force_lanes for double.
struct ScalarPairOps {
  static constexpr bool kScalar = true;
  static double c(double v) { return v; }
  static double sqrt(double x) { return std::sqrt(x); }
  static bool touching(double r2, double reach2, double r) { return r2 < reach2 && r > 0.0; }
  static double select(bool, double v) { return v; }
};
}  // namespace lanes

/// The force on i of particle_contact() alone, inline for the force loop;
/// bitwise the same value, and the same as the vectorised pair kernel
/// (contact/pair_kernel.hpp). Swapping i and j gives exactly -force_i.
inline Vec3 contact_force(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j,
                          double k_contact) {
  const double xi[3] = {x_i[0], x_i[1], x_i[2]}, xj[3] = {x_j[0], x_j[1], x_j[2]};
  double f[3];
  lanes::ScalarPairOps ops;
  lanes::hertz_force_lanes(xi, xj, r_i, r_j, k_contact, f, ops);
  return Vec3(f[0], f[1], f[2]);
}

/// A rigid plane wall through `point` with unit normal `normal`; particles
/// live on the side the normal points to.
struct Wall {
  /// `material` of a wall made of each touching particle's own material.
  static constexpr std::uint32_t kParticleMaterial = 0xffffffffu;
  Vec3 point = Vec3::Zero();                 ///< x_w (length)
  Vec3 normal = Vec3::UnitX();               ///< n, unit vector
  double stiffness = 0.0;                    ///< K^pw (energy)
  /// The wall's material for the laws with material coefficients (an index of the
  /// scene's [[material]] list, docs/model.md §11.2), or kParticleMaterial:
  /// the touching particle's own. The stiffness laws (K^pw) take none.
  std::uint32_t material = kParticleMaterial;
  /// The velocity of the wall's surface at the contact point (length/time):
  /// the kinetic laws' relative velocity is v_i - velocity (minus the spin
  /// term). Zero for a wall at rest; a moving wall (WallProvider,
  /// WallContactProvider as core/force_provider.hpp's MovingBoundary) sets
  /// it to the velocity it moves with over the current step.
  Vec3 velocity = Vec3::Zero();
  /// The material the wall meets a particle of material `particle` with.
  std::uint32_t material_for(std::uint32_t particle) const {
    return material == kParticleMaterial ? particle : material;
  }
};

/// Particle-wall contact, the special case of a particle meeting its mirror
/// image: g = (x_i - x_w).n, U = (2/5) K^pw [1 - g/r_i]_+^{5/2},
/// F_i = K^pw/r_i [1 - g/r_i]_+^{3/2} n.
ContactTerms wall_contact(const Vec3& x_i, double r_i, const Wall& wall);

}  // namespace dem
