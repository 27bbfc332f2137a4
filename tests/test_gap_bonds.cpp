// Binder bonds by surface gap ([bonds] pairs = "gap", scene/gap_bonds.hpp,
// docs/model.md §21.5): the bonds of a built packing against a brute-force
// count over every pair, in an open region and across periodic faces, with
// both bond laws, and the bond radius of bond_radius_ratio in the
// stiffnesses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <set>
#include <string>
#include <utility>

#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"
#include "scene_support.hpp"

namespace dem {
namespace {

/// A packing of about 2,200 spheres (d 0.8-1.2 mm) bonded by gap; `domain`
/// and `bonds` are the [domain] and the rest of the [bonds] table.
std::string gap_scene(const std::string& bonds, const std::string& domain = "", const std::string& law = "") {
  return std::string(R"(
[run]
time_step = 1e-9
steps = 1
[output]
energy_every = 1
vtk_every = 0
[contact]
law = "hertz-mindlin"
[[material]]
name = "grain"
density = 2500
E = 1e9
nu = 0.3
[[particles]]
source = "packing"
material = "grain"
region = "box"
lower = [0, 0, 0]
upper = [0.013, 0.013, 0.013]
size_distribution = "uniform"
d_min = 0.0008
d_max = 0.0012
solid_fraction = 0.55
seed = 7
)") + domain +
         "[bonds]\npairs = \"gap\"\n" + law + bonds;
}

/// The binder of the Baker-Gonzalez law's bonds.
const std::string kBinder = "binder_modulus = 2e9\nbond_radius_ratio = 0.5\n";

BuiltScene build(const std::string& text) { return build_scene(parse_scene_text(text, "gap.toml", ".")); }

/// The pairs (lower slot, higher slot) whose surface gap is at most
/// ratio min(r_i, r_j) + length, by brute force over all pairs, the
/// separation taken to the nearest image on the axes of `period` > 0.
std::set<std::pair<std::uint32_t, std::uint32_t>> brute_force(const ParticleStore& p, double length, double ratio,
                                                               const Vec3& period = Vec3::Zero()) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> out;
  for (std::uint32_t i = 0; i < p.size(); ++i)
    for (std::uint32_t j = i + 1; j < p.size(); ++j) {
      Vec3 s = p.position[i] - p.position[j];
      for (int a = 0; a < 3; ++a)
        if (period[a] > 0.0) s[a] -= period[a] * std::round(s[a] / period[a]);
      const double gap = s.norm() - p.radius[i] - p.radius[j];
      if (gap <= length + ratio * std::min(p.radius[i], p.radius[j])) out.emplace(i, j);
    }
  return out;
}

std::set<std::pair<std::uint32_t, std::uint32_t>> bonded(const BondList& b) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> out;
  for (std::size_t k = 0; k < b.size(); ++k)
    out.emplace(std::min(b.first[k], b.second[k]), std::max(b.first[k], b.second[k]));
  return out;
}

TEST(GapBonds, AsAFractionOfTheSmallerRadiusEqualABruteForceCountOnAPacking) {
  const BuiltScene s = build(gap_scene("max_gap_ratio = 0.1\n" + kBinder));
  const ParticleStore& p = s.scene.particles;
  ASSERT_GT(p.size(), 2000u);
  const auto expected = brute_force(p, 0.0, 0.1);
  EXPECT_EQ(s.scene.bonds.size(), expected.size());
  EXPECT_EQ(bonded(s.scene.bonds), expected);
  // A packing at 0.55 has most particles near several others: the test
  // bonds thousands of pairs, not a handful.
  EXPECT_GT(expected.size(), p.size());
}

TEST(GapBonds, AsALengthEqualABruteForceCountAndGrowWithTheGap) {
  std::size_t previous = 0;
  for (const double gap : {0.0, 2e-5, 1e-4}) {
    char line[64];
    std::snprintf(line, sizeof line, "max_gap = %.17g\n", gap);
    const BuiltScene s = build(gap_scene(line + kBinder));
    const auto expected = brute_force(s.scene.particles, gap, 0.0);
    EXPECT_EQ(bonded(s.scene.bonds), expected) << "max_gap " << gap;
    EXPECT_GT(expected.size(), previous) << "max_gap " << gap;
    previous = expected.size();
  }
}

