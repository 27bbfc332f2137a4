#pragma once
/// \file energy_check.hpp
/// The run's energy check: what stops a run whose integration has gone
/// wrong (exit 2), judged at every energy row (and, without changing its
/// state, before every checkpoint).
///
/// What is compared: E_balance = E_total + W_fracture + W_contact + W_filter
/// + W_boundary (core/diagnostics.hpp; E_total without dissipation), which
/// an exact integrator keeps at E_0, its value at the reference step (the
/// run's first step, or the step where a restart switched integrators).
///
/// Against what (the energy scale S, energy units): the largest energy in
/// play seen at an energy row so far, less the drift itself,
///
///   A = E_kin + sum_k |U_k| + |U_gravity - U_gravity(0)| + |W_fracture|
///       + |W_contact| + |W_filter| + |W_boundary|,
///   S = max(S_field, max over the rows so far of max(0, A - |E_balance - E_0|)),
///
/// with U_k every potential but gravity's (bonds, contact, walls, loads),
/// and S_field = sum_i (m_i |g| + |f_i|) r_i the work gravity and the loads
/// do when every particle moves by its radius. Every term is unchanged by a
/// translation of the scene (gravity enters through the work it has done,
/// not through U_gravity itself, which depends on the origin), and S is not
/// zero while anything can move: a particle moves only if it has kinetic
/// energy, is pushed by a potential (then |U_k| > 0) or by a field (then
/// S_field > 0), or is driven by a group (then W_boundary becomes non-zero).
/// S is 0 only in a scene where nothing moves; there E_balance must stay
/// exactly E_0. Energy created by an unstable integration appears in A too:
/// taking the drift out of A keeps it from raising the scale that judges it
/// (a conservative scene of positive energies, the ring torus, has S = E_0).
///
/// Explicit runs: the drift |E_balance - E_0| / S past max_energy_drift stops
/// the run, past warn_energy_drift it warns once. Implicit runs (backward
/// Euler, docs/model.md §12.6) dissipate by design, so their drift is reported,
/// not checked; instead E_balance may not rise above its largest earlier
/// value by more than implicit_energy_rise of S (a converged implicit step
/// never creates energy; an unconverged one can).
///
/// The state (E_0, U_gravity(0), S, the largest E_balance) is updated only
/// at energy rows, so it is the same however often checkpoints are written,
/// and it is kept in checkpoints (EnergyCheckState) so that a restart checks
/// exactly as the uninterrupted run.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/diagnostics.hpp"

namespace dem {

/// The limits of the check, as fractions of the energy scale, and how the
/// user sets them (named in messages).
struct EnergyLimits {
  double max_drift = kDefaultMaxEnergyDrift;
  double warn_drift = kDefaultWarnEnergyDrift;
  double implicit_rise = kDefaultImplicitEnergyRise;
  std::string max_name = "[run] max_energy_drift";
  std::string warn_name = "[run] warn_energy_drift";
  std::string rise_name = "[run] implicit_energy_rise";
};

/// Throws std::invalid_argument, naming the limit as it was set, unless
/// every limit is finite and > 0.
void check_energy_limits(const EnergyLimits& limits);

/// A run stopped by the energy check; what() says where and by how much,
/// hint() what to change.
class EnergyCheckError : public std::runtime_error {
 public:
  EnergyCheckError(const std::string& what, std::string hint) : std::runtime_error(what), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

/// A of the file comment for report `r`, with U_gravity(0) = gravity0
/// (the drift not taken out).
double energy_in_play(const EnergyReport& r, double gravity0);

class EnergyCheck {
 public:
  /// state: from the run's checkpoint, or a default (not measured) one;
  /// energy_name: "E_balance" or "E_total", as the run reports it;
  /// time_step_hint: what to tell the user of an explicit drift. Throws
  /// std::invalid_argument for a limit that is not finite and > 0.
  EnergyCheck(EnergyCheckState state, EnergyLimits limits, bool implicit, std::string energy_name,
              std::string time_step_hint);

  /// Takes the reference from the report of step `step` unless the state
  /// has one; returns whether it took it.
  bool start(const EnergyReport& first, std::uint64_t step);
  /// An energy row at step `step`, time `t`: updates the scale and the
  /// largest E_balance, then checks. Throws EnergyCheckError past a stop
  /// limit; returns a warning (once per run, past warn_drift) or "".
  std::string row(const EnergyReport& r, std::uint64_t step, double t);
  /// The same check without changing the state (before a checkpoint is
  /// written, so that a diverged state never replaces a good checkpoint).
  void verify(const EnergyReport& r, std::uint64_t step, double t) const;

  const EnergyCheckState& state() const { return state_; }
  /// The largest drift |E_balance - E_0| / S seen at a row of this call.
  double largest_drift() const { return largest_; }
  /// One line for the run's summary: the largest drift, E_0, S, and where
  /// the reference was taken.
  std::string summary(std::uint64_t first_step) const;

 private:
  void check(const EnergyReport& r, double scale, double highest, std::uint64_t step, double t) const;

  EnergyCheckState state_;
  EnergyLimits limits_;
  bool implicit_;
  std::string energy_name_, hint_;
  double largest_ = 0.0;
  bool warned_ = false;
};

}  // namespace dem
