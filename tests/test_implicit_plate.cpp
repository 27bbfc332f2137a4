// The implicit integrator (docs/model.md §12) on small plates of the plate edge
// drop of docs/model.md §13.3 (BDEM bonds, penalty contact and wall, fracture):
//  - as Dt -> 0 it converges to the explicit run (map 25 at a small step)
//    with order 1 (unbreakable bonds, through the impact);
//  - bitwise the same at 1, 2 and 3 threads and across a checkpoint at an
//    odd step, failures included, at 10 times the explicit step;
//  - both for the midpoint rule (docs/model.md §12.9) too, with order 2.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "apps/pendulum.hpp"
#include "core/parallel.hpp"
#include "io/checkpoint.hpp"
#include "plate_scene.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;
using namespace dem::plate_test;

namespace {

/// The scene with [run] implicit_scheme = "midpoint" (docs/model.md §12.9).
std::string midpoint(std::string text) {
  const std::string key = "integrator = \"implicit\"\n";
  const std::size_t at = text.find(key);
  EXPECT_NE(at, std::string::npos);
  return text.insert(at + key.size(), "implicit_scheme = \"midpoint\"\n");
}

std::vector<Vec3> run_to(const std::string& text, double t_end) {
  Simulation sim = simulation_of(text);
  const auto steps = static_cast<std::size_t>(std::llround(t_end / sim.time_step()));
  for (std::size_t k = 0; k < steps; ++k) sim.step();
  return positions_by_id(sim);
}

}  // namespace

TEST(ImplicitPlate, ConvergesToTheExplicitRunWithOrderOne) {
  // 30 us: the plate meets the floor at about 20 us and presses into it.
  const double t_end = 3e-5, strong = INFINITY;
  const std::vector<Vec3> reference = run_to(plate_scene(5, 2.5e-8, t_end, "rrp25", strong), t_end);
  std::vector<double> dts, errors;
  for (const double dt : {1e-6, 5e-7, 2.5e-7}) {
    const std::vector<Vec3> x = run_to(plate_scene(5, dt, t_end, "implicit", strong), t_end);
    double worst = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, (x[i] - reference[i]).norm());
    std::printf("Dt = %g: largest |x - x_explicit| = %.4e m\n", dt, worst);
    dts.push_back(dt);
    errors.push_back(worst);
  }
  const double slope = loglog_slope(dts, errors);
  std::printf("slope %.3f\n", slope);
  EXPECT_NEAR(slope, 1.0, 0.2);
}

// The midpoint rule through the same impact: order 2 (penalty contact has a
// kink in its stiffness where a contact opens or closes, which costs a
// little of it).
TEST(ImplicitPlate, MidpointConvergesToTheExplicitRunWithOrderTwo) {
  const double t_end = 3e-5, strong = INFINITY;
  const std::vector<Vec3> reference = run_to(plate_scene(5, 2.5e-8, t_end, "rrp25", strong), t_end);
  std::vector<double> dts, errors;
  for (const double dt : {1e-6, 5e-7, 2.5e-7}) {
    const std::vector<Vec3> x = run_to(midpoint(plate_scene(5, dt, t_end, "implicit", strong)), t_end);
    double worst = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, (x[i] - reference[i]).norm());
    std::printf("midpoint Dt = %g: largest |x - x_explicit| = %.4e m\n", dt, worst);
    dts.push_back(dt);
    errors.push_back(worst);
  }
  const double slope = loglog_slope(dts, errors);
  std::printf("slope %.3f\n", slope);
  EXPECT_NEAR(slope, 2.0, 0.3);
}

TEST(ImplicitPlate, MidpointBitwiseForAnyThreadCountAndAcrossARestartAtAnOddStep) {
  const std::size_t steps = 32;
  const std::vector<PlateRun> results =
      runs_at_three_thread_counts_and_a_restart(midpoint(plate_scene(7, 2.5e-6, 1e-4, "implicit")), steps, 17);
  ASSERT_EQ(results.size(), 4u);
  std::printf("midpoint: failures in %zu steps at 10 times the explicit step: %zu\n", steps,
              results[0].failures.size());
  ASSERT_GT(results[0].failures.size(), 10u);
  expect_same_ends(results);
}

TEST(ImplicitPlate, BitwiseForAnyThreadCountAndAcrossARestartAtAnOddStep) {
  const std::size_t steps = 32;
  const std::vector<PlateRun> results =
      runs_at_three_thread_counts_and_a_restart(plate_scene(7, 2.5e-6, 1e-4, "implicit"), steps, 17);
  ASSERT_EQ(results.size(), 4u);
  for (const PlateRun& r : results) EXPECT_EQ(r.map, IntegratorMap::implicit);
  std::printf("failures in %zu steps at 10 times the explicit step: %zu\n", steps, results[0].failures.size());
  ASSERT_GT(results[0].failures.size(), 10u);
  expect_same_ends(results);
}

TEST(ImplicitPlate, ARunSwitchesBetweenExplicitAndImplicitAtACheckpoint) {
  // Explicit to implicit and back at the same step (docs/model.md §12.1: the
  // store's v and spatial Omega carry over): the switched run follows the
  // run that stayed explicit to the implicit scheme's first-order error
  // (about 1e-3 of the motion here), far closer than a run that lost its
  // velocities at the switch would (5 m/s for 5 us: 2.5e-5 m, 0.14 of it).
  const std::string text = plate_scene(5, 2.5e-7, 1e-4, "rrp25", INFINITY);
  Simulation explicit_run = simulation_of(text);
  for (int k = 0; k < 100; ++k) explicit_run.step();
  CheckpointState c = decode_checkpoint(encode_checkpoint(capture_simulation(explicit_run)));
  c.map = IntegratorMap::implicit;
  Simulation switched = simulation_from(c);
  for (int k = 0; k < 20; ++k) {
    switched.step();
    explicit_run.step();
  }
  CheckpointState back = capture_simulation(switched);
  back.map = IntegratorMap::rrp25;
  Simulation again = simulation_from(back);
  for (int k = 0; k < 20; ++k) {
    again.step();
    explicit_run.step();
  }
  const std::vector<Vec3> a = positions_by_id(again), b = positions_by_id(explicit_run);
  double worst = 0.0, moved = 0.0;
  const ParticleStore& p = explicit_run.particles();
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).norm());
  for (std::size_t i = 0; i < p.size(); ++i)
    moved = std::max(moved, (p.position[i] - p.reference_position[i]).norm());
  std::printf("after 20 implicit and 20 explicit steps: largest |x - x_explicit| %.3e m (motion %.3e m)\n", worst,
              moved);
  EXPECT_EQ(switched.step_count(), 120u);
  EXPECT_LT(worst, 1e-2 * moved);
}
