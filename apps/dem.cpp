// dem: runs any scene file (docs/scene-format.md).
//
//   dem run SCENE.toml [--threads N] [--output-dir DIR] [--t-end T | --steps N] [--overwrite]
//   dem check SCENE.toml [--max-memory BYTES] [--ranks P]
//   dem pack SCENE.toml [--output-dir DIR] [--threads N] [--overwrite]
//   dem restart CHECKPOINT [--t-end T | --steps N] [--threads N] [--output-dir DIR] [--overwrite]
//                          [--integrator 23|25|27|implicit] [--time-step DT]
//                          [--max-energy-drift F] [--warn-energy-drift F] [--implicit-energy-rise F]
//
// Exit status: 0 done, 1 bad input (nothing run), 2 the run or its output
// failed (what was written is kept), 3 interrupted (a checkpoint was written).

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include "apps/cli_checks.hpp"
#include "run/checkpoint_parts.hpp"
#include "run/run_loop.hpp"
#include "run/scene_run.hpp"
#include "core/parallel.hpp"
#include "core/simd.hpp"
#include "scene/scene_builder.hpp"
#include "scene/specimen_files.hpp"
#include "core/format.hpp"
#include "core/peak_memory.hpp"
#ifdef DEM_WITH_MPI
#include "mpi/agreement.hpp"
#include "mpi/domain.hpp"
#endif

