#pragma once
/// \file implicit_step.hpp
/// The implicit integrator of iBDEM as docs/model.md §12 specifies it:
/// backward Euler as the minimisation of the incremental potential
///
///     Phi(x, q) = sum_i [ m_i/(2 Dt²) |x_i - x̂_i|² + (2 J_i/Dt²) |q_i - q̂_i|² ] + V(x, q)
///     x̂ = x_n + Dt u,  q̂ = q_n + Dt w = 2 q_n - q_{n-1}                (12.2)
///
/// over positions and unit quaternions, by Newton's method on the manifold
/// (12.3: tangent coordinates (delta x_i, phi_i), retraction
/// R <- exp(S(alpha phi)) R), with the gradient and the per-element projected
/// Hessian of 12.4, preconditioned conjugate gradients (block Jacobi,
/// engine/block_hessian.hpp) and a backtracking Armijo line search (12.5).
///
/// State: the engine keeps u and w in the particle store as the explicit
/// maps do, velocity = u and angular_velocity = Omega = 2 vec(w q̄_n)
/// (12.1). w is recovered from Omega and q_n exactly up to round-off, since
/// w q̄_n = (1 - p)/Dt with the unit quaternion p = q_{n-1} q̄_n, whose vector
/// part is -Omega Dt/2 and whose scalar part is sqrt(1 - |Omega Dt/2|²) (> 0:
/// no particle turns by pi or more in one step). Every step goes through
/// this conversion, so a restart from a checkpoint (x, v, q, Omega) continues
/// bit for bit, and a run may switch between the explicit maps and this
/// integrator at any step.
///
/// With ImplicitSettings::scheme = midpoint the step is the implicit
/// midpoint rule (docs/model.md §12.9): the same Newton iteration over half
/// the step, then extrapolated; velocity and angular_velocity are then the
/// velocities at t_n, not chords.
///
/// Units: those of the scene. Errors: ImplicitSolveError when Newton fails;
/// std::invalid_argument for the AMG preconditioner on a part of an MPI run.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/particle_store.hpp"
#include "core/types.hpp"
#include "engine/amg_preconditioner.hpp"
#include "engine/block_hessian.hpp"
#include "engine/force_field.hpp"
#include "engine/two_level_preconditioner.hpp"

