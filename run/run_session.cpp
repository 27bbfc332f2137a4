#include "run/run_session.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <string>

#include "core/format.hpp"
#include "core/peak_memory.hpp"
#include "engine/implicit_step.hpp"
#include "run/output_folder.hpp"

namespace dem {

namespace fs = std::filesystem;

namespace {

/// What to tell the user after the run failed with `e`: the energy check's
/// own hint, nothing more for an implicit step (its message says what
/// stopped it), else that the time step is the usual cause.
std::string failure_hint(const std::exception& e, const std::string& time_step_hint) {
  if (const auto* c = dynamic_cast<const EnergyCheckError*>(&e)) {
    std::string h = c->hint();
    if (!h.empty()) h[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(h[0])));
    return "  " + h + ".\n";
  }
  if (dynamic_cast<const ImplicitSolveError*>(&e) != nullptr) return "";
  return "  The time step is probably too large: " + time_step_hint + ".\n";
}

/// Where a report of a failure goes: the log, or (MPI ranks other than 0,
/// which print nothing to the log) standard error, prefixed with the rank.
std::ostream& failure_stream(RunContext& ctx) {
  if (ctx.domain == nullptr || ctx.domain->rank() == 0) return ctx.log;
  if (&std::cerr != &ctx.log) std::cerr << "rank " << ctx.domain->rank() << ": ";
  return std::cerr;
}

/// Reports a failed run (the output, `output_failed`, or anything else),
/// stops the other ranks, and returns kExitRunFailed.
int report_failure(RunContext& ctx, ObserverList& list, const std::exception& e, bool output_failed) {
  ctx.end_progress_line();
  if (output_failed) {
    failure_stream(ctx) << "error: writing the output failed near step " << ctx.step << " (t = "
                        << format_g(ctx.sim.time()) << "): " << e.what()
                        << "\n  The run stopped there; files written before are kept in " << ctx.out.string()
                        << "\n";
  } else {
    try {
      list.fail(ctx);
    } catch (const std::exception& w) {
      ctx.log << "error: writing the output failed too: " << w.what() << "\n";
    }
    std::ostream& err = failure_stream(ctx);
    err << "error: the run failed at step " << ctx.step << " (t = " << format_g(ctx.sim.time()) << "): " << e.what()
        << "\n"
        << failure_hint(e, ctx.plan.time_step_hint);
    if (ctx.files) err << "  Files written so far are kept in " << ctx.out.string() << "\n";
  }
  // Other ranks may wait in a collective call: stop them all.
  if (ctx.domain != nullptr) ctx.domain->abort(kExitRunFailed);
  return kExitRunFailed;
}

/// The closing summary on the log (rank 0 of a run that writes files):
/// speed, list builds, memory, the energy check, the implicit solver,
/// fracture, and the files written.
void write_summary_of(RunContext& ctx, const StandardObservers& run, double secs, const EnergyReport& closing) {
  std::ostream& log = ctx.log;
  const double steps = static_cast<double>(ctx.step - ctx.first_step);
  const double n = static_cast<double>(ctx.particles);
  const double peak = static_cast<double>(peak_resident_bytes());
  const EnergyCheck& check = run.energy_check.check();
  log << "done: " << (ctx.step - ctx.first_step) << " steps in " << format_g(secs, 4) << " s, "
      << format_g(steps / secs, 4) << " steps/s, " << format_g(n * steps / secs, 4) << " particle-steps/s\n"
      << "  neighbour-list builds: " << ctx.sim.forces().neighbours().rebuild_count() << "\n"
      << "  peak memory: " << format_g(peak / 1048576.0, 4) << " MiB ("
      << format_g(peak / static_cast<double>(std::max<std::size_t>(ctx.particles, 1)), 4)
      << " bytes per particle)\n"
      << "  " << check.summary(ctx.first_step) << "\n";
  const EventTableWriter& ev = run.events;
  if (ev.implicit()) {
    const double per = std::max<double>(steps, 1);
    log << "  implicit: D_num = E_0 - " << run.energy_check.energy_name() << " = "
        << format_g(check.state().initial_energy - closing.balance(), 6)
        << " (the scheme's numerical dissipation, docs/model.md §12.6; not checked); per step "
        << format_g(static_cast<double>(ev.newton_total()) / per, 4) << " Newton iterations, "
        << format_g(static_cast<double>(ev.cg_total()) / per, 4) << " CG iterations, "
        << format_g(static_cast<double>(ev.halvings_total()) / per, 4) << " line-search halvings; "
        << ev.rejected_total() << " implicit steps retried shorter to locate bond failures (solver.csv)\n";
  }
  if (ev.can_break())
    log << "  broken bonds: " << closing.broken_bonds << " of " << ctx.whole.forces().bonds().size()
        << ", fragments: " << closing.fragments
        << ", live bonds turned past 2pi/3: " << ctx.sim.forces().overturned_bonds() << " (expected 0)\n";
  // Name only the files this run's folder holds.
  std::string written = "energy.csv, " + ev.names();
  if (run.frames.frame_count() > 0) written = "particles.pvd and bonds.pvd for ParaView, " + written;
  log << "  output: " << fs::absolute(ctx.out).string() << " (" << written << kCheckpointFile << ", " << kRunIdFile
      << ")\n";
}

/// The plan, its energy limits checked before anything else is made.
const RunPlan& checked(const RunPlan& plan) {
  check_energy_limits(plan.energy_limits);  // before the folder is touched
  return plan;
}

}  // namespace

RunSession::RunSession(Simulation& sim, const RunPlan& plan, std::ostream& log)
    : plan_(checked(plan)), ctx_(sim, plan_, log), run_(ctx_) {
  run_.open(ctx_);  // throws before any step for a folder that cannot be used
}

void RunSession::close() {
  plan_.end_step = ctx_.step;
  if (ctx_.step > ctx_.first_step) run_.list.last_step(ctx_);
  run_.list.finish(ctx_);
}

int RunSession::fail(const std::exception& e) {
  return report_failure(ctx_, run_.list, e, dynamic_cast<const OutputFailure*>(&e) != nullptr);
}

CheckpointState RunSession::checkpoint_state() {
  run_.events.write();
  run_.energy_check.before_checkpoint(ctx_);
  return checkpoint_of(ctx_.sim, ctx_.plan, ctx_.frame_times, ctx_.energy_rows);
}

RunSummary RunSession::summary() const {
  RunSummary s;
  s.steps = ctx_.step - ctx_.first_step;
  s.seconds = ctx_.elapsed();
  s.max_energy_deviation = run_.energy_check.check().largest_drift();
  s.e0 = run_.energy_check.check().state().initial_energy;
  return s;
}

void RunSession::write_summary() {
  const double secs = ctx_.elapsed();
  // Whole-system reports (collective with MPI ranks), then rank 0 writes.
  const EnergyReport closing = ctx_.sim.energy_report();
  if (ctx_.writes) write_summary_of(ctx_, run_, secs, closing);
}

}  // namespace dem
