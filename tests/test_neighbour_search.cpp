/// \file test_neighbour_search.cpp
/// Verlet neighbour list: the kd-tree search against the O(n^2) reference,
/// the structure of the compressed rows and their transpose, the skin/2
/// rebuild rule, determinism across thread counts, and input checks.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contact/neighbour_search.hpp"
#include "core/parallel.hpp"

namespace dem {
namespace {

using Pairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

/// n spheres at uniform random centres in a cube of side `box`, radii uniform
/// in [0.25, 0.75] with a few (2%) large ones of radius 1.5.
struct Scene {
  std::vector<Vec3> x;
  std::vector<double> r;
};

Scene random_scene(std::uint64_t seed, std::size_t n = 2000, double box = 14.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> pos(0.0, box);
  std::uniform_real_distribution<double> rad(0.25, 0.75);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Scene s;
  for (std::size_t i = 0; i < n; ++i) {
    s.x.emplace_back(pos(rng), pos(rng), pos(rng));
    s.r.push_back(unit(rng) < 0.02 ? 1.5 : rad(rng));
  }
  return s;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The list's pairs (owner, partner) in pair order.
Pairs pairs_of(const NeighbourList& l) {
  Pairs p;
  for (std::size_t k = 0; k < l.pair_count(); ++k) p.emplace_back(l.owner[k], l.partner[k]);
  return p;
}

/// Offsets, owners, row order and the transpose agree with each other.
void expect_consistent(const NeighbourList& l, std::size_t n) {
  const std::size_t m = l.pair_count();
  ASSERT_EQ(l.offsets.size(), n + 1);
  ASSERT_EQ(l.owner.size(), m);
  ASSERT_EQ(l.offsets.front(), 0u);
  ASSERT_EQ(l.offsets.back(), m);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_LE(l.offsets[i], l.offsets[i + 1]);
    for (std::uint32_t k = l.offsets[i]; k < l.offsets[i + 1]; ++k) {
      EXPECT_EQ(l.owner[k], i);
      EXPECT_GT(l.partner[k], i);
      EXPECT_LT(l.partner[k], n);
      if (k > l.offsets[i]) {
        EXPECT_LT(l.partner[k - 1], l.partner[k]);
      }
    }
  }
  ASSERT_EQ(l.incoming_offsets.size(), n + 1);
  ASSERT_EQ(l.incoming_pairs.size(), m);
  ASSERT_EQ(l.incoming_offsets.front(), 0u);
  ASSERT_EQ(l.incoming_offsets.back(), m);
  std::vector<int> seen(m, 0);
  for (std::size_t j = 0; j < n; ++j) {
    ASSERT_LE(l.incoming_offsets[j], l.incoming_offsets[j + 1]);
    for (std::uint32_t q = l.incoming_offsets[j]; q < l.incoming_offsets[j + 1]; ++q) {
      const std::uint32_t k = l.incoming_pairs[q];
      ASSERT_LT(k, m);
      EXPECT_EQ(l.partner[k], j);
      if (q > l.incoming_offsets[j]) {
        EXPECT_LT(l.incoming_pairs[q - 1], k);
      }
      ++seen[k];
    }
  }
  for (std::size_t k = 0; k < m; ++k) EXPECT_EQ(seen[k], 1) << "pair " << k;
}

TEST(NeighbourSearch, MatchesBruteForceOnRandomScenes) {
  const double skins[] = {0.0, 0.1, 0.3};
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const Scene s = random_scene(seed);
    const double skin = skins[seed % 3];
    NeighbourSearch search(skin);
    search.rebuild(s.x, s.r);
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " skin " << skin);
    const Pairs expected = brute_force_pairs(s.x, s.r, skin);
    EXPECT_GT(expected.size(), s.x.size());  // a dense enough scene
    EXPECT_EQ(pairs_of(search.list()), expected);
    expect_consistent(search.list(), s.x.size());
    EXPECT_EQ(search.rebuild_count(), 1u);
  }
}

