#include "run/energy_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/format.hpp"

namespace dem {

namespace {

/// |E - E_0| / S; with S = 0 (nothing can move) any change is infinite.
double drift_of(double e, double e0, double scale) {
  if (scale > 0.0) return std::abs(e - e0) / scale;
  return e == e0 ? 0.0 : std::numeric_limits<double>::infinity();
}

/// What a row adds to the scale: the energy in play less the drift itself.
double scale_term(const EnergyReport& r, const EnergyCheckState& s) {
  return std::max(0.0, energy_in_play(r, s.initial_gravity) - std::abs(r.balance() - s.initial_energy));
}

}  // namespace

void check_energy_limits(const EnergyLimits& limits) {
  for (const auto& [value, name] : {std::pair{limits.max_drift, &limits.max_name},
                                    std::pair{limits.warn_drift, &limits.warn_name},
                                    std::pair{limits.implicit_rise, &limits.rise_name}})
    if (!(std::isfinite(value) && value > 0.0))
      throw std::invalid_argument(*name + " must be finite and > 0, got " + format_g(value));
}

double energy_in_play(const EnergyReport& r, double gravity0) {
  double a = r.kinetic_translation + r.kinetic_rotation;
  for (const double u : {r.bending, r.axial, r.shear, r.contact, r.wall}) a += std::abs(u);
  for (const auto& [name, u] : r.other) a += std::abs(u);
  a += std::abs(r.gravity - gravity0);
  for (const double w : {r.fracture_work, r.contact_work, r.filter_work, r.boundary_work}) a += std::abs(w);
  return a;
}

EnergyCheck::EnergyCheck(EnergyCheckState state, EnergyLimits limits, bool implicit, std::string energy_name,
                         std::string time_step_hint)
    : state_(state),
      limits_(std::move(limits)),
      implicit_(implicit),
      energy_name_(std::move(energy_name)),
      hint_(std::move(time_step_hint)) {
  check_energy_limits(limits_);
}

bool EnergyCheck::start(const EnergyReport& first, std::uint64_t step) {
  if (state_.measured) return false;
  state_.measured = true;
  state_.initial_energy = first.balance();
  state_.initial_gravity = first.gravity;
  state_.highest = state_.initial_energy;
  state_.scale = std::max(first.field_scale, scale_term(first, state_));
  state_.reference_step = step;
  return true;
}

void EnergyCheck::check(const EnergyReport& r, double scale, double highest, std::uint64_t step, double t) const {
  const double e = r.balance();
  const std::string where = "at step " + std::to_string(step) + " (t = " + format_g(t) + ") ";
  if (!std::isfinite(e))
    throw EnergyCheckError(where + energy_name_ + " has become non-finite (" + format_g(e) + ")",
                           "the time step is probably too large: " + hint_);
  if (implicit_) {
    const double rise = drift_of(e, highest, scale);
    if (e > highest && rise > limits_.implicit_rise)
      throw EnergyCheckError(
          where + energy_name_ + " = " + format_g(e) + " has risen above its largest earlier value " +
              format_g(highest) + " by " + format_g(rise, 3) + " of the energy scale " + format_g(scale) +
              " (run/energy_check.hpp), past the limit " + limits_.rise_name + " = " +
              format_g(limits_.implicit_rise) + ": converged implicit steps only dissipate",
          "the implicit steps are not solved closely enough: lower [run] newton_tolerance");
    return;
  }
  const double drift = drift_of(e, state_.initial_energy, scale);
  if (drift > limits_.max_drift)
    throw EnergyCheckError(where + energy_name_ + " = " + format_g(e) + " has drifted from E_0 = " +
                               format_g(state_.initial_energy) + " by " + format_g(drift, 3) +
                               " of the energy scale " + format_g(scale) +
                               " (the largest energy in play so far, run/energy_check.hpp), past the limit " +
                               limits_.max_name + " = " + format_g(limits_.max_drift),
                           "the time step is probably too large: " + hint_);
}

std::string EnergyCheck::row(const EnergyReport& r, std::uint64_t step, double t) {
  const double e = r.balance();
  if (std::isfinite(e)) {
    state_.scale = std::max(state_.scale, scale_term(r, state_));
    if (!std::isfinite(state_.scale)) state_.scale = std::numeric_limits<double>::max();
  }
  check(r, state_.scale, state_.highest, step, t);
  if (e > state_.highest) state_.highest = e;
  const double drift = drift_of(e, state_.initial_energy, state_.scale);
  largest_ = std::max(largest_, drift);
  if (implicit_ || warned_ || !(drift > limits_.warn_drift)) return "";
  warned_ = true;
  return "warning: at step " + std::to_string(step) + " (t = " + format_g(t) + ") " + energy_name_ + " = " +
         format_g(e) + " has drifted from E_0 = " + format_g(state_.initial_energy) + " by " + format_g(drift, 3) +
         " of the energy scale " + format_g(state_.scale) + ", past " + limits_.warn_name + " = " +
         format_g(limits_.warn_drift) + " (the run stops past " + limits_.max_name + " = " +
         format_g(limits_.max_drift) + "); the time step may be too large: " + hint_;
}

void EnergyCheck::verify(const EnergyReport& r, std::uint64_t step, double t) const {
  double scale = state_.scale;
  if (std::isfinite(r.balance())) scale = std::max(scale, scale_term(r, state_));
  check(r, scale, state_.highest, step, t);
}

std::string EnergyCheck::summary(std::uint64_t first_step) const {
  std::ostringstream s;
  s << "largest |" << energy_name_ << " - E_0| / S in this run: " << format_g(largest_, 4) << " (E_0 = "
    << format_g(state_.initial_energy, 10) << " at step " << state_.reference_step << ", energy scale S = "
    << format_g(state_.scale, 4);
  if (state_.reference_step > 0 && state_.reference_step == first_step)
    s << "; the reference was taken where this run's integration starts";
  s << ")";
  return s.str();
}

}  // namespace dem
