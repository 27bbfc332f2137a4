#pragma once
/// \file simulation.hpp
/// The one stepper: free spheres advanced by a rescaled-Rodrigues map
/// (docs/model.md §3) and rigid clumps by the LGVI (docs/model.md §8),
/// under a ForceField, with one force evaluation per step.
///
/// Design note: the phases of one step (each a stage function, called in
/// this order by step()).
///
///     1. clumps: first LGVI part (half kick, attitude increment, drift)
///     2. spheres: advance_configuration (kick and drift of the map)
///     3. clump members placed rigidly on their clumps
///     4. rebuild phase, only when a provider's list is due:
///          particles that left a periodic cell are put back through the
///          opposite face (docs/model.md §20.1),
///          re-order the particles along the Morton curve (if the scene asks),
///          renumber every provider's records and the clumps' member slots,
///          rebuild the due lists
///     5. force evaluation (ForceField::evaluate: providers, then the gather)
///     6. spheres: complete_step (second half kick)
///     7. clumps: member forces reduced to F and the body moment M, second
///        LGVI part, members placed again
///     8. kinematic groups set to their prescribed velocity (engine/groups.hpp)
///     9. iBDEM's friction filter, if a provider applies it (docs/model.md §11.1)
///    10. fracture (docs/model.md §10.2): records over strength fail at this
///        configuration, F and tau are gathered again without them (the
///        next step's first half kick uses these)
///    11. provider events and failure records collected (in provider order)
///
/// Moving boundaries (core/force_provider.hpp MovingBoundary: walls with a
/// velocity or a servo): after phase 3 they advance to t_{n+1} with the
/// loads of the evaluation at t_n, and after phase 6 the loads of the new
/// evaluation are reduced over the ranks; W_boundary and W_contact book
/// their work at both (docs/model.md §11.8). Without a moving boundary
/// nothing of this runs. The implicit integrator refuses moving boundaries.
///
/// The dissipation ledger (docs/model.md §10.3, §11.3) is kept here: W_fracture
/// from phase 10, W_contact at both half kicks and after phase 5 (the energy
/// that records released by a change of state, such as adhesive contacts
/// that broke; only when a provider is dissipative), W_filter from phase 9,
/// and W_boundary, the work of the
/// forces on kinematic groups (h/2 F.v at each half kick) and of a
/// deforming periodic cell (docs/model.md §20.4: h/2 of its power at each
/// evaluation, and the kinetic energy a particle gains where it crosses a
/// face and takes its image's velocity).
///
/// Re-ordering happens in phase 4 only, never inside a force evaluation.
/// Without clumps, phases 1, 3 and 7 do nothing.
///
/// A part of a system split over MPI ranks (engine/partition.hpp) runs the
/// same stages; what it needs of the other ranks (ghosts' state after the
/// drift and the placement, velocities after the kicks, exact sums, the
/// rebuild decision) goes through its Collective (engine/collective.hpp),
/// which for one rank does nothing.
///
/// With the implicit integrator (IntegratorMap::implicit, docs/model.md §12.5)
/// phases 1-7 are: kinematic groups set to their velocity, the rebuild phase,
/// and one implicit step (engine/implicit_step.hpp: Newton iterations that
/// evaluate the forces as often as they need, rebuilding contact lists
/// without re-ordering); phases 9-11 follow as above (friction filter, then
/// the fracture test at the converged configuration). Clumps are not
/// supported there. W_boundary books Dt F_{n+1}.v per step. The event
/// control (docs/model.md §12.8, engine/fracture_events.hpp) may fill one
/// step of h with several shorter implicit steps, each followed by the
/// friction filter, the fracture test and the collection of its failures
/// (at its own time); the rebuild phase (and re-ordering) runs once per h.
///
/// A clump's member spheres live in the particle store like any particle;
/// their own map update in phase 2 is overwritten by their placement
/// x_q = x + R rho_q, R_q = R R_q0, v_q = v + omega x (R rho_q),
/// Omega_q = omega = R J^-1 Pi. Contacts between members of one clump add
/// nothing to F or M (to round-off) and a constant to U_contact.

#include <cstddef>
#include <span>
#include <vector>

