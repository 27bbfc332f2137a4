#pragma once
// The low-resolution quasi-static bending beam as the preconditioner tests
// use it (test_amg.cpp, test_two_level.cpp): scenes/three_point_bending_low_
// quasi_static.toml with block Jacobi and implicit steps of 4 ms (164 times
// the explicit limit), or another preconditioner; and its Hessian after 50
// steps (0.2 mm of punch travel) with a right-hand side b and CG weights w.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app_support.hpp"
#include "core/parallel.hpp"
#include "engine/block_hessian.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_builder.hpp"
#include "scene_support.hpp"

namespace dem::testing {

inline constexpr double kBendingDt = 4e-3;

/// The scene's text with `preconditioner`, `hessian_update` and a step of
/// kBendingDt.
inline std::string bending_text(const std::string& preconditioner = "block-jacobi",
                                const std::string& hessian_update = "every-iteration") {
  std::string text =
      read_file_text(std::filesystem::path(DEM_SOURCE_DIR) / "scenes/three_point_bending_low_quasi_static.toml");
  text = replaced(text, "preconditioner = \"two-level\"", "preconditioner = \"" + preconditioner + "\"");
  text = replaced(text, "hessian_update = \"when-slow\"", "hessian_update = \"" + hessian_update + "\"");
  return replaced(text, "time_step = 8e-3", "time_step = 4e-3");
}

inline Simulation bending_simulation(const std::string& text) {
  return make_simulation(build_scene(parse_scene_text(text, "bending.toml", ".")));
}

struct BendingProblem {
  Simulation sim;
  BlockHessian h;
  std::vector<Mat6> inertia;
  std::vector<char> fixed;
  std::vector<Vec6> b, w;
};

inline BendingProblem bending_problem() {
  BendingProblem p{bending_simulation(bending_text()), {}, {}, {}, {}, {}};
  for (int k = 0; k < 50; ++k) p.sim.step();  // loaded: 0.2 mm of punch travel
  const ParticleStore& s = p.sim.particles();
  const std::size_t n = s.size();
  const double dt = kBendingDt;
  p.inertia.assign(n, Mat6::Zero());
  p.fixed.assign(n, 0);
  p.b.resize(n);
  p.w.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double mt = s.mass[i] / (dt * dt), mr = s.inertia[i] / (dt * dt);
    p.inertia[i].diagonal() << mt, mt, mt, mr, mr, mr;
    p.fixed[i] = s.is_kinematic(i) ? 1 : 0;
    p.w[i] << 1 / mt, 1 / mt, 1 / mt, 1 / mr, 1 / mr, 1 / mr;
    for (int a = 0; a < 6; ++a) p.b[i][a] = p.fixed[i] ? 0.0 : std::sin(1.0 + 7.0 * i + a) * (a < 3 ? 1e-3 : 1e-6);
  }
  p.h.assemble(s, p.sim.forces(), p.inertia, p.fixed, HessianBlocks::gauss_newton);
  return p;
}

/// |a - b|_W^-1 / |b|_W^-1 (relative, in the inverse CG weights).
inline double weighted_distance(const std::vector<Vec6>& a, const std::vector<Vec6>& b, const std::vector<Vec6>& w) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]).cwiseProduct(a[i] - b[i]).dot(w[i].cwiseInverse());
    den += b[i].cwiseProduct(b[i]).dot(w[i].cwiseInverse());
  }
  return std::sqrt(num / den);
}

/// Newton and CG iterations of `steps` implicit steps.
struct RunCounts {
  std::size_t newton = 0, cg = 0, assemblies = 0;
};
inline RunCounts run_steps(Simulation& sim, int steps) {
  RunCounts c;
  for (int k = 0; k < steps; ++k) {
    sim.step();
    for (const ImplicitStepStats& a : sim.last_implicit_attempts()) {
      c.newton += a.newton_iterations;
      c.cg += a.cg_iterations;
      c.assemblies += a.hessian_assemblies;
    }
  }
  return c;
}

/// The largest distance between the same particles of two runs, in radii.
inline double largest_position_difference(const Simulation& a, const Simulation& b) {
  const ParticleStore &s = a.particles(), &t = b.particles();
  double worst = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s.id[i], t.id[i]);
    worst = std::max(worst, (s.position[i] - t.position[i]).norm() / s.radius[i]);
  }
  return worst;
}

/// CG on the bending problem with the preconditioner that `set_up(h)`
/// returns (set up on h) gives the same bits on 1 and 2 threads.
template <class SetUp>
void expect_same_solution_for_one_and_two_threads(SetUp&& set_up) {
  std::vector<std::vector<Vec6>> runs;
  for (const std::size_t threads : {1, 2}) {
    ThreadLimit limit(threads);
    BendingProblem p = bending_problem();
    std::vector<Vec6> d(p.h.size());
    const auto pre = set_up(p);
    (void)solve_pcg(p.h, p.b, d, p.w, 1e-8, 20000, {}, {}, pre.get());
    runs.push_back(d);
  }
  EXPECT_TRUE(runs[0] == runs[1]);
}

/// 16 steps of `text` on 1 and 2 threads, and resumed from a checkpoint at
/// step 9, give the same bits; `check(resumed)` looks at the resumed run's
/// settings.
template <class Check>
void expect_same_run_for_threads_and_checkpoint(const std::string& text, Check&& check) {
  const int steps = 16, cut = 9;
  StateSnapshot first;
  for (const std::size_t threads : {1, 2}) {
    ThreadLimit limit(threads);
    Simulation sim = bending_simulation(text);
    for (int k = 0; k < cut; ++k) sim.step();
    Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(sim))));
    check(resumed);
    for (int k = cut; k < steps; ++k) {
      sim.step();
      resumed.step();
    }
    const StateSnapshot s = snapshot(sim);
    if (threads == 1) first = s;
    EXPECT_TRUE(s == first) << threads << " threads";
    EXPECT_TRUE(snapshot(resumed) == s) << threads << " threads, resumed at step " << cut;
  }
}

}  // namespace dem::testing
