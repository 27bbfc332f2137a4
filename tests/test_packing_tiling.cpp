// Tiled "dense" packings (scene/packing_tiling.hpp, docs/model.md §21.8):
// a periodic tile's jammed packing repeated over the region and clipped to
// it. Every figure is checked against brute-force loops over all pairs
// written here, not by the code under test.
#include <gtest/gtest.h>

#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <vector>

#include "scene/invalid_key.hpp"
#include "scene/packing_genesis.hpp"
#include "scene/packing_tiling.hpp"

namespace dem {
namespace {

PackingParameters dense_box(double side, double d_min, std::uint64_t seed, std::uint64_t tile) {
  PackingParameters p;
  p.region.kind = PackingRegionKind::box;
  p.region.upper = Vec3(side, side, side);
  p.sizes.d_min = d_min, p.sizes.d_max = 1.0;
  p.seed = seed;
  p.tile_particles = tile;
  return p;  // solid_fraction: "dense"
}

Scene pack_on(int threads, const PackingParameters& p, const std::array<bool, 3>& periodic,
              PackingReport* report = nullptr) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  return make_packing(p, 1000.0, periodic, report);
}

/// Separation of i and j, the minimum image on periodic axes of [lower, upper].
Vec3 separation(const ParticleStore& s, std::size_t i, std::size_t j, const PackingRegion& r,
                const std::array<bool, 3>& periodic) {
  Vec3 d = s.position[i] - s.position[j];
  for (int a = 0; a < 3; ++a)
    if (periodic[a]) d[a] -= (r.upper[a] - r.lower[a]) * std::round(d[a] / (r.upper[a] - r.lower[a]));
  return d;
}

/// Per particle, the particles it overlaps (overlap > 0), and the largest
/// overlap / smaller diameter, over all pairs.
std::vector<std::vector<std::size_t>> touching(const ParticleStore& s, const PackingRegion& r,
                                               const std::array<bool, 3>& periodic, double& worst) {
  std::vector<std::vector<std::size_t>> t(s.size());
  worst = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = i + 1; j < s.size(); ++j) {
      const double overlap = s.radius[i] + s.radius[j] - separation(s, i, j, r, periodic).norm();
      worst = std::max(worst, overlap / (2.0 * std::min(s.radius[i], s.radius[j])));
      if (overlap > 0.0) t[i].push_back(j), t[j].push_back(i);
    }
  return t;
}

/// Mean contact number of what is left after stripping, until none is
/// left, the particles with fewer than 4 contacts.
double non_rattler_coordination(const std::vector<std::vector<std::size_t>>& t) {
  std::vector<bool> in(t.size(), true);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!in[i]) continue;
      int z = 0;
      for (const std::size_t j : t[i]) z += in[j];
      if (z < 4) in[i] = false, changed = true;
    }
  }
  std::size_t kept = 0, ends = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (in[i]) {
      ++kept;
      for (const std::size_t j : t[i]) ends += in[j];
    }
  return kept ? double(ends) / double(kept) : 0.0;
}

constexpr std::array<bool, 3> kPeriodic{true, true, true};

// Equal spheres in a periodic cell of 14 diameters, tiled 2 x 2 x 2 from a
// tile of about 420: the "dense" figures (solid fraction 0.630 to
// 0.650, non-rattlers' contact number 5.8 to 6.2) hold across the tiles'
// seams, the overlaps stay below 1e-3 of a diameter, and every tile holds
// the first one's particles moved by its offset.
TEST(PackingTiling, PeriodicTiledMonodisperseIsJammedAcrossTheSeams) {
  const PackingParameters p = dense_box(14.0, 0.99999, 1, 420);
  PackingReport report;
  const Scene s = pack_on(2, p, kPeriodic, &report);
  const ParticleStore& x = s.particles;
  const std::size_t n = x.size(), per = report.tile_particles;
  ASSERT_EQ(report.tiles, (std::array<std::uint32_t, 3>{2, 2, 2}));
  ASSERT_EQ(n, 8 * per);
  EXPECT_NEAR(report.tile_side[0], 7.0, 1e-12);
  double worst = 0.0;
  const auto t = touching(x, p.region, kPeriodic, worst);
  double volume = 0.0;
  for (const double r : x.radius) volume += 4.0 / 3.0 * std::numbers::pi * r * r * r;
  const double phi = volume / (14.0 * 14.0 * 14.0), z = non_rattler_coordination(t);
  std::printf("tiled periodic: %zu particles (tile %zu), phi %.4f, Z non-rattlers %.3f, worst overlap %.2g, "
              "%llu FIRE steps\n",
              n, per, phi, z, worst, static_cast<unsigned long long>(report.sweeps));
  EXPECT_TRUE(report.jammed);
  EXPECT_GE(phi, 0.630);
  EXPECT_LE(phi, 0.650);
  EXPECT_GE(z, 5.8);
  EXPECT_LE(z, 6.2);
  EXPECT_LT(worst, 1e-3);
  EXPECT_NEAR(report.max_overlap_ratio, worst, 1e-6);
  // Tile k (x fastest) holds tile 0's particles moved by its offset.
  for (std::size_t k = 1; k < 8; ++k) {
    const Vec3 offset(7.0 * double(k % 2), 7.0 * double(k / 2 % 2), 7.0 * double(k / 4));
    double off = 0.0;
    for (std::size_t q = 0; q < per; ++q) {
      Vec3 d = x.position[k * per + q] - x.position[q] - offset;
      for (int a = 0; a < 3; ++a) d[a] -= 14.0 * std::round(d[a] / 14.0);
      off = std::max(off, d.norm());
      EXPECT_EQ(x.radius[k * per + q], x.radius[q]);
    }
    EXPECT_LT(off, 1e-12) << "tile " << k;
  }
}

