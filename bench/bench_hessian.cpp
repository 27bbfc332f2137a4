// Micro-benchmarks of the implicit integrator's element Hessian blocks
// (docs/model.md §12.4): one BDEM bond's 12x12 block in the Gauss-Newton
// form (the default) and the exact one, on dual numbers, one thread. Items
// are bonds, so items/s is blocks a second.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "bonds/bdem_bond.hpp"
#include "bonds/bond_hessian.hpp"
#include "core/hessian_blocks.hpp"

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

}  // namespace

BENCHMARK(BM_BdemGaussNewtonBlock);
BENCHMARK(BM_BdemExactBlock);
