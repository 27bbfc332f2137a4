// Sizes before building (scene/scene_size.hpp, count_scene): the solid
// torus counted row by row equals the torus built, every shipped scene's
// counts equal what build_scene makes, the cell-grid pair count equals the
// brute-force one, memory sizes parse; the critical time step names what
// sets it (engine/time_step.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "contact/neighbour_search.hpp"
#include "engine/time_step.hpp"
#include "scene/scene_builder.hpp"
#include "scene/scene_size.hpp"
#include "scene/solid_torus.hpp"

using namespace dem;
namespace fs = std::filesystem;

TEST(SceneSize, SolidTorusCountsEqualTheBuiltTorus) {
  struct Case {
    double major, tube, d;
  };
  for (const Case& c :
       {Case{0.1, 0.02, 4e-3}, Case{0.1, 0.02, 2.5e-3}, Case{0.1, 0.02, 1.7e-3}, Case{0.05, 0.03, 3.3e-3},
        Case{1.0, 0.5, 0.07}, Case{0.1, 0.02, 0.015}, Case{0.1, 0.099, 0.0123}}) {
    SolidTorusParameters p;
    p.major_diameter = c.major;
    p.tube_diameter = c.tube;
    p.particle_diameter = c.d;
    const SolidTorusCounts counts = solid_torus_counts(p);
    if (counts.sites == 0) {  // a thin tube can miss every site
      EXPECT_THROW(make_solid_torus(p), std::invalid_argument) << c.d;
      continue;
    }
    const Scene s = make_solid_torus(p);
    EXPECT_EQ(counts.sites, s.particles.size()) << c.d;
    EXPECT_EQ(counts.bonds, s.bonds.size()) << c.d;
    EXPECT_GT(counts.lattice_cells, counts.sites);
  }
}

TEST(SceneSize, CountsOfTheShippedScenesEqualWhatIsBuilt) {
  for (const char* name : {"ring_torus.toml", "solid_torus.toml", "lattice.toml", "clumps.toml"}) {
    const SceneSpec spec = read_scene_file(fs::path(DEM_SOURCE_DIR) / "scenes" / name);
    const SceneSizes before = count_scene(spec);
    const BuiltScene built = build_scene(spec);
    EXPECT_EQ(before.particles, built.scene.particles.size()) << name;
    EXPECT_EQ(before.bonds, built.scene.bonds.size()) << name;
    EXPECT_EQ(built.sizes.particles, built.scene.particles.size()) << name;
    EXPECT_EQ(built.sizes.bonds, built.scene.bonds.size()) << name;
    EXPECT_TRUE(built.sizes.counted);
    // The generators' estimate of the contact pairs is exact for the lattices
    // (clumps and CSV particles are only counted once built).
    if (std::string(name) != "clumps.toml") {
      EXPECT_EQ(before.contact_pairs, built.sizes.contact_pairs) << name;
    }
    // The first neighbour list has exactly the counted pairs.
    Simulation sim = make_simulation(build_scene(spec));
    EXPECT_EQ(sim.forces().neighbours().list().pair_count(), built.sizes.contact_pairs) << name;
  }
}

