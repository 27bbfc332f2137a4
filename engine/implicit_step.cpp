#include "engine/implicit_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

#include "core/format.hpp"
#include "core/parallel.hpp"

namespace dem {

namespace {

/// The unit quaternion p = q_{n-1} q̄_n of a particle turning at spatial
/// Omega over dt (docs/model.md §12.1): vec(p) = -Omega dt/2, p.w > 0.
/// 1 - p.w is returned separately, without cancellation.
struct StepBack {
  Quat p;
  double one_minus_w;
};

/// nullopt for a particle that would turn by pi or more in one step.
std::optional<StepBack> step_back(const Vec3& omega, double dt) {
  const Vec3 v = -0.5 * dt * omega;
  const double y = v.squaredNorm();
  if (!(y < 1.0)) return std::nullopt;
  const double root = std::sqrt(1.0 - y);
  return StepBack{Quat(root, v.x(), v.y(), v.z()), y / (1.0 + root)};
}

/// exp(S(phi)) q, renormalised (docs/model.md §12.3).
Quat retract(const Quat& q, const Vec3& phi) {
  const double angle = phi.norm();
  if (angle == 0.0) return q;
  const double half = 0.5 * angle;
  const Vec3 axis = phi / angle;
  const Quat turn(std::cos(half), std::sin(half) * axis.x(), std::sin(half) * axis.y(), std::sin(half) * axis.z());
  Quat out = turn * q;
  out.normalize();
  return out;
}

double dot4(const Quat& a, const Quat& b) { return a.coeffs().dot(b.coeffs()); }

/// The rotation vector theta (|theta| <= pi) of the unit quaternion p:
/// p = ±(cos(|theta|/2), sin(|theta|/2) theta/|theta|).
Vec3 rotation_vector(Quat p) {
  if (p.w() < 0.0) p.coeffs() = -p.coeffs();
  const double sin_half = p.vec().norm();
  return sin_half > 0.0 ? Vec3((2.0 * std::atan2(sin_half, p.w()) / sin_half) * p.vec()) : Vec3::Zero();
}

}  // namespace

namespace {
bool always() { return true; }
constexpr PreconditionerEntry kPreconditioners[] = {
    {CgPreconditioner::block_jacobi, "block-jacobi", "block-Jacobi", nullptr, always, ""},
    {CgPreconditioner::amg, "amg", "AMG (hypre BoomerAMG)", kAmgOneProcessOnly, amg_available,
     "\"amg\" (hypre BoomerAMG) is not in this build (install libhypre-dev and rebuild)"},
    {CgPreconditioner::two_level, "two-level", "two-level (block Jacobi + rigid aggregates)",
     kTwoLevelOneProcessOnly, always, ""},
};
}  // namespace

std::span<const PreconditionerEntry> preconditioners() { return kPreconditioners; }

const PreconditionerEntry& preconditioner_entry(CgPreconditioner code) {
  for (const PreconditionerEntry& e : kPreconditioners)
    if (e.code == code) return e;
  throw std::invalid_argument("no preconditioner has code " + std::to_string(static_cast<int>(code)));
}

ExactSum implicit_rotational_energy_excess(const ParticleStore& s, double dt) {
  return exact_sum(s.size(), [&](std::size_t i) {
    if (!s.owns(i)) return 0.0;
    const double y = (0.5 * dt * s.angular_velocity[i]).squaredNorm();
    if (!(y < 1.0)) return 0.0;
    const double sw = y / (1.0 + std::sqrt(1.0 - y)) / dt;
    return 2.0 * s.inertia[i] * sw * sw;
  });
}

double ImplicitStepper::incremental_potential(const ParticleStore& s, const ForceField& forces, double dt) const {
  double magnitude = 0.0;
  return incremental_potential(s, forces, dt, magnitude);
}

double ImplicitStepper::incremental_potential(const ParticleStore& s, const ForceField& forces, double dt,
                                              double& magnitude) const {
  const double inv_dt2 = 1.0 / (dt * dt);
  const double inertia = domain_.total(exact_sum(s.size(), [&](std::size_t i) {
    if (!s.owns(i)) return 0.0;
    const Quat dq(s.attitude[i].coeffs() - q_hat_[i].coeffs());
    return 0.5 * s.mass[i] * inv_dt2 * (s.position[i] - x_hat_[i]).squaredNorm() +
           2.0 * s.inertia[i] * inv_dt2 * dq.coeffs().squaredNorm();
  }));
  EnergyReport v = forces.potential_energies(s);
  if (domain_.reduce) {  // every rank's booked records
    std::vector<ExactSum> sums;
    for (const auto& [name, sum] : v.exact) sums.push_back(sum);
    domain_.reduce(sums);
    for (std::size_t k = 0; k < sums.size(); ++k) {
      v.exact[k].second = sums[k];
      v.set_column(v.exact[k].first, sums[k].value());
    }
  }
  magnitude = inertia + std::abs(v.bending) + std::abs(v.axial) + std::abs(v.shear) + std::abs(v.contact) +
              std::abs(v.wall) + std::abs(v.gravity);
  for (const auto& [name, x] : v.other) magnitude += std::abs(x);
  return inertia + v.total();
}

std::span<const Vec6> ImplicitStepper::gradient(const ParticleStore& s, double dt, std::span<const char> fixed) {
  const double inv_dt2 = 1.0 / (dt * dt);
  g_.resize(s.size());
  parallel_for_ranges(s.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (!fixed.empty() && fixed[i]) {
        g_[i].setZero();
        continue;
      }
      g_[i].head<3>() = s.mass[i] * inv_dt2 * (s.position[i] - x_hat_[i]) - s.force[i];
      g_[i].tail<3>() = -2.0 * s.inertia[i] * inv_dt2 * (q_hat_[i] * s.attitude[i].conjugate()).vec() - s.moment[i];
    }
  });
  return g_;
}

