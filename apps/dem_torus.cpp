// dem_torus: a bonded torus thrown at a rigid wall, written as a ParaView
// time series and an energy table. Two scenes: the particle-binder ring of
// Baker & Gonzalez 2021, section 4.1 (docs/model.md §6; the default), and
// with --solid the solid torus of bonded spheres on an FCC lattice (docs/model.md
// section 7).
//
// Exit status: 0 on success, 1 for bad input (options, an output folder that
// cannot be made or holds another run's files without --overwrite), 2 when
// the run fails (instability, non-finite values, energy drift past
// --max-energy-drift) or its output does;
// everything written up to the failure is kept.

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>


#include "core/parallel.hpp"
#include "core/simd.hpp"
#include "core/peak_memory.hpp"
#include "engine/reorder.hpp"
#include "engine/simulation.hpp"
#include "engine/time_step.hpp"
#include "scene/ring_torus.hpp"
#include "scene/scene_size.hpp"
#include "scene/solid_torus.hpp"
#include "apps/cli_checks.hpp"
#include "run/run_loop.hpp"
#include "core/format.hpp"

namespace {

using dem::format_g;

struct Options {
  std::string integrator = "25";
  double dt = -1.0;  // ring: 1e-3; solid: dt_fraction * critical step
  double dt_fraction = dem::kDefaultTimeStepFraction;
  double t_end = -1.0;  // ring: 35; solid: see kSolidEndTime
  long long steps = -1;
  std::string output_dir = "torus_output";
  long long vtk_every = -1;     // ring: 100; solid: 1000
  long long energy_every = -1;  // ring: 10; solid: 100
  bool solid = false;
  bool dt_given = false, t_end_given = false, vtk_given = false, energy_given = false;
  long long target_particles = 0;
  // Stiffness overrides for the solid scene (negative: from the moduli).
  double km = -1.0, ka = -1.0, ks = -1.0, kpp = -1.0, kpw = -1.0;
  std::size_t threads = 0;
  std::string simd = "auto";  ///< --simd / DEM_SIMD
  bool no_wall = false;
  std::vector<double> spin;
  bool quiet = false;
  long long checkpoint_every = 0;
  bool overwrite = false;
  double max_energy_drift = dem::kDefaultMaxEnergyDrift;
  double warn_energy_drift = dem::kDefaultWarnEnergyDrift;
};

/// Default end time of the solid scene (s): the torus crosses the 1 mm gap
/// at 10 m/s in 1e-4 s, then presses 3 mm into the wall, about 6,700 steps
/// at the default time step: a few minutes on 2 cores.
constexpr double kSolidEndTime = 4e-4;


/// Refuses a scene whose estimated peak memory (scene/scene_size.hpp) is
/// over the available memory, before it is built.
void check_memory(const Options& o, const dem::SceneSizes& sizes, const std::string& key) {
  dem::OutputSpec output;
  output.vtk_every = static_cast<std::uint64_t>(o.vtk_every);
  const std::uint64_t need = dem::estimate_memory(sizes, output).peak;
  const dem::MemoryLimit limit = dem::available_memory();
  if (limit.bytes == 0 || need <= limit.bytes) return;
  throw std::invalid_argument("the scene needs about " + dem::format_bytes(need) + " of memory (the estimated peak for " +
                              format_g(static_cast<double>(sizes.particles), 3) + " particles and " +
                              format_g(static_cast<double>(sizes.bonds), 3) + " bonds), more than the " +
                              dem::format_bytes(limit.bytes) + " available (" + limit.source + "): " + key);
}

/// Builds the scene the options ask for and describes it in `what`.
dem::Scene build_scene(const Options& o, dem::RingTorusParameters ring,
                       dem::SolidTorusParameters solid, bool has_diameter, std::string& what) {
  dem::Vec3 spin = dem::Vec3::Zero();
  if (!o.spin.empty()) {
    if (o.spin.size() != 3) throw std::invalid_argument("--spin takes three numbers wx,wy,wz");
    spin = dem::Vec3(o.spin[0], o.spin[1], o.spin[2]);
  }
  if (!o.solid) {
    ring.spin = spin;
    ring.wall = !o.no_wall;
    what = "ring of " + std::to_string(ring.particles) + " particles";
    dem::SceneSizes sizes;
    sizes.particles = sizes.bonds = sizes.contact_pairs = ring.particles;
    check_memory(o, sizes, "use a smaller --particles");
    return dem::make_ring_torus(ring);
  }
  solid.spin = spin;
  solid.wall = !o.no_wall;
  dem::validate(solid);
  if (o.target_particles != 0) {
    if (has_diameter)
      throw std::invalid_argument("give --particle-diameter or --target-particles, not both");
    if (o.target_particles < 1)
      throw std::invalid_argument("--target-particles must be >= 1, got " +
                                  std::to_string(o.target_particles));
    solid.particle_diameter =
        dem::solid_torus_diameter_for(solid, static_cast<std::size_t>(o.target_particles));
  }
  const dem::SolidTorusCounts counts = dem::solid_torus_counts(solid);
  dem::SceneSizes sizes;
  sizes.particles = counts.sites;
  sizes.bonds = sizes.contact_pairs = counts.bonds;
  sizes.build_scratch = 4 * counts.lattice_cells + 24 * counts.sites;
  check_memory(o, sizes, o.target_particles != 0 ? "use a smaller --target-particles" : "use a larger --particle-diameter");
  dem::Scene scene = dem::make_solid_torus(solid);
  // Stiffness overrides (the solid torus has one bond type).
  for (auto& k : scene.bonds.stiffness_types) {
    if (o.km >= 0.0) k.bending = o.km;
    if (o.ka >= 0.0) k.axial = o.ka;
    if (o.ks >= 0.0) k.shear = o.ks;
  }
  if (o.kpp >= 0.0) scene.contact.stiffness = o.kpp;
  for (auto& w : scene.walls)
    if (o.kpw >= 0.0) w.stiffness = o.kpw;
  const dem::SolidTorusConstants c = dem::solid_torus_constants(solid);
  what = "solid torus of " + std::to_string(scene.particles.size()) + " particles (d = " +
         format_g(solid.particle_diameter) + " m, m = " + format_g(c.mass) +
         " kg, K^a = " + format_g(scene.bonds.stiffness_types.at(0).axial) +
         " J, K^m = " + format_g(scene.bonds.stiffness_types.at(0).bending) +
         " J, K^pp = " + format_g(scene.contact.stiffness) + " J)";
  return scene;
}

int run(Options o, const dem::RingTorusParameters& ring_params,
        const dem::SolidTorusParameters& solid_params, bool has_diameter) {
  const bool dt_given = o.dt_given;
  if (dt_given && !(std::isfinite(o.dt) && o.dt > 0.0))
    throw std::invalid_argument("--dt must be a finite positive time step, got " + format_g(o.dt));
  if (!(std::isfinite(o.dt_fraction) && o.dt_fraction > 0.0 && o.dt_fraction <= 1.0))
    throw std::invalid_argument("--dt-fraction must be in (0, 1], got " + format_g(o.dt_fraction));
  if (!o.t_end_given) o.t_end = o.solid ? kSolidEndTime : 35.0;
  if (o.steps < 0 && !(std::isfinite(o.t_end) && o.t_end > 0.0))
    throw std::invalid_argument("--t-end must be positive, got " + format_g(o.t_end));
  if (!o.vtk_given) o.vtk_every = o.solid ? 250 : 100;
  if (!o.energy_given) o.energy_every = o.solid ? 100 : 10;
  if (o.vtk_every < 0) throw std::invalid_argument("--vtk-every must be >= 0 (0: no VTK output)");
  if (o.energy_every < 1) throw std::invalid_argument("--energy-every must be >= 1");
  if (o.checkpoint_every < 0) throw std::invalid_argument("--checkpoint-every must be >= 0");
  if (!(std::isfinite(o.max_energy_drift) && o.max_energy_drift > 0.0))
    throw std::invalid_argument("--max-energy-drift must be a finite number > 0, got " + format_g(o.max_energy_drift));
  if (!(std::isfinite(o.warn_energy_drift) && o.warn_energy_drift > 0.0))
    throw std::invalid_argument("--warn-energy-drift must be a finite number > 0, got " +
                                format_g(o.warn_energy_drift));
  const dem::IntegratorMap map = dem::parse_integrator_map(o.integrator);
  if (!o.solid && (o.km >= 0 || o.ka >= 0 || o.ks >= 0 || o.kpp >= 0 || o.kpw >= 0))
    throw std::logic_error("stiffness overrides are applied to the ring parameters directly");

  dem::ThreadLimit thread_limit(o.threads);
  dem::set_simd_target(o.simd);
  std::string what;
  dem::Scene scene = build_scene(o, ring_params, solid_params, has_diameter, what);
  const double h_crit = dem::critical_time_step(scene.particles, scene.bonds, scene.contact, scene.walls);
  std::string dt_note;
  if (!dt_given) {
    if (o.solid) {
      o.dt = o.dt_fraction * h_crit;
      dt_note = " (" + format_g(o.dt_fraction) + " of the critical step " + format_g(h_crit) + ")";
    } else {
      o.dt = 1e-3;  // the paper's
    }
  }
  if (!(o.dt < h_crit))
    std::cerr << "warning: the time step " << format_g(o.dt)
              << " is not below the critical step estimate " << format_g(h_crit)
              << " (engine/time_step.hpp); the run may blow up\n";
  const long long steps =
      o.steps >= 0 ? o.steps : static_cast<long long>(std::llround(o.t_end / o.dt));
  const bool wall = !scene.walls.empty();
  dem::sort_for_locality(scene);
  dem::ForceField field(scene.particles, std::move(scene.bonds), scene.contact,
                        std::move(scene.walls));
  dem::Simulation sim(std::move(scene.particles), std::move(field), map, o.dt);

  dem::RunPlan plan;
  plan.output_dir = o.output_dir;
  plan.end_step = static_cast<std::uint64_t>(steps);
  plan.output.vtk_every = static_cast<std::uint64_t>(o.vtk_every);
  plan.output.energy_every = static_cast<std::uint64_t>(o.energy_every);
  plan.output.checkpoint_every = static_cast<std::uint64_t>(o.checkpoint_every);
  plan.scene_path = "dem_torus";  // no scene file: dem restart takes the intervals from the checkpoint
  plan.progress = !o.quiet;
  plan.time_step_hint = "try a smaller --dt (for example " + format_g(o.dt / 4) + ")";
  plan.overwrite = o.overwrite;
  plan.energy_limits.max_drift = o.max_energy_drift;
  plan.energy_limits.warn_drift = o.warn_energy_drift;
  plan.energy_limits.max_name = "--max-energy-drift";
  plan.energy_limits.warn_name = "--warn-energy-drift";

  std::cout << "dem_torus: " << what << ", " << sim.forces().bonds().size()
            << " bonds, map (" << o.integrator << "), h = " << format_g(o.dt) << dt_note << ", "
            << steps << " steps to t = " << format_g(steps * o.dt) << ", "
            << dem::active_threads() << " threads, wall " << (wall ? "on" : "off") << "\n"
            << "output: " << std::filesystem::absolute(plan.output_dir).string() << "\n";
  return dem::run_to_end(sim, plan, std::cout);
}

}  // namespace