namespace {

using namespace dem;


struct Options {
  std::string scene;
  std::string checkpoint;
  std::string output_dir;
  std::size_t threads = 0;
  double t_end = -1.0;
  long long steps = -1;
  bool quiet = false;
  bool overwrite = false;  ///< replace another run's files in the output folder
  std::string max_memory;  ///< --max-memory: limit on the estimated peak (default: MemAvailable)
  std::size_t ranks = 0;   ///< check --ranks: also estimate the memory of each of P MPI ranks
  std::string integrator;  ///< restart --integrator: continue with another integrator
  double time_step = -1.0;  ///< restart --time-step: continue with another time step
  std::string simd = "auto";  ///< --simd / DEM_SIMD: the force kernels' SIMD target
  /// restart --max-energy-drift, --warn-energy-drift, --implicit-energy-rise
  /// (< 0: the checkpoint's, or the scene's).
  double max_energy_drift = -1.0, warn_energy_drift = -1.0, implicit_energy_rise = -1.0;
};

/// The limit --max-memory gives; nullopt without it (then MemAvailable).
std::optional<MemoryLimit> given_memory_limit(const Options& o) {
  if (o.max_memory.empty()) return std::nullopt;
  return MemoryLimit{parse_byte_size(o.max_memory), "--max-memory " + o.max_memory};
}

/// A process's estimated peak `peak` against the memory limit: with
/// --max-memory the whole peak against it; without it, against
/// MemAvailable, what `processes` such processes (the ranks of a node)
/// still need beyond what this one holds now.
struct MemoryNeed {
  MemoryLimit limit;
  bool given = false;       ///< the limit is --max-memory's
  std::uint64_t more = 0;   ///< the bytes compared with limit.bytes
  bool over() const { return limit.bytes > 0 && more > limit.bytes; }
};
MemoryNeed memory_need(std::uint64_t peak, std::uint64_t processes, const Options& o) {
  const std::optional<MemoryLimit> option = given_memory_limit(o);
  MemoryNeed m{option ? *option : available_memory(), option.has_value(), 0};
  const std::uint64_t held = static_cast<std::uint64_t>(std::max(0LL, peak_resident_bytes()));
  m.more = m.given ? peak : processes * (peak > held ? peak - held : 0);
  return m;
}

/// How build_scene holds the scene to a memory limit: --max-memory, else
/// MemAvailable.
BuildOptions build_options(const Options& o) {
  BuildOptions b;
  if (!o.quiet) b.progress = [](const std::string& line) { std::cout << line << std::endl; };
  b.memory_limit = given_memory_limit(o);
  return b;
}

/// The last step of a run at step size h: from --steps, --t-end or the scene.
std::uint64_t end_step(const Options& o, double h, std::uint64_t scene_end) {
  if (o.steps >= 0) return static_cast<std::uint64_t>(o.steps);
  if (o.t_end >= 0.0) {
    try {
      return steps_to_time(o.t_end, h);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("--t-end must be finite and at most 9e15 steps away");
    }
  }
  return scene_end;
}

void print_summary(const BuiltScene& b, const SceneSpec& spec, std::ostream& out) {
  const Scene& s = b.scene;
  const std::size_t n = s.particles.size();
  double m_min = INFINITY, m_max = 0, d_min = INFINITY, d_max = 0;
  for (std::size_t i = 0; i < n; ++i) {
    m_min = std::min(m_min, s.particles.mass[i]);
    m_max = std::max(m_max, s.particles.mass[i]);
    d_min = std::min(d_min, 2 * s.particles.radius[i]);
    d_max = std::max(d_max, 2 * s.particles.radius[i]);
  }
  out << "scene " << spec.file << "\n"
      << "  particles: " << n << " (mass " << format_g(m_min) << " to " << format_g(m_max) << ", diameter "
      << format_g(d_min) << " to " << format_g(d_max) << ")\n"
      << "  bonds: " << s.bonds.size() << " (" << s.bonds.stiffness_types.size() << " stiffness types";
  if (!s.bonds.stiffness_types.empty()) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {0, 0, 0};
    for (const BondStiffness& k : s.bonds.stiffness_types) {
      const double v[3] = {k.bending, k.axial, k.shear};
      for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], v[a]), hi[a] = std::max(hi[a], v[a]);
    }
    const char* names[3] = {"K^m", "K^a", "K^s"};
    for (int a = 0; a < 3; ++a) out << ", " << names[a] << " " << format_g(lo[a]) << (lo[a] < hi[a] ? " to " + format_g(hi[a]) : "");
  }
  out << ")\n"
      << "  contact: law \"" << s.contact_law << "\", stiffness "
      << format_g(s.contact_setup ? s.contact_setup->pair_stiffness() : s.contact.stiffness) << ", skin "
      << format_g(s.contact.skin) << "\n"
      << "  clumps: " << b.clumps.size() << "\n"
      << "  walls: " << s.walls.size();
  for (std::size_t k = 0; k < s.walls.size(); ++k) {
    const Wall& w = s.walls[k];
    out << ";";
    if (k < s.wall_motions.size()) {
      const WallMotion& m = s.wall_motions[k];
      if (!m.name.empty()) out << " \"" << m.name << "\"";
      if (m.kind == WallMotion::Kind::velocity)
        out << " moving at (" << format_g(m.velocity.x()) << ", " << format_g(m.velocity.y()) << ", "
            << format_g(m.velocity.z()) << ")";
      if (m.kind == WallMotion::Kind::servo)
        out << " servo " << format_g(m.servo_stress) << " Pa on " << format_g(m.servo_area) << " m^2 (gain "
            << format_g(m.servo_gain) << ", at most " << format_g(m.servo_max_speed) << " m/s)";
    }
    out << " point (" << format_g(w.point.x()) << ", " << format_g(w.point.y()) << ", " << format_g(w.point.z()) << ") normal ("
        << format_g(w.normal.x()) << ", " << format_g(w.normal.y()) << ", " << format_g(w.normal.z()) << ") "
        << (w.material == Wall::kParticleMaterial ? "stiffness " + format_g(w.stiffness)
                                                  : "material \"" + s.materials.at(w.material).name + "\"");
  }
  out << "\n  meshes: " << s.meshes.size();
  for (const MeshWall& m : s.meshes) {
    std::size_t active = 0;
    for (const auto& e : m.mesh->edges()) active += e.active ? 1 : 0;
    out << "; \"" << m.name << "\" (" << m.mesh->face_count() << " triangles, " << m.mesh->patch_count()
        << " planar patches, " << active << " active edges" << (m.motion.moves() ? ", moving" : "") << ")";
  }
  for (const std::string& w : b.warnings) out << "\n  warning: " << w;
  for (const std::string& note : b.notes) out << "\n  " << note;
  out << "\n  gravity: (" << format_g(s.gravity.x()) << ", " << format_g(s.gravity.y()) << ", " << format_g(s.gravity.z()) << ")\n";
  if (s.viscous_damping > 0.0)
    out << "  damping: viscous, alpha = " << format_g(s.viscous_damping)
        << " 1/time (v <- exp(-alpha h) v after each step; docs/model.md §11.10)\n";
  if (s.cell.any()) {
    // [domain] (docs/model.md §20).
    const Vec3 lo = s.cell.origin, hi = s.cell.origin + s.cell.edges.diagonal();
    out << "  periodic cell: [" << format_g(lo.x()) << ", " << format_g(hi.x()) << ") x [" << format_g(lo.y()) << ", "
        << format_g(hi.y()) << ") x [" << format_g(lo.z()) << ", " << format_g(hi.z()) << "), periodic along";
    for (int a = 0; a < 3; ++a)
      if (s.cell.periodic[a]) out << " " << "xyz"[a];
    if (!s.velocity_gradient.isZero(0.0)) {
      out << ", velocity gradient (1/s)";
      for (int r = 0; r < 3; ++r)
        out << (r ? ", " : " [") << "[" << format_g(s.velocity_gradient(r, 0)) << ", "
            << format_g(s.velocity_gradient(r, 1)) << ", " << format_g(s.velocity_gradient(r, 2)) << "]";
      out << "]";
    }
    if (s.cell_servo.any()) {
      // The periodic-cell servo (docs/model.md §20.6).
      out << ", servo holding";
      const char* sep = " ";
      for (int a = 0; a < 3; ++a)
        if (s.cell_servo.axes[a]) {
          out << sep << "s_" << "xyz"[a] << "xyz"[a] << " = " << format_g(s.cell_servo.target[a]);
          sep = ", ";
        }
      out << " Pa (gain " << format_g(s.cell_servo.gain) << " 1/(Pa s), strain rate at most "
          << format_g(s.cell_servo.max_strain_rate) << " 1/s)";
    }
    out << "\n";
  }
  out << "  integrator: "
      << (b.map == IntegratorMap::implicit
              ? std::string(b.implicit.scheme == ImplicitScheme::midpoint ? "implicit midpoint rule (docs/model.md §12.9"
                                                                          : "implicit backward Euler (docs/model.md §12") +
                    ": Newton tolerance " + format_g(b.implicit.newton_tolerance) +
                    ", CG tolerance at most " + format_g(b.implicit.cg_tolerance_max) + ", at most " +
                    std::to_string(b.implicit.max_newton_iterations) + " Newton and " +
                    std::to_string(b.implicit.max_cg_iterations) + " CG iterations, " +
                    preconditioner_entry(b.implicit.preconditioner).description +
                    (b.implicit.hessian_update == HessianUpdate::when_slow
                         ? ", Hessian kept while each Newton iteration halves the residual"
                         : "") +
                    ")"
              : "map (" + integrator_map_name(b.map) + ")")
      << "\n"
      << "  critical time step estimate (engine/time_step.hpp): " << format_g(b.critical_time_step)
      << (b.critical_source.empty() ? std::string() : ", set by the " + b.critical_source) << "\n"
      << "  time step: " << format_g(b.time_step)
      << (b.automatic_time_step ? " (\"auto\": " : " (given: ") << format_g(b.time_step_fraction, 3)
      << " of the critical step)\n"
      << "  steps: " << b.steps << " to t = " << format_g(static_cast<double>(b.steps) * b.time_step) << "\n"
      << "  output every: energy " << b.output.energy_every << ", VTK " << b.output.vtk_every
      << ", checkpoint " << b.output.checkpoint_every << " steps (0 = never)\n"
      << "  memory estimate: " << format_bytes(b.memory.peak) << " at the peak of dem run (state "
      << format_bytes(b.memory.state) << ", output buffers " << format_bytes(b.memory.output) << ", program "
      << format_bytes(b.memory.program) << "; " << b.sizes.contact_pairs << " contact pairs at the start); limit "
      << (b.memory_limit.bytes > 0 ? format_bytes(b.memory_limit.bytes) + " (" + b.memory_limit.source + ")"
                                   : std::string("none"))
      << "\n";
}