// A walled cylinder filled from a tile of 300 polydisperse spheres (d in
// [0.7, 1]): every sphere lies inside the region, no overlap above 1e-3 of
// the smaller diameter across seams or clipping, no floater left (at least
// 3 contacts, the boundary's counting, or the report says how many and
// why), and the same bits on 1 and 2 threads.
TEST(PackingTiling, WalledTiledCylinderIsInsideWithoutFloatersAndTheSameOnAnyThreadCount) {
  PackingParameters p = dense_box(1.0, 0.7, 5, 300);
  p.region.kind = PackingRegionKind::cylinder;
  p.region.base = Vec3(1, 2, 3), p.region.axis = Vec3(0, 0, 1), p.region.radius = 5.0, p.region.height = 12.0;
  PackingReport report;
  const std::array<bool, 3> walled{false, false, false};
  const Scene s = pack_on(2, p, walled, &report), one = pack_on(1, p, walled);
  const ParticleStore& x = s.particles;
  const std::size_t n = x.size();
  ASSERT_EQ(one.particles.size(), n);
  EXPECT_EQ(std::memcmp(one.particles.position.data(), x.position.data(), n * sizeof(Vec3)), 0);
  EXPECT_EQ(std::memcmp(one.particles.radius.data(), x.radius.data(), n * sizeof(double)), 0);
  EXPECT_GE(report.tiles[0] * report.tiles[1] * report.tiles[2], 8u);
  double worst = 0.0, protrusion = -INFINITY;
  const auto t = touching(x, p.region, walled, worst);
  std::size_t few = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 v = x.position[i] - p.region.base;
    const double a = x.radius[i];
    const double gaps[3] = {v[2], p.region.height - v[2], p.region.radius - Vec3(v[0], v[1], 0.0).norm()};
    int walls = 0;
    for (const double g : gaps) {
      walls += a - g > 0.0;
      protrusion = std::max(protrusion, (a - g) / (2.0 * a));
    }
    few += walls + t[i].size() < 3;
  }
  std::printf("tiled cylinder: %zu particles (%llu floaters removed, tiles %u x %u x %u of %llu), phi %.4f, "
              "interior %.4f, worst overlap %.2g, protrusion %.2g, %zu with < 3 contacts\n",
              n, static_cast<unsigned long long>(report.floaters_removed), report.tiles[0], report.tiles[1],
              report.tiles[2], static_cast<unsigned long long>(report.tile_particles), report.solid_fraction,
              report.interior_solid_fraction, worst, protrusion, few);
  EXPECT_LT(worst, 1e-3);
  EXPECT_LE(protrusion, 0.0);  // clipped: wholly inside
  EXPECT_EQ(report.below_three, few);
  EXPECT_TRUE(few == 0 || !report.floaters_note.empty());
  EXPECT_EQ(report.delivered_count, n);
  EXPECT_EQ(report.requested_count - report.floaters_removed, n);
  EXPECT_GT(report.interior_solid_fraction, 0.6);
}

