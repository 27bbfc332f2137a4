#include "apps/pendulum.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "core/rotation.hpp"
#include "core/format.hpp"

namespace dem {

namespace {


void require(bool ok, const std::string& what, double value, const char* expected) {
  if (!ok)
    throw std::invalid_argument("pendulum: " + what + " must be " + expected + ", got " +
                                format_g(value, 17));
}

double positive_step(double h) {
  require(std::isfinite(h) && h > 0.0, "the time step h", h, "a finite positive number");
  return h;
}

}  // namespace

// --- model -----------------------------------------------------------------

Quat PendulumParameters::default_attitude() {
  return rrp_quaternion(Vec3(0.0, 1.0, 0.0) * (2.0 * std::tan(3.0 * std::numbers::pi / 8.0)));
}

Vec3 PendulumParameters::default_omega() {
  const double s = std::sin(std::numbers::pi / 4.0);
  return Vec3(1.0, 0.0, 1.0) * (0.4 * s * s);
}

void PendulumParameters::validate() const {
  require(std::isfinite(mass) && mass > 0.0, "the mass m", mass, "a finite positive number");
  require(std::isfinite(inertia) && inertia > 0.0, "the moment of inertia J", inertia,
          "a finite positive number");
  require(std::isfinite(gravity) && gravity >= 0.0, "the gravity g", gravity,
          "a finite non-negative number");
  if (!rho0.allFinite()) throw std::invalid_argument("pendulum: rho0 is not finite");
  if (!angular_velocity0.allFinite())
    throw std::invalid_argument("pendulum: the initial angular velocity is not finite");
  const double qn = attitude0.norm();
  require(attitude0.coeffs().allFinite() && std::abs(qn - 1.0) < 1e-12,
          "the norm of the initial attitude quaternion", qn, "1");
}

Vec3 pendulum_moment(const PendulumParameters& p, const Quat& attitude) {
  return (p.mass * p.gravity) * (attitude * p.rho0).cross(Vec3::UnitZ());
}

double pendulum_potential(const PendulumParameters& p, const Quat& attitude) {
  return -p.mass * p.gravity * (attitude * p.rho0).z();
}

double pendulum_energy(const PendulumParameters& p, const Quat& attitude, const Vec3& omega) {
  return 0.5 * p.inertia * omega.squaredNorm() + pendulum_potential(p, attitude);
}

// --- one run ---------------------------------------------------------------

PendulumRun::PendulumRun(const PendulumParameters& params, IntegratorMap map, double h)
    : params_(params), map_(map), h_(positive_step(h)) {
  params_.validate();
  ParticleSpec spec;
  spec.position = Vec3::Zero();  // the pivot; F = 0 and v = 0 keep it there
  spec.velocity = Vec3::Zero();
  spec.attitude = params_.attitude0;
  spec.angular_velocity = params_.angular_velocity0;
  spec.mass = params_.mass;
  spec.inertia = params_.inertia;
  spec.diameter = 1.0;  // not used by the pendulum
  store_.add(spec);
  // The integrator needs F_0 and tau_0 in the store before the first step.
  store_.force[0] = Vec3::Zero();
  store_.moment[0] = pendulum_moment(params_, store_.attitude[0]);
}

void PendulumRun::step() {
  advance_configuration(store_, map_, h_);
  store_.force[0] = Vec3::Zero();
  store_.moment[0] = pendulum_moment(params_, store_.attitude[0]);
  complete_step(store_, map_, h_);
  ++steps_;
}

PendulumSample PendulumRun::sample() const {
  PendulumSample s;
  s.time = static_cast<double>(steps_) * h_;
  s.attitude = store_.attitude[0];
  s.angular_velocity = store_.angular_velocity[0];
  s.energy = pendulum_energy(params_, s.attitude, s.angular_velocity);
  return s;
}

std::vector<PendulumSample> simulate_pendulum(const PendulumParameters& params, IntegratorMap map,
                                              double h, std::size_t steps,
                                              std::size_t record_every) {
  if (record_every == 0 || steps % record_every != 0)
    throw std::invalid_argument("pendulum: the number of steps (" + std::to_string(steps) +
                                ") must be a multiple of the output interval (" +
                                std::to_string(record_every) + ")");
  PendulumRun run(params, map, h);
  std::vector<PendulumSample> out;
  out.reserve(steps / record_every + 1);
  out.push_back(run.sample());
  for (std::size_t k = 1; k <= steps; ++k) {
    run.step();
    if (k % record_every == 0) out.push_back(run.sample());
  }
  return out;
}

// --- error measures --------------------------------------------------------

PendulumErrorAccumulator::PendulumErrorAccumulator(const PendulumParameters& params)
    : params_(params) {}

void PendulumErrorAccumulator::add(const PendulumSample& run, const PendulumSample& reference) {
  if (!(std::abs(run.time - reference.time) <= 1e-9 * (1.0 + std::abs(run.time))))
    throw std::invalid_argument("pendulum errors: run sample at t = " + format_g(run.time, 17) +
                                " is compared with a reference sample at t = " +
                                format_g(reference.time, 17));
  const Vec3 axis = run.attitude * params_.rho0;
  const double axis_momentum = axis.dot(run.angular_velocity);
  if (count_ == 0) {
    e0_ = run.energy;
    axis0_ = axis_momentum;
  } else if (!(run.time > t_prev_)) {
    throw std::invalid_argument("pendulum errors: sample times must increase, got t = " +
                                format_g(run.time, 17) + " after t = " + format_g(t_prev_, 17));
  }

  // Integrands of eqs. (36) and (35); x = v = 0 for the pendulum, and
  // |theta| is the rotation angle of the attitude, 2 atan(|alpha|/2).
  const double de2 = (run.energy - e0_) * (run.energy - e0_);
  const double th_run = quaternion_angle(run.attitude);
  const double th_ref = quaternion_angle(reference.attitude);
  const double q2_run = th_run * th_run + run.angular_velocity.squaredNorm();
  const double q2_ref = th_ref * th_ref + reference.angular_velocity.squaredNorm();
  if (count_ > 0) {
    const double half_dt = 0.5 * (run.time - t_prev_);
    int_de2_ += half_dt * (de2_prev_ + de2);
    int_q2_run_ += half_dt * (q2_run_prev_ + q2_run);
    int_q2_ref_ += half_dt * (q2_ref_prev_ + q2_ref);
    duration_ += 2.0 * half_dt;
  }
  de2_prev_ = de2;
  q2_run_prev_ = q2_run;
  q2_ref_prev_ = q2_ref;
  t_prev_ = run.time;

  const double att = quaternion_angle(reference.attitude.conjugate() * run.attitude);
  max_.attitude_error = std::max(max_.attitude_error, att);
  max_.axis_momentum_error = std::max(max_.axis_momentum_error, std::abs(axis_momentum - axis0_));
  max_.norm_error = std::max(max_.norm_error, std::abs(axis.norm() - params_.rho0.norm()));
  ++count_;
}

PendulumErrors PendulumErrorAccumulator::result() const {
  if (count_ < 2)
    throw std::logic_error("pendulum errors: need at least two samples, have " +
                           std::to_string(count_));
  PendulumErrors r = max_;
  // eq. (38): ||E_h - E_0||_H0 / ||E_0||_H0 with ||E_0||_H0^2 = E_0^2 (t_N - t_0).
  r.energy_error = std::sqrt(int_de2_ / (e0_ * e0_ * duration_));
  // eq. (37).
  r.q_error = std::sqrt(std::abs(int_q2_run_ - int_q2_ref_)) / std::sqrt(int_q2_ref_);
  return r;
}

PendulumErrors pendulum_errors(const PendulumParameters& params,
                               std::span<const PendulumSample> run,
                               std::span<const PendulumSample> reference) {
  if (run.size() != reference.size())
    throw std::invalid_argument("pendulum errors: the run has " + std::to_string(run.size()) +
                                " samples, the reference " + std::to_string(reference.size()));
  PendulumErrorAccumulator acc(params);
  for (std::size_t k = 0; k < run.size(); ++k) acc.add(run[k], reference[k]);
  return acc.result();
}

// --- convergence study -----------------------------------------------------

std::vector<PendulumConvergenceRow> pendulum_convergence(const PendulumParameters& params,
                                                         IntegratorMap map,
                                                         std::span<const double> steps,
                                                         double t_end, std::size_t refinement) {
  if (steps.empty()) throw std::invalid_argument("pendulum convergence: no time steps given");
  require(std::isfinite(t_end) && t_end > 0.0, "the end time t_N", t_end,
          "a finite positive number");
  if (refinement < 100)
    throw std::invalid_argument(
        "pendulum convergence: the reference step must be at least 100 times smaller than the "
        "smallest step (docs/model.md §5), got a refinement of " +
        std::to_string(refinement));
  for (double h : steps) positive_step(h);
  const double h_min = *std::min_element(steps.begin(), steps.end());
  const double h_ref = h_min / static_cast<double>(refinement);

  // Steps of each run and its stride on the reference grid; all must end at t_end.
  constexpr double kMaxSteps = 1e9;  // about a minute per map
  const std::size_t n = steps.size();
  std::vector<std::size_t> run_steps(n), stride(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double h = steps[i];
    const double nr = std::round(t_end / h);
    if (!(nr >= 1.0 && std::abs(nr * h - t_end) <= 1e-9 * t_end))
      throw std::invalid_argument("pendulum convergence: the end time " + format_g(t_end, 17) +
                                  " is not a whole number of steps h = " + format_g(h, 17));
    const double sr = std::round(h / h_ref);
    if (!(std::abs(sr * h_ref - h) <= 1e-9 * h))
      throw std::invalid_argument("pendulum convergence: the step " + format_g(h, 17) +
                                  " is not a whole multiple of the reference step " +
                                  format_g(h_ref, 17) + " (smallest step / " +
                                  std::to_string(refinement) + ")");
    if (!(nr * sr <= kMaxSteps))
      throw std::invalid_argument("pendulum convergence: the reference run would take " +
                                  format_g(nr * sr, 17) + " steps, more than " +
                                  format_g(kMaxSteps, 17));
    run_steps[i] = static_cast<std::size_t>(nr);
    stride[i] = static_cast<std::size_t>(sr);
  }
  const std::size_t ref_steps = run_steps[0] * stride[0];
  for (std::size_t i = 1; i < n; ++i)
    if (run_steps[i] * stride[i] != ref_steps)
      throw std::invalid_argument("pendulum convergence: the steps " + format_g(steps[0], 17) +
                                  " and " + format_g(steps[i], 17) +
                                  " do not end on the same reference step");

  // The reference and every run advance together; each run is compared with
  // the reference whenever their times coincide.
  PendulumRun reference(params, map, h_ref);
  std::vector<PendulumRun> runs;
  std::vector<PendulumErrorAccumulator> acc;
  runs.reserve(n);
  acc.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    runs.emplace_back(params, map, steps[i]);
    acc.emplace_back(params);
    acc[i].add(runs[i].sample(), reference.sample());
  }
  for (std::size_t j = 1; j <= ref_steps; ++j) {
    reference.step();
    bool sampled = false;
    PendulumSample ref_sample;
    for (std::size_t i = 0; i < n; ++i) {
      if (j % stride[i] != 0) continue;
      runs[i].step();
      if (!sampled) ref_sample = reference.sample(), sampled = true;
      acc[i].add(runs[i].sample(), ref_sample);
    }
  }

  std::vector<PendulumConvergenceRow> rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    rows[i].map = map;
    rows[i].h = steps[i];
    rows[i].errors = acc[i].result();
  }
  return rows;
}

double loglog_slope(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2)
    throw std::invalid_argument("loglog_slope: needs two or more (x, y) pairs of equal count");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(x.size());
  double sx = 0.0, sy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(std::isfinite(x[i]) && x[i] > 0.0 && std::isfinite(y[i]) && y[i] > 0.0)) return nan;
    sx += std::log(x[i]);
    sy += std::log(y[i]);
  }
  const double mx = sx / n, my = sy / n;
  double sxx = 0.0, sxy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double dx = std::log(x[i]) - mx;
    sxx += dx * dx;
    sxy += dx * (std::log(y[i]) - my);
  }
  if (!(sxx > 0.0)) return nan;
  return sxy / sxx;
}

}  // namespace dem
