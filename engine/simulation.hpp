#pragma once
/// \file simulation.hpp
/// The one stepper: free spheres advanced by a rescaled-Rodrigues map
/// (MODEL.md section 3) and rigid clumps by the LGVI (MODEL.md section 8),
/// under a ForceField, with one force evaluation per step.
///
/// Design note: the phases of one step.
///
///     1. clumps: first LGVI part (half kick, attitude increment, drift)
///     2. spheres: advance_configuration (kick and drift of the map)
///     3. clump members placed rigidly on their clumps
///     4. rebuild phase, only when a provider's list is due:
///          re-order the particles along the Morton curve (if the scene asks),
///          renumber every provider's records and the clumps' member slots,
///          rebuild the due lists
///     5. force evaluation (ForceField::evaluate: providers, then the gather)
///     6. spheres: complete_step (second half kick)
///     7. clumps: member forces reduced to F and the body moment M, second
///        LGVI part, members placed again
///     8. provider events collected (in provider order)
///
/// Re-ordering happens in phase 4 only, never inside a force evaluation.
/// Without clumps, phases 1, 3 and 7 do nothing.
///
/// A clump's member spheres live in the particle store like any particle;
/// their own map update in phase 2 is overwritten by their placement
/// x_q = x + R rho_q, R_q = R R_q0, v_q = v + omega x (R rho_q),
/// Omega_q = omega = R J^-1 Pi. Contacts between members of one clump add
/// nothing to F or M (to round-off) and a constant to U_contact.

#include <cstddef>
#include <vector>

#include "core/diagnostics.hpp"
#include "core/particle_store.hpp"
#include "engine/clump.hpp"
#include "engine/force_field.hpp"
#include "engine/integrator.hpp"

namespace dem {

class Simulation {
 public:
  /// time_step: h (time), finite and > 0, else std::invalid_argument.
  /// Computes the forces at the initial configuration (F_0, tau_0), after
  /// the first rebuild phase (which may re-order the particles).
  Simulation(ParticleStore particles, ForceField forces, IntegratorMap map, double time_step);

  /// Continues a run that has already made `steps_done` steps (a restart):
  /// the clock starts at t = steps_done h.
  Simulation(ParticleStore particles, ForceField forces, IntegratorMap map, double time_step,
             std::size_t steps_done);

  /// Free spheres and clumps (members named by particle id). Throws
  /// std::invalid_argument if a member id is not a particle, a particle is
  /// in two clumps, an inertia is not physical, or h is not finite and > 0.
  Simulation(ParticleStore particles, ForceField forces, std::vector<Clump> clumps, IntegratorMap map,
             double time_step, std::size_t steps_done = 0);

  /// Advances one step of size h. Throws StabilityError (map 23),
  /// LgviSolveError, or std::runtime_error if a position became non-finite.
  void step();

  /// Energies (the providers' potentials by column, kinetic energy of free
  /// spheres and clumps) and momenta (L about the origin), MODEL.md section 5.
  EnergyReport energy_report() const;

  /// Events of the providers since the last call, each with its step.
  std::vector<InteractionEvent> take_events();

  double time() const { return time_; }
  std::size_t step_count() const { return steps_; }
  double time_step() const { return h_; }
  IntegratorMap map() const { return map_; }
  const ParticleStore& particles() const { return particles_; }
  ParticleStore& particles() { return particles_; }
  const ForceField& forces() const { return forces_; }
  const std::vector<Clump>& clumps() const { return clumps_; }
  /// Number of re-orderings so far (rebuilds at which the order changed).
  std::size_t reorder_count() const { return reorders_; }

 private:
  void start();
  void rebuild_phase();
  void reorder();
  void index_clumps();
  void reduce_forces();
  void place_members();
  void collect_events();

  ParticleStore particles_;
  ForceField forces_;
  std::vector<Clump> clumps_;
  IntegratorMap map_;
  double h_;
  double time_ = 0.0;
  std::size_t steps_ = 0;
  std::size_t reorders_ = 0;
  std::vector<LgviHalfStep> half_;          ///< per clump, between the two parts of a step
  std::vector<std::uint32_t> member_slot_;  ///< slots of all clumps' members, clump by clump
  std::vector<char> in_clump_;              ///< per slot: member of a clump (empty without clumps)
  std::vector<InteractionEvent> events_;
};

}  // namespace dem
