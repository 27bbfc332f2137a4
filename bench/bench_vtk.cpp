// Micro-benchmarks of the VTK frame output (io/vtk_writer) on a block of
// bonded spheres: a face-centred cubic lattice of N particles, every pair of
// nearest neighbours bonded (about 6 bonds a particle), state perturbed so
// that every double has a full mantissa (as in a real run, which compresses
// worse than round numbers). Items are particles.
//
//   BM_VtkSnapshot  what write_frame() holds the caller up for: the snapshot
//                   (the background write is waited for outside the timing)
//   BM_VtkFrame     a whole frame, write_frame() then flush(): snapshot,
//                   bond strains and angles, compression and files
//
// Needs dem_io: active only where dem_microbench links it
// (target_link_libraries(dem_microbench PRIVATE dem_io) in bench/CMakeLists.txt,
// which defines DEM_HAVE_IO); otherwise this file compiles to nothing.
#ifdef DEM_HAVE_IO

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bonds/bond_list.hpp"
#include "core/particle_store.hpp"
#include "io/vtk_writer.hpp"

namespace {

namespace fs = std::filesystem;

struct Block {
  dem::ParticleStore store;
  dem::BondList bonds;
};

/// About n spheres of diameter 1 on an FCC lattice (4 L^3 of them), nearest
/// neighbours bonded, moved and turned a little from the reference state.
const Block& block(std::size_t n) {
  static std::map<std::size_t, std::unique_ptr<Block>> cache;
  auto& slot = cache[n];
  if (slot) return *slot;
  slot = std::make_unique<Block>();
  Block& b = *slot;
  const int cells = std::max(1, static_cast<int>(std::lround(std::cbrt(n / 4.0))));
  const int side = 2 * cells;  // lattice sites (x, y, z) with x + y + z even
  const double h = 1.0 / std::sqrt(2.0);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto site = [side](int x, int y, int z) {
    return (static_cast<std::size_t>(x) * side + y) * side + z;
  };
  std::vector<std::int64_t> index(static_cast<std::size_t>(side) * side * side, -1);
  b.store.reserve(4 * static_cast<std::size_t>(cells) * cells * cells);
  for (int x = 0; x < side; ++x)
    for (int y = 0; y < side; ++y)
      for (int z = 0; z < side; ++z) {
        if ((x + y + z) % 2 != 0) continue;
        dem::ParticleSpec s;
        s.position = dem::Vec3(x * h, y * h, z * h);
        s.attitude = dem::Quat(Eigen::AngleAxisd(
            3.0 * std::abs(u(rng)), dem::Vec3(u(rng), u(rng), u(rng)).normalized()));
        s.diameter = 1.0 + 0.01 * u(rng);
        index[site(x, y, z)] = static_cast<std::int64_t>(b.store.add(s));
      }
  const int half[6][3] = {{1, 1, 0}, {1, -1, 0}, {1, 0, 1}, {1, 0, -1}, {0, 1, 1}, {0, 1, -1}};
  b.bonds.reserve(6 * b.store.size());
  for (int x = 0; x < side; ++x)
    for (int y = 0; y < side; ++y)
      for (int z = 0; z < side; ++z) {
        const std::int64_t i = index[site(x, y, z)];
        if (i < 0) continue;
        for (const auto& o : half) {
          const int a = x + o[0], c = y + o[1], d = z + o[2];
          if (a < 0 || c < 0 || d < 0 || a >= side || c >= side || d >= side) continue;
          const std::int64_t j = index[site(a, c, d)];
          if (j >= 0)
            b.bonds.add(b.store, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j),
                        dem::BondStiffness{1.0, 2.0, 3.0});
        }
      }
  for (std::size_t k = 0; k < b.store.size(); ++k) {
    b.store.position[k] += 1e-3 * dem::Vec3(u(rng), u(rng), u(rng));
    b.store.velocity[k] = dem::Vec3(u(rng), u(rng), u(rng));
    b.store.angular_velocity[k] = dem::Vec3(u(rng), u(rng), u(rng));
    b.store.attitude[k] =
        dem::Quat(Eigen::AngleAxisd(0.01 * u(rng), dem::Vec3(u(rng), u(rng), u(rng)).normalized())) *
        b.store.attitude[k];
  }
  return b;
}

fs::path bench_folder(const char* name) {
  const fs::path p = fs::temp_directory_path() /
                     ("dem_bench_vtk_" + std::string(name) + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

void report(benchmark::State& state, const Block& b, const fs::path& dir) {
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(b.store.size()));
  state.counters["particles"] = static_cast<double>(b.store.size());
  state.counters["bonds"] = static_cast<double>(b.bonds.size());
  state.counters["file_MB"] = static_cast<double>(fs::file_size(dir / "particles_000000.vtp") +
                                                  fs::file_size(dir / "bonds_000000.vtp")) /
                              1e6;
}

void BM_VtkSnapshot(benchmark::State& state) {
  const Block& b = block(static_cast<std::size_t>(state.range(0)));
  const fs::path dir = bench_folder("snapshot");
  {
    dem::VtkSeriesWriter writer(dir, static_cast<int>(state.range(1)));
    writer.write_frame(0.0, b.store, b.bonds);  // the first frame maps the buffers
    writer.flush();
    double t = 0.0;
    for (auto _ : state) {
      writer.write_frame(t += 1.0, b.store, b.bonds);
      state.PauseTiming();
      writer.flush();
      state.ResumeTiming();
    }
  }
  report(state, b, dir);
  fs::remove_all(dir);
}

void BM_VtkFrame(benchmark::State& state) {
  const Block& b = block(static_cast<std::size_t>(state.range(0)));
  const fs::path dir = bench_folder("frame");
  {
    dem::VtkSeriesWriter writer(dir, static_cast<int>(state.range(1)));
    writer.write_frame(0.0, b.store, b.bonds);
    writer.flush();
    double t = 0.0;
    for (auto _ : state) {
      writer.write_frame(t += 1.0, b.store, b.bonds);
      writer.flush();
    }
  }
  report(state, b, dir);
  fs::remove_all(dir);
}

}  // namespace

// Args: particles, zlib level.
BENCHMARK(BM_VtkSnapshot)
    ->Args({100000, 1})
    ->Args({1000000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(10);  // each waits, untimed, for a whole frame
BENCHMARK(BM_VtkFrame)
    ->Args({100000, 1})
    ->Args({1000000, 1})
    ->Args({1000000, 6})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

#endif  // DEM_HAVE_IO