void ImplicitStepper::predict(const ParticleStore& s, double dt) {
  const std::size_t n = s.size();
  x_hat_.resize(n);
  q_hat_.resize(n);
  std::size_t bad = n;  // the first owned slot turning too fast (a ghost's owner reports it)
  const bool midpoint = settings_.scheme == ImplicitScheme::midpoint;
  for (std::size_t i = 0; i < n; ++i) {
    if (midpoint) {  // (12.9) the turn at Omega_n over the half step, on the sphere
      const Vec3 turn = dt * s.angular_velocity[i];
      if (!(turn.norm() < std::numbers::pi)) {
        if (bad == n && s.owns(i)) bad = i;
        continue;
      }
      x_hat_[i] = s.position[i] + dt * s.velocity[i];
      q_hat_[i] = retract(s.attitude[i], turn);
      continue;
    }
    const std::optional<StepBack> back = step_back(s.angular_velocity[i], dt);
    if (!back) {
      if (bad == n && s.owns(i)) bad = i;
      continue;
    }
    const StepBack& b = *back;
    x_hat_[i] = s.position[i] + dt * s.velocity[i];
    // q̂ = 2 q_n - q_{n-1} = q_n + (1 - p) q_n, with 1 - p = (1 - p.w, -vec p).
    const Quat one_minus_p(b.one_minus_w, -b.p.x(), -b.p.y(), -b.p.z());
    q_hat_[i] = Quat(s.attitude[i].coeffs() + (one_minus_p * s.attitude[i]).coeffs());
  }
  // Every rank stops together (a decomposed system), naming the particle where it can.
  if (domain_.maximum(bad < n ? 1.0 : 0.0) > 0.0)
    throw ImplicitSolveError("particle id " + (bad < n ? std::to_string(s.id[bad]) : std::string("(on another MPI rank)")) +
                             " turns by pi or more in one implicit step (|Omega| " +
                             (bad < n ? format_g(s.angular_velocity[bad].norm()) : std::string("?")) +
                             " 1/time at Dt " + format_g(dt) + "): use a smaller time step");
}

