#pragma once
/// \file time_step.hpp
/// Estimate of the critical time step of a bonded particle scene, MODEL.md
/// section 7: h_crit = min_i min( sqrt(m_i / k_i), sqrt(J_i / kr_i) ), where
/// k_i sums K^a / r0^2 over the bonds of particle i plus the contact
/// stiffness at 1% overlap, and kr_i sums K^m over its bonds. The default
/// step of a scene is a stated fraction (0.1) of it.

#include "bonds/bond_list.hpp"
#include "engine/force_field.hpp"
#include "core/particle_store.hpp"

namespace dem {

/// Default fraction of the critical time step used when no step is given.
inline constexpr double kDefaultTimeStepFraction = 0.1;

/// Tangent stiffness dF/d(delta) of the particle-particle contact of
/// MODEL.md section 4 between radii r_i, r_j at an overlap of 1% of
/// r_i + r_j: 1.5 K^pp / (r_i + r_j)^2 * 0.1 (force/length).
double contact_stiffness_at_one_percent(double k_contact, double r_i, double r_j);

/// h_crit (time) as above; +infinity when nothing is stiff (no bonds and no
/// contact stiffness). The contact term uses each particle's own radius for
/// both spheres.
double critical_time_step(const ParticleStore& particles, const BondList& bonds,
                          const ContactSettings& contact);

}  // namespace dem
