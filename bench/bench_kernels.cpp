// Micro-benchmarks of the per-step kernels on a large ring torus: the whole
// force assembly (bonds, contacts, wall), the configuration update and the
// energy diagnostics. Items are particles, so items/s is particle-steps/s
// for one kernel.
#include <benchmark/benchmark.h>

#include "core/parallel.hpp"
#include "scene/ring_torus.hpp"
#include "engine/simulation.hpp"

namespace {

dem::Scene ring_scene(std::size_t n) {
  dem::RingTorusParameters p;
  p.particles = n;
  p.torus_diameter = static_cast<double>(n) / 30.0;  // D_p ~ 0.105
  p.gap = 0.0;
  return dem::make_ring_torus(p);
}

dem::Simulation make_ring(std::size_t n) {
  dem::Scene s = ring_scene(n);
  dem::ForceField f(s.particles, std::move(s.bonds), s.contact, std::move(s.walls));
  return dem::Simulation(std::move(s.particles), std::move(f), dem::IntegratorMap::rrp25, 1e-5);
}

void BM_ForceAssembly(benchmark::State& state) {
  dem::ThreadLimit limit(static_cast<std::size_t>(state.range(1)));
  dem::Simulation sim = make_ring(static_cast<std::size_t>(state.range(0)));
  dem::Scene s = ring_scene(static_cast<std::size_t>(state.range(0)));  // the same bonds, contact and walls
  dem::ForceField field(sim.particles(), sim.forces().bonds(), sim.forces().contact(), std::move(s.walls));
  for (auto _ : state) field.compute(sim.particles());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_FullStep(benchmark::State& state) {
  dem::ThreadLimit limit(static_cast<std::size_t>(state.range(1)));
  dem::Simulation sim = make_ring(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) sim.step();
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_EnergyReport(benchmark::State& state) {
  dem::ThreadLimit limit(static_cast<std::size_t>(state.range(1)));
  dem::Simulation sim = make_ring(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(sim.energy_report());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

}  // namespace

BENCHMARK(BM_ForceAssembly)->Args({100000, 1})->Args({100000, 2})->UseRealTime();
BENCHMARK(BM_FullStep)->Args({100000, 1})->Args({100000, 2})->UseRealTime();
BENCHMARK(BM_EnergyReport)->Args({100000, 1})->Args({100000, 2})->UseRealTime();