namespace dem {

/// Settings of the Newton iteration (docs/model.md §12.5; scene keys of [run],
/// docs/scene-format.md).
/// The largest newton_tolerance a scene may give ([run] newton_tolerance):
/// a residual force that moves a particle by 1e-3 of its radius in a step.
inline constexpr double kMaxNewtonTolerance = 1e-3;

/// The conjugate gradients' preconditioner (docs/model.md §12.5 c; scene
/// key [run] preconditioner). Codes as in checkpoints (io/checkpoint.hpp).
enum class CgPreconditioner : std::uint8_t {
  block_jacobi = 0,  ///< the inverses of the 6x6 diagonal blocks (the default; bitwise everywhere, MPI included)
  amg = 1,           ///< one BoomerAMG V-cycle (engine/amg_preconditioner.hpp; one process only)
  two_level = 2,     ///< block Jacobi + rigid aggregates (engine/two_level_preconditioner.hpp; one process only)
};

/// The implicit step's time discretisation (ImplicitSettings::scheme;
/// codes as in checkpoints).
enum class ImplicitScheme : std::uint8_t {
  /// iBDEM's backward Euler (docs/model.md §12.2): first order, damps a mode
  /// of angular frequency omega by 1/sqrt(1 + omega² Dt²) a step (§12.6).
  backward_euler = 0,
  /// The implicit midpoint rule (docs/model.md §12.9): a backward-Euler step
  /// of Dt/2 to the midpoint, then extrapolated to Dt. Second order; keeps
  /// the amplitude of every linear mode (the energy of a linear system).
  midpoint = 1,
};

/// When the Newton iteration assembles the Hessian (ImplicitSettings::
/// hessian_update; codes as in checkpoints).
enum class HessianUpdate : std::uint8_t {
  every_iteration = 0,  ///< a new H at every Newton iteration (Newton's method)
  when_slow = 1,        ///< the step's first H until an iteration does not halve the residual
};
/// hessian_update = "when-slow" assembles H again after an iteration whose
/// residual is above this fraction of the one before (on the middle bending
/// beam 0.5 took a sixth less time than 0.1, as many Newton iterations).
inline constexpr double kHessianReuseReduction = 0.5;

/// What the scene file, `dem run` and checkpoints know of a preconditioner.
struct PreconditionerEntry {
  CgPreconditioner code;
  const char* keyword;      ///< the value of [run] preconditioner
  const char* description;  ///< for `dem run`'s integrator line
  /// Why it is refused on a part of an MPI run; nullptr: it runs there.
  const char* one_process_only;
  bool (*available)();      ///< false: not in this build
  const char* unavailable;  ///< what to do then
};
/// Every preconditioner, in code order.
std::span<const PreconditionerEntry> preconditioners();
/// The entry of `code` (std::invalid_argument for a code not in the table).
const PreconditionerEntry& preconditioner_entry(CgPreconditioner code);

struct ImplicitSettings {
  double newton_tolerance = 1e-8;        ///< eps_N of the dimensionless residual e_k
  double cg_tolerance_max = 0.5;         ///< eps_r = min(cg_tolerance_max, sqrt(e_k))
  std::size_t max_newton_iterations = 100;
  std::size_t max_cg_iterations = 1000;
  std::size_t max_halvings = 30;         ///< line-search halvings per iteration
  /// The element Hessian blocks (docs/model.md §12.4): Gauss-Newton (the
  /// default: as few Newton iterations as the projection on the plate, the
  /// beam and the bending test, without its eigen-decompositions), projected
  /// to positive semi-definite (iBDEM Algorithm 3 line 10), or exact
  /// (quadratic Newton convergence, but H may be indefinite at large steps;
  /// for tests). Scene key [run] hessian_blocks.
  HessianBlocks hessian_blocks = HessianBlocks::gauss_newton;
  /// When the Hessian is assembled (docs/model.md §12.5 b): at every
  /// Newton iteration (the default), or once a step and again only after an
  /// iteration that did not halve the residual (modified Newton: the same
  /// Newton tolerance, fewer assemblies).
  /// Scene key [run] hessian_update.
  HessianUpdate hessian_update = HessianUpdate::every_iteration;
  /// Backward Euler (iBDEM, the default) or the implicit midpoint rule
  /// (docs/model.md §12.9). Scene key [run] implicit_scheme.
  ImplicitScheme scheme = ImplicitScheme::backward_euler;
  /// Block Jacobi or algebraic multigrid (hypre BoomerAMG, where the build
  /// has it: amg_available()). AMG is set up again after every assembly of
  /// the Hessian and keeps no state between steps. Scene key [run]
  /// preconditioner.
  CgPreconditioner preconditioner = CgPreconditioner::block_jacobi;
  /// Fracture events located in time (docs/model.md §12.8;
  /// engine/fracture_events.hpp): a step that takes a bond's stress ratio
  /// above 1 + event_tolerance is retried shorter. 0: off (every step has
  /// the scene's time step; bonds fail at the end of the step in which they
  /// passed their strength). Scene key [run] event_tolerance.
  double event_tolerance = 1e-3;
};

/// What one implicit step did (solver.csv). The step size, whether it was
/// accepted and the stress ratio are set by the stepper's event control
/// (engine/simulation.hpp).
struct ImplicitStepStats {
  double time_step = 0.0;         ///< Dt of this step (time)
  bool accepted = true;           ///< false: rejected by the event control and retried shorter
  double stress_ratio = 0.0;      ///< the largest stress ratio of a record that can fail at its end (0: none)
  std::size_t newton_iterations = 0;
  std::size_t cg_iterations = 0;
  std::size_t hessian_assemblies = 0;  ///< at most newton_iterations (hessian_update)
  std::size_t halvings = 0;       ///< line-search halvings, summed over the iterations
  double residual = 0.0;          ///< e_k at convergence
  std::vector<double> residuals;  ///< e_k of every iteration, the last one at convergence
};

/// A step whose Newton iteration did not converge, or that would turn a
/// particle by pi or more.
class ImplicitSolveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ImplicitStepper {
 public:
  explicit ImplicitStepper(ImplicitSettings settings = {}) : settings_(settings) {}

  /// One step n -> n+1 of size dt (docs/model.md §12.5 items 1-4): on entry the
  /// store holds x_n, q_n, u (velocity) and Omega (angular_velocity);
  /// particles whose `fixed` flag is set (one per particle, or empty) move
  /// with their velocity and keep their attitude. On return it holds
  /// x_{n+1}, q_{n+1}, u = (x_{n+1} - x_n)/Dt, Omega = 2 vec(w q̄_{n+1}), and
  /// the forces and moments at x_{n+1}, q_{n+1} (the forces' records
  /// current). Never re-orders the particles; rebuilds the contact lists
  /// when an iterate has moved far enough. Throws ImplicitSolveError naming
  /// the residual and the particle where it is largest.
  ///
  /// With scheme = midpoint (docs/model.md §12.9) the velocities on entry
  /// and return are the midpoint rule's v_n and Omega_n, the Newton
  /// iteration solves the half step to the midpoint, `at_midpoint` (if
  /// given) is called there with the store at the midpoint and its forces
  /// current, and the step is then extrapolated to x_{n+1}, q_{n+1} and the
  /// forces evaluated there. The statistics are those of the half step's
  /// Newton iteration.
  ImplicitStepStats step(ParticleStore& particles, ForceField& forces, double dt, std::span<const char> fixed,
                         const std::function<void()>& at_midpoint = {});

