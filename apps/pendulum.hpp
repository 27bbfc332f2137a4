#pragma once
/// \file pendulum.hpp
/// The three-dimensional pendulum of docs/model.md §6 (Baker & Gonzalez
/// 2021, section 3, eqs. 39-42) and the error measures of docs/model.md §5
/// (eqs. 35-38), shared by the app `dem_pendulum` and the tests.
///
/// One rigid sphere whose centre stays at the pivot (F = 0, v = 0) turns
/// under gravity acting on the point R rho0 of the body:
///
///     U   = -m g e3 . (R rho0)                    (eq. 39)
///     tau = m g (R rho0) x e3    (spatial moment; eq. 40 as printed is a misprint)
///     E   = J |Omega|^2 / 2 + U                    (eq. 41a)
///
/// and conserves (R rho0) . Omega and |R rho0| exactly (eqs. 41b, 41c).
///
/// A run is stepped by the engine's integrator (engine/integrator.hpp) on a
/// one-particle ParticleStore, so the pendulum checks the same code as every
/// other scene.

#include <cstddef>
#include <span>
#include <vector>

#include "engine/integrator.hpp"
#include "core/particle_store.hpp"
#include "core/types.hpp"

namespace dem {

/// Parameters and initial state of the pendulum. The defaults are the
/// paper's (eq. 42, docs/model.md §6).
struct PendulumParameters {
  double mass = 1.0;                  ///< m (mass), > 0
  double gravity = 1.0;               ///< g (length/time^2), >= 0, acting along -e3
  double inertia = 1.0;               ///< scalar J about the pivot (mass length^2), > 0
  Vec3 rho0 = Vec3::UnitZ();          ///< pivot to centre of gravity, body frame (length)
  Quat attitude0 = default_attitude();        ///< R(0)
  Vec3 angular_velocity0 = default_omega();   ///< spatial Omega(0) (1/time)

  /// R(alpha(0)) with alpha(0) = [0,1,0] 2 tan(3 pi/8): a turn by 3 pi/4 about e2.
  static Quat default_attitude();
  /// Omega(0) = [1,0,1] 0.4 sin^2(pi/4).
  static Vec3 default_omega();

  /// Throws std::invalid_argument naming the parameter and its value unless
  /// every value is finite, m, J > 0, g >= 0 and the attitude is a unit
  /// quaternion.
  void validate() const;
};

/// Spatial moment tau = m g (R rho0) x e3 at attitude q (force length).
Vec3 pendulum_moment(const PendulumParameters& p, const Quat& attitude);
/// Potential U = -m g e3 . (R rho0) (energy).
double pendulum_potential(const PendulumParameters& p, const Quat& attitude);
/// Total energy E = J |Omega|^2 / 2 + U (energy).
double pendulum_energy(const PendulumParameters& p, const Quat& attitude, const Vec3& omega);

/// State of the pendulum at one output time.
struct PendulumSample {
  double time = 0.0;                    ///< t (time)
  double energy = 0.0;                  ///< E (energy)
  Quat attitude = Quat::Identity();     ///< R, unit quaternion
  Vec3 angular_velocity = Vec3::Zero(); ///< spatial Omega (1/time)
};

/// One integration of the pendulum with a fixed map and step h. The store
/// holds F_k = 0 and tau_k on entry to every step, as the integrator needs.
class PendulumRun {
 public:
  /// Throws std::invalid_argument if the parameters are invalid or h is not a
  /// finite positive number.
  PendulumRun(const PendulumParameters& params, IntegratorMap map, double h);

  /// Advances one step (t_k -> t_{k+1}); throws StabilityError for map (23)
  /// when h |w_k| >= 1.
  void step();
  /// The state at the current step; time = steps_done() * h.
  PendulumSample sample() const;
  std::size_t steps_done() const { return steps_; }

