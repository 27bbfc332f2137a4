// dem_bench: whole-step throughput of the engine on a benchmark scene, in
// particle-steps per second (particles x steps / wall seconds of the loop of
// Simulation::step() calls made by the run loop of run/run_loop.hpp; scene set-up, sorting, the first force
// evaluation and the energy reports are outside the timed loop).
//
//   dem_bench SCENE [--particles N] [--threads T[,T...]] [--steps S]
//             [--repeat R] [--integrator 23|25|27] [--memory-table]
//
// Scenes:
//   lattice      the contact benchmark run against LAMMPS by
//                bench/compare_lammps.sh (scene/lattice_scene.hpp): n^3 spheres, n = round(cbrt(N)),
//                default N = 64000, h = 1e-3, 500 steps.
//   solid-torus  the bonded solid torus of docs/model.md §7
//                (scene/solid_torus.hpp) with about N particles (default
//                100000), h = kDefaultTimeStepFraction x critical step,
//                200 steps.
//   ring         the ring torus of scene/ring_torus.hpp with N particles
//                (default 80), h = 1e-3, 1000 steps.
//   plate        the plate edge drop at iBDEM's Plate size
//                (scenes/plate_drop_large.toml: 220,523 particles, 1.14
//                million BDEM bonds with fracture, penalty contact, its
//                h = 3.5e-7 s), 300 steps from the start (the drop and the
//                first impact); --particles is not used. --scene-file runs
//                another scene file the same way (plate_drop.toml: 8123).
//
// stdout: a header line, then one CSV row per run:
//   scene,particles,bonds,threads,steps,seconds,particle_steps_per_s,peak_rss_bytes
// threads is dem::active_threads() during the run; peak_rss_bytes is the
// process's peak resident set so far (getrusage ru_maxrss), so with several
// thread counts or repeats in one process it is the largest of this run and
// every earlier one: run one thread count per process for a run's own peak.
// stderr: one human line per run (neighbour-list builds, energy drift).
//
// Exit status: 0 on success, 1 for bad input (unknown scene, N < 1,
// steps < 1, ...), 2 when a run fails (non-finite values, instability).

#include <CLI/CLI.hpp>


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "run/run_loop.hpp"
#include "scene/lattice_scene.hpp"
#include "core/parallel.hpp"
#include "core/peak_memory.hpp"
#include "core/simd.hpp"
#include "core/stage_times.hpp"
#include "engine/reorder.hpp"
#include "scene/ring_torus.hpp"
#include "engine/simulation.hpp"
#include "scene/solid_torus.hpp"
#include "engine/time_step.hpp"
#include "scene/scene_builder.hpp"
#include "core/format.hpp"

namespace {

using dem::format_g;

struct Options {
  std::string scene;
  std::string scene_file = DEM_SOURCE_DIR "/scenes/plate_drop_large.toml";
  long long particles = -1;             ///< -1: the scene's default
  std::vector<long long> threads{0};    ///< 0: all cores
  long long steps = -1;                 ///< -1: the scene's default
  long long repeat = 1;
  bool memory_table = false;
  std::string integrator = "25";
  bool profile = false;
  std::string simd = "auto";
};

/// Thrown when a run itself goes wrong (as opposed to bad input).
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A built scene and its time step h (time).
struct BenchScene {
  dem::Scene scene;
  double time_step = 0.0;
};

/// Builds the benchmark scenes; remembers the solid torus diameter found by
/// bisection so that repeated runs do not search again.
class SceneFactory {
 public:
  SceneFactory(std::string name, long long particles) : name_(std::move(name)) {
    if (name_ == "lattice") {
      target_ = particles < 0 ? 64000 : particles;
      default_steps_ = 500;
    } else if (name_ == "solid-torus") {
      target_ = particles < 0 ? 100000 : particles;
      default_steps_ = 200;
    } else if (name_ == "ring") {
      target_ = particles < 0 ? 80 : particles;
      default_steps_ = 1000;
    } else if (name_ == "plate") {
      target_ = 1;
      default_steps_ = 300;
    } else {
      throw std::invalid_argument("unknown scene '" + name_ +
                                  "' (expected lattice, solid-torus, ring or plate)");
    }
    if (target_ < 1)
      throw std::invalid_argument("--particles must be >= 1, got " + std::to_string(target_));
  }

  long long default_steps() const { return default_steps_; }

  BenchScene build() {
    BenchScene b;
    if (name_ == "lattice") {
      dem::LatticeParameters p;
      p.per_side = static_cast<std::size_t>(
          std::max(1.0, std::round(std::cbrt(static_cast<double>(target_)))));
      b.scene = dem::make_lattice(p);
      b.time_step = 1e-3;
    } else if (name_ == "solid-torus") {
      dem::SolidTorusParameters p;
      if (!torus_diameter_)
        torus_diameter_ = dem::solid_torus_diameter_for(p, static_cast<std::size_t>(target_));
      p.particle_diameter = *torus_diameter_;
      b.scene = dem::make_solid_torus(p);
      b.time_step = dem::kDefaultTimeStepFraction *
                    dem::critical_time_step(b.scene.particles, b.scene.bonds, b.scene.contact, b.scene.walls);
    } else {
      dem::RingTorusParameters p;
      p.particles = static_cast<std::size_t>(target_);
      b.scene = dem::make_ring_torus(p);  // throws naming N_p if < 3
      b.time_step = 1e-3;
    }
    return b;
  }