// Spheres of similar size (radii within a factor 2) packed densely: the
// cell grid is searched, and finds exactly the brute-force pairs, also for
// particles on the faces of the grid's box and at zero skin. One sphere far
// away makes the grid too sparse, and the kd-tree gives the same pairs.
TEST(NeighbourSearch, CellGridMatchesBruteForceAndFarParticlesFallBackToTheTree) {
  for (std::uint64_t seed = 11; seed <= 14; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> pos(0.0, 9.0), rad(0.35, 0.6), jitter(-0.05, 0.05);
    Scene s;
    for (std::size_t i = 0; i < 1500; ++i) {
      s.x.emplace_back(pos(rng), pos(rng), pos(rng));
      s.r.push_back(rad(rng));
    }
    for (int a = 0; a < 8; ++a)  // a face-centred block, touching
      for (int b = 0; b < 8; ++b)
        for (int c = 0; c < 8; ++c) {
          s.x.emplace_back(20.0 + a + jitter(rng), b + jitter(rng), c + 0.5 * (a % 2) + jitter(rng));
          s.r.push_back(0.5);
        }
    const double skin = (seed % 2 == 0) ? 0.0 : 0.2;
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " skin " << skin);
    const Pairs expected = brute_force_pairs(s.x, s.r, skin);
    NeighbourSearch grid(skin);
    grid.rebuild(s.x, s.r);
    EXPECT_TRUE(grid.used_cell_grid());
    EXPECT_EQ(pairs_of(grid.list()), expected);
    expect_consistent(grid.list(), s.x.size());

    s.x.emplace_back(1e6, -1e6, 3e5);  // far away: 10^17 cells
    s.r.push_back(0.5);
    NeighbourSearch tree(skin);
    tree.rebuild(s.x, s.r);
    EXPECT_FALSE(tree.used_cell_grid());
    EXPECT_EQ(pairs_of(tree.list()), expected);
    expect_consistent(tree.list(), s.x.size());
  }
  // Radii over a factor 2 apart: the kd-tree.
  const Scene poly = random_scene(3);
  NeighbourSearch search(0.1);
  search.rebuild(poly.x, poly.r);
  EXPECT_FALSE(search.used_cell_grid());
}

TEST(NeighbourSearch, CutoffIsStrict) {
  // Exactly representable: 0.5 + 0.5 + 0.25 = 1.25.
  const std::vector<Vec3> x = {Vec3(0, 0, 0), Vec3(1.25, 0, 0), Vec3(0, 1.2499, 0)};
  const std::vector<double> r = {0.5, 0.5, 0.5};
  NeighbourSearch search(0.25);
  search.rebuild(x, r);
  const Pairs expected = {{0, 2}};
  EXPECT_EQ(brute_force_pairs(x, r, 0.25), expected);
  EXPECT_EQ(pairs_of(search.list()), expected);
}

TEST(NeighbourSearch, SmallMovesKeepListAndOverlaps) {
  const double skin = 0.2;
  Scene s = random_scene(7);
  NeighbourSearch search(skin);
  EXPECT_TRUE(search.update(s.x, s.r));
  const Pairs before = pairs_of(search.list());
  std::mt19937_64 rng(70);
  std::normal_distribution<double> gauss(0.0, 1.0);
  // Displacements in a box of half diagonal 0.28 sqrt(3) skin < skin/2.
  std::uniform_real_distribution<double> component(-0.28 * skin, 0.28 * skin);
  for (Vec3& x : s.x) x += Vec3(component(rng), component(rng), component(rng));
  EXPECT_FALSE(search.update(s.x, s.r));
  EXPECT_EQ(search.rebuild_count(), 1u);
  EXPECT_EQ(pairs_of(search.list()), before);
  const Pairs listed = pairs_of(search.list());
  const Pairs overlapping = brute_force_pairs(s.x, s.r, 0.0);
  EXPECT_FALSE(overlapping.empty());
  for (const auto& p : overlapping)
    EXPECT_TRUE(std::binary_search(listed.begin(), listed.end(), p))
        << p.first << "-" << p.second << " overlaps but is not listed";
}