  /// Makes the next step() a retry of the last one from the same state
  /// (the event control's, docs/model.md §12.8) at `fraction` (in (0, 1)) of
  /// its size: its Newton iteration starts from the prediction plus
  /// fraction² times the correction the last step's solve made to its
  /// prediction (x - x̂, and the turn from q̂/|q̂| to q), which is exact for
  /// a constant acceleration and follows a quasi-static load path (§12.5
  /// item 2). Used by the next step() only.
  void retry_last_step(double fraction) { retry_fraction_ = fraction; }

  const ImplicitSettings& settings() const { return settings_; }
  /// Makes the steps of one MPI rank's part of a decomposed system
  /// (engine/partition.hpp) those of the whole: sums and the residual over
  /// all ranks, ghosts' Newton directions their owners', contact lists
  /// rebuilt when the whole system's test says so.
  void set_domain(SolverDomain domain) { domain_ = std::move(domain); }

  // The pieces of a step, public for tests and diagnostics.

  /// x̂ and q̂ of every particle from the store's x_n, q_n, u and Omega
  /// (12.2; with scheme = midpoint q̂ = exp(S(dt Omega)) q_n, 12.9, for the
  /// half step dt); throws ImplicitSolveError for a particle turning by pi
  /// or more.
  void predict(const ParticleStore& particles, double dt);
  /// Phi at the store's configuration (its forces' records current, the
  /// last evaluate() at this configuration), after predict() (energy).
  double incremental_potential(const ParticleStore& particles, const ForceField& forces, double dt) const;
  /// g = (g_x, g_phi) per particle at the store's configuration with its
  /// forces and moments (12.4), after predict(); zero for fixed particles.
  std::span<const Vec6> gradient(const ParticleStore& particles, double dt, std::span<const char> fixed);

 private:
  /// The Newton iteration of one backward-Euler step of dt (12.5 items 1-4).
  ImplicitStepStats solve(ParticleStore& particles, ForceField& forces, double dt, std::span<const char> fixed);
  /// The midpoint rule's completion from the half step's end (12.9), dt
  /// the whole step: x_{n+1} = 2 x_mid - x_n, v_{n+1} = 4 (x_mid - x_n)/dt -
  /// v_n; Omega_{n+1} = Omega_n + dt tau/J with the midpoint's moment
  /// tau = -(2 J/h²) vec(q̂ q̄_mid), q_{n+1} = exp(S(dt (Omega_n +
  /// Omega_{n+1})/2)) q_n. Particles with `fixed` set keep their velocities
  /// and move by dt v, turning by twice the half step's turn.
  void extrapolate(ParticleStore& particles, double dt, std::span<const char> fixed);

  /// Phi, and in `magnitude` the sum of the magnitudes of its terms (the
  /// scale of its round-off).
  double incremental_potential(const ParticleStore& particles, const ForceField& forces, double dt,
                               double& magnitude) const;

  /// The residual of the gradient() just taken (docs/model.md §12.5 a): the
  /// largest over every rank, and in `worst_slot` where (n: on another rank).
  double largest_residual(const ParticleStore& particles, double dt, std::size_t& worst_slot) const;
  /// The inertia blocks of the Hessian (§12.4), the CG weights M^-1 and the
  /// right-hand side -g at the current iterate.
  void inertia_blocks(const ParticleStore& particles, double inv_dt2);
  /// update_records() with the rebuild test over all ranks, then evaluate().
  void compute(ParticleStore& particles, ForceField& forces) const;
  /// The message of a step that did not converge: what stopped it (the
  /// iteration limit while the residual still fell, a tolerance below the
  /// round-off floor, a stall, non-finite forces) and what to change.
  std::string not_converged(const ImplicitStepStats& stats, double residual, const std::string& particle) const;

  ImplicitSettings settings_;
  SolverDomain domain_;
  std::vector<Vec3> x_hat_, x_start_, x_iter_;
  std::vector<Quat> q_hat_, q_start_, q_iter_;
  std::vector<Vec3> v_start_, omega_start_;  ///< the midpoint rule's v_n, Omega_n
  /// The last solve's x - x̂ and turn from q̂/|q̂| to q (retry_last_step).
  std::vector<Vec3> x_correction_, phi_correction_;
  double retry_fraction_ = 0.0;
  std::vector<Vec6> g_, delta_, rhs_, weight_;
  std::vector<Mat6> inertia_;
  BlockHessian hessian_;
  std::unique_ptr<AmgPreconditioner> amg_;  ///< made at the first step with preconditioner amg
  std::unique_ptr<TwoLevelPreconditioner> two_level_;  ///< made at the first step with preconditioner two_level
};

/// The part of backward Euler's rotational kinetic energy 2 J |w|²
/// (docs/model.md §12.1) beyond ½ J |Omega|² (the midpoint rule has none): sum_i 2 J_i s_i²,
/// s_i = (1 - sqrt(1 - y))/Dt, y = |Omega_i Dt/2|² (energy; the exact sum over
/// the owned particles).
ExactSum implicit_rotational_energy_excess(const ParticleStore& particles, double dt);

}  // namespace dem