/// `dem check --ranks P`: the memory estimate of one MPI rank
/// (scene/scene_size.hpp estimate_rank_memory).
void print_rank_estimate(const BuiltScene& b, const SceneSpec& spec, std::size_t ranks, std::ostream& out) {
  const RankMemoryEstimate e = estimate_rank_memory(b.sizes, spec.output, ranks);
  out << "  memory estimate per MPI rank at " << ranks << " ranks: " << format_bytes(e.peak) << " (program "
      << format_bytes(e.program) << "; the set-up of the whole scene, which every rank still makes, "
      << format_bytes(e.setup) << "; its part of about " << e.part_particles << " particles with ghosts, "
      << format_bytes(e.part) << "); all ranks " << format_bytes(e.peak * ranks) << "\n";
}

#ifdef DEM_WITH_MPI
/// Every rank's peak resident memory, gathered on rank 0 and printed there
/// with the largest and the sum (issue 28: memory per rank). Collective.
void print_rank_peaks(int ranks) {
  const double mine = static_cast<double>(peak_resident_bytes());
  std::vector<double> all(static_cast<std::size_t>(ranks), 0.0);
  MPI_Gather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  const auto largest = std::max_element(all.begin(), all.end());
  double sum = 0.0;
  std::cout << "  MPI: peak memory per rank (MiB):";
  for (const double b : all) {
    std::cout << " " << format_g(b / 1048576.0, 4);
    sum += b;
  }
  std::cout << "; largest " << format_g(*largest / 1048576.0, 4) << " (rank " << (largest - all.begin())
            << "), all ranks " << format_g(sum / 1048576.0, 4) << "\n";
}