std::string ImplicitStepper::not_converged(const ImplicitStepStats& stats, double residual,
                                           const std::string& particle) const {
  const std::string head = "the implicit step did not converge: after " + std::to_string(stats.newton_iterations) +
                           " Newton iterations the residual is " + format_g(residual) + " ([run] newton_tolerance " +
                           format_g(settings_.newton_tolerance) + "), largest at particle id " + particle + "; ";
  if (!std::isfinite(residual)) return head + "the forces have become non-finite: use a smaller time step";
  // Stalled: the last three residuals within a factor 2 of each other.
  const std::vector<double>& r = stats.residuals;
  const std::size_t k = r.size();
  const bool stalled = k >= 3 && r[k - 1] > 0.5 * r[k - 3];
  if (stalled && residual < 1e-6)
    return head + "the residual stopped falling near the round-off floor (about (omega Dt)^2 1e-16): [run] "
                  "newton_tolerance is below what double precision reaches; raise it";
  if (!stalled)
    return head + "it was still falling when it reached [run] max_newton_iterations = " +
           std::to_string(settings_.max_newton_iterations) + ": raise it";
  return head + "Newton's method stalls: use a smaller time step";
}

void ImplicitStepper::compute(ParticleStore& s, ForceField& forces) const {
  if (!domain_.rebuild_due) {
    forces.compute(s);
    return;
  }
  bool due = forces.rebuild_due(s);
  const bool any = domain_.rebuild_due(due);
  if (any && !due) forces.mark_due();
  if (any) forces.rebuild(s);
  forces.evaluate(s);
}

double ImplicitStepper::largest_residual(const ParticleStore& s, double dt, std::size_t& worst_slot) const {
  // Residual (12.5 a): the residual force's displacement over one step in
  // radii, and its rotation in radians; the largest and where.
  const std::size_t n = s.size();
  worst_slot = 0;
  double residual = 0.0;
  for (std::size_t i = 0; i < n; ++i) {  // max is exact and order-free; serial keeps the slot
    if (!s.owns(i)) continue;
    const double e = std::max(g_[i].head<3>().norm() * dt * dt / (s.mass[i] * s.radius[i]),
                              g_[i].tail<3>().norm() * dt * dt / s.inertia[i]);
    if (e > residual || !(e == e)) {
      residual = e;
      worst_slot = i;
      if (!(e == e)) break;
    }
  }
  if (domain_.max) {  // every rank's largest (not a number counts as infinite)
    const double mine = residual == residual ? residual : std::numeric_limits<double>::infinity();
    residual = domain_.max(mine);
    if (mine != residual) worst_slot = n;  // largest on another rank
  }
  return residual;
}

void ImplicitStepper::inertia_blocks(const ParticleStore& s, double inv_dt2) {
  // Hessian (12.4) with the inertia blocks, and the CG weights M^-1.
  parallel_for_ranges(s.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const double a = dot4(s.attitude[i], q_hat_[i]);
      const double mt = s.mass[i] * inv_dt2, mr = s.inertia[i] * a * inv_dt2;
      inertia_[i].setZero();
      inertia_[i].diagonal() << mt, mt, mt, mr, mr, mr;
      weight_[i] << 1.0 / mt, 1.0 / mt, 1.0 / mt, 1.0 / mr, 1.0 / mr, 1.0 / mr;
      rhs_[i] = -g_[i];
    }
  });
}

ImplicitStepStats ImplicitStepper::step(ParticleStore& s, ForceField& forces, double dt, std::span<const char> fixed,
                                        const std::function<void()>& at_midpoint) {
  if (settings_.scheme == ImplicitScheme::backward_euler) return solve(s, forces, dt, fixed);
  // The implicit midpoint rule (docs/model.md §12.9): backward Euler over
  // dt/2 from (x_n, v_n) lands on the midpoint, whose chord velocity is the
  // mean of v_n and v_{n+1}; the step is then extrapolated to dt.
  v_start_ = s.velocity;
  omega_start_ = s.angular_velocity;
  ImplicitStepStats stats = solve(s, forces, 0.5 * dt, fixed);
  if (at_midpoint) at_midpoint();
  extrapolate(s, dt, fixed);
  compute(s, forces);
  return stats;
}