#include "core/diagnostics.hpp"
#include "core/particle_store.hpp"
#include "core/stage_times.hpp"
#include "engine/clump.hpp"
#include "engine/collective.hpp"
#include "engine/force_field.hpp"
#include "engine/fracture_events.hpp"
#include "engine/groups.hpp"
#include "engine/stress.hpp"
#include "engine/implicit_step.hpp"
#include "engine/integrator.hpp"
#include "engine/reorder.hpp"

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

  /// How the constructor starts a Simulation.
  struct Start {
    /// The other ranks of a decomposed run (set_collective()) from the
    /// constructor on, so that the first fracture test's work is summed
    /// over every rank (nullptr: serial_collective()). Every rank then
    /// constructs its part at the same point (a collective call).
    Collective* collective = nullptr;
    /// False: a whole system set up only as the template of a decomposed
    /// run's parts (engine/partition.hpp): its members are placed, its
    /// particles put back into the periodic cell and re-ordered as the
    /// first rebuild phase would, but no list is built and no force
    /// evaluated (no contact records or result slots: the parts make
    /// their own, and find the bonds over strength at the start). Such a
    /// Simulation must not be stepped; first_forces() tells it.
    bool first_forces = true;
    /// With first_forces false: the particles and records come from a
    /// checkpoint (io/checkpoint.hpp simulation_from). The template then
    /// neither re-orders nor builds a list: it hands over the list's build
    /// and the records' histories as the checkpoint has them, the state
    /// of the run when it was written, and the parts decide at their first
    /// step whether the list is rebuilt, as that run did (restored()).
    bool restored = false;
  };
  Simulation(ParticleStore particles, ForceField forces, std::vector<Clump> clumps, IntegratorMap map,
             double time_step, std::size_t steps_done, Start start);
  /// False for a template set up with Start::first_forces = false.
  bool first_forces() const { return first_forces_; }
  /// True for a template of a checkpoint's state (Start::restored).
  bool restored() const { return restored_; }

  /// Advances one step of size h. Throws StabilityError (map 23),
  /// LgviSolveError, or std::runtime_error if a position became non-finite.
  void step();

  /// Positions or attitudes were changed from outside the stepper (a
  /// script): every provider's records are rebuilt at the next step's
  /// rebuild phase (with re-ordering, if the scene asks), whatever the
  /// displacement test says. The forces of that step's first half kick are
  /// still those of the configuration before the change.
  void positions_changed() { forces_.request_rebuild(); }

  /// Energies (the providers' potentials by column, kinetic energy of free
  /// spheres and clumps) and momenta (L about the origin), docs/model.md §5.
  EnergyReport energy_report() const;

  /// Events of the providers since the last call, each with its step.
  std::vector<InteractionEvent> take_events();
  /// Failed bonds since the last call (docs/model.md §10.4), each with its step
  /// and time, in (step, time, bond) order.
  std::vector<BondFailure> take_failures();

  /// Work taken out of E_total so far (docs/model.md §10.3, §11.3; engine/groups.hpp).
  struct Ledger {
    double fracture = 0.0;  ///< W_fracture
    double contact = 0.0;   ///< W_contact
    double filter = 0.0;    ///< W_filter
    double boundary = 0.0;  ///< W_boundary
  };
  const Ledger& ledger() const { return ledger_; }
  /// A restart continues the ledger of its checkpoint.
  void set_ledger(const Ledger& l) { ledger_ = l; }

  /// Particle groups (engine/groups.hpp): fixed and velocity groups become
  /// kinematic at once, and are flagged so in the store
  /// (ParticleStore::kinematic: the contact laws' m* is the free particle's
  /// mass against them from the next force evaluation on). Throws std::invalid_argument for an id that is not
  /// a particle or a particle in two kinematic groups.
  void set_groups(std::vector<ParticleGroup> groups);
  const std::vector<ParticleGroup>& groups() const { return groups_; }
  /// The loads of every boundary (core/force_provider.hpp MovingBoundary:
  /// walls, meshes) at the last force evaluation, summed over all MPI
  /// ranks (walls.csv). Collective.
  std::vector<BoundaryLoad> boundary_loads() const;
  /// Reaction force and moment, centroid and displacement of each group at
  /// the current state (groups.csv).
  std::vector<GroupReport> group_reports() const;
  /// The Love-Weber stress of the particles in `box` at the current state
  /// (engine/stress.hpp; stress.csv). Collective with MPI ranks.
  StressMeasure stress(const StressBox& box) const { return measure_stress(forces_, particles_, box, *collective_); }
  /// The periodic cell (engine/cell_provider.hpp), or nullptr: none.
  const PeriodicCell* cell() const { return forces_.cell(); }
  /// The Love-Weber stress of the whole periodic cell (StressBox::cell, of
  /// the cell's current volume). Throws std::logic_error without a cell.
  StressMeasure cell_stress() const;

  /// Settings of the implicit integrator's Newton iteration.
  void set_implicit_settings(const ImplicitSettings& s) {
    implicit_ = ImplicitStepper(s);
    implicit_.set_domain(collective_->solver_domain());
  }
  const ImplicitSettings& implicit_settings() const { return implicit_.settings(); }
  /// For the whole system kept as the template of a decomposed run's parts
  /// (engine/partition.hpp), never stepped again: keeps the particles' ids,
  /// the providers' settings and static records (ForceField::release_work),
  /// groups, clumps and settings, and frees the rest (the other particle
  /// fields, lists, result slots). Afterwards particles().size() is 0.
  void release_work() { (void)release_work_taking_particles(); }
  /// release_work(), handing the particles over instead of freeing them:
  /// the store as it was (order_key included), moved out, not copied. The
  /// providers' work is freed first, so that the whole system's set-up on
  /// every MPI rank peaks at its state, never at a second copy of it.
  ParticleStore release_work_taking_particles();
  /// Newton and CG iterations, line-search halvings, size and stress ratio
  /// of the last accepted implicit step (zero for the explicit maps).
  const ImplicitStepStats& last_implicit_step() const {
    static const ImplicitStepStats none;
    return implicit_attempts_.empty() ? none : implicit_attempts_.back();
  }
  /// Every implicit step tried in the last step() (docs/model.md §12.8):
  /// those the event control rejected and the accepted ones, in order; one
  /// accepted step of h when nothing shortened it.
  const std::vector<ImplicitStepStats>& last_implicit_attempts() const { return implicit_attempts_; }
  /// The event control's running step size (checkpoints, MPI parts).
  const ImplicitClock& implicit_clock() const { return clock_; }
  void set_implicit_clock(const ImplicitClock& c) { clock_ = c; }

  /// The clock after a change of time step at a restart: t = time_origin
  /// + (steps - step_origin) h, so that the time stays exact and continuous
  /// (both 0 for a run that kept one step).
  void set_time_origin(double time_origin, std::size_t step_origin);
  double time_origin() const { return time_origin_; }
  std::size_t step_origin() const { return step_origin_; }

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

  /// The other ranks of a decomposed run (mpi/domain.hpp), kept by the
  /// caller for the life of this Simulation; call before the first step
  /// (the constructor's first evaluation and fracture test run on one
  /// rank's terms unless Start::collective gave it then: a decomposed run
  /// builds each rank's Simulation from a consistent state). The default
  /// is serial_collective().
  void set_collective(Collective& collective) {
    collective_ = &collective;
    implicit_.set_domain(collective_->solver_domain());
  }

  /// Times the stages of each explicit step into `times` from now on
  /// (nullptr: stop); the caller keeps it alive meanwhile.
  void set_stage_times(StageTimes* times) { stage_times_ = times; }

 private:
  /// The kick of one explicit step: a half kick h/2 (maps 23, 25) or a
  /// whole one (map 27) changes the kinetic energy by (kick/2) F.(v^- + v^+).
  struct KickPlan {
    bool whole = false;   ///< map 27
    double kick = 0.0;    ///< h or h/2
    bool moments = true;  ///< some provider gives moments (else Omega is left out)
    bool fused = false;   ///< the second half kick runs inside the gather
  };
  KickPlan kick_plan() const;
  // The stages of step(), in order (see the design note).
  void hold_groups_before_kick(const KickPlan& plan);
  void drift(const KickPlan& plan);
  void place_clump_members();
  void rebuild_phase();
  /// The rebuild test of all ranks (the first part of rebuild_phase()).
  bool rebuild_test();
  /// What a rebuild does before the lists: back into the cell, re-ordered.
  void order_for_rebuild();
  void wrap_into_cell();
  void advance_cell();
  void control_cell();
  void book_cell_work();
  void force(const KickPlan& plan);
  void kick(const KickPlan& plan);
  void hold_groups_after_kick(const KickPlan& plan);
  void advance_clumps();
  void advance_clock();
  void move_boundaries(const KickPlan& plan);
  void book_boundaries_after_kick(const KickPlan& plan);
  void book_boundary_work(double kick);
  void friction_filter(double dt);
  void fracture();
  void collect_events(std::size_t step, double time);
  void step_implicit();
  /// One implicit step of at most dt from time t_start, retried shorter
  /// until the event control accepts it (docs/model.md §12.8), then the
  /// friction filter and the fracture test; returns its size.
  double accepted_implicit_step(double dt, double t_start);

  void start();
  void reorder();
  void index_clumps();
  void reduce_forces();
  void place_members();
  void index_groups();
  void hold_kinematic(bool clear_forces);
  ExactSum kinematic_power() const;
  void apply_friction_filter(double dt);
  void save_velocities();
  ExactSum kick_power();
  StageTimes* stage_times_ = nullptr;
  Collective* collective_ = &serial_collective();
  /// The value of an exact sum over the whole system (Collective::total).
  double global_value(ExactSum s) const { return collective_->total(s); }

  ParticleStore particles_;
  ForceField forces_;
  std::vector<Clump> clumps_;
  IntegratorMap map_;
  double h_;
  double time_ = 0.0;
  std::size_t steps_ = 0;
  double time_origin_ = 0.0;
  std::size_t step_origin_ = 0;
  std::size_t reorders_ = 0;
  bool first_forces_ = true;
  bool restored_ = false;
  std::vector<LgviHalfStep> half_;          ///< per clump, between the two parts of a step
  std::vector<std::uint32_t> member_slot_;  ///< slots of all clumps' members, clump by clump
  std::vector<char> in_clump_;              ///< per slot: member of a clump (empty without clumps)
  std::vector<InteractionEvent> events_;
  std::vector<BondFailure> failures_;
  Ledger ledger_;
  bool ledger_on_ = false;      ///< some provider is dissipative: W_contact is kept
  bool filter_on_ = false;      ///< some provider applies the friction filter
  std::vector<Vec3> v_before_, w_before_;  ///< velocities before a kick (ledger)
  std::vector<Vec3> filter_dv_, filter_dw_;
  std::vector<ParticleGroup> groups_;
  std::vector<std::uint32_t> kinematic_slot_;   ///< slots of kinematic particles
  std::vector<Vec3> kinematic_velocity_;        ///< their prescribed velocity
  std::vector<char> kinematic_;                 ///< per slot (empty without kinematic groups)
  bool has_kinematic_ = false;                  ///< the scene has kinematic groups (on every rank)
  bool deforming_ = false;                      ///< the scene's periodic cell deforms (docs/model.md §20.4)
  std::vector<std::vector<std::uint32_t>> group_slots_;  ///< per group: its members' slots (re-made at re-ordering)
  ImplicitStepper implicit_;
  std::vector<ImplicitStepStats> implicit_attempts_;  ///< the implicit steps of the last step()
  ImplicitClock clock_;                                ///< the event control's step sizes
  std::vector<double> ratio_start_, ratio_end_;        ///< stress ratios at a trial's start and end
  std::vector<Vec3> saved_position_, saved_velocity_, saved_angular_velocity_;  ///< a trial's start
  std::vector<Quat> saved_attitude_;
  bool boundaries_move_ = false;                ///< some provider's boundaries move (on every rank)
  /// The reduced loads of the last evaluation, while boundaries_move_
  /// (valid after the first step's refresh).
  std::vector<BoundaryLoad> moving_loads_;
  bool moving_loads_valid_ = false;
};

}  // namespace dem