/// Every rank's high-water mark of what its parts held (Domain::
/// part_high_water), as fractions of the whole system's particles and
/// records, printed on rank 0 with the largest (issue 28: a rank holds its
/// part and shell, not the system). Collective.
void print_part_holdings(const Domain& domain, int ranks) {
  const Domain::Holding most = domain.part_high_water(), whole = domain.whole_holding();
  const auto fraction = [](std::uint64_t part, std::uint64_t all) {
    return all > 0 ? static_cast<double>(part) / static_cast<double>(all) : 0.0;
  };
  const double mine[2] = {fraction(most.particles, whole.particles), fraction(most.records, whole.records)};
  std::vector<double> all(2 * static_cast<std::size_t>(ranks), 0.0);
  MPI_Gather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (domain.rank() != 0) return;
  double largest = 0.0;
  int at = 0;
  std::cout << "  MPI: the most each rank's parts held, as fractions of the whole system's " << whole.particles
            << " particles / " << whole.records << " records:";
  for (int r = 0; r < ranks; ++r) {
    const double p = all[2 * static_cast<std::size_t>(r)], q = all[2 * static_cast<std::size_t>(r) + 1];
    std::cout << " " << format_g(p, 3) << "/" << format_g(q, 3);
    if (std::max(p, q) > largest) largest = std::max(p, q), at = r;
  }
  std::cout << "; largest part fraction " << format_g(largest, 4) << " (rank " << at
            << "; the set-up still builds the whole scene, without its forces, on every rank)\n";
}

/// Under mpirun with several ranks: false on every rank (each node's first
/// rank says why) if one rank's estimated peak (estimate_rank_memory, as
/// dem check --ranks) is over --max-memory, or, without it, if what the
/// ranks of a node still need beyond what each holds after the build is
/// over MemAvailable there; every rank still sets the whole scene up, so
/// 4 ranks on one node need about 4 times its set-up. Collective.
bool ranks_fit_memory(const SceneSizes& sizes, const OutputSpec& output, const Options& o, const char* what) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks <= 1) return true;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 1, local_rank = 0;
  MPI_Comm_size(node, &local);
  MPI_Comm_rank(node, &local_rank);
  MPI_Barrier(node);  // every rank of the node has built its scene: MemAvailable counts them
  MPI_Comm_free(&node);
  const RankMemoryEstimate e = estimate_rank_memory(sizes, output, static_cast<std::size_t>(ranks));
  const MemoryNeed need = memory_need(e.peak, static_cast<std::uint64_t>(local), o);
  // Decided by each node's first rank (the ranks of a node read the same
  // MemAvailable), which alone says why.
  const int bad = local_rank == 0 && need.over() ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (bad)
    std::cerr << "error: " << what << " needs about " << format_bytes(e.peak) << " per MPI rank at " << ranks
              << " ranks (dem check --ranks " << ranks << "; every rank still sets the whole scene up, "
              << format_bytes(e.setup) << ")"
              << (need.given ? std::string()
                             : ", " + std::to_string(local) + " ranks on this node: " + format_bytes(need.more) + " more")
              << ", over " << format_bytes(need.limit.bytes) << " (" << need.limit.source
              << "); run fewer ranks a node, or a smaller scene\n";
  return any == 0;
}
#endif

/// MPI ranks of this run (1 without MPI or started without mpirun).
int mpi_ranks() {
  int ranks = 1;
#ifdef DEM_WITH_MPI
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
#endif
  return ranks;
}

/// Runs `sim` to the end: on this process's threads, or, started by mpirun
/// on more than one rank, split into one part per rank (mpi/domain.hpp);
/// with `state` (a checkpoint in parts), `sim` is only the template of the
/// parts of that state.
int run(Simulation sim, RunPlan& plan, std::optional<GlobalState> state = std::nullopt) {
#ifdef DEM_WITH_MPI
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks > 1) {
    // Every rank runs the same scene with the same options and build, or
    // none runs (ranks on different scenes would write mixed results).
    const std::string scene = "scene " + plan.scene_path;
    const std::string options = "end step " + std::to_string(plan.end_step) + ", output folder " +
                                plan.output_dir.string() + (plan.overwrite ? ", --overwrite" : "") +
                                ", time step " + format_g(sim.time_step(), 17) + ", integrator " +
                                integrator_map_name(sim.map()) + ", from step " + std::to_string(sim.step_count());
    const std::string build = std::string("dem built ") + __DATE__ + " " + __TIME__;
    const std::string differs =
        disagreement(MPI_COMM_WORLD,
                     {{"the scene text", plan.scene_path + '\n' + plan.scene_text},
                      {"the run (end step, output folder, time step, integrator, start step)", options},
                      {"the build", build}},
                     {scene, options, build});
    if (!differs.empty()) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0)
        std::cerr << "error: the MPI ranks do not agree: " << differs
                  << "; every rank must run the same scene with the same options and build\n";
      return kExitBadInput;
    }
    if (const char* why = preconditioner_entry(sim.implicit_settings().preconditioner).one_process_only;
        sim.map() == IntegratorMap::implicit && why) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0)
        std::cerr << "error: [run] " << why << "\n";
      return kExitBadInput;
    }
    std::optional<Domain> made;
    if (state)
      made.emplace(MPI_COMM_WORLD, std::move(sim), std::move(*state));
    else
      made.emplace(MPI_COMM_WORLD, std::move(sim));
    Domain& domain = *made;
    plan.domain = &domain;
    std::cout << "MPI: " << ranks << " ranks, " << domain.particle_count()
              << " particles split by recursive coordinate bisection (rank 0 holds " << domain.ghost_count()
              << " ghosts)\n";
    const int status = run_to_end(domain.part(), plan, std::cout);
    if (status == kExitOk)
      std::cout << "  MPI: parts made " << domain.partitions() << " times (at the start, then when particles had "
                   "moved half the ghost margin"
                << (std::getenv("DEM_REPARTITION_EVERY") != nullptr ? " or by DEM_REPARTITION_EVERY" : "") << ")\n";
    if (status == kExitOk) print_part_holdings(domain, ranks);
    if (status == kExitOk) print_rank_peaks(ranks);
    return status;
  }
