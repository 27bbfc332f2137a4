#pragma once
/// \file observer.hpp
/// The run loop's observers: what is done around Simulation::step() (energy
/// rows, event tables, VTK frames, checkpoints, the energy check, signals,
/// progress), each as a RunObserver with a Trigger that says at which steps
/// it acts, notified in a fixed order by an ObserverList.
///
/// run_to_end() (run/run_loop.hpp) drives the standard observers
/// (run/observers.hpp); a caller that steps the Simulation itself drives an
/// ObserverList the same way:
///
///   RunContext ctx(sim, plan, log);
///   ObserverList list;  // list.add(...) in the order they are to act
///   list.open(ctx);     // files (rank 0 first with MPI ranks, see open())
///   list.start(ctx);
///   list.begin(ctx);
///   while (ctx.step < plan.end_step && !ctx.stop) {
///     sim.step();
///     list.stepped(ctx);
///   }
///   ctx.stop ? list.interrupt(ctx) : list.finish(ctx);
///
/// (with list.fail(ctx) when any of these throws). With MPI ranks
/// (RunPlan::domain) every rank makes the same calls in the same order:
/// observers make collective calls (energy reports, group reports, fragment
/// labels, the whole system's view), so every observer must decide the same
/// way on every rank whether it acts; only what it writes depends on the
/// rank (RunContext::writes).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/diagnostics.hpp"
#include "engine/partition.hpp"
#include "engine/simulation.hpp"
#include "run/run_plan.hpp"

namespace dem {

/// Writing an output file failed (full disk, permissions, ...): the run
/// reports an output failure (exit 2), never a failed step.
struct OutputFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs `write`, turning any exception but an OutputFailure into one.
template <class F>
void output(F&& write) {
  try {
    write();
  } catch (const OutputFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw OutputFailure(e.what());
  }
}

/// What the observers of one run share: the simulation, the plan, where it
/// stands, and the bookkeeping a checkpoint keeps. Made by the caller,
/// passed to every notification.
struct RunContext {
  /// `plan` is the run's own copy (its run identity and energy check's state
  /// are filled in as the run goes); `sim` is this rank's part with MPI
  /// ranks (plan.domain), replaced in place when new parts are made.
  RunContext(Simulation& sim, RunPlan& plan, std::ostream& log);

  Simulation& sim;
  RunPlan& plan;
  std::ostream& log;
  DecomposedRun* const domain;  ///< plan.domain: nullptr on one process
  /// The whole system's set-up (what can break, groups): the same on every rank.
  const Simulation& whole;
  const std::filesystem::path out;  ///< plan.output_dir
  const bool files;   ///< the run keeps output files (an output folder is given)
  const bool writes;  ///< this rank writes them (files, and rank 0 with MPI ranks)
  /// The run's first rows and frame are written at its start: files, and
  /// not continuing an earlier run's files (plan.resume).
  const bool fresh;
  const std::size_t particles;  ///< of the whole system
  const std::uint64_t first_step;  ///< the step count when the run started

  std::uint64_t step = 0;  ///< the step count now (set by ObserverList)
  /// True while the observers are told of the run's start (ObserverList::begin):
  /// the first rows of a fresh run, at first_step, whatever the schedule.
  bool at_start = false;
  bool last = false;  ///< step == plan.end_step
  /// Set by an observer (a signal) to stop the run after this step: the
  /// observers after it are not told of the step, the caller then calls
  /// ObserverList::interrupt().
  bool stop = false;
  /// When the stepping began (ObserverList::start), for rates and the summary.
  std::chrono::steady_clock::time_point started{};

  /// Times of the VTK frames written on the schedule, earlier runs' included
  /// (kept in checkpoints).
  std::vector<double> frame_times;
  std::uint64_t energy_rows = 0;  ///< rows of energy.csv written on the schedule (kept in checkpoints)
  /// Seconds the checkpoint of an interrupted run took (set by the
  /// checkpoint writer; none if no checkpoint was written).
  std::optional<double> interrupt_checkpoint_seconds;

  /// The energy report of this step (collective with MPI ranks): computed
  /// at the first call of a step (or of the start), then kept.
  const EnergyReport& energy();
  /// Seconds since `started`.
  double elapsed() const;
  /// Ends the \r progress line on stdout, if one is open (before anything
  /// else is printed).
  void end_progress_line();
  /// Whether a \r progress line is open on stdout (set by the progress observer).
  bool progress_line = false;

