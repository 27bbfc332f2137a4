// dem_torus: the particle-binder ring torus thrown at a rigid wall
// (Baker & Gonzalez 2021, section 4.1; MODEL.md section 6), written as a
// ParaView time series and an energy table.
//
// Exit status: 0 on success, 1 for bad input (options, output folder),
// 2 when the run fails (instability, non-finite values, energy blow-up);
// everything written up to the failure is kept.

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/parallel.hpp"
#include "engine/ring_torus.hpp"
#include "engine/simulation.hpp"
#include "io/energy_table.hpp"
#include "io/vtk_writer.hpp"

namespace {

struct Options {
  std::string integrator = "25";
  double dt = 1e-3;
  double t_end = 35.0;
  long long steps = -1;
  std::string output_dir = "torus_output";
  long long vtk_every = 100;
  long long energy_every = 10;
  std::size_t threads = 0;
  bool no_wall = false;
  std::vector<double> spin;
  bool quiet = false;
};

/// Thrown when the run itself goes wrong (as opposed to bad input).
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string format_g(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

int run(const Options& o, dem::RingTorusParameters p) {
  if (!(std::isfinite(o.dt) && o.dt > 0.0))
    throw std::invalid_argument("--dt must be a finite positive time step, got " + format_g(o.dt));
  if (o.steps < 0 && !(std::isfinite(o.t_end) && o.t_end > 0.0))
    throw std::invalid_argument("--t-end must be positive, got " + format_g(o.t_end));
  if (o.vtk_every < 0) throw std::invalid_argument("--vtk-every must be >= 0 (0: no VTK output)");
  if (o.energy_every < 1) throw std::invalid_argument("--energy-every must be >= 1");
  const dem::IntegratorMap map = dem::parse_integrator_map(o.integrator);
  if (!o.spin.empty()) {
    if (o.spin.size() != 3) throw std::invalid_argument("--spin takes three numbers wx,wy,wz");
    p.spin = dem::Vec3(o.spin[0], o.spin[1], o.spin[2]);
  }
  p.wall = !o.no_wall;
  const long long steps =
      o.steps >= 0 ? o.steps : static_cast<long long>(std::llround(o.t_end / o.dt));

  dem::ThreadLimit thread_limit(o.threads);
  dem::Scene scene = dem::make_ring_torus(p);
  dem::ForceField field(scene.particles, std::move(scene.bonds), scene.contact,
                        std::move(scene.walls));
  dem::Simulation sim(std::move(scene.particles), std::move(field), map, o.dt);

  const std::filesystem::path out = o.output_dir;
  dem::VtkSeriesWriter vtk(out);  // creates the folder, or throws naming it
  dem::EnergyTable table(out / "energy.csv");

  const std::size_t n = sim.particles().size();
  std::cout << "dem_torus: ring of " << n << " particles, " << sim.forces().bonds().size()
            << " bonds, map (" << o.integrator << "), h = " << format_g(o.dt) << ", "
            << steps << " steps to t = " << format_g(steps * o.dt) << ", "
            << dem::active_threads() << " threads, wall " << (p.wall ? "on" : "off") << "\n"
            << "output: " << std::filesystem::absolute(out).string() << "\n";

  const dem::EnergyReport first = sim.energy_report();
  const double e0 = first.total();
  double max_dev = 0.0;
  table.write(first);
  if (o.vtk_every > 0) vtk.write_frame(0.0, sim.particles(), sim.forces().bonds());

  const auto check_energy = [&](const dem::EnergyReport& r) {
    const double e = r.total();
    if (!std::isfinite(e) || (e0 > 0.0 && e > 10.0 * e0))
      throw RunFailure("E_total = " + format_g(e) + " (started at " + format_g(e0) +
                       ") has " + (std::isfinite(e) ? "grown past ten times its start" :
                                                      "become non-finite"));
    if (e0 != 0.0) max_dev = std::max(max_dev, std::abs(e - e0) / std::abs(e0));
  };

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last_report = start;
  long long done = 0;
  try {
    for (long long k = 1; k <= steps; ++k) {
      sim.step();
      done = k;
      const bool energy_now = k % o.energy_every == 0 || k == steps;
      if (energy_now) {
        const dem::EnergyReport r = sim.energy_report();
        table.write(r);
        check_energy(r);
      }
      if (o.vtk_every > 0 && (k % o.vtk_every == 0 || k == steps))
        vtk.write_frame(sim.time(), sim.particles(), sim.forces().bonds());
      const auto now = clock::now();
      if (!o.quiet && now - last_report > std::chrono::seconds(2)) {
        last_report = now;
        const double secs = std::chrono::duration<double>(now - start).count();
        const double rate = k / secs;
        std::cout << "  t = " << format_g(sim.time(), 5) << " (" << (100 * k / steps) << "%), "
                  << format_g(rate, 4) << " steps/s, about " << format_g((steps - k) / rate, 3)
                  << " s left" << std::endl;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "error: the run failed at step " << (done + 1) << " (t = "
              << format_g((done + 1) * o.dt) << "): " << e.what()
              << "\n  The time step is probably too large for the stiffest contact: try a "
                 "smaller --dt (for example "
              << format_g(o.dt / 4) << ").\n  Files written so far are kept in "
              << out.string() << "\n";
    return 2;
  }
  const double secs = std::chrono::duration<double>(clock::now() - start).count();
  std::cout << "done: " << steps << " steps in " << format_g(secs, 4) << " s, "
            << format_g(steps / secs, 4) << " steps/s, " << format_g(n * steps / secs, 4)
            << " particle-steps/s\n"
            << "  neighbour-list builds: " << sim.forces().neighbours().rebuild_count() << "\n"
            << "  largest |E_total - E_0|/E_0: " << format_g(max_dev, 4) << " (E_0 = "
            << format_g(e0, 10) << ")\n"
            << "  output: " << std::filesystem::absolute(out).string()
            << " (open particles.pvd and bonds.pvd in ParaView; energy.csv)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dem_torus: particle-binder ring torus impact against a rigid wall "
      "(Baker & Gonzalez 2021, section 4.1). Defaults are the paper's parameters."};
  Options o;
  dem::RingTorusParameters p;
  app.add_option("--integrator", o.integrator, "Map of Baker & Gonzalez: 23, 25 or 27")
      ->capture_default_str();
  app.add_option("--dt", o.dt, "Time step h")->capture_default_str();
  app.add_option("--t-end", o.t_end, "End time t_N")->capture_default_str();
  app.add_option("--steps", o.steps, "Run exactly this many steps (overrides --t-end)");
  app.add_option("--particles", p.particles, "Number of particles N_p in the ring")
      ->capture_default_str();
  app.add_option("--tilt-deg", p.tilt_deg, "Tilt of the ring plane about the y axis (degrees)")
      ->capture_default_str();
  app.add_option("--spin", o.spin, "Rigid spin wx,wy,wz of the ring about its centre")
      ->delimiter(',')
      ->expected(3);
  app.add_flag("--no-wall", o.no_wall, "Leave out the wall (free flight)");
  app.add_option("--speed", p.speed, "Initial speed v_0 towards the wall")->capture_default_str();
  app.add_option("--km", p.k_bending, "Bending/torsion stiffness K^m")->capture_default_str();
  app.add_option("--ka", p.k_axial, "Axial stiffness K^a")->capture_default_str();
  app.add_option("--ks", p.k_shear, "Shear stiffness K^s")->capture_default_str();
  app.add_option("--kpp", p.k_contact, "Particle-particle contact stiffness K^pp")
      ->capture_default_str();
  app.add_option("--kpw", p.k_wall, "Particle-wall contact stiffness K^pw (default: K^pp)");
  app.add_option("--output-dir", o.output_dir, "Folder for VTK frames and energy.csv")
      ->capture_default_str();
  app.add_option("--vtk-every", o.vtk_every, "Steps between VTK frames (0: none)")
      ->capture_default_str();
  app.add_option("--energy-every", o.energy_every, "Steps between energy.csv rows")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Worker threads (0: all cores)")->capture_default_str();
  app.add_flag("--quiet", o.quiet, "No progress lines");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  try {
    if (app.count("--kpw") > 0 && !(p.k_wall >= 0.0))
      throw std::invalid_argument("--kpw (wall stiffness K^pw) must be >= 0");
    return run(o, p);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