#endif
  if (state) throw std::logic_error("the parts of a checkpoint's state without MPI ranks");
  return run_to_end(sim, plan, std::cout);
}

int run_scene(const Options& o) {
  const SceneSpec spec = read_scene_file(o.scene);
  const std::string text = read_text_file(o.scene);
  ThreadLimit limit(o.threads);
  set_simd_target(o.simd);
  BuiltScene built = build_scene(spec, build_options(o));
  print_summary(built, spec, std::cout);
#ifdef DEM_WITH_MPI
  if (!ranks_fit_memory(built.sizes, spec.output, o, "the run")) return kExitBadInput;
#endif
  RunPlan plan = scene_run_plan(spec, built, o.scene, text);
  if (!o.output_dir.empty()) plan.output_dir = o.output_dir;
  plan.end_step = end_step(o, built.time_step, built.steps);
  plan.progress = !o.quiet;
  plan.overwrite = o.overwrite;
  const std::size_t clumps = built.clumps.size();
  // On several MPI ranks the whole is only the template of the parts: no
  // contact list or first forces (each part makes its own, engine/partition.hpp).
  Simulation sim = make_simulation(std::move(built), Simulation::Start{nullptr, mpi_ranks() == 1});
  std::cout << "running " << plan.end_step << " steps on " << active_threads() << " threads (SIMD target "
            << simd_target() << ") into "
            << std::filesystem::absolute(plan.output_dir).string() << "\n";
  if (clumps > 0) std::cout << clumps << " clumps, integrated by the LGVI\n";
  return run(std::move(sim), plan);
}

/// The sizes a restart runs with: the checkpoint's particles (and, for a
/// checkpoint in parts, its bonds), with the bonds and contact pairs its
/// scene text counts (count_scene: the pairs estimated at the scene's
/// start); nullopt, with `why`, where the checkpoint keeps no scene text
/// (dem_torus) or the scene no longer counts (a CSV source moved).
std::optional<SceneSizes> restart_sizes(const CheckpointState& c, std::string& why) {
  if (c.scene_text.empty()) {
    why = "the checkpoint keeps no scene text";
    return std::nullopt;
  }
  try {
    const SceneSpec spec =
        parse_scene_text(c.scene_text, c.scene_path, std::filesystem::path(c.scene_path).parent_path());
    SceneSizes s = count_scene(spec);
    s.particles = c.parts ? c.parts->particle_count : c.particles.size();
    if (c.parts) s.bonds = c.parts->bond_count;
    s.implicit = c.map == IntegratorMap::implicit;
    return s;
  } catch (const std::exception& e) {
    why = std::string("its scene '") + c.scene_path + "' does not count: " + e.what();
    return std::nullopt;
  }
}

