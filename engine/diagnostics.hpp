#pragma once
/// \file diagnostics.hpp
/// Energies and momenta of the whole system, MODEL.md section 5.

#include "engine/types.hpp"

namespace dem {

/// One row of the energy table. Energies in energy units, momenta in
/// mass length/time (P) and mass length^2/time (L, about the origin).
struct EnergyReport {
  double time = 0.0;             ///< t
  double kinetic_translation = 0.0;  ///< E_kin_trans = sum m |v|^2 / 2
  double kinetic_rotation = 0.0;     ///< E_kin_rot = sum J |Omega|^2 / 2
  double bending = 0.0;          ///< U_bend
  double axial = 0.0;            ///< U_axial
  double shear = 0.0;            ///< U_shear
  double contact = 0.0;          ///< U_contact (particle-particle)
  double wall = 0.0;             ///< U_wall
  double gravity = 0.0;          ///< U_gravity = -sum m g.x (zero without gravity)
  Vec3 linear_momentum = Vec3::Zero();   ///< P = sum m v
  Vec3 angular_momentum = Vec3::Zero();  ///< L = sum (x x m v + J Omega)

  double total() const {
    return kinetic_translation + kinetic_rotation + bending + axial + shear + contact + wall +
           gravity;
  }
};

}  // namespace dem
