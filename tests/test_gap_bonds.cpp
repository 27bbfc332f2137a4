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

#include <random>

#include "contact/contact_provider.hpp"
#include "engine/time_step.hpp"
#include "scene/gap_bonds.hpp"
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

// The binder bridge's volume (docs/model.md §21.5) against a Monte Carlo
// count of the points of the cylinder between the centres that lie in
// neither sphere: apart, touching, and with the bridge as wide as the
// smaller sphere.
TEST(GapBonds, TheBridgeVolumeEqualsAMonteCarloCountOfTheBinderBetweenTwoSpheres) {
  struct Case {
    double length, r_i, r_j, a;
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const Case c : {Case{2.6, 1.0, 1.2, 0.5}, Case{2.0, 1.0, 1.0, 0.7}, Case{1.9, 0.5, 1.4, 0.5},
                       Case{3.0, 1.0, 1.0, 0.2}}) {
    // Points in the box [0, length] x [-a, a]^2 around the axis (x).
    const int samples = 2000000;
    int inside = 0;
    for (int k = 0; k < samples; ++k) {
      const double x = u(rng) * c.length, y = (2.0 * u(rng) - 1.0) * c.a, z = (2.0 * u(rng) - 1.0) * c.a;
      if (y * y + z * z > c.a * c.a) continue;
      if (x * x + y * y + z * z < c.r_i * c.r_i) continue;
      const double xj = c.length - x;
      if (xj * xj + y * y + z * z < c.r_j * c.r_j) continue;
      ++inside;
    }
    const double counted = 4.0 * c.a * c.a * c.length * double(inside) / samples;
    const double v = bridge_volume(c.length, c.r_i, c.r_j, c.a);
    // 2e6 samples: the count's relative error is about 1/sqrt(inside) < 0.3%.
    EXPECT_NEAR(v / counted, 1.0, 0.01) << c.length << " " << c.r_i << " " << c.r_j << " " << c.a;
  }
  // Spheres overlapping far: no binder.
  EXPECT_EQ(bridge_volume(0.5, 1.0, 1.0, 0.9), 0.0);
}

/// The bridge volume and gap ratio of every bonded pair of s (bridge radius
/// ratio min(r_i, r_j)).
struct Bridge {
  double ratio, volume;
};
std::vector<Bridge> bridges(const BuiltScene& s, double ratio) {
  const ParticleStore& p = s.scene.particles;
  std::vector<Bridge> out;
  for (const auto& [i, j] : bonded(s.scene.bonds)) {
    const double length = (p.position[i] - p.position[j]).norm(), r = std::min(p.radius[i], p.radius[j]);
    out.push_back({(length - p.radius[i] - p.radius[j]) / r, bridge_volume(length, p.radius[i], p.radius[j], ratio * r)});
  }
  return out;
}

// [bonds] binder_volume_fraction: the bonds are every pair within the
// chosen gap ratio (a brute-force count), their bridges hold at least the
// fraction and those below the widest bonded ratio less; a larger fraction
// bonds more pairs; the chosen ratio is in dem check's notes.
TEST(GapBonds, BinderVolumeFractionChoosesTheGapWhoseBridgesHoldIt) {
  std::size_t previous = 0;
  for (const double f : {0.005, 0.03}) {
    char line[64];
    std::snprintf(line, sizeof line, "binder_volume_fraction = %.17g\n", f);
    const BuiltScene s = build(gap_scene(line + kBinder));
    const ParticleStore& p = s.scene.particles;
    const std::vector<Bridge> b = bridges(s, 0.5);
    ASSERT_FALSE(b.empty());
    double widest = -INFINITY;
    for (const Bridge& x : b) widest = std::max(widest, x.ratio);
    EXPECT_EQ(bonded(s.scene.bonds), brute_force(p, 0.0, widest)) << f;
    double grains = 0.0, all = 0.0, below = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) grains += 4.0 / 3.0 * std::numbers::pi * std::pow(p.radius[i], 3);
    for (const Bridge& x : b) all += x.volume, below += x.ratio < widest ? x.volume : 0.0;
    const double target = f / (1.0 - f) * grains;
    std::printf("binder_volume_fraction %g: %zu bonds, gap ratio %.4g, binder %.5g of the volume\n", f, b.size(),
                widest, all / (all + grains));
    EXPECT_GE(all, target * (1.0 - 1e-12)) << f;
    EXPECT_LT(below, target) << f;
    EXPECT_GT(b.size(), previous) << f;
    previous = b.size();
    bool noted = false;
    for (const std::string& note : s.notes) noted = noted || note.find("max_gap_ratio") != std::string::npos;
    EXPECT_TRUE(noted);
  }
}

// Baker-Gonzalez bonds have no time-step limit of their own: beside a
// contact law that has one (Hertz-Mindlin's Rayleigh step), the bonds'
// per-particle estimate (docs/model.md §7) still limits the step when it
// is the smaller, with its default fraction 0.1.
TEST(GapBonds, StiffBakerGonzalezBondsLimitTheTimeStepBesideHertzMindlinContact) {
  const auto scene = [](const char* modulus) {
    std::string text = gap_scene(std::string("max_gap_ratio = 0.1\nbinder_modulus = ") + modulus +
                                 "\nbond_radius_ratio = 0.5\n");
    return build(testing::replaced(text, "time_step = 1e-9", "time_step = \"auto\""));
  };
  const BuiltScene soft = scene("2e3"), stiff = scene("2e11");
  const double rayleigh = soft.critical_time_step;  // the contact law's own limit
  EXPECT_EQ(soft.critical_source.find("bonds"), std::string::npos) << soft.critical_source;
  const double bonded = critical_time_step_of(stiff.scene.particles, stiff.scene.bonds, ContactSettings{}).h;
  std::printf("Rayleigh step %.4g, stiff bonds' estimate %.4g\n", rayleigh, bonded);
  ASSERT_LT(bonded, 0.2 * rayleigh);
  EXPECT_DOUBLE_EQ(stiff.critical_time_step, bonded);
  EXPECT_DOUBLE_EQ(stiff.time_step, 0.1 * bonded);
  EXPECT_NE(stiff.critical_source.find("baker-gonzalez bonds"), std::string::npos) << stiff.critical_source;
}

// A density whose masses overflow the contact's effective mass m_i m_j /
// (m_i + m_j) is refused naming density (it made NaN forces at step 0).
TEST(GapBonds, ADensityWhoseMassesOverflowTheEffectiveMassIsRefused) {
  try {
    build(testing::replaced(gap_scene("max_gap_ratio = 0.1\n" + kBinder), "density = 2500", "density = 1e300"));
    ADD_FAILURE() << "density 1e300 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("density: the mass"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("effective mass"), std::string::npos) << e.what();
  }
}

TEST(GapBonds, BadBinderVolumeFractionsAreRefusedNamingTheKey) {
  const auto refused = [](const std::string& text) {
    try {
      build(text);
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("binder_volume_fraction"), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "accepted " << text;
  };
  refused(gap_scene("binder_volume_fraction = 0\n" + kBinder));
  refused(gap_scene("binder_volume_fraction = 1\n" + kBinder));
  refused(gap_scene("binder_volume_fraction = -0.1\n" + kBinder));
  refused(gap_scene("binder_volume_fraction = 0.1\nmax_gap_ratio = 0.1\n" + kBinder));
  // More binder than the bridges within a gap of the smaller radius hold.
  refused(gap_scene("binder_volume_fraction = 0.6\n" + kBinder));
}

}  // namespace
}  // namespace dem
