#pragma once
/// \file run_session.hpp
/// One run stepped by its caller: the standard observers (run/observers.hpp)
/// around the caller's Simulation::step() calls, in the parts run_to_end()
/// (run/run_loop.hpp) is made of, so that `dem run` and a driver that steps
/// as it is told (the Python module, python/) write the same files through
/// the same code:
///
///   RunSession run(sim, plan, log);  // checks, opens the output
///   run.start();                     // energy reference, clock, signals
///   run.begin();                     // first rows and frame of a fresh run
///   while (!run.done()) { sim.step(); run.stepped(); }
///   run.stopped() ? run.interrupt() : run.finish();   // or run.close()
///
/// with run.fail(e) when any of these throws. An open-ended run
/// (RunPlan::open_end) ends with close(), which writes the last step's rows
/// and frame where the caller stopped, then finishes as finish() does.

#include <exception>
#include <iosfwd>

#include "engine/simulation.hpp"
#include "run/observer.hpp"
#include "run/observers.hpp"
#include "run/run_plan.hpp"

namespace dem {

class RunSession {
 public:
  /// Checks plan.energy_limits (std::invalid_argument), makes the standard
  /// observers and opens the output (StandardObservers::open): throws before
  /// any step, changing nothing, as run_to_end() does. `sim` and `log` must
  /// outlive the session.
  RunSession(Simulation& sim, const RunPlan& plan, std::ostream& log);
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  /// The energy check's reference, the signal handlers (plan.catch_signals),
  /// the clock.
  void start() { run_.list.start(ctx_); }
  /// Before the first step: the first rows and frame of a fresh run.
  void begin() { run_.list.begin(ctx_); }
  /// After each Simulation::step(): that step's rows, frames, tables,
  /// checkpoint and checks. Throws OutputFailure for a failed write,
  /// EnergyCheckError for a drift past the limit.
  void stepped() { run_.list.stepped(ctx_); }
  /// The plan's end step is reached (never for an open-ended run) or a
  /// signal stopped the run.
  bool done() const { return (!plan_.open_end && ctx_.step >= plan_.end_step) || ctx_.stop; }
  /// A signal stopped the run (plan.catch_signals).
  bool stopped() const { return ctx_.stop; }
  /// After a signal: the tables, the frame in flight, the checkpoint to
  /// continue from, and where to continue on the log.
  void interrupt() { run_.list.interrupt(ctx_); }
  /// At the plan's end step: the tables, the last frame on disk, the
  /// closing checkpoint.
  void finish() { run_.list.finish(ctx_); }
  /// Ends the run at the step now, as if the plan ended there: end_step
  /// becomes the step now (the checkpoint keeps it); if steps were made
  /// since the session started, the last step's energy row, group rows and
  /// frame off the schedule are written (ObserverList::last_step); then
  /// finish(). Throws as stepped() does.
  void close();
  /// After any of the calls above threw `e`: keeps what can be kept
  /// (ObserverList::fail, unless the output failed), reports the failure on
  /// the log as `dem run` does (the step, the time, the message, the hint)
  /// and returns kExitRunFailed (with MPI ranks the others are stopped).
  int fail(const std::exception& e);
  /// A checkpoint of the state now with the run's bookkeeping (frames,
  /// energy rows, identity, the energy check), as the run's own checkpoints
  /// are made: the event tables are written first (a restart keeps their
  /// rows up to its step) and the state is judged by the energy check
  /// (EnergyCheckError for a diverged one). One process only (no MPI ranks).
  CheckpointState checkpoint_state();
  /// What the run did so far: steps, seconds, the energy check's figures.
  RunSummary summary() const;
  /// The closing summary on the log (rank 0 of a run that writes files):
  /// speed, list builds, memory, the energy check, the implicit solver,
  /// fracture, and the files written. Collective with MPI ranks.
  void write_summary();

  RunContext& context() { return ctx_; }
  const StandardObservers& observers() const { return run_; }

 private:
  RunPlan plan_;  ///< the run's own copy, which ctx_ refers to
  RunContext ctx_;
  StandardObservers run_;
};

}  // namespace dem
