#pragma once
/// \file fracture_events.hpp
/// Fracture events located in time for the implicit integrator
/// (docs/model.md §12.8). Backward Euler at a large step would take a bond
/// far past its strength before the fracture test sees it; instead a
/// trial step whose end state takes some record past its strength by more
/// than the tolerance is rejected and retried shorter, the shorter step
/// chosen by the secant of each such record's stress ratio between the
/// trial's start and end, so that every failure happens at a stress ratio
/// in [1, 1 + tolerance]. After the events the step grows back, at most
/// doubling a step, up to the scene's time step.
///
/// Units: time. Every decision is the same on every MPI rank (the maxima
/// go through the Collective, exact and order-free), so a decomposed run
/// takes the steps of the whole.

#include <cstddef>
#include <span>

#include "engine/collective.hpp"

namespace dem {

/// The running state of the implicit step-size control, kept across steps
/// and in checkpoints (0 for either: the scene's time step).
struct ImplicitClock {
  double next_step = 0.0;  ///< the step the next implicit step tries first (time)
  double last_step = 0.0;  ///< the size of the last accepted implicit step (time)
};

/// The default [run] event_tolerance.
inline constexpr double kDefaultEventTolerance = 1e-3;
/// Rejections of one step after which the control accepts its trial.
inline constexpr std::size_t kMaxEventRejections = 40;
/// The shortest step the control tries, as a fraction of the scene's.
inline constexpr double kMinEventStepFraction = 1e-9;

/// What the control made of a trial step.
struct EventVerdict {
  bool accept = true;
  double largest_ratio = 0.0;  ///< the largest stress ratio at the trial's end, over every rank
  double retry_step = 0.0;     ///< rejected: the shorter step to try (time)
};

/// Judges a trial step of size `dt` from the stress ratios of the records
/// that can fail at its start (`start`) and end (`end`, the same records in
/// the same order; ForceField::stress_ratios). Rejected when some ratio at
/// the end exceeds 1 + tolerance; the retry step is dt times the earliest
/// fraction at which a record that passed reaches 1 + tolerance/2 on the
/// line through its two ratios, kept within [dt/1000, dt). Collective: every
/// rank calls it, with its own records. Throws std::invalid_argument when
/// the two lists differ in length.
EventVerdict judge_trial_step(std::span<const double> start, std::span<const double> end, double dt,
                              double tolerance, Collective& collective);

/// The step the control tries after an accepted step of size `dt` (time):
/// twice dt, at most the scene's `time_step`.
inline double grown_step(double dt, double time_step) { return dt < 0.5 * time_step ? 2.0 * dt : time_step; }

}  // namespace dem