TEST(SceneSize, CellGridPairCountEqualsBruteForce) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 10.0), ru(0.1, 0.6);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<Vec3> x;
    std::vector<double> r;
    for (int i = 0; i < 800; ++i) {
      x.emplace_back(u(rng), u(rng), trial == 3 ? 0.0 : u(rng));  // a flat set too
      r.push_back(ru(rng));
    }
    const double skin = 0.05 * trial;
    const ClosePairs c = count_close_pairs(x, r, skin, 1.3, UINT64_MAX, UINT64_MAX);
    EXPECT_EQ(c.contact, brute_force_pairs(x, r, skin).size());
    const std::vector<double> zero(x.size(), 0.0);
    EXPECT_EQ(c.within, brute_force_pairs(x, zero, 1.3).size());
    EXPECT_FALSE(c.over_cap);
    EXPECT_FALSE(c.coincident);
  }
  // Coincident centres: the lowest pair; caps stop the count.
  std::vector<Vec3> x = {Vec3(0, 0, 0), Vec3(5, 0, 0), Vec3(1, 0, 0), Vec3(5, 0, 0), Vec3(1, 0, 0)};
  const std::vector<double> r(5, 0.5);
  const ClosePairs c = count_close_pairs(x, r, 0.0, 0.0, UINT64_MAX, UINT64_MAX);
  ASSERT_TRUE(c.coincident);
  EXPECT_EQ(*c.coincident, (std::pair<std::uint32_t, std::uint32_t>{1, 3}));
  std::vector<Vec3> crowd(300, Vec3::Zero());
  for (std::size_t i = 0; i < crowd.size(); ++i) crowd[i].x() = 1e-3 * static_cast<double>(i);
  const ClosePairs capped = count_close_pairs(crowd, std::vector<double>(300, 1.0), 0.0, 0.0, 1000, 0);
  EXPECT_TRUE(capped.over_cap);
  EXPECT_GT(capped.contact, 1000u);
  EXPECT_LT(capped.contact, 1400u);  // stopped after the row that passed the cap
}

TEST(SceneSize, ByteSizesParse) {
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size("512M"), 512ull << 20);
  EXPECT_EQ(parse_byte_size("4G"), 4ull << 30);
  EXPECT_EQ(parse_byte_size("1.5GiB"), 3ull << 29);
  EXPECT_EQ(parse_byte_size("2t"), 2ull << 40);
  EXPECT_EQ(parse_byte_size("64kb"), 64ull << 10);
  for (const char* bad : {"", "G", "-1G", "12X", "0", "nan", "inf", "1e30G", " 5M", "5 M"})
    EXPECT_THROW(parse_byte_size(bad), std::invalid_argument) << bad;
  EXPECT_EQ(format_bytes(512ull << 20), "512 MiB");
  EXPECT_EQ(format_bytes(3ull << 29), "1.5 GiB");
}

namespace {

SceneSizes sizes_of(std::uint64_t particles, std::uint64_t bonds, std::uint64_t contact_pairs) {
  SceneSizes s;
  s.particles = particles;
  s.bonds = bonds;
  s.contact_pairs = contact_pairs;
  return s;
}

OutputSpec vtk_every_100() {
  OutputSpec out;
  out.vtk_every = 100;
  return out;
}

}  // namespace

TEST(SceneSize, EstimateGrowsWithEverySize) {
  const SceneSizes s = sizes_of(100000, 600000, 600000);
  const OutputSpec out = vtk_every_100();
  const std::uint64_t base = estimate_memory(s, out).peak;
  for (std::uint64_t SceneSizes::*field : {&SceneSizes::particles, &SceneSizes::bonds, &SceneSizes::contact_pairs}) {
    SceneSizes more = s;
    more.*field *= 2;
    EXPECT_GT(estimate_memory(more, out).peak, base);
  }
  OutputSpec no_vtk;
  no_vtk.vtk_every = 0;
  EXPECT_LT(estimate_memory(s, no_vtk).peak, base);
  EXPECT_LT(estimate_memory(s, out, false).peak, estimate_memory(s, no_vtk).peak);
}