TEST(NeighbourSearch, LargeMoveRebuilds) {
  const double skin = 0.2;
  Scene s = random_scene(8);
  NeighbourSearch search(skin);
  search.update(s.x, s.r);
  // One particle alone may move by up to the skin; past it, a rebuild.
  s.x[123] += Vec3(0.9 * skin, 0.0, 0.0);
  EXPECT_FALSE(search.update(s.x, s.r));
  s.x[123] += Vec3(0.2 * skin, 0.0, 0.0);
  EXPECT_TRUE(search.update(s.x, s.r));
  EXPECT_EQ(search.rebuild_count(), 2u);
  EXPECT_EQ(pairs_of(search.list()), brute_force_pairs(s.x, s.r, skin));
  expect_consistent(search.list(), s.x.size());
  EXPECT_FALSE(search.update(s.x, s.r));
  // A change of particle count always rebuilds.
  s.x.pop_back();
  s.r.pop_back();
  EXPECT_TRUE(search.update(s.x, s.r));
  EXPECT_EQ(search.rebuild_count(), 3u);
  EXPECT_EQ(pairs_of(search.list()), brute_force_pairs(s.x, s.r, skin));
}

TEST(NeighbourSearch, SharedMotionDoesNotCountAndOverlapsStayListed) {
  // A common translation of many skins plus moves that close pairs by up
  // to 0.96 skin: no rebuild, and every overlapping pair is still listed.
  // Moving the same particles apart from the box centre by more forces one.
  const double skin = 0.2;
  Scene s = random_scene(12);
  NeighbourSearch search(skin);
  search.update(s.x, s.r);
  const Vec3 flight(7.0 * skin, -3.0 * skin, 11.0 * skin);
  std::mt19937_64 rng(71);
  std::uniform_real_distribution<double> component(-0.277 * skin, 0.277 * skin);
  Scene moved = s;
  for (Vec3& x : moved.x) x += flight + Vec3(component(rng), component(rng), component(rng));
  EXPECT_FALSE(search.update(moved.x, moved.r));
  const Pairs listed = pairs_of(search.list());
  const Pairs within_skin = brute_force_pairs(moved.x, moved.r, 0.04 * skin);
  for (const auto& p : within_skin)
    EXPECT_TRUE(std::binary_search(listed.begin(), listed.end(), p)) << p.first << "-" << p.second;
  moved.x[5] += Vec3(1.0 * skin, 0.0, 0.0);
  EXPECT_TRUE(search.update(moved.x, moved.r));
  EXPECT_EQ(pairs_of(search.list()), brute_force_pairs(moved.x, moved.r, skin));
}

/// The rebuild test of three searches over parts of one set (as MPI ranks
/// hold them, engine/collective.hpp): their DriftSummary merged by a
/// maximum, and the spread about the common centre when it is needed.
bool merged_decision(std::vector<NeighbourSearch>& parts, const std::vector<std::vector<Vec3>>& x) {
  DriftSummary d;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const DriftSummary p = parts[k].drift_summary(x[k]);
    for (std::size_t v = 0; v < d.values.size(); ++v) d.values[v] = std::max(d.values[v], p.values[v]);
  }
  if (const std::optional<bool> decided = parts[0].rebuild_decision(d)) return *decided;
  double spread = 0.0;
  for (std::size_t k = 0; k < parts.size(); ++k) spread = std::max(spread, parts[k].drift_spread(x[k], d));
  return parts[0].rebuild_decision(d, spread);
}

