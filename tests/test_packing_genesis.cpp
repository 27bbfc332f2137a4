// The packing genesis (scene/packing_genesis.hpp, docs/model.md §21.3):
// the delivered specimens checked by brute force, against the region and
// across thread counts.
#include <gtest/gtest.h>

#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "scene/packing_genesis.hpp"

namespace dem {
namespace {

PackingParameters box_packing(double phi, std::uint64_t seed) {
  PackingParameters p;
  p.region.kind = PackingRegionKind::box;
  p.region.lower = Vec3(0.0, 0.0, 0.0);
  p.region.upper = Vec3(10.0, 8.0, 9.0);
  p.sizes.kind = SizeDistributionKind::uniform;
  p.sizes.d_min = 0.8, p.sizes.d_max = 1.2;
  p.solid_fraction = phi;
  p.seed = seed;
  return p;
}

/// Worst overlap / smaller diameter over all pairs (minimum images on the
/// periodic axes of the box [lower, upper]), by brute force.
double worst_pair_overlap(const std::vector<Vec3>& x, const std::vector<double>& d, const PackingRegion& r,
                          const std::array<bool, 3>& periodic) {
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      Vec3 s = x[i] - x[j];
      for (int a = 0; a < 3; ++a)
        if (periodic[a]) {
          const double l = r.upper[a] - r.lower[a];
          s[a] -= l * std::round(s[a] / l);
        }
      worst = std::max(worst, (0.5 * (d[i] + d[j]) - s.norm()) / std::min(d[i], d[j]));
    }
  return worst;
}

/// Worst protrusion of a sphere out of the region / its diameter.
double worst_protrusion(const std::vector<Vec3>& x, const std::vector<double>& d, const PackingRegion& r) {
  double worst = -INFINITY;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, (0.5 * d[i] - region_depth(r, x[i])) / d[i]);
  return worst;
}

double solid_fraction(const std::vector<double>& d, const PackingRegion& r) {
  double v = 0.0;
  for (const double x : d) v += std::numbers::pi / 6.0 * x * x * x;
  return v / region_volume(r);
}

GenesisResult genesis_on(int threads, const PackingParameters& p, const std::vector<double>& d,
                         const std::array<bool, 3>& periodic = {false, false, false}) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  return run_genesis(p, d, periodic);
}

bool same_bits(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Vec3)) == 0;
}

TEST(PackingGenesis, BoxNoOverlapInsideAndSameBitsOn1To3Threads) {
  const PackingParameters p = box_packing(0.5, 3);
  const std::vector<double> d = packing_diameters(p, 1u << 20);
  ASSERT_GT(d.size(), 300u);
  const GenesisResult one = genesis_on(1, p, d);
  const GenesisResult two = genesis_on(2, p, d);
  const GenesisResult three = genesis_on(3, p, d);
  EXPECT_TRUE(same_bits(one.centres, two.centres));
  EXPECT_TRUE(same_bits(one.centres, three.centres));
  EXPECT_LT(worst_pair_overlap(one.centres, d, p.region, {false, false, false}), 1e-3);
  EXPECT_LT(worst_protrusion(one.centres, d, p.region), 1e-3);
  EXPECT_NEAR(solid_fraction(d, p.region), 0.5, 0.01);
  // Another seed: another packing.
  const PackingParameters q = box_packing(0.5, 4);
  const std::vector<double> e = packing_diameters(q, 1u << 20);
  EXPECT_NE(d, e);
  std::printf("box: %zu particles, %llu sweeps, overlap %.3g\n", d.size(),
              static_cast<unsigned long long>(one.sweeps), worst_pair_overlap(one.centres, d, p.region, {}));
}

TEST(PackingGenesis, PeriodicBoxUsesMinimumImages) {
  const PackingParameters p = box_packing(0.55, 5);
  const std::vector<double> d = packing_diameters(p, 1u << 20);
  const std::array<bool, 3> periodic{true, true, true};
  const GenesisResult one = genesis_on(1, p, d, periodic);
  const GenesisResult two = genesis_on(2, p, d, periodic);
  EXPECT_TRUE(same_bits(one.centres, two.centres));
  EXPECT_LT(worst_pair_overlap(one.centres, d, p.region, periodic), 1e-3);
  for (const Vec3& x : one.centres) {
    EXPECT_TRUE((x.array() >= p.region.lower.array()).all() && (x.array() < p.region.upper.array()).all()) << x;
  }
}

TEST(PackingGenesis, CurvedRegionsHoldTheirParticles) {
  PackingParameters p = box_packing(0.45, 9);
  PackingRegion cylinder, sphere, torus;
  cylinder.kind = PackingRegionKind::cylinder;
  cylinder.base = Vec3(1, 2, 3), cylinder.axis = Vec3(1, 1, 0).normalized(), cylinder.radius = 4, cylinder.height = 6;
  sphere.kind = PackingRegionKind::sphere;
  sphere.centre = Vec3(-1, 0, 2), sphere.radius = 4.5;
  torus.kind = PackingRegionKind::torus;
  torus.centre = Vec3(0, 0, 0), torus.axis = Vec3(0, 0, 1), torus.major_radius = 6, torus.minor_radius = 2.5;
  for (const PackingRegion& r : {cylinder, sphere, torus}) {
    p.region = r;
    const std::vector<double> d = packing_diameters(p, 1u << 20);
    const GenesisResult g = genesis_on(2, p, d);
    EXPECT_LT(worst_pair_overlap(g.centres, d, r, {}), 1e-3);
    EXPECT_LT(worst_protrusion(g.centres, d, r), 1e-3);
    std::printf("region %d: %zu particles, %llu sweeps\n", static_cast<int>(r.kind), d.size(),
                static_cast<unsigned long long>(g.sweeps));
  }
}

TEST(PackingGenesis, MakePackingGivesMassesFromDensity) {
  const PackingParameters p = box_packing(0.3, 1);
  const Scene s = make_packing(p, 2000.0, {false, false, false});
  ASSERT_GT(s.particles.size(), 100u);
  const double d = 2.0 * s.particles.radius[0];
  EXPECT_DOUBLE_EQ(s.particles.mass[0], 2000.0 * std::numbers::pi * d * d * d / 6.0);
}

}  // namespace
}  // namespace dem
