/// \file bench_neighbour.cpp
/// Neighbour-list rebuild on a 40 x 40 x 40 simple cubic lattice of
/// unit-diameter spheres at spacing 0.98 (each sphere overlaps its six
/// lattice neighbours), skin 0.1. Argument: thread count (0 = all cores).
/// Reports particles per second and checks that every thread count gives the
/// same list as one thread.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <vector>

#include "contact/neighbour_search.hpp"
#include "core/parallel.hpp"

namespace {

struct Lattice {
  std::vector<dem::Vec3> x;
  std::vector<double> r;
};

Lattice cubic_lattice(int side, double spacing, double radius) {
  Lattice l;
  for (int a = 0; a < side; ++a)
    for (int b = 0; b < side; ++b)
      for (int c = 0; c < side; ++c) {
        l.x.emplace_back(a * spacing, b * spacing, c * spacing);
        l.r.push_back(radius);
      }
  return l;
}

const Lattice& bench_lattice() {
  static const Lattice lattice = cubic_lattice(40, 0.98, 0.5);
  return lattice;
}

void BM_NeighbourRebuild(benchmark::State& state) {
  const Lattice& l = bench_lattice();
  const dem::ThreadLimit limit(static_cast<std::size_t>(state.range(0)));
  dem::NeighbourSearch search(0.1);
  search.rebuild(l.x, l.r);  // warm-up: buffers reach their capacity
  for (auto _ : state) {
    search.rebuild(l.x, l.r);
    benchmark::DoNotOptimize(search.list().partner.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(l.x.size()));
  state.counters["pairs"] = static_cast<double>(search.list().pair_count());

  dem::NeighbourList serial;
  {
    const dem::ThreadLimit one(1);
    dem::NeighbourSearch reference(0.1);
    reference.rebuild(l.x, l.r);
    serial = reference.list();
  }
  if (serial.partner != search.list().partner || serial.offsets != search.list().offsets)
    state.SkipWithError("neighbour list differs from the one-thread list");
}
BENCHMARK(BM_NeighbourRebuild)->Arg(1)->Arg(2)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