TEST(GapBonds, ThroughPeriodicFacesEqualABruteForceCountOverNearestImages) {
  const std::string domain = R"(
[domain]
lower = [0, 0, 0]
upper = [0.013, 0.013, 0.013]
periodic = [true, true, true]
)";
  const BuiltScene s = build(gap_scene("max_gap_ratio = 0.1\n" + kBinder, domain));
  const Vec3 period(0.013, 0.013, 0.013);
  const auto expected = brute_force(s.scene.particles, 0.0, 0.1, period);
  EXPECT_EQ(bonded(s.scene.bonds), expected);
  // Some bonds cross the faces.
  const auto open = brute_force(s.scene.particles, 0.0, 0.1);
  EXPECT_GT(expected.size(), open.size());
}

TEST(GapBonds, BondRadiusRatioSetsTheBondRadiusFromTheSmallerParticle) {
  const BuiltScene s = build(gap_scene("max_gap_ratio = 0.1\nbinder_modulus = 2e9\nbond_radius_ratio = 0.3\n"));
  const ParticleStore& p = s.scene.particles;
  const BondList& b = s.scene.bonds;
  ASSERT_GT(b.size(), 0u);
  double worst = 0.0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    const double rb = 0.3 * std::min(p.radius[b.first[k]], p.radius[b.second[k]]);
    const double r0 = b.rest_length[k];
    const double e = 2e9, area = std::numbers::pi * rb * rb;
    // docs/model.md §7: K_a = E A r0, K_s = K_a, K_b = E pi r_b^4 / (4 r0).
    worst = std::max({worst, std::abs(b.stiffness(k).axial / (e * area * r0) - 1.0),
                      std::abs(b.stiffness(k).shear / (e * area * r0) - 1.0),
                      std::abs(b.stiffness(k).bending / (e * std::numbers::pi * rb * rb * rb * rb / (4.0 * r0)) - 1.0)});
  }
  EXPECT_LT(worst, 1e-12);
}

TEST(GapBonds, WorkWithTheBdemLaw) {
  std::string text = gap_scene("max_gap_ratio = 0.1\n", "", "law = \"bdem\"\n");
  const BuiltScene s = build(text);
  EXPECT_EQ(bonded(s.scene.bonds), brute_force(s.scene.particles, 0.0, 0.1));
  EXPECT_EQ(s.scene.bond_law, "bdem");
}

TEST(GapBonds, BadKeysAreRefusedNamingThem) {
  const auto refused = [](const std::string& text, const std::string& key) {
    try {
      build(text);
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "accepted a scene without " << key;
  };
  refused(gap_scene(""), "max_gap");
  refused(gap_scene("max_gap = 1e-5\nmax_gap_ratio = 0.1\n"), "max_gap_ratio");
  refused(gap_scene("max_gap = -1e-5\n"), "max_gap");
  refused(gap_scene("max_gap_ratio = 0.1\nbinder_modulus = 2e9\nbond_radius_ratio = 0\n"), "bond_radius_ratio");
  refused(gap_scene("max_gap_ratio = 0.1\nbinder_modulus = 2e9\n"), "bond_radius_ratio");
  refused(gap_scene("max_gap_ratio = 0.1\n", "", "law = \"bdem\"\nbond_radius_ratio = 0.5\n"), "bond_radius_ratio");
  refused(gap_scene("max_gap_ratio = 0.1\n" + kBinder + "bending = 1\naxial = 1\nshear = 1\n"), "binder_modulus");
  // Without stiffnesses the Baker-Gonzalez law's bonds are refused.
  refused(gap_scene("max_gap_ratio = 0.1\n"), "stiffnesses");
  // The gap keys only apply with pairs = "gap".
  std::string distance = gap_scene("max_gap = 1e-5\n");
  distance = testing::replaced(distance, "pairs = \"gap\"", "pairs = \"distance\"\ndistance = 0.001");
  refused(distance, "max_gap");
}

}  // namespace
}  // namespace dem