/// Whether the restart of `c` writing `output` fits: under mpirun on
/// several ranks as ranks_fit_memory (collective); in one process its
/// estimated peak without a scene build (program, state and output
/// buffers: a restart builds no scene) against --max-memory, or, without
/// it, what it needs beyond what it holds after reading the checkpoint
/// against MemAvailable. Prints the estimate; says why on std::cerr when
/// it does not fit. Where the sizes cannot be had (restart_sizes) it says
/// so and lets the restart go on.
bool restart_fits_memory(const CheckpointState& c, const OutputSpec& output, const Options& o) {
  std::string why;
  const std::optional<SceneSizes> sizes = restart_sizes(c, why);
  if (!sizes) {
    std::cout << "  memory estimate: none (" << why << ")\n";
    return true;
  }
#ifdef DEM_WITH_MPI
  if (mpi_ranks() > 1) return ranks_fit_memory(*sizes, output, o, "the restart");
#endif
  const MemoryEstimate e = estimate_memory(*sizes, output);
  const std::uint64_t need = e.program + e.state + e.output;
  const MemoryNeed m = memory_need(need, 1, o);
  const MemoryLimit& limit = m.limit;
  std::cout << "  memory estimate: " << format_bytes(need) << " at the peak of the restart (state "
            << format_bytes(e.state) << ", output buffers " << format_bytes(e.output) << ", program "
            << format_bytes(e.program) << "; " << sizes->particles << " particles, " << sizes->bonds << " bonds, "
            << sizes->contact_pairs << " contact pairs at the scene's start); limit "
            << (limit.bytes > 0 ? format_bytes(limit.bytes) + " (" + limit.source + ")" : std::string("none"))
            << "\n";
  if (!m.over()) return true;
  std::cerr << "error: the restart needs about " << format_bytes(need)
            << (m.given ? std::string() : " (" + format_bytes(m.more) + " more than the checkpoint it has read)")
            << ", over " << format_bytes(limit.bytes) << " (" << limit.source
            << "); restart on a machine with more memory, or under mpirun on more ranks\n";
  return false;
}

int restart(const Options& o) {
  // On several MPI ranks an index of parts is not put together into a
  // whole checkpoint: the ranks make their parts from its parts' state
  // (read_checkpoint_parts below).
  CheckpointState c = mpi_ranks() > 1 ? read_checkpoint(o.checkpoint) : read_whole_checkpoint(o.checkpoint);
  // The run's end as a time on the checkpoint's own clock (before any
  // change of step below).
  const double old_end_time = checkpoint_time_at(c, std::max(c.end_step, c.step_origin));
  const bool new_step = o.time_step > 0.0 && o.time_step != c.time_step;
  const IntegratorMap old_map = c.map;
  if (new_step) {
    // The clock continues from the checkpoint's time with the new step.
    c.time_origin = checkpoint_time_at(c, c.step_count);
    c.step_origin = c.step_count;
    c.time_step = o.time_step;
  }
  if (!o.integrator.empty()) {
    // Switch integrators at the checkpoint (docs/model.md §12.1): the store's
    // velocity and spatial Omega are what both families continue from.
    std::string name = o.integrator;
    if (name.rfind("rrp", 0) == 0) name = name.substr(3);
    c.map = parse_integrator_map(name);
  }
  ThreadLimit limit(o.threads);
  set_simd_target(o.simd);
  // The scene it came from gives the output intervals and the end; a run
  // without a scene file (dem_torus) kept them in the checkpoint.
  RunPlan plan = checkpoint_run_plan(c, new_step ? checkpoint_step_at(c, old_end_time) : c.end_step);
  const std::uint64_t scene_end = plan.end_step;
  plan.output_dir = o.output_dir.empty() ? std::filesystem::path(o.checkpoint).parent_path()
                                         : std::filesystem::path(o.output_dir);
  if (plan.output_dir.empty()) plan.output_dir = ".";
  plan.end_step = o.t_end >= 0.0 && o.steps < 0 ? checkpoint_step_at(c, o.t_end) : end_step(o, c.time_step, scene_end);
  if (plan.end_step <= c.step_count)
    throw std::invalid_argument("the checkpoint is at step " + std::to_string(c.step_count) + " (t = " +
                                format_g(checkpoint_time_at(c, c.step_count)) +
                                "), at or past the requested end step " + std::to_string(plan.end_step) +
                                ": give a later --t-end or --steps");
  plan.progress = !o.quiet;
  plan.overwrite = o.overwrite;
  // Before the output folder is touched: a restart that cannot fit loses nothing.
  if (!restart_fits_memory(c, plan.output, o)) return kExitBadInput;
  // Continue the run's own files, or start a folder that continues its
  // series (--output-dir NEW); another run's folder is refused.
  // (With MPI ranks only rank 0 looks at the folder; the others take the
  // checkpoint's energy reference and bookkeeping as they are.)
  int rank = 0;
#ifdef DEM_WITH_MPI
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
  if (rank == 0) {
    plan_restart_output(c, o.checkpoint, plan, std::cout);
  } else {
    take_run_bookkeeping(c, plan);
  }
#ifdef DEM_WITH_MPI
  // Whether the folder's files are continued decides what the first step
  // writes, and so which collective calls follow: rank 0's answer for all.
  int resume = plan.resume ? 1 : 0;
  MPI_Bcast(&resume, 1, MPI_INT, 0, MPI_COMM_WORLD);
  plan.resume = resume != 0;
#endif
  // The energy check: its limits from the options, else as the run had
  // them; after a switch of integrators its reference is taken where the
  // new integration starts (an implicit part's numerical dissipation is no
  // drift of the explicit integration that follows).
  EnergyLimits& limits = plan.energy_limits;
  if (o.max_energy_drift > 0.0) limits.max_drift = o.max_energy_drift, limits.max_name = "--max-energy-drift";
  if (o.warn_energy_drift > 0.0) limits.warn_drift = o.warn_energy_drift, limits.warn_name = "--warn-energy-drift";
  if (o.implicit_energy_rise > 0.0)
    limits.implicit_rise = o.implicit_energy_rise, limits.rise_name = "--implicit-energy-rise";
  if (c.map != old_map) plan.energy_check.measured = false;
  // On several MPI ranks the restored whole is only the template of the
  // parts: no contact list or first forces on any rank, the checkpoint's
  // list build and histories handed over as they are (Simulation::Start).
  const std::uint64_t from_step = c.step_count;
  const double from_time = checkpoint_time_at(c, c.step_count);
  const auto announce = [&](std::size_t particles, std::size_t bonds) {
    std::cout << "restart from " << o.checkpoint << " at step " << from_step << " (t = " << format_g(from_time)
              << "), " << particles << " particles, " << bonds
              << " bonds; running to step " << plan.end_step << " on " << active_threads() << " threads into "
              << std::filesystem::absolute(plan.output_dir).string() << "\n";
  };
  if (c.parts) {
    CheckpointPartsStart start = read_checkpoint_parts(c, o.checkpoint);
    announce(start.state.particles.size(), start.whole.forces().bonds().size());
    return run(std::move(start.whole), plan, std::move(start.state));
  }
  const bool whole = mpi_ranks() == 1;
  Simulation sim = simulation_from(std::move(c), Simulation::Start{nullptr, whole, !whole});
  announce(sim.particles().size(), sim.forces().bonds().size());
  return run(std::move(sim), plan);
}