/// Values of options that go to the ring or the solid torus (set only when given).
struct SceneValues {
  double tilt = std::numeric_limits<double>::quiet_NaN();
  double speed = std::numeric_limits<double>::quiet_NaN();
  double km = -1, ka = -1, ks = -1, kpp = -1;
};

/// The options that describe the scene (ring or solid torus).
void add_scene_options(CLI::App& app, Options& o, dem::RingTorusParameters& p, dem::SolidTorusParameters& sp,
                       SceneValues& x) {
  namespace cli = dem::cli;
  app.add_option("--integrator", o.integrator, "Map of Baker & Gonzalez: 23, 25 or 27")
      ->capture_default_str();
  app.add_option("--dt", o.dt,
                 "Time step h (ring default 1e-3; solid default: --dt-fraction of the critical "
                 "step estimate, engine/time_step.hpp)")
      ->check(cli::positive_number("the time step"));
  app.add_option("--dt-fraction", o.dt_fraction,
                 "Solid scene: fraction of the critical time step used when --dt is not given")
      ->capture_default_str()
      ->check(cli::finite_number("the fraction of the critical step", 0.0, true, 1.0));
  app.add_option("--t-end", o.t_end, "End time t_N (ring default 35; solid default 4e-4 s)")
      ->check(cli::positive_number("the end time"));
  app.add_option("--steps", o.steps, "Run exactly this many steps (overrides --t-end)")
      ->check(cli::whole_number("the step count", 0, 9000000000000000LL));
  app.add_option("--particles", p.particles, "Ring scene: number of particles N_p in the ring")
      ->capture_default_str()
      ->check(cli::whole_number("the ring size (a ring needs at least 3 particles)", 3, 1LL << 30));
  app.add_option("--tilt-deg", x.tilt,
                 "Tilt about the y axis (degrees) of the ring plane (default 0) or of the solid "
                 "torus axis (default 30)")
      ->check(cli::finite_number("the tilt (degrees)"));
  app.add_flag("--solid", o.solid, "Solid torus of bonded spheres (docs/model.md §7)");
  app.add_option("--major-diameter", sp.major_diameter, "Solid: centre-line diameter D_t (m)")
      ->capture_default_str()
      ->check(cli::positive_number("the major diameter D_t (m)"));
  app.add_option("--tube-diameter", sp.tube_diameter, "Solid: tube diameter D_tube (m)")
      ->capture_default_str()
      ->check(cli::positive_number("the tube diameter D_tube (m)"));
  app.add_option("--particle-diameter", sp.particle_diameter, "Solid: sphere diameter d (m)")
      ->capture_default_str()
      ->check(cli::positive_number("the particle diameter d (m)"));
  app.add_option("--target-particles", o.target_particles,
                 "Solid: choose d to give about this many particles (instead of "
                 "--particle-diameter)")
      ->check(cli::whole_number("the target particle count", 1, 1LL << 30));
  app.add_option("--density", sp.density, "Solid: particle density rho (kg/m^3)")
      ->capture_default_str()
      ->check(cli::positive_number("the density rho (kg/m^3)"));
  app.add_option("--particle-modulus", sp.particle_modulus, "Solid: Young's modulus E_p (Pa)")
      ->capture_default_str()
      ->check(cli::positive_number("the particle modulus E_p (Pa)"));
  app.add_option("--particle-poisson", sp.particle_poisson, "Solid: Poisson's ratio nu")
      ->capture_default_str()
      ->check(cli::finite_number("Poisson's ratio nu", -1.0, true, 0.5, true));
  app.add_option("--binder-modulus", sp.binder_modulus, "Solid: binder modulus E_b (Pa)")
      ->capture_default_str()
      ->check(cli::nonnegative_number("the binder modulus E_b (Pa)"));
  app.add_option("--bond-radius-ratio", sp.bond_radius_ratio,
                 "Solid: bond radius ratio beta (r_b = beta d/2)")
      ->capture_default_str()
      ->check(cli::nonnegative_number("the bond radius ratio beta"));
  app.add_option("--gap", sp.gap, "Solid: gap between the wall and the nearest sphere (m)")
      ->capture_default_str()
      ->check(cli::nonnegative_number("the gap to the wall (m)"));
  app.add_option("--spin", o.spin, "Rigid spin wx,wy,wz of the ring about its centre")
      ->delimiter(',')
      ->expected(3)
      ->check(cli::finite_number("each spin component (1/time)"));
  app.add_flag("--no-wall", o.no_wall, "Leave out the wall (free flight)");
  app.add_option("--speed", x.speed, "Initial speed towards the wall (ring default 1; solid 10 m/s)")
      ->check(cli::finite_number("the speed"));
  app.add_option("--km", x.km, "Bending/torsion stiffness K^m (ring default 10; solid: from E_b)")
      ->check(cli::nonnegative_number("K^m (bending stiffness)"));
  app.add_option("--ka", x.ka, "Axial stiffness K^a (ring default 200; solid: from E_b)")
      ->check(cli::nonnegative_number("K^a (axial stiffness)"));
  app.add_option("--ks", x.ks, "Shear stiffness K^s (ring default 200; solid: = K^a)")
      ->check(cli::nonnegative_number("K^s (shear stiffness)"));
  app.add_option("--kpp", x.kpp,
                 "Particle-particle contact stiffness K^pp (ring default 2100; solid: Hertz from "
                 "E_p, nu)")
      ->check(cli::nonnegative_number("K^pp (contact stiffness)"));
  app.add_option("--kpw", p.k_wall,
                 "Particle-wall contact stiffness K^pw (ring default K^pp; solid: Hertz)")
      ->check(cli::nonnegative_number("K^pw (wall stiffness)"));
}

