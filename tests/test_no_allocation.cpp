// The time-stepping loop allocates nothing once the neighbour list has its
// size (issue: "no per-step allocation"). This executable replaces the
// global operator new to count allocations.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "scene/lattice_scene.hpp"
#include "engine/reorder.hpp"
#include "engine/simulation.hpp"
#include "scene/solid_torus.hpp"
#include "engine/time_step.hpp"

namespace {
std::atomic<long long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace dem;

namespace {

/// After 20 warm-up steps (thread pool, first buffers), 300 steps in which
/// every step without a neighbour rebuild allocates nothing; most must be.
void expect_quiet_steps_allocate_nothing(Simulation& sim) {
  for (int k = 0; k < 20; ++k) sim.step();
  int quiet_steps = 0;
  for (int k = 0; k < 300; ++k) {
    const std::size_t builds = sim.forces().neighbours().rebuild_count();
    const long long before = g_allocations.load();
    sim.step();
    const long long allocated = g_allocations.load() - before;
    if (sim.forces().neighbours().rebuild_count() == builds) {
      ++quiet_steps;
      EXPECT_EQ(allocated, 0) << "step " << k;
    }
  }
  EXPECT_GT(quiet_steps, 200);
}

}  // namespace

TEST(TimeStepping, StepsWithoutRebuildAllocateNothing) {
  SolidTorusParameters p;
  p.particle_diameter = 2.5e-3;
  p.gap = 0.0;
  p.speed = 20.0;
  p.spin = Vec3(0, 50.0, 0);
  Scene scene = make_solid_torus(p);
  const double h = 0.1 * critical_time_step(scene.particles, scene.bonds, scene.contact);
  sort_for_locality(scene);
  ForceField field(scene.particles, std::move(scene.bonds), scene.contact, std::move(scene.walls));
  Simulation sim(std::move(scene.particles), std::move(field), IntegratorMap::rrp25, h);
  expect_quiet_steps_allocate_nothing(sim);
  EXPECT_GT(sim.energy_report().wall, 0.0);
}

// The same for a scene without bonds, which keeps one force per contact pair.
TEST(TimeStepping, ContactOnlyStepsWithoutRebuildAllocateNothing) {
  LatticeParameters p;
  p.per_side = 12;
  p.temperature = 0.05;
  Scene scene = make_lattice(p);
  ForceField field(scene.particles, std::move(scene.bonds), scene.contact, std::move(scene.walls));
  Simulation sim(std::move(scene.particles), std::move(field), IntegratorMap::rrp25, 1e-3);
  expect_quiet_steps_allocate_nothing(sim);
  EXPECT_GT(sim.energy_report().contact, 0.0);
}
