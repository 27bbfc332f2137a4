// Micro-benchmarks of the implicit integrator's linear algebra (docs/model.md
// §12.4, §12.5 c): one BDEM bond's 12x12 element Hessian in the
// Gauss-Newton form (the default) and the exact one, on dual numbers, one
// thread (items: blocks); and the block Hessian's product y = H x on the
// large plate (scenes/plate_drop_large.toml, 220,523 particles, 1.14
// million bonds) at 1 and 2 threads (items: couplings, the 6x6 blocks
// multiplied, so items/s is couplings a second).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "bonds/bdem_bond.hpp"
#include "bonds/bond_hessian.hpp"
#include "core/hessian_blocks.hpp"
#include "core/parallel.hpp"
#include "engine/block_hessian.hpp"
#include "scene/scene_builder.hpp"

namespace {

/// Bonds of rest length 2 mm, stretched and turned a little, at random.
struct BondSample {
  std::vector<dem::Vec3> x_i, x_j, d0;
  std::vector<dem::Quat> q_i, q_j;
  dem::BdemStiffness k = dem::bdem_stiffness(1e9, 0.3, 1e-3, 2e-3);

  explicit BondSample(std::size_t n) {
    std::mt19937_64 g(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const auto random_vector = [&] { return dem::Vec3(u(g), u(g), u(g)); };
    for (std::size_t b = 0; b < n; ++b) {
      d0.push_back(random_vector().normalized());
      x_i.push_back(1e-3 * random_vector());
      x_j.push_back(x_i.back() - 2e-3 * d0.back() + 1e-5 * random_vector());
      q_i.push_back(dem::Quat(1.0, 0.01 * u(g), 0.01 * u(g), 0.01 * u(g)).normalized());
      q_j.push_back(dem::Quat(1.0, 0.01 * u(g), 0.01 * u(g), 0.01 * u(g)).normalized());
    }
  }
};

void run_blocks(benchmark::State& state, dem::HessianBlocks blocks) {
  const BondSample s(4096);
  for (auto _ : state)
    for (std::size_t b = 0; b < s.d0.size(); ++b)
      benchmark::DoNotOptimize(dem::bdem_bond_block(blocks, s.x_i[b], s.x_j[b], s.q_i[b], s.q_j[b], s.d0[b], 2e-3, s.k));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.d0.size()));
}

void BM_BdemGaussNewtonBlock(benchmark::State& state) { run_blocks(state, dem::HessianBlocks::gauss_newton); }
void BM_BdemExactBlock(benchmark::State& state) { run_blocks(state, dem::HessianBlocks::exact); }

/// The large plate at rest in its lattice, its Hessian assembled (Gauss-
/// Newton blocks, inertia m/h² and J/h² at the scene's step of 3.5e-7 s):
/// built once for every run of BM_HessianProduct.
struct LargePlate {
  dem::Simulation sim = dem::make_simulation(
      dem::build_scene(dem::read_scene_file(DEM_SOURCE_DIR "/scenes/plate_drop_large.toml")));
  dem::BlockHessian h;
  LargePlate() {
    const dem::ParticleStore& s = sim.particles();
    const double dt = 3.5e-7;
    std::vector<dem::Mat6> inertia(s.size(), dem::Mat6::Zero());
    for (std::size_t i = 0; i < s.size(); ++i) {
      const double mt = s.mass[i] / (dt * dt), mr = s.inertia[i] / (dt * dt);
      inertia[i].diagonal() << mt, mt, mt, mr, mr, mr;
    }
    h.assemble(s, sim.forces(), inertia, {}, dem::HessianBlocks::gauss_newton);
  }
};

void BM_HessianProduct(benchmark::State& state) {
  static LargePlate plate;
  dem::ThreadLimit limit(static_cast<std::size_t>(state.range(0)));
  const std::size_t n = plate.h.size();
  std::vector<dem::Vec6> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = dem::Vec6::Constant(1.0 + 1e-6 * static_cast<double>(i % 1000));
  std::int64_t couplings = 0;
  for (std::size_t i = 0; i < n; ++i) couplings += static_cast<std::int64_t>(plate.h.row(i).size());
  for (auto _ : state) {
    plate.h.multiply(x, y);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * couplings);
  state.counters["couplings"] = static_cast<double>(couplings);
}

}  // namespace

BENCHMARK(BM_BdemGaussNewtonBlock);
BENCHMARK(BM_BdemExactBlock);
BENCHMARK(BM_HessianProduct)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
