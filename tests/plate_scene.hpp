#pragma once
// The plate edge drop of docs/model.md §13.3 as scene text, at any size, step,
// integrator and strength, and the determinism check both integrators share
// (tests/test_plate_drop.cpp, test_implicit_plate.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_builder.hpp"

namespace dem::plate_test {

inline std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

inline std::string plate_scene(int cells_xy, double h, double end_time, const std::string& integrator = "rrp25",
                               double strength = 5e6) {
  return R"(
[run]
integrator = ")" + integrator + R"("
time_step = )" + num(h) + R"(
end_time = )" + num(end_time) + R"(
[[material]]
name = "ceramic"
density = 2400.0
E = 1e9
nu = 0.3
beta = 1.0
sigma_c = )" + num(strength) + R"(
tau_c = )" + num(strength) + R"(
[[particles]]
source = "fcc_block"
material = "ceramic"
spacing = 2e-3
cells = [)" + std::to_string(cells_xy) + ", " + std::to_string(cells_xy) + R"(, 2]
rotation_axis = [1.0, 0.0, 0.0]
rotation_angle = 30.0
lowest_z = 1.1e-3
velocity = [0.0, 0.0, -5.0]
[bonds]
law = "bdem"
[contact]
law = "penalty"
stiffness = 1e6
wall_stiffness = 1e6
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
)";
}

inline Simulation simulation_of(const std::string& text) {
  return make_simulation(build_scene(parse_scene_text(text, "plate.toml", ".")));
}

/// What a run ends with, by particle id.
struct PlateRun {
  std::vector<Vec3> x, v;
  std::vector<BondFailure> failures;
  Simulation::Ledger ledger;
  IntegratorMap map = IntegratorMap::rrp25;
};

inline void record_end(const Simulation& sim, PlateRun& r) {
  const ParticleStore& p = sim.particles();
  r.x.assign(p.size(), Vec3::Zero());
  r.v.assign(p.size(), Vec3::Zero());
  for (std::size_t i = 0; i < p.size(); ++i) {
    r.x[p.id[i]] = p.position[i];
    r.v[p.id[i]] = p.velocity[i];
  }
  r.ledger = sim.ledger();
  r.map = sim.map();
}

inline std::vector<Vec3> positions_by_id(const Simulation& sim) {
  PlateRun r;
  record_end(sim, r);
  return r.x;
}

/// The scene run `steps` steps at 1, 2 and 3 threads, and at 2 threads also
/// continued from a checkpoint (encoded and decoded) at step `odd`: four
/// runs, the continued one second.
inline std::vector<PlateRun> runs_at_three_thread_counts_and_a_restart(const std::string& text, std::size_t steps,
                                                                       std::size_t odd) {
  std::vector<PlateRun> results;
  for (std::size_t threads : {1, 2, 3}) {
    ThreadLimit limit(threads);
    Simulation sim = simulation_of(text);
    PlateRun r;
    for (std::size_t k = 0; k < steps; ++k) {
      sim.step();
      for (const BondFailure& f : sim.take_failures()) r.failures.push_back(f);
      if (threads == 2 && sim.step_count() == odd) {
        // Continue a copy from a checkpoint at an odd step; it must end the same.
        Simulation copy = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(sim))));
        PlateRun c = r;
        for (std::size_t j = odd; j < steps; ++j) {
          copy.step();
          for (const BondFailure& f : copy.take_failures()) c.failures.push_back(f);
        }
        record_end(copy, c);
        results.push_back(c);
      }
    }
    record_end(sim, r);
    results.push_back(r);
  }
  return results;
}

/// Every run ends bit for bit as the first: positions, velocities, W_fracture
/// and each failure (bond, step, sigma, energy).
inline void expect_same_ends(const std::vector<PlateRun>& results) {
  for (std::size_t k = 1; k < results.size(); ++k) {
    SCOPED_TRACE("run " + std::to_string(k));
    EXPECT_EQ(results[k].x, results[0].x);
    EXPECT_EQ(results[k].v, results[0].v);
    EXPECT_EQ(results[k].ledger.fracture, results[0].ledger.fracture);
    ASSERT_EQ(results[k].failures.size(), results[0].failures.size());
    for (std::size_t f = 0; f < results[0].failures.size(); ++f) {
      EXPECT_EQ(results[k].failures[f].bond, results[0].failures[f].bond);
      EXPECT_EQ(results[k].failures[f].step, results[0].failures[f].step);
      EXPECT_EQ(results[k].failures[f].sigma, results[0].failures[f].sigma);
      EXPECT_EQ(results[k].failures[f].energy, results[0].failures[f].energy);
    }
  }
}

}  // namespace dem::plate_test
