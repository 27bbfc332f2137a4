// The observers that talk to the user while a run goes: SignalWatch and
// ProgressReporter (run/observers.hpp), and the standard list.

#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "core/format.hpp"
#include "core/text_file.hpp"
#include "run/observers.hpp"
#include "run/output_folder.hpp"

namespace dem {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int signum) { g_signal = signum; }

const char* signal_name() { return g_signal == SIGINT ? "SIGINT" : "SIGTERM"; }

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  if (seconds < 120) return format_g(seconds, 3) + " s";
  if (seconds < 7200) return format_g(seconds / 60, 3) + " min";
  return format_g(seconds / 3600, 3) + " h";
}

}  // namespace

// ------------------------------------------------------------------ signals

struct SignalWatch::Saved {
  struct sigaction old_int {}, old_term {};
};

SignalWatch::SignalWatch() : RunObserver(Trigger::always()) {}

SignalWatch::~SignalWatch() {
  if (!saved_) return;
  sigaction(SIGINT, &saved_->old_int, nullptr);
  sigaction(SIGTERM, &saved_->old_term, nullptr);
}

void SignalWatch::start(RunContext& ctx) {
  if (saved_ || !ctx.plan.catch_signals) return;
  saved_ = std::make_unique<Saved>();
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &saved_->old_int);
  sigaction(SIGTERM, &action, &saved_->old_term);
}

void SignalWatch::after_step(RunContext& ctx) {
  if (!saved_) return;  // the signals are the caller's (RunPlan::catch_signals)
  if (ctx.domain != nullptr ? ctx.domain->any(g_signal != 0) : g_signal != 0) {
    ctx.end_progress_line();
    ctx.stop = true;
  }
}

void SignalWatch::interrupt(RunContext& ctx) {
  ctx.log << "interrupted by " << signal_name() << " after step " << ctx.step << " (t = " << format_g(ctx.sim.time())
          << "); ";
  if (!ctx.interrupt_checkpoint_seconds) {
    ctx.log << (ctx.files ? "no checkpoint was written\n" : "no output folder, so no checkpoint\n");
    return;
  }
  const std::string path = (ctx.out / kCheckpointFile).string();
  ctx.log << "checkpoint written in " << format_g(*ctx.interrupt_checkpoint_seconds, 3) << " s: " << path
          << "\n  continue with: dem restart " << path << "\n";
}

// ----------------------------------------------------------------- progress

ProgressReporter::ProgressReporter() : RunObserver(Trigger::always()) {}

void ProgressReporter::start(RunContext& ctx) {
  terminal_ = !ctx.plan.progress_on_log && isatty(fileno(stdout)) != 0;
}

void ProgressReporter::after_step(RunContext& ctx) {
  const auto now = std::chrono::steady_clock::now();
  if (!last_report_) last_report_ = ctx.started;
  const double since = std::chrono::duration<double>(now - *last_report_).count();
  if (!ctx.plan.progress || !(terminal_ ? since > 0.5 : since > 10.0)) return;
  last_report_ = now;
  const std::uint64_t k = ctx.step, end = ctx.plan.end_step;
  const double rate = static_cast<double>(k - ctx.first_step) / ctx.elapsed();
  const double left = static_cast<double>(end - k) / rate;
  std::ostringstream line;
  line << "t = " << format_g(ctx.sim.time(), 5) << " of " << format_g(end * ctx.sim.time_step(), 5) << " ("
       << (100 * k / end) << "%), " << format_g(rate, 4) << " steps/s, about " << duration_text(left) << " left";
  if (terminal_) {
    std::cout << "\r  " << line.str() << "     " << std::flush;
    ctx.progress_line = true;
  } else {
    ctx.log << "  " << line.str() << std::endl;
  }
}

// ------------------------------------------------------------ standard list

StandardObservers::StandardObservers(const RunContext& ctx)
    : energy_table(list.add(std::make_unique<EnergyTableWriter>(ctx))),
      events(list.add(std::make_unique<EventTableWriter>(ctx))),
      energy_check(list.add(std::make_unique<EnergyCheckWatch>(ctx))),
      frames(list.add(std::make_unique<FrameWriter>(ctx))),
      checkpoints(list.add(std::make_unique<CheckpointWriter>(ctx, events, energy_check, frames))),
      signals(list.add(std::make_unique<SignalWatch>())),
      progress(list.add(std::make_unique<ProgressReporter>())) {}

void StandardObservers::open(RunContext& ctx) {
  if (ctx.writes) {
    frames.make_folder(ctx);
    ctx.plan.run_id = OutputFolder(ctx.out).prepare(ctx.plan, ctx.log);
    if (!ctx.plan.resume)
      for (const auto& [name, text] : ctx.plan.scene_files) write_text_file(ctx.out / name, text);
    frames.open(ctx);  // the earlier frames listed before the tables are opened
    list.open(ctx);
  }
  // The other ranks write into the folder once rank 0 has prepared it.
  if (ctx.domain != nullptr && ctx.files) (void)ctx.domain->any(false);
  // Every rank labels its checkpoint parts with the run's identity (rank 0's).
  if (ctx.domain != nullptr) ctx.plan.run_id = ctx.domain->broadcast(ctx.plan.run_id);
  if (!ctx.writes) list.open(ctx);
}

}  // namespace dem