 private:
  std::optional<EnergyReport> report_;
  std::uint64_t report_step_ = 0;
};

/// When an observer acts after a step (HOOMD-blue's Trigger is the model):
/// on a periodic schedule, at given steps or times, at the run's start (the
/// first rows of a fresh run) and at its last step. The default Trigger
/// never fires.
class Trigger {
 public:
  Trigger() = default;
  /// Every step whose count is a multiple of n (steps counted from 0, not
  /// from the run's start); n = 0: no step.
  static Trigger every(std::uint64_t n);
  /// After every step.
  static Trigger always() { return every(1); }
  /// At these step counts.
  static Trigger at_steps(std::vector<std::uint64_t> steps);
  /// At the first step at or past each of these times (simulation time
  /// units): the step ending at t fires for a time T with t - h < T <= t
  /// (h the time step).
  static Trigger at_times(std::vector<double> times);
  /// Also at the start of a fresh run (RunContext::at_start).
  Trigger& or_at_start() {
    start_ = true;
    return *this;
  }
  /// Also at the run's last step.
  Trigger& or_at_last() {
    last_ = true;
    return *this;
  }
  /// Never at the run's last step (what the end of the run does anyway).
  Trigger& but_not_last() {
    not_last_ = true;
    return *this;
  }

  /// Whether the step of `ctx` is on the schedule (every / at_steps /
  /// at_times), whatever the start and last-step options; false at the start.
  bool scheduled(const RunContext& ctx) const;
  /// Whether the observer acts at this point of the run.
  bool operator()(const RunContext& ctx) const;

 private:
  enum class Kind { never, every, steps, times };
  Kind kind_ = Kind::never;
  std::uint64_t every_ = 0;
  std::vector<std::uint64_t> steps_;  ///< sorted
  std::vector<double> times_;         ///< sorted
  bool start_ = false, last_ = false, not_last_ = false;
};

/// Something done around the steps of a run. Every hook has an empty
/// default; an exception from a hook stops the run (an OutputFailure is
/// reported as an output failure, anything else as a failed run, after
/// fail()). Hooks are told in the order of the ObserverList, fail() in the
/// reverse order.
class RunObserver {
 public:
  explicit RunObserver(Trigger trigger = Trigger()) : trigger_(std::move(trigger)) {}
  virtual ~RunObserver() = default;

  /// When after_step() is called.
  const Trigger& trigger() const { return trigger_; }

  /// Opens the observer's files before the run (with MPI ranks: rank 0
  /// before the others, so no collective calls here). An exception stops
  /// the run before it starts.
  virtual void open(RunContext&) {}
  /// Before the first step, every rank (collective calls allowed).
  virtual void start(RunContext&) {}
  /// After every step, before after_step() and before the parts of a
  /// decomposed run are made anew: takes what the step left (failed bonds,
  /// solver counts). Also once at the start, before the first rows
  /// (ctx.at_start).
  virtual void collect(RunContext&) {}
  /// After a step where trigger() fires (and at the start of a fresh run,
  /// ctx.at_start, if it fires there).
  virtual void after_step(RunContext&) {}
  /// The run was stopped (ctx.stop) after ctx.step.
  virtual void interrupt(RunContext&) {}
  /// The run reached plan.end_step.
  virtual void finish(RunContext&) {}
  /// The run failed (a step, the energy check, or an output): keep what can
  /// be kept. Called in reverse order; an exception here ends the calls.
  virtual void fail(RunContext&) {}

 private:
  Trigger trigger_;
};

/// The observers of a run, told in the order they were added.
class ObserverList {
 public:
  /// Adds `o` (not null) after the others; returns it.
  template <class O>
  O& add(std::unique_ptr<O> o) {
    O& ref = *o;
    observers_.push_back(std::move(o));
    return ref;
  }

  void open(RunContext& ctx);
  /// start() of every observer, then the clock of the run starts (ctx.started).
  void start(RunContext& ctx);
  /// Once before the first step: collect() of every observer, then (a fresh
  /// run, ctx.fresh) after_step() of those whose trigger fires at the start.
  void begin(RunContext& ctx);
  /// After Simulation::step(): sets ctx.step and ctx.last, collect() of
  /// every observer, new parts of a decomposed run if due
  /// (DecomposedRun::after_step), then after_step() of those whose trigger
  /// fires, until one sets ctx.stop.
  void stepped(RunContext& ctx);
  /// The run's last step is the step now, already notified as an ordinary
  /// step (an open-ended run, RunPlan::open_end, ends where its caller
  /// stops): sets ctx.last and calls after_step() of the observers that act
  /// at the last step and did not act at this one (their trigger fires at
  /// the last step but the step is not on its schedule), as stepped() would
  /// have at the plan's last step.
  void last_step(RunContext& ctx);
  void interrupt(RunContext& ctx);
  void finish(RunContext& ctx);
  /// fail() of every observer, last added first.
  void fail(RunContext& ctx);

 private:
  void notify(RunContext& ctx);
  std::vector<std::unique_ptr<RunObserver>> observers_;
};

}  // namespace dem