/// The options of the run and its output.
void add_run_options(CLI::App& app, Options& o) {
  namespace cli = dem::cli;
  app.add_option("--output-dir", o.output_dir, "Folder for VTK frames and energy.csv")
      ->capture_default_str();
  app.add_option("--vtk-every", o.vtk_every,
                 "Steps between VTK frames (0: none; ring default 100, solid 250)")
      ->check(cli::whole_number("the VTK interval (steps)", 0, 1LL << 53));
  app.add_option("--energy-every", o.energy_every,
                 "Steps between energy.csv rows (ring default 10, solid 100)")
      ->check(cli::whole_number("the energy interval (steps)", 1, 1LL << 53));
  app.add_option("--threads", o.threads, "Worker threads (0: all cores)")->capture_default_str()
      ->check(cli::whole_number("the thread count", 0, 4096));
  app.add_option("--simd", o.simd,
                 "SIMD target of the force kernels: auto (the best this CPU has), avx3 (AVX-512), avx2, sse4, "
                 "ssse3, hwy_scalar or scalar; every target writes the same bits")
      ->envname("DEM_SIMD")
      ->capture_default_str();
  app.add_flag("--overwrite", o.overwrite,
               "Replace the files of an earlier run in --output-dir (only the files the engine writes)");
  app.add_option("--max-energy-drift", o.max_energy_drift,
                 "Stop (exit 2) when the energy drift passes this fraction of the energy scale (docs/model.md §15)")
      ->capture_default_str();
  app.add_option("--warn-energy-drift", o.warn_energy_drift,
                 "Warn once when the energy drift passes this fraction of the energy scale (docs/model.md §15)")
      ->capture_default_str();
  app.add_flag("--quiet", o.quiet, "No progress lines");
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "Steps between checkpoints (0: only at the end and when interrupted; continue with "
                 "dem restart OUTPUT_DIR/checkpoint.bin)")
      ->capture_default_str()
      ->check(cli::whole_number("the checkpoint interval (steps)", 0, 1LL << 53));
}