TEST(NeighbourSearch, DriftSummariesOfPartsGiveTheWholeSetsDecision) {
  const double skin = 0.2;
  const Scene s = random_scene(12);
  NeighbourSearch whole(skin);
  whole.rebuild(s.x, s.r);
  const auto split = [](const std::vector<Vec3>& x) {
    std::vector<std::vector<Vec3>> out(3);
    for (std::size_t i = 0; i < x.size(); ++i) out[i % 3].push_back(x[i]);
    return out;
  };
  std::vector<NeighbourSearch> parts;
  const std::vector<std::vector<Vec3>> x0 = split(s.x);
  for (std::size_t k = 0; k < 3; ++k) {
    parts.emplace_back(skin);
    parts.back().rebuild(x0[k], std::vector<double>(x0[k].size(), 0.5));
  }
  // (a) small moves (decided by the bound), (b) a shared motion with six
  // particles moved by +-a/2 along an axis, a = 0.8 skin and 1.2 skin (the
  // box's half diagonal passes skin/2, so the spread about its centre
  // decides), (c) one particle moved by 1.5 skin.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> component(-0.2 * skin, 0.2 * skin);
  std::vector<std::vector<Vec3>> cases;
  cases.push_back(s.x);
  for (Vec3& x : cases.back()) x += Vec3(component(rng), component(rng), component(rng));
  for (const double a : {0.8 * skin, 1.2 * skin}) {
    cases.push_back(s.x);
    for (Vec3& x : cases.back()) x += Vec3::Constant(0.5 * a) + Vec3(3.0 * skin, 0.0, 0.0);
    for (int k = 0; k < 6; ++k) cases.back()[static_cast<std::size_t>(k)][k / 2] += (k % 2 == 0 ? 0.5 : -0.5) * a;
  }
  cases.push_back(s.x);
  cases.back()[7] += Vec3(1.5 * skin, 0.0, 0.0);
  const std::vector<bool> expected = {false, false, true, true};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const bool due = whole.rebuild_due(cases[c], s.r);
    EXPECT_EQ(due, expected[c]) << "case " << c;
    EXPECT_EQ(merged_decision(parts, split(cases[c])), due) << "case " << c;
  }
  // A part never built: stale, so a rebuild is due everywhere.
  parts[1] = NeighbourSearch(skin);
  EXPECT_TRUE(merged_decision(parts, split(cases[0])));
}

TEST(NeighbourSearch, DriftSummariesOfPartsGiveTheWholeSetsDecisionInADeformingCell) {
  // A sheared periodic cell moved the images since the build: the merged
  // test takes the skin less their motion, as the whole set's does.
  const double skin = 0.2;
  const Scene s = random_scene(13, 600);
  PeriodicCell cell = PeriodicCell::box(Vec3::Zero(), Vec3::Constant(14.0), {true, true, true});
  NeighbourSearch whole(skin);
  whole.set_cell(cell);
  whole.rebuild(s.x, s.r);
  std::vector<NeighbourSearch> parts;
  std::vector<std::vector<Vec3>> x0(3);
  std::vector<std::vector<double>> r0(3);
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    x0[i % 3].push_back(s.x[i]);
    r0[i % 3].push_back(s.r[i]);
  }
  for (std::size_t k = 0; k < 3; ++k) {
    parts.emplace_back(skin);
    parts.back().set_cell(cell);
    parts.back().rebuild(x0[k], r0[k]);
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> component(-0.12 * skin, 0.12 * skin);
  std::vector<Vec3> moved = s.x;
  for (Vec3& x : moved) x += Vec3(component(rng), component(rng), component(rng));
  std::vector<std::vector<Vec3>> x1(3);
  for (std::size_t i = 0; i < moved.size(); ++i) x1[i % 3].push_back(moved[i]);
  // The y edge leaning over x by 0, 0.7 and 1.1 skins: within the skin,
  // not within the skin less 0.7 of it, and past the whole skin.
  const std::vector<bool> expected = {false, true, true};
  const std::vector<double> lean = {0.0, 0.7 * skin, 1.1 * skin};
  for (std::size_t c = 0; c < lean.size(); ++c) {
    PeriodicCell sheared = cell;
    sheared.edges(0, 1) = lean[c];
    whole.set_cell(sheared);
    for (NeighbourSearch& p : parts) p.set_cell(sheared);
    EXPECT_EQ(whole.rebuild_due(moved, s.r), expected[c]) << "lean " << lean[c];
    EXPECT_EQ(merged_decision(parts, x1), expected[c]) << "lean " << lean[c];
  }
}

