#pragma once
/// \file time_step.hpp
/// Estimate of the critical time step of a bonded particle scene.
/// docs/model.md §7 takes h_crit = min_i min( sqrt(m_i / k_i), sqrt(J_i / kr_i) )
/// with k_i the axial bond stiffnesses and the contact at 1% overlap, and
/// kr_i the bending stiffnesses. That leaves out two stiffnesses that act
/// on a particle: the shear term of the bonds and the walls (a ring with
/// K^s = 1e8, or a wall of K^pw = 1e9, diverged at 0.999 of it). Here every
/// stiffness on particle i counts, each at its largest tangent value:
///
///   k_i  = sum over its bonds of (K^a + c_t K^s) / r0^2       (translation)
///        + 1.5 K^pp / (2 r_i)^2 * 0.1                          (contact at 1% overlap)
///        + max over walls of 1.5 K^pw / r_i^2 * 0.1            (wall at 1% of r_i)
///   kr_i = sum over its bonds of (K^m + c_r K^s)               (rotation)
///
/// The shear energy U^s = K^s (s_i^2 + s_j^2)/4, s = 1 - cos(phi) (phi the
/// angle between Q d0 and d), has zero stiffness at rest but a tangent
/// stiffness d^2/dphi^2 [(1 - cos phi)^2/4] K^s = K^s (sin^2 phi +
/// (1 - cos phi) cos phi)/2, at most 9/16 K^s (at cos phi = 1/4): against a
/// rotation of one end c_r = 9/16, against a sideways displacement of one
/// end, which turns both ends' phi by |u|/r0, c_t = 2 * 9/16 = 9/8.
///
/// Safety factor: a single spring of stiffness k is stable for h < 2/omega =
/// 2 sqrt(m/k) (docs/model.md §9.6: the maps are stable for h omega < 2);
/// the estimate takes sqrt(m_i/k_i), half of that, which leaves room for
/// the coupling of neighbouring particles (Gershgorin: omega^2 <= 2 k_i/m_i
/// for springs, so 2/omega >= sqrt(2) sqrt(m_i/k_i)). The default step of a
/// scene is a stated fraction (0.1) of h_crit.

#include <cstddef>
#include <span>
#include <string>

#include "bonds/bdem_bond.hpp"
#include "bonds/bdem_provider.hpp"
#include "core/law_schema.hpp"
#include "bonds/bond_list.hpp"
#include "contact/contact_potential.hpp"
#include "contact/hertz_mindlin.hpp"
#include "core/particle_store.hpp"
#include "engine/force_field.hpp"

namespace dem {

/// Default fraction of the critical time step used when no step is given.
inline constexpr double kDefaultTimeStepFraction = 0.1;

/// Largest tangent stiffness of the shear term against a sideways
/// displacement of one end, as a multiple of K^s / r0^2 (see the file comment).
inline constexpr double kShearTranslationFactor = 9.0 / 8.0;
/// Largest tangent stiffness of the shear term against a rotation of one
/// end, as a multiple of K^s.
inline constexpr double kShearRotationFactor = 9.0 / 16.0;

/// Tangent stiffness dF/d(delta) of the particle-particle contact of
/// docs/model.md §4 between radii r_i, r_j at an overlap of 1% of
/// r_i + r_j: 1.5 K^pp / (r_i + r_j)^2 * 0.1 (force/length).
double contact_stiffness_at_one_percent(double k_contact, double r_i, double r_j);

/// Tangent stiffness dF/d(delta) of the wall contact of docs/model.md §4
/// at an overlap of 1% of r_i: 1.5 K^pw / r_i^2 * 0.1 (force/length).
double wall_stiffness_at_one_percent(double k_wall, double r_i);

// CriticalTimeStep: core/law_schema.hpp.

/// h_crit as in the file comment, with the particle and the stiffness that
/// set it. Walls may be empty. A stiffness that overflows makes h = 0 (the
/// caller refuses such a scene).
CriticalTimeStep critical_time_step_of(const ParticleStore& particles, const BondList& bonds,
                                       const ContactSettings& contact, std::span<const Wall> walls = {});

// bdem_bonds_time_step(): bonds/bdem_provider.hpp.


// The Rayleigh time step of Hertz-Mindlin contact, rayleigh_time_step(), is in
// contact/hertz_mindlin.hpp; each contact law gives its own limit
// (PreparedContactLaw::time_step_limit, contact/contact_laws.hpp).

/// critical_time_step_of(...).h.
double critical_time_step(const ParticleStore& particles, const BondList& bonds, const ContactSettings& contact,
                          std::span<const Wall> walls = {});

}  // namespace dem