// One MPI rank's estimate (issue 28): the set-up is the whole scene's on
// every rank, whatever the rank count; the part shrinks with the ranks
// towards n/P plus its shell, and is about the whole run at one rank.
TEST(SceneSize, RankEstimateSplitsThePartNotTheSetUp) {
  const SceneSizes s = sizes_of(1000000, 3000000, 6000000);
  const OutputSpec out = vtk_every_100();
  const MemoryEstimate whole = estimate_memory(s, out);
  const RankMemoryEstimate one = estimate_rank_memory(s, out, 1);
  EXPECT_EQ(one.part_particles, s.particles);  // no ghosts without another rank
  // The whole set up without its first forces: more than the built scene
  // (the build positions, the bonds' keys), less than the run's state (no
  // contact list or result slots).
  EXPECT_GT(one.setup, whole.build);
  EXPECT_LT(one.setup, whole.state);
  EXPECT_GE(one.part, whole.state);             // the part is the whole system, plus the template
  RankMemoryEstimate last = one;
  for (const std::size_t p : {2u, 4u, 8u, 64u}) {
    const RankMemoryEstimate e = estimate_rank_memory(s, out, p);
    EXPECT_EQ(e.setup, one.setup) << p;
    EXPECT_LT(e.part, last.part) << p;
    const double owned = std::ceil(1e6 / static_cast<double>(p));
    EXPECT_GE(static_cast<double>(e.part_particles), owned) << p;
    EXPECT_LE(static_cast<double>(e.part_particles), owned + 14.8 * std::pow(owned, 2.0 / 3.0) + 1.0) << p;
    EXPECT_EQ(e.peak, e.program + std::max(e.setup, e.part)) << p;
    last = e;
  }
  // Many ranks: the template (ids and bonds of the whole system) is what stays.
  EXPECT_GT(estimate_rank_memory(s, out, 100000).part, s.particles * 4 + s.bonds * 52);
}

// A ring of 20 with a wall: each stiffness in turn sets the step, and the
// estimate says which.
TEST(SceneSize, CriticalTimeStepNamesWhatSetsIt) {
  ParticleStore s;
  for (int i = 0; i < 2; ++i) {
    ParticleSpec p;
    p.position = Vec3(1.0 + i, 0, 0);
    p.diameter = 1.0;
    s.add(p);
  }
  const auto with = [&](BondStiffness k, double kpp, double kpw) {
    BondList bonds;
    bonds.add(s, 0, 1, k);
    std::vector<Wall> walls(1);
    walls[0].stiffness = kpw;
    return critical_time_step_of(s, bonds, ContactSettings{kpp, 0.0}, walls);
  };
  EXPECT_EQ(with({1, 100, 0}, 1, 1).term, "bond axial");
  EXPECT_EQ(with({1, 1, 100}, 1, 1).term, "bond shear");
  EXPECT_EQ(with({100, 1, 1}, 1, 1).term, "bond bending");
  EXPECT_TRUE(with({100, 1, 1}, 1, 1).rotation);
  EXPECT_EQ(with({0, 0, 0}, 1e4, 1).term, "contact");
  EXPECT_EQ(with({0, 0, 0}, 1, 1e4).term, "wall");
  const CriticalTimeStep wall = with({0, 0, 0}, 0, 1e4);
  EXPECT_DOUBLE_EQ(wall.h, std::sqrt(1.0 / wall_stiffness_at_one_percent(1e4, 0.5)));
  EXPECT_DOUBLE_EQ(wall_stiffness_at_one_percent(1e4, 0.5), 1.5 * 1e4 / 0.25 * 0.1);
  EXPECT_EQ(with({0, 1e308, 1e308}, 0, 0).h, 0.0);  // overflow: refused by build_scene
  EXPECT_TRUE(std::isinf(with({0, 0, 0}, 0, 0).h));
}

// The shear term's largest tangent stiffness, 9/16 K^s per end and 9/8 K^s
// for a sideways displacement, by finite differences of the bond energy.
TEST(SceneSize, ShearFactorsAreTheLargestTangentStiffness) {
  // U(phi) = K^s (1 - cos phi)^2 / 4 for one end; its second derivative.
  double worst = 0.0;
  for (double phi = 0.0; phi < 3.14; phi += 1e-3) {
    const double e = 1e-4;
    const auto u = [](double a) { return 0.25 * (1 - std::cos(a)) * (1 - std::cos(a)); };
    worst = std::max(worst, (u(phi + e) - 2 * u(phi) + u(phi - e)) / (e * e));
  }
  EXPECT_NEAR(worst, kShearRotationFactor, 1e-6);
  EXPECT_DOUBLE_EQ(kShearTranslationFactor, 2 * kShearRotationFactor);
}