// A sieve table of 6 sizes (size ratio 3.5), "dense" in a walled cube of
// about 50,000 particles, tiled by default. The tile's sizes are
// stratified (within 2 points of the table on 2,000:
// PackingSizes.StratifiedSampleCarriesTheDistribution) and delivered as
// drawn (the jammed tile is scaled instead: scale 1). The floaters
// removed afterwards (PFC's procedure, 10,841 of 69,297 here) are mostly
// small grains loose in the cages of large ones, so the tile is drawn
// again with each size's share raised by its rattlers' (the rattler
// compensation): measured 15.9, 41.6, 66.0, 90.4 against 15, 40, 65, 90
// (without it 12.4 and 38.0 at 1.5 and 2 mm). Bound: the 2 points
// (docs/model.md §21.8).
TEST(PackingTiling, TiledSieveCurveOn50000ParticlesKeepsTheDrawnSizes) {
  PackingParameters p;
  p.region.kind = PackingRegionKind::box;
  p.region.upper = Vec3(0.067, 0.067, 0.067);
  p.sizes.kind = SizeDistributionKind::sieve;
  p.sizes.sieve_sizes = {1e-3, 1.5e-3, 2e-3, 2.5e-3, 3e-3, 3.5e-3};
  p.sizes.sieve_passing = {0, 15, 40, 65, 90, 100};
  p.seed = 3;
  PackingReport report;
  const Scene s = pack_on(2, p, {false, false, false}, &report);
  const ParticleStore& x = s.particles;
  ASSERT_GT(report.tile_particles, 0u);
  EXPECT_GT(x.size(), 45000u);
  EXPECT_TRUE(report.jammed);
  EXPECT_EQ(report.scale, 1.0);
  double total = 0.0;
  for (const double r : x.radius) total += r * r * r;
  std::printf("tiled sieve: %zu particles (%llu floaters removed; tile %llu, %u x %u x %u); passing:", x.size(),
              static_cast<unsigned long long>(report.floaters_removed),
              static_cast<unsigned long long>(report.tile_particles), report.tiles[0], report.tiles[1],
              report.tiles[2]);
  for (std::size_t k = 0; k < p.sizes.sieve_sizes.size(); ++k) {
    double below = 0.0;
    for (const double r : x.radius)
      if (2.0 * r <= p.sizes.sieve_sizes[k]) below += r * r * r;
    const double passing = 100.0 * below / total;
    std::printf(" %.3g mm %.2f (%.0f)", 1e3 * p.sizes.sieve_sizes[k], passing, p.sizes.sieve_passing[k]);
    EXPECT_NEAR(passing, p.sizes.sieve_passing[k], 2.0) << "at " << p.sizes.sieve_sizes[k];
    EXPECT_NEAR(report.sieve[k].achieved, passing, 1e-9);
  }
  std::printf("\n");
}

// When a packing is tiled: as asked, else "dense" above kAutoTileAbove
// particles with tiles of kDefaultTileParticles.
TEST(PackingTiling, TheTileSizeIsTheKeyOrChosenByTheCount) {
  PackingParameters p = dense_box(10.0, 0.5, 1, 0);
  p.tile_particles.reset();
  EXPECT_EQ(tile_particles_of(p, kAutoTileAbove), 0u);
  EXPECT_EQ(tile_particles_of(p, kAutoTileAbove + 1), kDefaultTileParticles);
  p.tile_particles = 0;
  EXPECT_EQ(tile_particles_of(p, 10 * kAutoTileAbove), 0u);
  p.tile_particles = 500;
  EXPECT_EQ(tile_particles_of(p, 1000), 500u);
  p.tile_particles.reset();
  p.solid_fraction = 0.5;
  EXPECT_EQ(tile_particles_of(p, 10 * kAutoTileAbove), 0u);
}

/// The key an InvalidKey from f() names ("" if none is thrown).
template <class F>
std::string refused_key(F&& f) {
  try {
    f();
  } catch (const InvalidKey& e) {
    std::printf("refused: %s\n", e.what());
    return e.key();
  }
  return "";
}

TEST(PackingTiling, BadTileSizesAreRefusedNamingTheKey) {
  PackingParameters p = dense_box(20.0, 0.5, 1, 50);
  EXPECT_EQ(refused_key([&] { validate_packing(p); }), "tile_particles");  // fewer than kMinTileParticles
  p.tile_particles = 500;
  p.solid_fraction = 0.5;
  EXPECT_EQ(refused_key([&] { validate_packing(p); }), "tile_particles");  // not "dense"
  p.solid_fraction.reset();
  EXPECT_EQ(refused_key([&] { validate_packing(p); }), "");
  // 100 spheres of d in [0.99, 1] a tile: an edge of about 4.3 diameters
  // passes; with d in [0.1, 1] the same count fills an edge of about 2.
  p.sizes.d_min = 0.99;
  p.tile_particles = 100;
  EXPECT_EQ(refused_key([&] { plan_tiles(p, 100, packing_count(p, 1u << 30)); }), "");
  p.sizes.d_min = 0.1;
  EXPECT_EQ(refused_key([&] { plan_tiles(p, 100, packing_count(p, 1u << 30)); }), "tile_particles");
}

}  // namespace
}  // namespace dem