 private:
  PendulumParameters params_;
  IntegratorMap map_;
  double h_;
  std::size_t steps_ = 0;
  ParticleStore store_;
};

/// Runs `steps` steps and returns the samples at steps 0, record_every,
/// 2 record_every, ..., steps (steps must be a multiple of record_every > 0).
std::vector<PendulumSample> simulate_pendulum(const PendulumParameters& params, IntegratorMap map,
                                              double h, std::size_t steps,
                                              std::size_t record_every = 1);

/// Error measures of a run against a reference, docs/model.md §5. All are
/// dimensionless except where stated.
struct PendulumErrors {
  /// E(t)-error, eq. (38): sqrt(int (E_h - E_0)^2 dt) / sqrt(int E_0^2 dt).
  double energy_error = 0.0;
  /// q(t)-error, eq. (37): | ||q_h||^2 - ||q_ref||^2 |^(1/2) / ||q_ref||, with
  /// ||q||^2 = int (|x|^2 + |v|^2 + |theta|^2 + |Omega|^2) dt (eq. 35; x = v = 0).
  double q_error = 0.0;
  /// max_t |log(R_h^T R_ref)|, the angle of the relative rotation (rad).
  double attitude_error = 0.0;
  /// max_t |(R rho0).Omega - its value at t = 0| (length/time).
  double axis_momentum_error = 0.0;
  /// max_t | |R rho0| - |rho0| | (length).
  double norm_error = 0.0;
};

/// Streaming form of the measures: feed the run and the reference at the
/// same output times, in increasing order; integrals by the trapezoidal rule
/// over those times. E_0 and the initial (R rho0).Omega are taken from the
/// first sample of the run.
class PendulumErrorAccumulator {
 public:
  explicit PendulumErrorAccumulator(const PendulumParameters& params);
  /// Throws std::invalid_argument if the two times differ by more than
  /// 1e-9 (1 + |t|) or do not increase.
  void add(const PendulumSample& run, const PendulumSample& reference);
  /// The measures over the samples added so far (needs two samples or more).
  PendulumErrors result() const;

 private:
  PendulumParameters params_;
  std::size_t count_ = 0;
  double t_prev_ = 0.0;
  double e0_ = 0.0, axis0_ = 0.0;
  // Integrands at the previous sample and running trapezoidal integrals.
  double de2_prev_ = 0.0, q2_run_prev_ = 0.0, q2_ref_prev_ = 0.0;
  double int_de2_ = 0.0, int_q2_run_ = 0.0, int_q2_ref_ = 0.0, duration_ = 0.0;
  PendulumErrors max_;
};

/// The measures of a run against reference samples at the same times.
PendulumErrors pendulum_errors(const PendulumParameters& params,
                               std::span<const PendulumSample> run,
                               std::span<const PendulumSample> reference);

/// One row of a convergence study.
struct PendulumConvergenceRow {
  IntegratorMap map = IntegratorMap::rrp25;
  double h = 0.0;  ///< step (time)
  PendulumErrors errors;
};

/// Convergence study of one map: runs it with each step in `steps` to
/// t_end and measures it against one reference run of the same map with
/// step min(steps)/refinement, sampled at each run's output times. Every
/// step must divide t_end and be an integer multiple of the reference step
/// (as for h, h/2, h/4, ...); refinement must be >= 100 (docs/model.md
/// section 5) and the reference run at most 1e9 steps. The runs and the reference advance together, so memory does
/// not grow with t_end. Throws std::invalid_argument on bad arguments and
/// StabilityError where map (23) fails.
std::vector<PendulumConvergenceRow> pendulum_convergence(const PendulumParameters& params,
                                                         IntegratorMap map,
                                                         std::span<const double> steps,
                                                         double t_end,
                                                         std::size_t refinement = 100);

/// Least-squares slope of log(y) against log(x). Needs two points or more
/// with distinct x; returns NaN if any value is not finite and positive.
double loglog_slope(std::span<const double> x, std::span<const double> y);

}  // namespace dem