 private:
  std::string name_;
  long long target_ = 0;
  long long default_steps_ = 0;
  std::optional<double> torus_diameter_;
};



/// One timed run; prints its CSV row to stdout and a summary to stderr.
/// Where the bytes go: every particle array and every array of every force
/// provider (capacity), per particle, on stderr.
void print_memory_table(const dem::Simulation& sim) {
  const double n = static_cast<double>(sim.particles().size());
  std::size_t total = 0;
  std::cerr << "memory by array (bytes per particle, MiB):\n";
  const auto row = [&](const std::string& name, std::size_t bytes) {
    total += bytes;
    char line[160];
    std::snprintf(line, sizeof line, "  %-44s %8.1f  %9.1f\n", name.c_str(), static_cast<double>(bytes) / n,
                  static_cast<double>(bytes) / 1048576.0);
    std::cerr << line;
  };
  sim.particles().for_each_field(
      [&](const char* name, const auto& v) { row(std::string("particle ") + name, dem::capacity_bytes(v)); });
  for (const auto& p : sim.forces().providers())
    for (const dem::ArrayBytes& a : p->memory_use()) row(a.name, a.bytes);
  std::cerr << "  (sum " << format_g(static_cast<double>(total) / n, 4) << " bytes per particle; peak RSS "
            << format_g(static_cast<double>(dem::peak_resident_bytes()) / n, 4) << ")\n";
}

/// The simulation of a benchmark: a built-in scene, or a scene file (the
/// engine's own path: parse, build, assemble), with its bond count and h.
struct BenchRun {
  dem::Simulation sim;
  std::size_t bonds = 0;
  double time_step = 0.0;
};

BenchRun make_run(const std::string& name, SceneFactory& factory, dem::IntegratorMap map,
                  const std::string& scene_file) {
  if (name == "plate") {
    dem::BuiltScene built = dem::build_scene(dem::read_scene_file(scene_file));
    const std::size_t bonds = built.scene.bonds.size();
    const double h = built.time_step;
    built.map = map;
    return BenchRun{dem::make_simulation(std::move(built)), bonds, h};
  }
  BenchScene b = factory.build();
  dem::sort_for_locality(b.scene);
  const std::size_t bonds = b.scene.bonds.size();
  dem::ForceField field(b.scene.particles, std::move(b.scene.bonds), b.scene.contact,
                        std::move(b.scene.walls));
  return BenchRun{dem::Simulation(std::move(b.scene.particles), std::move(field), map, b.time_step), bonds,
                  b.time_step};
}

/// The stage table of --profile (stderr): seconds, share of the timed
/// stages, ns per particle-step, and ns per bond or pair for the providers.
void print_profile(const dem::StageTimes& times, const dem::Simulation& sim, std::size_t bonds, long long steps) {
  const double total = times.total();
  const double n = static_cast<double>(sim.particles().size()) * static_cast<double>(steps);
  const double pairs = static_cast<double>(sim.forces().neighbours().list().pair_count()) * static_cast<double>(steps);
  std::fprintf(stderr, "profile (SIMD target %s): %-44s %10s %7s %12s %s\n", dem::simd_target().c_str(), "stage",
               "seconds", "share", "ns/particle", "ns/item");
  for (const auto& [stage, sec] : times.stages()) {
    std::string per_item;
    if ((stage == "evaluate: bonds" || stage == "evaluate: bdem") && bonds > 0)
      per_item = format_g(1e9 * sec / (static_cast<double>(bonds) * static_cast<double>(steps)), 3) + " per bond";
    if ((stage == "evaluate: contact" || stage == "evaluate: penalty") && pairs > 0) per_item = format_g(1e9 * sec / pairs, 3) + " per listed pair";
    std::fprintf(stderr, "profile: %-62s %10.4f %6.1f%% %12.3f %s\n", stage.c_str(), sec, 100.0 * sec / total,
                 1e9 * sec / n, per_item.c_str());
  }
  std::fprintf(stderr, "profile: %-62s %10.4f %6.1f%% %12.3f\n", "total of the stages", total, 100.0, 1e9 * total / n);
}

void run_once(const std::string& name, SceneFactory& factory, std::size_t threads,
              long long steps, dem::IntegratorMap map, bool memory_table, const std::string& scene_file,
              bool profile) {
  const dem::ThreadLimit limit(threads);
  BenchRun run = make_run(name, factory, map, scene_file);
  dem::Simulation& sim = run.sim;
  const std::size_t bonds = run.bonds;
  BenchScene b;
  b.time_step = run.time_step;
  const std::size_t n = sim.particles().size();
  const double e0 = sim.energy_report().balance();

  // The one run loop of run/run_loop.hpp, with no output folder (no files,
  // no per-step I/O): its timer covers the steps only.
  dem::RunPlan plan;
  plan.end_step = static_cast<std::uint64_t>(steps);
  plan.progress_on_log = true;  // a line on stderr every 10 s of long runs
  dem::RunSummary summary;
  dem::StageTimes times;
  if (profile) sim.set_stage_times(&times);
  if (dem::run_to_end(sim, plan, std::cerr, &summary) != dem::kExitOk)
    throw RunFailure(name + ": the run failed (see above)");
  const double seconds = summary.seconds;
  sim.set_stage_times(nullptr);
  if (memory_table) print_memory_table(sim);

  const double e1 = sim.energy_report().balance();
  if (!std::isfinite(e1)) throw RunFailure(name + ": the energy became non-finite");
  const double rate = static_cast<double>(n) * static_cast<double>(steps) / seconds;
  std::printf("%s,%zu,%zu,%zu,%lld,%.6f,%.6g,%lld\n", name.c_str(), n, bonds,
              dem::active_threads(), steps, seconds, rate, dem::peak_resident_bytes());
  std::fflush(stdout);
  std::cerr << "dem_bench: " << name << ", " << n << " particles, " << bonds << " bonds, "
            << dem::active_threads() << " threads, h = " << format_g(b.time_step) << ", "
            << steps << " steps in " << format_g(seconds, 4) << " s = "
            << format_g(rate, 4) << " particle-steps/s; neighbour-list builds: "
            << sim.forces().neighbours().rebuild_count() << ", contact pairs listed: "
            << sim.forces().neighbours().list().pair_count() << ", |E - E_0|/|E_0| = "
            << format_g(e0 != 0.0 ? std::abs(e1 - e0) / std::abs(e0) : std::abs(e1 - e0), 3)
            << " (E_0 = " << format_g(e0, 8) << ")" << std::endl;
  if (profile) print_profile(times, sim, bonds, steps);
}

int run(const Options& o) {
  SceneFactory factory(o.scene, o.particles);  // checks the scene and N
  const long long steps = o.steps < 0 ? factory.default_steps() : o.steps;
  if (steps < 1) throw std::invalid_argument("--steps must be >= 1, got " + std::to_string(steps));
  if (o.repeat < 1)
    throw std::invalid_argument("--repeat must be >= 1, got " + std::to_string(o.repeat));
  if (o.threads.empty()) throw std::invalid_argument("--threads needs at least one count");
  for (long long t : o.threads)
    if (t < 0)
      throw std::invalid_argument("--threads must be >= 0 (0: all cores), got " +
                                  std::to_string(t));
  const dem::IntegratorMap map = dem::parse_integrator_map(o.integrator);
  dem::set_simd_target(o.simd);

  std::printf("scene,particles,bonds,threads,steps,seconds,particle_steps_per_s,peak_rss_bytes\n");
  std::fflush(stdout);
  for (long long t : o.threads)
    for (long long r = 0; r < o.repeat; ++r)
      run_once(o.scene, factory, static_cast<std::size_t>(t), steps, map, o.memory_table, o.scene_file, o.profile);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dem_bench: particle-steps per second of the time-stepping loop on a benchmark scene. "
      "Prints a CSV header and one row per run (peak_rss_bytes is the process's peak so far)."};
  Options o;
  app.add_option("scene", o.scene, "lattice, solid-torus, ring or plate")->required();
  app.add_option("--scene-file", o.scene_file, "The scene file of the plate benchmark")->capture_default_str();
  app.add_option("--particles", o.particles,
                 "Particle count N (lattice: rounded to a cube n^3; solid-torus: target, "
                 "defaults 64000, 100000, 80)");
  app.add_option("--threads", o.threads,
                 "Worker threads, or a comma list of counts run one after another (0: all cores)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--steps", o.steps, "Time steps per run (defaults 500, 200, 1000)");
  app.add_option("--repeat", o.repeat, "Runs per thread count (the scene is rebuilt for each)")
      ->capture_default_str();
  app.add_flag("--memory-table", o.memory_table,
               "After each run, print the bytes of every particle and provider array (stderr)");
  app.add_option("--integrator", o.integrator, "Map of Baker & Gonzalez: 23, 25 or 27")
      ->capture_default_str();
  app.add_flag("--profile", o.profile,
               "Time each stage of the step and print a table (stderr): seconds, share, ns per particle-step, "
               "ns per bond and per listed contact pair");
  app.add_option("--simd", o.simd,
                 "SIMD target of the force kernels: auto (the best this CPU has), avx3 (AVX-512), avx2, sse4, "
                 "ssse3, hwy_scalar or scalar; all give the same bits")
      ->envname("DEM_SIMD")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  try {
    return run(o);
  } catch (const RunFailure& e) {
    std::cerr << "error: the run failed: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
