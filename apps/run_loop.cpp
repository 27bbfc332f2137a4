#include "apps/run_loop.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <algorithm>
#include <optional>

#include "core/peak_memory.hpp"
#include "io/energy_table.hpp"
#include "io/vtk_writer.hpp"
#include "core/format.hpp"

namespace dem {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int signum) { g_signal = signum; }

/// Installs the SIGINT/SIGTERM handlers for its lifetime.
class SignalGuard {
 public:
  SignalGuard() {
    g_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};


std::string duration_text(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  if (seconds < 120) return format_g(seconds, 3) + " s";
  if (seconds < 7200) return format_g(seconds / 60, 3) + " min";
  return format_g(seconds / 3600, 3) + " h";
}

struct OutputFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

CheckpointState checkpoint_of(const Simulation& sim, const RunPlan& plan,
                              const std::vector<double>& frame_times, std::uint64_t energy_rows) {
  CheckpointState c = capture_simulation(sim);
  c.scene_path = plan.scene_path;
  c.scene_text = plan.scene_text;
  c.frame_times = frame_times;
  c.energy_rows = energy_rows;
  c.vtk_every = plan.output.vtk_every;
  c.energy_every = plan.output.energy_every;
  c.checkpoint_every = plan.output.checkpoint_every;
  c.end_step = plan.end_step;
  return c;
}

int run_to_end(Simulation& sim, const RunPlan& plan, std::ostream& log, RunSummary* summary) {
  namespace fs = std::filesystem;
  const bool files = !plan.output_dir.empty();
  const bool checkpoints = files;
  const fs::path out = plan.output_dir;
  std::optional<VtkSeriesWriter> vtk;
  std::optional<EnergyTable> table;
  if (files) {
    vtk.emplace(out);  // creates the folder, or throws naming it
    if (plan.resume) vtk->resume(plan.frame_times);
    if (plan.resume)
      table.emplace(out / "energy.csv", plan.energy_rows);
    else
      table.emplace(out / "energy.csv");
  }
  OutputSpec o = plan.output;
  if (!files) o.vtk_every = o.energy_every = o.checkpoint_every = 0;
  const std::uint64_t first_step = sim.step_count();
  std::vector<double> frame_times = plan.frame_times;  // on the schedule only
  std::uint64_t energy_rows = plan.energy_rows;
  const fs::path checkpoint_path = out / kCheckpointFile;
  const std::size_t n = sim.particles().size();

  const auto on = [](std::uint64_t k, std::uint64_t every) { return every > 0 && k % every == 0; };
  const auto save_checkpoint = [&]() {
    const auto t0 = std::chrono::steady_clock::now();
    if (checkpoints) write_checkpoint(checkpoint_path, checkpoint_of(sim, plan, frame_times, energy_rows));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return secs;
  };

  const EnergyReport first = sim.energy_report();
  const double e0 = first.total();
  double max_dev = 0.0;
  if (!plan.resume && files) {
    table->write(first);
    ++energy_rows;
    if (o.vtk_every > 0) {
      vtk->write_frame(sim.time(), sim.particles(), sim.forces().bonds());
      frame_times.push_back(sim.time());
    }
  }

  SignalGuard signals;
  const bool terminal = !plan.progress_on_log && isatty(fileno(stdout)) != 0;
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last_report = start;
  std::uint64_t k = first_step;
  const auto elapsed = [&]() { return std::chrono::duration<double>(clock::now() - start).count(); };
  try {
    while (k < plan.end_step) {
      sim.step();
      k = sim.step_count();
      const bool last = k == plan.end_step;
      if (files && (on(k, o.energy_every) || last)) {
        const EnergyReport r = sim.energy_report();
        table->write(r);
        if (on(k, o.energy_every)) ++energy_rows;
        const double e = r.total();
        const double scale = std::max(std::abs(e0), 1e-300);
        if (!std::isfinite(e) || std::abs(e - e0) > 10.0 * scale)
          throw std::runtime_error("E_total = " + format_g(e) + " (started at " + format_g(e0) + ") has " +
                                   (std::isfinite(e) ? "moved by more than ten times its start" : "become non-finite"));
        if (e0 != 0.0) max_dev = std::max(max_dev, std::abs(e - e0) / std::abs(e0));
      }
      if (o.vtk_every > 0 && (on(k, o.vtk_every) || last)) {
        try {
          vtk->write_frame(sim.time(), sim.particles(), sim.forces().bonds());
        } catch (const std::exception& e) {
          throw OutputFailure(e.what());
        }
        if (on(k, o.vtk_every)) frame_times.push_back(sim.time());
      }
      if (checkpoints && on(k, o.checkpoint_every) && !last) {
        try {
          save_checkpoint();
        } catch (const std::exception& e) {
          throw OutputFailure(e.what());
        }
      }
      if (g_signal != 0) {
        if (terminal && plan.progress) std::cout << "\n";
        if (vtk) vtk->flush();
        if (!checkpoints) {
          log << "interrupted by " << (g_signal == SIGINT ? "SIGINT" : "SIGTERM") << " after step " << k
              << " (t = " << format_g(sim.time()) << "); no output folder, so no checkpoint\n";
          return kExitInterrupted;
        }
        const double secs = save_checkpoint();
        log << "interrupted by " << (g_signal == SIGINT ? "SIGINT" : "SIGTERM") << " after step " << k
            << " (t = " << format_g(sim.time()) << "); checkpoint written in " << format_g(secs, 3) << " s: "
            << checkpoint_path.string() << "\n  continue with: dem restart " << checkpoint_path.string()
            << "\n";
        return kExitInterrupted;
      }
      const auto now = clock::now();
      const double since = std::chrono::duration<double>(now - last_report).count();
      if (plan.progress && (terminal ? since > 0.5 : since > 10.0)) {
        last_report = now;
        const double rate = static_cast<double>(k - first_step) / elapsed();
        const double left = static_cast<double>(plan.end_step - k) / rate;
        std::ostringstream line;
        line << "t = " << format_g(sim.time(), 5) << " of " << format_g(plan.end_step * sim.time_step(), 5) << " ("
             << (100 * k / plan.end_step) << "%), " << format_g(rate, 4) << " steps/s, about "
             << duration_text(left) << " left";
        if (terminal)
          std::cout << "\r  " << line.str() << "     " << std::flush;
        else
          log << "  " << line.str() << std::endl;
      }
    }
    if (terminal && plan.progress) std::cout << "\n";
    if (vtk) vtk->flush();
    if (checkpoints) save_checkpoint();
  } catch (const OutputFailure& e) {
    if (terminal && plan.progress) std::cout << "\n";
    log << "error: writing the output failed near step " << k << ": " << e.what()
        << "\n  Files written before are kept in " << out.string() << "\n";
    return kExitRunFailed;
  } catch (const std::exception& e) {
    if (terminal && plan.progress) std::cout << "\n";
    try {
      if (vtk) vtk->flush();
    } catch (const std::exception& w) {
      log << "error: " << w.what() << "\n";
    }
    log << "error: the run failed at step " << k << " (t = " << format_g(sim.time()) << "): " << e.what()
        << "\n  The time step is probably too large: " << plan.time_step_hint << ".\n";
    if (files) log << "  Files written so far are kept in " << out.string() << "\n";
    return kExitRunFailed;
  }
  const double secs = elapsed();
  const double steps = static_cast<double>(k - first_step);
  if (summary != nullptr) {
    summary->steps = k - first_step;
    summary->seconds = secs;
    summary->max_energy_deviation = max_dev;
    summary->e0 = e0;
  }
  if (!files) return kExitOk;  // a benchmark reports for itself
  const double peak = static_cast<double>(peak_resident_bytes());
  log << "done: " << (k - first_step) << " steps in " << format_g(secs, 4) << " s, " << format_g(steps / secs, 4)
      << " steps/s, " << format_g(static_cast<double>(n) * steps / secs, 4) << " particle-steps/s\n"
      << "  neighbour-list builds: " << sim.forces().neighbours().rebuild_count() << "\n"
      << "  peak memory: " << format_g(peak / 1048576.0, 4) << " MiB ("
      << format_g(peak / static_cast<double>(std::max<std::size_t>(n, 1)), 4) << " bytes per particle)\n"
      << "  largest |E_total - E_0|/|E_0| in this run: " << format_g(max_dev, 4) << " (E_0 = " << format_g(e0, 10)
      << ")\n";
  if (files)
    log << "  output: " << fs::absolute(out).string()
        << " (particles.pvd and bonds.pvd for ParaView, energy.csv, " << kCheckpointFile << ")\n";
  return kExitOk;
}

}  // namespace dem