TEST(NeighbourSearch, SameListForOneTwoAndThreeThreads) {
  const Scene s = random_scene(9, 5000, 19.0);
  auto build = [&](std::size_t threads) {
    const ThreadLimit limit(threads);
    NeighbourSearch search(0.15);
    search.rebuild(s.x, s.r);
    return search.list();
  };
  const NeighbourList one = build(1);
  for (const std::size_t threads : {2, 3}) {
    const NeighbourList many = build(threads);
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    EXPECT_EQ(one.offsets, many.offsets);
    EXPECT_EQ(one.partner, many.partner);
    EXPECT_EQ(one.owner, many.owner);
    EXPECT_EQ(one.incoming_offsets, many.incoming_offsets);
    EXPECT_EQ(one.incoming_pairs, many.incoming_pairs);
  }
}

TEST(NeighbourSearch, RebuildReusesBuffers) {
  const Scene s = random_scene(10);
  NeighbourSearch search(0.1);
  search.rebuild(s.x, s.r);
  const std::uint32_t* partner = search.list().partner.data();
  const std::uint32_t* incoming = search.list().incoming_pairs.data();
  search.rebuild(s.x, s.r);
  EXPECT_EQ(search.list().partner.data(), partner);
  EXPECT_EQ(search.list().incoming_pairs.data(), incoming);
}

TEST(NeighbourSearch, NonFinitePositionNamesLowestSlot) {
  Scene s = random_scene(11);
  s.x[1500].y() = std::numeric_limits<double>::infinity();
  s.x[17].x() = std::numeric_limits<double>::quiet_NaN();
  NeighbourSearch search(0.1);
  try {
    search.update(s.x, s.r);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "particle 17 ")) << e.what();
  }
  EXPECT_THROW(search.rebuild(s.x, s.r), std::runtime_error);
  // Also caught by an update that would not otherwise rebuild.
  s.x[17].x() = 1.0;
  s.x[1500].y() = 1.0;
  search.rebuild(s.x, s.r);
  s.x[1500].z() = -std::numeric_limits<double>::infinity();
  try {
    search.update(s.x, s.r);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "particle 1500 ")) << e.what();
  }
}

TEST(NeighbourSearch, RejectsBadInput) {
  EXPECT_THROW(NeighbourSearch(-0.5), std::invalid_argument);
  EXPECT_THROW(NeighbourSearch(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(NeighbourSearch(std::numeric_limits<double>::infinity()), std::invalid_argument);
  try {
    NeighbourSearch bad(-0.5);
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "-0.5")) << e.what();
  }
  NeighbourSearch search(0.1);
  const std::vector<Vec3> x = {Vec3(0, 0, 0), Vec3(1, 0, 0)};
  const std::vector<double> r = {0.5};
  EXPECT_THROW(search.rebuild(x, r), std::invalid_argument);
  EXPECT_THROW(search.update(x, r), std::invalid_argument);
  EXPECT_THROW(brute_force_pairs(x, r, 0.1), std::invalid_argument);
}

TEST(NeighbourSearch, EmptyAndSingleParticle) {
  NeighbourSearch search(0.1);
  EXPECT_TRUE(search.update({}, {}));
  EXPECT_FALSE(search.update({}, {}));
  EXPECT_EQ(search.list().pair_count(), 0u);
  expect_consistent(search.list(), 0);

  const std::vector<Vec3> x = {Vec3(1, 2, 3)};
  const std::vector<double> r = {0.5};
  EXPECT_TRUE(search.update(x, r));
  EXPECT_EQ(search.list().pair_count(), 0u);
  expect_consistent(search.list(), 1);
  EXPECT_TRUE(brute_force_pairs(x, r, 0.1).empty());
}

TEST(NeighbourSearch, MoveKeepsWorking) {
  const Scene s = random_scene(12, 500, 9.0);
  NeighbourSearch a(0.1);
  a.rebuild(s.x, s.r);
  NeighbourSearch b(std::move(a));
  EXPECT_FALSE(b.update(s.x, s.r));
  b.rebuild(s.x, s.r);
  EXPECT_EQ(pairs_of(b.list()), brute_force_pairs(s.x, s.r, 0.1));
}

}  // namespace
}  // namespace dem