void ImplicitStepper::extrapolate(ParticleStore& s, double dt, std::span<const char> fixed) {
  const double four_over_dt = 4.0 / dt;
  parallel_for_ranges(s.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (!fixed.empty() && fixed[i]) {  // prescribed velocities stay as they are
        const Quat p = s.attitude[i] * q_start_[i].conjugate();  // the half step's turn
        s.attitude[i] = (p * s.attitude[i]).normalized();        // p² q_n
        s.position[i] = x_start_[i] + dt * s.velocity[i];
        continue;
      }
      const Vec3 dx = s.position[i] - x_start_[i];
      s.position[i] = x_start_[i] + 2.0 * dx;
      s.velocity[i] = four_over_dt * dx - v_start_[i];
      // Attitudes from the moment at the midpoint, as the converged half
      // step balances it: tau = -(2 J/h²) vec(q̂ q̄_mid) (12.9; extrapolating
      // the half step's turn instead would be first order, since it differs
      // from h Omega_n + h² tau/J by O(h³)). Formed from the state alone, so
      // ghosts get their owners' bits.
      const Vec3 omega = omega_start_[i] - (2.0 * four_over_dt) * (q_hat_[i] * s.attitude[i].conjugate()).vec();
      s.angular_velocity[i] = omega;
      s.attitude[i] = retract(q_start_[i], (0.5 * dt) * (omega_start_[i] + omega));
    }
  });
}

