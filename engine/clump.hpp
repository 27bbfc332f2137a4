#pragma once
/// \file clump.hpp
/// Rigid clumps of spheres integrated by the LGVI (MODEL.md section 8),
/// side by side with free spheres integrated by a rescaled-Rodrigues map.
///
/// A clump's member spheres live in the particle store like any particle, so
/// the neighbour search, contacts, walls and bonds see them; each step the
/// forces F_q and spatial moments tau_q on the members are reduced to the
/// clump's force F = sum F_q and body-frame moment
/// M = sum rho_q x (R^T F_q) + R^T tau_q, the clump is advanced by the LGVI,
/// and the members are placed rigidly: x_q = x + R rho_q, R_q = R R_q0,
/// v_q = v + omega x (R rho_q), Omega_q = omega = R J^-1 Pi.
///
/// Contacts between members of one clump are central and equal and
/// opposite, so they add nothing to F or M (to round-off) and a constant to
/// U_contact. Free spheres and clumps coexist; the particle store must not
/// be re-ordered (ContactSettings::reorder_on_rebuild = false), since clumps
/// refer to their members by slot.

#include <cstdint>
#include <vector>

#include "engine/diagnostics.hpp"
#include "engine/force_field.hpp"
#include "engine/integrator.hpp"
#include "engine/lgvi.hpp"
#include "engine/particle_store.hpp"

namespace dem {

struct Clump {
  RigidBody body;                      ///< mass, J (body frame), x, v, R, Pi
  std::vector<std::uint32_t> members;  ///< slots of the member spheres
  std::vector<Vec3> offsets;           ///< rho_q, body frame (length)
  std::vector<Quat> member_attitudes;  ///< R_q0, members' attitudes relative to the clump's
};

/// Makes a clump of the spheres in `slots` (already in the store, at rest
/// relative to each other): mass = sum of member masses, centre of mass, J =
/// sum (J_q I + m_q (|r|^2 I - r r^T)) about it (overlaps counted twice: give
/// the inertia yourself for strongly overlapping members), body frame = the
/// inertial frame (R = I), the clump moving with velocity v and angular
/// velocity omega (spatial); sets the members' velocities to match. Throws
/// std::invalid_argument for an empty or repeated slot list, a slot out of
/// range, or a non-physical inertia.
/// The clump of the spheres in `slots`, at rest: mass, centre, J and member
/// offsets as make_clump() computes them, without touching the store.
/// Throws as make_clump() does.
Clump clump_at_rest(const ParticleStore& particles, const std::vector<std::uint32_t>& slots);

Clump make_clump(ParticleStore& particles, const std::vector<std::uint32_t>& slots, const Vec3& velocity,
                 const Vec3& angular_velocity);

/// A simulation of free spheres (RRP map `map`) and clumps (LGVI), one force
/// evaluation per step.
class ClumpSimulation {
 public:
  /// Throws std::invalid_argument if a particle belongs to two clumps, the
  /// field re-orders particles, or h is not finite and positive.
  ClumpSimulation(ParticleStore particles, ForceField forces, std::vector<Clump> clumps, IntegratorMap map,
                  double time_step);

  /// Advances one step. Throws as Simulation::step() and LgviSolveError.
  void step();

  /// Energies (potentials of the field; kinetic energy of free spheres and
  /// clumps) and momenta (free spheres plus clumps, L about the origin).
  EnergyReport energy_report() const;

  double time() const { return static_cast<double>(steps_) * h_; }
  double time_step() const { return h_; }
  IntegratorMap map() const { return map_; }
  std::size_t step_count() const { return steps_; }
  const ParticleStore& particles() const { return particles_; }
  const std::vector<Clump>& clumps() const { return clumps_; }
  const ForceField& forces() const { return forces_; }

 private:
  void reduce_forces();
  void place_members();

  ParticleStore particles_;
  ForceField forces_;
  std::vector<Clump> clumps_;
  std::vector<char> in_clump_;  ///< per slot: member of a clump
  IntegratorMap map_;
  double h_;
  std::size_t steps_ = 0;
  std::vector<LgviHalfStep> half_;  ///< per clump, between the two parts of a step
};

}  // namespace dem
