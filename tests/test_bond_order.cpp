// renumber_and_sort_bonds (bonds/bond_provider.hpp): bonds renamed by a
// permutation of the particles, lower end first (rest direction flipped),
// in the one total order (first, second, old index), checked against an
// independent comparison sort on random bond lists, parallel bonds
// (two bonds of one pair) included.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "bonds/bond_provider.hpp"

namespace dem {

TEST(BondOrder, RenumberAndSortGivesTheTotalOrderOfEnds) {
  std::mt19937 rng(7);
  for (const std::size_t n : {2u, 9u, 200u}) {
    ParticleStore s;
    for (std::size_t k = 0; k < n; ++k) {
      ParticleSpec p;
      p.position = Vec3(std::uniform_real_distribution<double>(-1.0, 1.0)(rng), 0.1 * static_cast<double>(k), 0.0);
      s.add(p);
    }
    BondList bonds;
    std::uniform_int_distribution<std::uint32_t> end(0, static_cast<std::uint32_t>(n - 1));
    for (std::size_t b = 0; b < 5 * n; ++b) {
      std::uint32_t i = end(rng), j = end(rng);
      if (i == j) continue;
      bonds.add(s, i, j, BondStiffness{1.0, 2.0, 3.0});
      if (b % 7 == 0) bonds.add(s, j, i, BondStiffness{1.0, 2.0, 3.0});  // a parallel bond, the other way round
    }
    std::vector<std::uint32_t> new_slot(n);
    std::iota(new_slot.begin(), new_slot.end(), 0u);
    std::shuffle(new_slot.begin(), new_slot.end(), rng);
    const BondList before = bonds;
    // The expected order, by a comparison sort of (lower, higher, old index).
    std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> expected;
    for (std::size_t b = 0; b < before.size(); ++b) {
      const std::uint32_t i = new_slot[before.first[b]], j = new_slot[before.second[b]];
      expected.emplace_back(std::min(i, j), std::max(i, j), static_cast<std::uint32_t>(b));
    }
    std::sort(expected.begin(), expected.end());
    const std::vector<std::uint32_t> order = renumber_and_sort_bonds(bonds, new_slot);
    ASSERT_EQ(order.size(), expected.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto [i, j, old] = expected[k];
      EXPECT_EQ(order[k], old) << "bond " << k << " of " << order.size();
      EXPECT_EQ(bonds.first[k], i);
      EXPECT_EQ(bonds.second[k], j);
      EXPECT_EQ(bonds.rest_length[k], before.rest_length[old]);
      const bool flipped = new_slot[before.first[old]] > new_slot[before.second[old]];
      EXPECT_TRUE(bonds.rest_direction[k] == (flipped ? Vec3(-before.rest_direction[old]) : before.rest_direction[old]));
    }
  }
}

}  // namespace dem