ImplicitStepStats ImplicitStepper::solve(ParticleStore& s, ForceField& forces, double dt, std::span<const char> fixed) {
  const std::size_t n = s.size();
  const double inv_dt2 = 1.0 / (dt * dt);
  x_start_ = s.position;
  q_start_ = s.attitude;
  delta_.resize(n);
  rhs_.resize(n);
  weight_.resize(n);
  inertia_.resize(n);
  // Predictions (12.2) and the initial guess x = x̂, q = q̂/|q̂| (12.5, item
  // 2); a retry adds f² times the last solve's correction.
  predict(s, dt);
  const bool retry = retry_fraction_ > 0.0 && x_correction_.size() == n;
  const double f2 = retry_fraction_ * retry_fraction_;
  retry_fraction_ = 0.0;
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      s.position[i] = x_hat_[i];
      s.attitude[i] = q_hat_[i].normalized();
      if (!retry || (!fixed.empty() && fixed[i])) continue;
      s.position[i] += f2 * x_correction_[i];
      s.attitude[i] = retract(s.attitude[i], f2 * phi_correction_[i]);
    }
  });

  if (const char* why = preconditioner_entry(settings_.preconditioner).one_process_only; why && s.decomposed)
    throw std::invalid_argument(why);
  if (settings_.preconditioner == CgPreconditioner::amg && !amg_) amg_ = std::make_unique<AmgPreconditioner>();
  if (settings_.preconditioner == CgPreconditioner::two_level && !two_level_)
    two_level_ = std::make_unique<TwoLevelPreconditioner>();
  ImplicitStepStats stats;
  const auto where = [&](std::size_t slot) {
    return slot < n ? std::to_string(s.id[slot]) : std::string("(on another MPI rank)");
  };
  compute(s, forces);
  double magnitude = 0.0;
  double phi = incremental_potential(s, forces, dt, magnitude);
  for (;;) {
    gradient(s, dt, fixed);
    std::size_t worst_slot = 0;
    const double residual = largest_residual(s, dt, worst_slot);
    stats.residual = residual;
    stats.residuals.push_back(residual);
    if (residual < settings_.newton_tolerance) break;
    if (!std::isfinite(residual) || stats.newton_iterations == settings_.max_newton_iterations)
      throw ImplicitSolveError(not_converged(stats, residual, where(worst_slot)));
    ++stats.newton_iterations;
    inertia_blocks(s, inv_dt2);
    std::size_t turned = n;  // a_i = q_i.q̂_i > 0, as the rotation inertia shows
    for (std::size_t i = 0; i < n && turned == n; ++i)
      if (s.owns(i) && !(inertia_[i](3, 3) > 0.0)) turned = i;
    if (domain_.maximum(turned < n ? 1.0 : 0.0) > 0.0)
      throw ImplicitSolveError("particle id " + where(turned) +
                               " turned by pi or more in one implicit step: use a smaller time step");
    // H anew, unless hessian_update = "when-slow" keeps the step's first
    // while each iteration halves the residual (§12.5 b).
    const std::size_t k = stats.residuals.size();
    const bool slow = k >= 2 && stats.residuals[k - 1] > kHessianReuseReduction * stats.residuals[k - 2];
    if (settings_.hessian_update == HessianUpdate::every_iteration || stats.newton_iterations == 1 || slow) {
      hessian_.assemble(s, forces, inertia_, fixed, settings_.hessian_blocks);
      ++stats.hessian_assemblies;
    }
    // AMG's hierarchy is made once a step, from the first iteration's H (a
    // fixed symmetric positive definite preconditioner for the later ones:
    // as many CG iterations, a quarter of the set-ups; docs/model.md §12.5 c).
    // The two-level coarse matrix likewise (docs/model.md §12.5 c).
    if (amg_ && stats.newton_iterations == 1) amg_->setup(hessian_);
    if (two_level_ && stats.newton_iterations == 1) two_level_->setup(hessian_, s.position);
    const Preconditioner* preconditioner = amg_ ? static_cast<const Preconditioner*>(amg_.get()) : two_level_.get();
    const double cg_tolerance = std::min(settings_.cg_tolerance_max, std::sqrt(residual));
    const CgResult cg = solve_pcg(hessian_, rhs_, delta_, weight_, cg_tolerance, settings_.max_cg_iterations,
                                  s.ghost, domain_, preconditioner);
    stats.cg_iterations += cg.iterations;
    const auto slope_of = [&] {
      return domain_.total(exact_sum(n, [&](std::size_t i) { return s.owns(i) ? g_[i].dot(delta_[i]) : 0.0; }));
    };
    double slope = slope_of();
    if (!(slope < 0.0)) {  // not a descent direction: preconditioned steepest descent
      hessian_.precondition(rhs_, delta_);
      if (domain_.ghost_values) domain_.ghost_values(delta_);
      slope = slope_of();
    }
    // Backtracking line search on Phi along the retraction (12.5 d, e).
    // Phi is a sum of terms: a change below its round-off (64 eps times the
    // sum of their magnitudes) counts as no change, and a Newton step whose
    // predicted decrease -g.Delta is below it is taken whole (the line
    // search cannot judge it; near the solution it is the right step).
    x_iter_ = s.position;
    q_iter_ = s.attitude;
    const double slack = 64.0 * std::numeric_limits<double>::epsilon() * magnitude;
    const bool below_round_off = -slope <= slack;
    double alpha = 1.0, phi_new = phi;
    for (std::size_t halvings = 0;; ++halvings) {
      parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          if (!fixed.empty() && fixed[i]) continue;
          s.position[i] = x_iter_[i] + alpha * delta_[i].head<3>();
          s.attitude[i] = retract(q_iter_[i], alpha * delta_[i].tail<3>());
        }
      });
      compute(s, forces);
      phi_new = incremental_potential(s, forces, dt, magnitude);
      if (below_round_off || phi_new <= phi + 1e-4 * alpha * slope + slack) break;
      if (halvings == settings_.max_halvings)
        throw ImplicitSolveError("the implicit step's line search found no decrease of the incremental potential "
                                 "after " + std::to_string(halvings) + " halvings (Newton iteration " +
                                 std::to_string(stats.newton_iterations) + ", residual " + format_g(residual) +
                                 ", largest at particle id " + where(worst_slot) +
                                 "); try a smaller time step");
      ++stats.halvings;
      alpha *= 0.5;
    }
    phi = phi_new;
  }
  // Chord velocities (12.5 item 4), kept as u and Omega (12.1), and the
  // solve's corrections to its prediction (retry_last_step).
  const double inv_dt = 1.0 / dt;
  x_correction_.resize(n);
  phi_correction_.resize(n);
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      x_correction_[i] = s.position[i] - x_hat_[i];
      phi_correction_[i] = rotation_vector(s.attitude[i] * q_hat_[i].normalized().conjugate());
      if (!fixed.empty() && fixed[i]) continue;  // prescribed velocities stay as they are
      s.velocity[i] = (s.position[i] - x_start_[i]) * inv_dt;
      s.angular_velocity[i] = (-2.0 * inv_dt) * (q_start_[i] * s.attitude[i].conjugate()).vec();
    }
  });
  return stats;
}

}  // namespace dem