/// The subcommands of `dem` and their options, written into `o`.
struct Commands {
  CLI::App *run, *check, *laws, *restart, *pack;
};
Commands add_commands(CLI::App& app, Options& o) {
  CLI::App* run = app.add_subcommand("run", "Run a scene file");
  run->add_option("scene", o.scene, "Scene file (TOML)")->required();
  CLI::App* check = app.add_subcommand("check", "Validate a scene file and print its summary, without running it");
  check->add_option("scene", o.scene, "Scene file (TOML)")->required();
  check->add_option("--ranks", o.ranks,
                    "Also estimate the peak memory of each rank of mpirun -np P dem run (docs/scaling.md)")
      ->check(cli::whole_number("the rank count", 1, 1000000));
  CLI::App* laws = app.add_subcommand(
      "laws", "Print every contact law with its keys (Markdown, as docs/scene-format.md lists them)");
  CLI::App* rs = app.add_subcommand("restart", "Continue a run from its checkpoint");
  CLI::App* pack = app.add_subcommand(
      "pack", "Build a scene's specimen (its packings and bonds) and write it as particles.csv, bonds.csv and "
              "packing.json, which a scene reads back bit for bit (source = \"csv\", [bonds] pairs = \"csv\")");
  pack->add_option("scene", o.scene, "Scene file (TOML)")->required();
  pack->add_option("--output-dir", o.output_dir, "Folder of the specimen's files (default: ./specimen)");
  pack->add_option("--threads", o.threads, "Worker threads (default: all cores; the files are the same for any)")
      ->check(cli::whole_number("the thread count", 0, 4096));
  pack->add_flag("--overwrite", o.overwrite, "Replace particles.csv, bonds.csv and packing.json in the folder");
  rs->add_option("checkpoint", o.checkpoint, "Checkpoint file (checkpoint.bin in a run's output folder)")->required();
  rs->add_option("--time-step", o.time_step,
                 "Continue with another time step (time; the clock continues from the checkpoint's time; "
                 "no stability check for the explicit maps)")
      ->check(cli::positive_number("the time step"));
  rs->add_option("--integrator", o.integrator,
                 "Continue with another integrator at the checkpoint's time step: 23, 25, 27 or implicit "
                 "(docs/model.md §12.1: velocities and spatial angular velocities carry over; the energy check "
                 "takes its reference where the new integrator starts)");
  rs->add_option("--max-energy-drift", o.max_energy_drift,
                 "Stop past this drift of E_balance, a fraction of the energy scale (default: the run's "
                 "[run] max_energy_drift)")
      ->check(cli::positive_number("the energy drift limit"));
  rs->add_option("--warn-energy-drift", o.warn_energy_drift,
                 "Warn once past this drift (default: the run's [run] warn_energy_drift)")
      ->check(cli::positive_number("the energy drift warning"));
  rs->add_option("--implicit-energy-rise", o.implicit_energy_rise,
                 "Implicit runs: stop when E_balance rises above its largest earlier value by more than this "
                 "fraction of the energy scale (default: the scene's [run] implicit_energy_rise)")
      ->check(cli::positive_number("the implicit energy rise limit"));
  // Every number is checked as it is parsed (apps/cli_checks.hpp): a bad
  // one is exit status 1 with its option named, like any bad input.
  const auto byte_size = CLI::Validator(
      [](std::string& text) {
        try {
          parse_byte_size(text);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "BYTES");
  for (CLI::App* c : {run, check, pack, rs})
    c->add_option("--max-memory", o.max_memory,
                  "Refuse a scene whose estimated peak memory is over this: bytes, or with K, M, G or T "
                  "(e.g. 512M, 4G; default: MemAvailable in /proc/meminfo)")
        ->check(byte_size);
  for (CLI::App* c : {run, rs}) {
    c->add_option("--threads", o.threads, "Worker threads (default: all cores)")
        ->check(cli::whole_number("the thread count", 0, 4096));
    c->add_option("--simd", o.simd,
                  "SIMD target of the force kernels: auto (the best this CPU has), avx3 (AVX-512), avx2, sse4, "
                  "ssse3, hwy_scalar or scalar; every target writes the same bits")
        ->envname("DEM_SIMD")
        ->capture_default_str();
    c->add_option("--output-dir", o.output_dir,
                  c == run ? "Output folder (default: ./output)" : "Output folder (default: the checkpoint's)");
    auto* t = c->add_option("--t-end", o.t_end, "End time (default: the scene's)")
                  ->check(cli::positive_number("the end time"));
    auto* s = c->add_option("--steps", o.steps, "Run until this many steps in all (default: the scene's end)")
                  ->check(cli::whole_number("the step count", 0, 9000000000000000LL));
    t->excludes(s);
    c->add_flag("--quiet", o.quiet, "No progress output");
    c->add_flag("--overwrite", o.overwrite,
                "Replace the files of another run in the output folder (only the files the engine writes)");
  }
  return {run, check, laws, rs, pack};
}

/// `dem check`: what dem run does before its first step, less the large
/// run-time arrays (sized by the memory estimate): build, then assemble the
/// force field and clumps, so that check refuses what run refuses.
int check_scene(const Options& o) {
  const SceneSpec spec = read_scene_file(o.scene);
  BuiltScene built = build_scene(spec, build_options(o));
  std::ostringstream summary;
  print_summary(built, spec, summary);
  if (o.ranks > 0) print_rank_estimate(built, spec, o.ranks, summary);
  assemble_scene(std::move(built));
  std::cout << summary.str() << "ok: the scene is valid\n";
  return kExitOk;
}

/// `dem pack`: builds the scene as dem run does and writes its particles and
/// bonds as CSV tables (scene/specimen_files.hpp), with the packing report.
int pack_scene(const Options& o) {
  const SceneSpec spec = read_scene_file(o.scene);
  ThreadLimit limit(o.threads);
  BuiltScene built = build_scene(spec, build_options(o));
  print_summary(built, spec, std::cout);
  const std::filesystem::path folder = std::filesystem::path(o.output_dir.empty() ? "specimen" : o.output_dir);
  const SpecimenFiles f = write_specimen(folder, built.scene, spec, built.packing_json, o.overwrite);
  std::cout << "wrote " << built.scene.particles.size() << " particles to " << f.particles.string() << " and "
            << built.scene.bonds.size() << " bonds to " << f.bonds.string()
            << (f.report.empty() ? std::string() : ", the packing report to " + f.report.string())
            << "\nread them back with [[particles]] source = \"csv\", file = \"" << f.particles.string()
            << "\" and [bonds] pairs = \"csv\", file = \"" << f.bonds.string()
            << "\" (with the same materials and bond stiffness keys)\n";
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef DEM_WITH_MPI
  // Under mpirun every rank runs this program; rank 0 alone prints and
  // writes files.
  MpiSession mpi(argc, argv);
  if (mpi.rank() != 0) std::cout.rdbuf(nullptr);
#endif
  CLI::App app{"dem: discrete element simulations of bonded granular solids (scene files: "
               "docs/scene-format.md)"};
  app.require_subcommand(1);
  Options o;
  const Commands cmd = add_commands(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are exit 0; every other parse error is bad input.
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  try {
    if (*cmd.laws) {
      std::cout << "### Bond laws\n\n" << bond_law_tables() << "\n### Contact laws\n" << contact_law_tables();
      return kExitOk;
    }
    if (*cmd.check) return check_scene(o);
    if (*cmd.pack) return pack_scene(o);
    if (*cmd.run) return run_scene(o);
    return restart(o);
  } catch (const SceneError& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const CheckpointError& e) {
    std::cerr << "error: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
  }
#ifdef DEM_WITH_MPI
  // The other ranks may be waiting for this one in a collective call.
  if (mpi.size() > 1) MPI_Abort(MPI_COMM_WORLD, kExitBadInput);
#endif
  return kExitBadInput;
}
