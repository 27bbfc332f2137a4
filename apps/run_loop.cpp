#include "apps/run_loop.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <type_traits>

#include "engine/peak_memory.hpp"
#include "io/energy_table.hpp"
#include "io/vtk_writer.hpp"
#include "engine/format.hpp"

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
  CheckpointState c;
  c.scene_path = plan.scene_path;
  c.scene_text = plan.scene_text;
  c.map = sim.map();
  c.time_step = sim.time_step();
  c.step_count = sim.step_count();
  c.scene.particles = sim.particles();
  c.scene.bonds = sim.forces().bonds();
  c.scene.contact = sim.forces().contact();
  c.scene.walls = sim.forces().walls();
  c.scene.gravity = sim.forces().gravity();
  c.neighbour_build_positions = sim.forces().neighbours().build_positions();
  c.neighbour_rebuilds = sim.forces().neighbours().rebuild_count();
  c.frame_times = frame_times;
  c.energy_rows = energy_rows;
  return c;
}

Simulation simulation_from(const CheckpointState& c) {
  Scene scene = c.scene;
  ForceField field(scene.particles, std::move(scene.bonds), scene.contact, std::move(scene.walls),
                   scene.gravity);
  if (!c.neighbour_build_positions.empty())
    field.restore_neighbour_list(scene.particles, c.neighbour_build_positions, c.neighbour_rebuilds);
  return Simulation(std::move(scene.particles), std::move(field), c.map, c.time_step, c.step_count);
}

namespace {

template <class Sim>
int run_loop(Sim& sim, const RunPlan& plan, std::ostream& log) {
  namespace fs = std::filesystem;
  constexpr bool checkpoints = std::is_same_v<Sim, Simulation>;
  const fs::path out = plan.output_dir;
  VtkSeriesWriter vtk(out);  // creates the folder, or throws naming it
  if (plan.resume) vtk.resume(plan.frame_times);
  EnergyTable table = plan.resume ? EnergyTable(out / "energy.csv", plan.energy_rows)
                                  : EnergyTable(out / "energy.csv");
  const OutputSpec& o = plan.output;
  const std::uint64_t first_step = sim.step_count();
  std::vector<double> frame_times = plan.frame_times;  // on the schedule only
  std::uint64_t energy_rows = plan.energy_rows;
  const fs::path checkpoint_path = out / kCheckpointFile;
  const std::size_t n = sim.particles().size();

  const auto on = [](std::uint64_t k, std::uint64_t every) { return every > 0 && k % every == 0; };
  const auto save_checkpoint = [&]() {
    const auto t0 = std::chrono::steady_clock::now();
    if constexpr (checkpoints) write_checkpoint(checkpoint_path, checkpoint_of(sim, plan, frame_times, energy_rows));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return secs;
  };

  const EnergyReport first = sim.energy_report();
  const double e0 = first.total();
  double max_dev = 0.0;
  if (!plan.resume) {
    table.write(first);
    ++energy_rows;
    if (o.vtk_every > 0) {
      vtk.write_frame(sim.time(), sim.particles(), sim.forces().bonds());
      frame_times.push_back(sim.time());
    }
  }

  SignalGuard signals;
  const bool terminal = isatty(fileno(stdout)) != 0;
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
      if (on(k, o.energy_every) || last) {
        const EnergyReport r = sim.energy_report();
        table.write(r);
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
          vtk.write_frame(sim.time(), sim.particles(), sim.forces().bonds());
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
        vtk.flush();
        if (!checkpoints) {
          log << "interrupted by " << (g_signal == SIGINT ? "SIGINT" : "SIGTERM") << " after step " << k
              << " (t = " << format_g(sim.time()) << "); scenes with clumps write no checkpoint yet: the output "
              << "so far is kept in " << out.string() << "\n";
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
    vtk.flush();
    if (checkpoints) save_checkpoint();
  } catch (const OutputFailure& e) {
    if (terminal && plan.progress) std::cout << "\n";
    log << "error: writing the output failed near step " << k << ": " << e.what()
        << "\n  Files written before are kept in " << out.string() << "\n";
    return kExitRunFailed;
  } catch (const std::exception& e) {
    if (terminal && plan.progress) std::cout << "\n";
    try {
      vtk.flush();
    } catch (const std::exception& w) {
      log << "error: " << w.what() << "\n";
    }
    log << "error: the run failed at step " << k << " (t = " << format_g(sim.time()) << "): " << e.what()
        << "\n  The time step is probably too large: try a smaller [run] time_step_fraction or "
           "time_step.\n  Files written so far are kept in "
        << out.string() << "\n";
    return kExitRunFailed;
  }
  const double secs = elapsed();
  const double steps = static_cast<double>(k - first_step);
  log << "done: " << (k - first_step) << " steps in " << format_g(secs, 4) << " s, " << format_g(steps / secs, 4)
      << " steps/s, " << format_g(static_cast<double>(n) * steps / secs, 4) << " particle-steps/s\n"
      << "  neighbour-list builds: " << sim.forces().neighbours().rebuild_count() << "\n"
      << "  peak memory: " << format_g(peak_resident_bytes() / 1048576.0, 4) << " MiB\n"
      << "  largest |E_total - E_0|/|E_0| in this run: " << format_g(max_dev, 4) << " (E_0 = " << format_g(e0, 10)
      << ")\n"
      << "  output: " << fs::absolute(out).string()
      << " (particles.pvd and bonds.pvd for ParaView, energy.csv" << (checkpoints ? ", " : "")
      << (checkpoints ? kCheckpointFile : "") << ")\n";
  return kExitOk;
}

}  // namespace

int run_to_end(Simulation& sim, const RunPlan& plan, std::ostream& log) { return run_loop(sim, plan, log); }
int run_to_end(ClumpSimulation& sim, const RunPlan& plan, std::ostream& log) { return run_loop(sim, plan, log); }

}  // namespace dem
