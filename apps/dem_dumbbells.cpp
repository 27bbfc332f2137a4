// dem_dumbbells: the two-dumbbell full body problem of Lee, Leok &
// McClamroch (section 5.2; docs/model.md §8), integrated by the Lie group
// variational integrator (default) or, for comparison, by classical RK4.
//
// Writes into the output folder:
//   energy.csv    t,E_kin_trans,E_kin_rot,U_gravity,E_total,P_x,P_y,P_z,L_x,L_y,L_z
//   attitude.csv  t,orthogonality_1,orthogonality_2,newton_iterations
//                 (|I - R^T R| of each body; Newton iterations of the step, 0 for RK4)
//   particles_NNNNNN.vtp / bonds_NNNNNN.vtp (+ .pvd): the four point masses as
//                 spheres and the two rods as lines, for ParaView
// and prints the largest energy deviation and orthogonality error.
//
// Exit status: 0 done, 1 bad input, 2 the run failed (Newton did not converge,
// non-finite state); files written so far are kept.

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "scene/dumbbells.hpp"
#include "engine/rigid_rk4.hpp"
#include "io/vtk_writer.hpp"
#include "core/format.hpp"

namespace {

using namespace dem;


/// The four point masses as spheres and the two rods as bonds, for VTK.
struct Picture {
  ParticleStore points;
  BondList rods;
};

Picture picture(const DumbbellPair& pair, const std::vector<RigidBody>& b) {
  Picture p;
  for (int i = 0; i < 2; ++i)
    for (double side : {0.5, -0.5}) {
      ParticleSpec s;
      s.position = b[i].position + b[i].attitude * Vec3(side * pair.length[i], 0, 0);
      s.velocity = b[i].velocity;
      s.mass = 0.5 * b[i].mass;
      s.inertia = 1.0;
      s.diameter = 0.04 * std::cbrt(b[i].mass);
      p.points.add(s);
    }
  p.rods.add(p.points, 0, 1, {});
  p.rods.add(p.points, 2, 3, {});
  return p;
}

/// Keeps the rods' reference state from the first frame (rigid: zero strain).
void move(Picture& p, const DumbbellPair& pair, const std::vector<RigidBody>& b) {
  for (int i = 0; i < 2; ++i)
    for (int q = 0; q < 2; ++q) {
      const double side = q == 0 ? 0.5 : -0.5;
      p.points.position[2 * i + q] = b[i].position + b[i].attitude * Vec3(side * pair.length[i], 0, 0);
      p.points.velocity[2 * i + q] = b[i].velocity;
    }
}

void write_row(std::FILE* f, const std::vector<double>& values) {
  for (std::size_t k = 0; k < values.size(); ++k)
    std::fprintf(f, k == 0 ? "%.16e" : ",%.16e", values[k]);
  std::fputc('\n', f);
}


/// The command line's settings.
struct DumbbellOptions {
  double h = 2e-4, t_end = 20.0;
  std::string out_dir = "dumbbells_output", integrator = "lgvi";
  long long energy_every = -1, vtk_every = -1;
  bool quiet = false;
};

/// Checks the options and fills in the defaults that depend on the step;
/// throws std::invalid_argument naming the option.
void complete(DumbbellOptions& o) {
  if (!(std::isfinite(o.h) && o.h > 0.0)) throw std::invalid_argument("--dt must be a finite positive time step");
  if (!(std::isfinite(o.t_end) && o.t_end > 0.0)) throw std::invalid_argument("--t-end must be positive");
  if (o.t_end / o.h > 1e9) throw std::invalid_argument("--t-end / --dt is more than 10^9 steps");
  if (o.energy_every < 0) o.energy_every = std::max(1LL, std::llround(0.01 / o.h));
  if (o.vtk_every < 0) o.vtk_every = std::max(1LL, std::llround(0.05 / o.h));
  if (o.energy_every == 0) throw std::invalid_argument("--energy-every must be >= 1");
}

/// The worst errors over a run, for the summary.
struct RunExtremes {
  double max_de = 0, max_orth = 0, max_dp = 0, max_dl = 0, closest = INFINITY, t_closest = 0;
  int min_it = 1 << 30, max_it = 0;
};

void print_extremes(const RunExtremes& x, double e0, bool rk4) {
  std::cout << "largest |E - E_0|: " << format_g(x.max_de, 5) << " (E_0 = " << format_g(e0, 10) << ")\n"
            << "largest |I - R^T R|: " << format_g(x.max_orth, 4) << "\n"
            << "largest |P - P_0|: " << format_g(x.max_dp, 3) << ", |L - L_0|: " << format_g(x.max_dl, 3) << "\n"
            << "closest approach of the centres: " << format_g(x.closest, 4) << " at t = " << format_g(x.t_closest, 4)
            << "\n";
  if (!rk4) std::cout << "Newton iterations per step: " << x.min_it << " to " << x.max_it << "\n";
}

/// Runs the paper's two dumbbells, writing energy.csv, attitude.csv and VTK
/// frames; the exit status (1 for a folder it cannot write, 2 for a failed run).
int run_dumbbells(const DumbbellOptions& o) {
  const double h = o.h;
  const long long energy_every = o.energy_every, vtk_every = o.vtk_every;
  const bool rk4 = o.integrator == "rk4";
  const DumbbellPair pair;
  std::vector<RigidBody> bodies = paper_dumbbells();
  const auto forces = [&](std::vector<RigidBody>& b) { dumbbell_forces(pair, b); };
  forces(bodies);

  const std::filesystem::path out = o.out_dir;
  std::FILE* energy = nullptr;
  std::FILE* attitude = nullptr;
  std::unique_ptr<VtkSeriesWriter> vtk;
  try {
    vtk = std::make_unique<VtkSeriesWriter>(out);  // creates the folder or throws naming it
    energy = std::fopen((out / "energy.csv").c_str(), "w");
    attitude = std::fopen((out / "attitude.csv").c_str(), "w");
    if (energy == nullptr || attitude == nullptr) throw std::runtime_error("cannot write into " + out.string());
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  std::fputs("t,E_kin_trans,E_kin_rot,U_gravity,E_total,P_x,P_y,P_z,L_x,L_y,L_z\n", energy);
  std::fputs("t,orthogonality_1,orthogonality_2,newton_iterations\n", attitude);

  const auto kinetic_translation = [&]() {
    double e = 0;
    for (const RigidBody& b : bodies) e += 0.5 * b.mass * b.velocity.squaredNorm();
    return e;
  };
  const auto total = [&]() { return rigid_kinetic_energy(bodies) + dumbbell_potential(pair, bodies); };
  const double e0 = total();
  const Vec3 p0 = rigid_linear_momentum(bodies), l0 = rigid_angular_momentum(bodies);
  RunExtremes x;
  Picture pic = picture(pair, bodies);
  const auto record = [&](double t, int iterations) {
    const double ek = kinetic_translation(), e = total();
    const Vec3 p = rigid_linear_momentum(bodies), l = rigid_angular_momentum(bodies);
    write_row(energy, {t, ek, rigid_kinetic_energy(bodies) - ek, dumbbell_potential(pair, bodies), e, p.x(), p.y(),
                       p.z(), l.x(), l.y(), l.z()});
    write_row(attitude, {t, orthogonality_error(bodies[0].attitude), orthogonality_error(bodies[1].attitude),
                         static_cast<double>(iterations)});
  };
  record(0.0, 0);
  if (vtk_every > 0) vtk->write_frame(0.0, pic.points, pic.rods);
  const long long steps = std::llround(o.t_end / h);
  if (!o.quiet)
    std::cout << "dem_dumbbells: " << (rk4 ? "RK4" : "LGVI") << ", h = " << format_g(h) << ", " << steps
              << " steps to t = " << format_g(steps * h) << ", E_0 = " << format_g(e0, 10) << "\n";
  long long k = 0;
  try {
    for (k = 1; k <= steps; ++k) {
      int it = 0;
      if (rk4)
        rk4_step(bodies, forces, h);
      else
        it = lgvi_step(bodies, forces, h);
      x.min_it = std::min(x.min_it, it);
      x.max_it = std::max(x.max_it, it);
      const double t = static_cast<double>(k) * h;
      const double e = total();
      if (!std::isfinite(e)) throw std::runtime_error("the energy became non-finite");
      x.max_de = std::max(x.max_de, std::abs(e - e0));
      for (const RigidBody& b : bodies) x.max_orth = std::max(x.max_orth, orthogonality_error(b.attitude));
      x.max_dp = std::max(x.max_dp, (rigid_linear_momentum(bodies) - p0).norm());
      x.max_dl = std::max(x.max_dl, (rigid_angular_momentum(bodies) - l0).norm());
      const double d = (bodies[0].position - bodies[1].position).norm();
      if (d < x.closest) x.closest = d, x.t_closest = t;
      if (k % energy_every == 0 || k == steps) record(t, it);
      if (vtk_every > 0 && (k % vtk_every == 0 || k == steps)) {
        move(pic, pair, bodies);
        vtk->write_frame(t, pic.points, pic.rods);
      }
    }
    vtk->flush();
  } catch (const std::exception& e) {
    std::fclose(energy);
    std::fclose(attitude);
    std::cerr << "error: the run failed at step " << k << " (t = " << format_g(k * h) << "): " << e.what()
              << "\n  Files written so far are kept in " << out.string() << "\n";
    return 2;
  }
  std::fclose(energy);
  std::fclose(attitude);
  print_extremes(x, e0, rk4);
  std::cout << "output: " << std::filesystem::absolute(out).string()
            << " (energy.csv, attitude.csv, particles.pvd, bonds.pvd)\n";
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dem_dumbbells: the two-dumbbell full body problem (Lee, Leok & McClamroch, section 5.2)"};
  DumbbellOptions o;
  app.add_option("--dt", o.h, "Time step (default 2e-4, the paper's)");
  app.add_option("--t-end", o.t_end, "End time (default 20)");
  app.add_option("--output-dir", o.out_dir, "Output folder (default dumbbells_output)");
  app.add_option("--integrator", o.integrator, "lgvi (default) or rk4 (classical Runge-Kutta, for comparison)")
      ->check(CLI::IsMember({"lgvi", "rk4"}));
  app.add_option("--energy-every", o.energy_every, "Steps between rows of energy.csv (default: time 0.01)");
  app.add_option("--vtk-every", o.vtk_every, "Steps between VTK frames, 0 for none (default: time 0.05)");
  app.add_flag("--quiet", o.quiet, "Only the summary");
  CLI11_PARSE(app, argc, argv);
  try {
    complete(o);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return run_dumbbells(o);
}