/// Checks the given options against each other and moves them into the
/// ring's or the solid torus's parameters; throws std::invalid_argument.
void apply_options(const CLI::App& app, Options& o, dem::RingTorusParameters& p, dem::SolidTorusParameters& sp,
                   const SceneValues& x) {
  if (app.count("--kpw") > 0 && !(p.k_wall >= 0.0))
    throw std::invalid_argument("--kpw (wall stiffness K^pw) must be >= 0");
  for (const auto& [name, v] :
       {std::pair{"--km (bending stiffness K^m)", x.km}, std::pair{"--ka (axial stiffness K^a)", x.ka},
        std::pair{"--ks (shear stiffness K^s)", x.ks},
        std::pair{"--kpp (contact stiffness K^pp)", x.kpp}})
    if (app.count(std::string(name).substr(0, std::string(name).find(' '))) > 0 &&
        !(std::isfinite(v) && v >= 0.0))
      throw std::invalid_argument(std::string(name) + " must be a finite number >= 0, got " +
                                  format_g(v));
  o.dt_given = app.count("--dt") > 0;
  o.t_end_given = app.count("--t-end") > 0;
  o.vtk_given = app.count("--vtk-every") > 0;
  o.energy_given = app.count("--energy-every") > 0;
  if (!o.solid) {
    for (const char* name : {"--major-diameter", "--tube-diameter", "--particle-diameter",
                             "--target-particles", "--density", "--particle-modulus",
                             "--particle-poisson", "--binder-modulus", "--bond-radius-ratio",
                             "--gap", "--dt-fraction"})
      if (app.count(name) > 0)
        throw std::invalid_argument(std::string(name) + " applies to the solid torus: add --solid");
    if (app.count("--km")) p.k_bending = x.km;
    if (app.count("--ka")) p.k_axial = x.ka;
    if (app.count("--ks")) p.k_shear = x.ks;
    if (app.count("--kpp")) p.k_contact = x.kpp;
    if (!std::isnan(x.tilt)) p.tilt_deg = x.tilt;
    if (!std::isnan(x.speed)) p.speed = x.speed;
  } else {
    if (app.count("--particles") > 0)
      throw std::invalid_argument(
          "--particles is the ring size; for the solid torus use --target-particles");
    if (app.count("--km")) o.km = x.km;
    if (app.count("--ka")) o.ka = x.ka;
    if (app.count("--ks")) o.ks = x.ks;
    if (app.count("--kpp")) o.kpp = x.kpp;
    if (app.count("--kpw")) o.kpw = p.k_wall;
    if (!std::isnan(x.tilt)) sp.tilt_deg = x.tilt;
    if (!std::isnan(x.speed)) sp.speed = x.speed;
  }
}

int main(int argc, char** argv) {
  CLI::App app{
      "dem_torus: a bonded torus thrown at a rigid wall: the particle-binder ring of Baker & "
      "Gonzalez 2021, section 4.1 (default, the paper's parameters), or with --solid the solid "
      "torus of bonded spheres of docs/model.md §7."};
  Options o;
  dem::RingTorusParameters p;
  dem::SolidTorusParameters sp;
  SceneValues x;
  add_scene_options(app, o, p, sp, x);
  add_run_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  try {
    apply_options(app, o, p, sp, x);
    return run(o, p, sp, app.count("--particle-diameter") > 0);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
