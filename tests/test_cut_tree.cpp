// The cut tree of the recursive coordinate bisection (engine/cut_tree.hpp):
// built on one process it gives every particle the owner of a direct
// bisection by sorting (the reference below); built by several ranks
// together, each holding an arbitrary share of the particles (threads
// here, reducing through shared memory), it is the same tree node for node;
// owner() places positions no rank held; and the balance is floor or ceil
// of N/ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>

#include "engine/cut_tree.hpp"

using namespace dem;

namespace {

/// Reference: bisect by sorting (coordinate, id) on the longest side.
void reference(std::vector<std::uint32_t> idx, std::uint32_t first, std::size_t ranks, const std::vector<Vec3>& x,
               const std::vector<std::uint32_t>& ids, std::vector<std::uint32_t>& owner) {
  if (ranks <= 1 || idx.size() <= 1) {
    for (const std::uint32_t i : idx) owner[i] = first;
    return;
  }
  Vec3 lo = x[idx[0]], hi = x[idx[0]];
  for (const std::uint32_t i : idx) lo = lo.cwiseMin(x[i]), hi = hi.cwiseMax(x[i]);
  int axis = 0;
  (hi - lo).maxCoeff(&axis);
  std::sort(idx.begin(), idx.end(), [&](std::uint32_t p, std::uint32_t q) {
    return x[p][axis] != x[q][axis] ? x[p][axis] < x[q][axis] : ids[p] < ids[q];
  });
  const std::size_t left = idx.size() * (ranks / 2) / ranks;
  reference({idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(left)}, first, ranks / 2, x, ids, owner);
  reference({idx.begin() + static_cast<std::ptrdiff_t>(left), idx.end()}, first + static_cast<std::uint32_t>(ranks / 2),
            ranks - ranks / 2, x, ids, owner);
}

/// Particles with many equal coordinates (a lattice, some at -0 and +0),
/// shuffled ids.
void make_points(std::size_t n, unsigned seed, std::vector<Vec3>& x, std::vector<std::uint32_t>& ids) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> cell(-3, 3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  x.resize(n);
  ids.resize(n);
  std::iota(ids.begin(), ids.end(), 0u);
  std::shuffle(ids.begin(), ids.end(), rng);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) x[i] = Vec3(cell(rng), cell(rng), 0.5 * cell(rng));
    else x[i] = Vec3(u(rng), 2.0 * u(rng), u(rng));
    if (i % 17 == 0) x[i][0] = (i % 2 == 0) ? 0.0 : -0.0;
  }
}

/// Sums, minima and maxima over `ranks` threads through shared buffers.
class ThreadReductions final : public RankReductions {
 public:
  struct Shared {
    explicit Shared(std::size_t ranks) : barrier(static_cast<std::ptrdiff_t>(ranks)), u(ranks), d(ranks) {}
    std::barrier<> barrier;
    std::vector<std::vector<std::uint64_t>> u;
    std::vector<std::vector<double>> d;
  };
  ThreadReductions(Shared& shared, std::size_t rank) : s_(shared), rank_(rank) {}
  void sum(std::span<std::uint64_t> v) override {
    combine(s_.u, v, [](std::uint64_t a, std::uint64_t b) { return a + b; });
  }
  void min(std::span<double> v) override { combine(s_.d, v, [](double a, double b) { return std::min(a, b); }); }
  void max(std::span<double> v) override { combine(s_.d, v, [](double a, double b) { return std::max(a, b); }); }

 private:
  template <class T, class F>
  void combine(std::vector<std::vector<T>>& slots, std::span<T> v, F f) {
    slots[rank_].assign(v.begin(), v.end());
    s_.barrier.arrive_and_wait();
    for (std::size_t k = 0; k < v.size(); ++k) {
      T acc = slots[0][k];
      for (std::size_t r = 1; r < slots.size(); ++r) acc = f(acc, slots[r][k]);
      v[k] = acc;
    }
    s_.barrier.arrive_and_wait();  // (every rank has read the slots before they are written again)
  }
  Shared& s_;
  std::size_t rank_;
};

bool same_nodes(const CutTree& a, const CutTree& b) {
  if (a.nodes().size() != b.nodes().size()) return false;
  for (std::size_t k = 0; k < a.nodes().size(); ++k) {
    const CutTree::Node &p = a.nodes()[k], &q = b.nodes()[k];
    if (p.axis != q.axis || p.left != q.left || p.right != q.right || p.rank != q.rank || p.id != q.id ||
        std::bit_cast<std::uint64_t>(p.coordinate) != std::bit_cast<std::uint64_t>(q.coordinate))
      return false;
  }
  return true;
}

}  // namespace

TEST(CutTree, OnOneProcessItIsTheBisectionBySorting) {
  for (const std::size_t n : {0u, 1u, 2u, 3u, 7u, 100u, 1001u})
    for (std::size_t ranks = 1; ranks <= 9; ++ranks) {
      std::vector<Vec3> x;
      std::vector<std::uint32_t> ids;
      make_points(n, 11 + n, x, ids);
      NoReductions one;
      const CutTree tree = CutTree::build(x, ids, ranks, one);
      std::vector<std::uint32_t> expected(n, 0);
      std::vector<std::uint32_t> all(n);
      std::iota(all.begin(), all.end(), 0u);
      reference(all, 0, ranks, x, ids, expected);
      std::vector<std::size_t> owned(ranks, 0);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(tree.owner(x[i], ids[i]), expected[i]) << n << " particles, " << ranks << " ranks, particle " << i;
        ++owned[expected[i]];
      }
      if (n >= ranks) {  // balanced: floor or ceil of n / ranks
        for (const std::size_t c : owned) EXPECT_LE(c - n / ranks, 1u) << n << " " << ranks;
      }
    }
}

TEST(CutTree, RanksHoldingAnyShareBuildTheSameTree) {
  std::vector<Vec3> x;
  std::vector<std::uint32_t> ids;
  make_points(2000, 5, x, ids);
  for (const std::size_t target_ranks : {2u, 3u, 4u, 7u})
    for (const std::size_t holders : {1u, 2u, 3u, 5u}) {
      NoReductions one;
      const CutTree whole = CutTree::build(x, ids, target_ranks, one);
      // An arbitrary share of the particles to each holder; of 5 holders,
      // holder 0 holds none.
      const auto share = [&](std::size_t i) {
        const std::size_t h = (i * 7919 / 13) % holders;
        return holders == 5 && h == 0 ? std::size_t{1} : h;
      };
      std::vector<CutTree> trees(holders);
      ThreadReductions::Shared shared(holders);
      std::vector<std::thread> threads;
      for (std::size_t h = 0; h < holders; ++h)
        threads.emplace_back([&, h] {
          std::vector<Vec3> mine;
          std::vector<std::uint32_t> my_ids;
          for (std::size_t i = 0; i < x.size(); ++i)
            if (share(i) == h) {
              mine.push_back(x[i]);
              my_ids.push_back(ids[i]);
            }
          ThreadReductions r(shared, h);
          trees[h] = CutTree::build(mine, my_ids, target_ranks, r);
        });
      for (std::thread& t : threads) t.join();
      for (std::size_t h = 0; h < holders; ++h)
        EXPECT_TRUE(same_nodes(trees[h], whole)) << target_ranks << " ranks, " << holders << " holders, holder " << h;
    }
}

TEST(CutTree, OwnerPlacesPositionsNoRankHeldOnTheirSideOfEveryCut) {
  std::vector<Vec3> x;
  std::vector<std::uint32_t> ids;
  make_points(500, 3, x, ids);
  NoReductions one;
  const CutTree tree = CutTree::build(x, ids, 4, one);
  ASSERT_GE(tree.nodes().front().axis, 0);
  const CutTree::Node& root = tree.nodes().front();
  // Far out on either side of the root's cut: the first or the last half of the ranks.
  Vec3 far = Vec3::Zero();
  far[root.axis] = -1e6;
  EXPECT_LT(tree.owner(far, 0), 2u);
  far[root.axis] = 1e6;
  EXPECT_GE(tree.owner(far, 0), 2u);
  // At the cut's own key: the right side; a smaller id there: the left.
  Vec3 at = Vec3::Zero();
  at[root.axis] = root.coordinate;
  EXPECT_GE(tree.owner(at, root.id), 2u);
  if (root.id > 0) {
    EXPECT_LT(tree.owner(at, root.id - 1), 2u);
  }
  EXPECT_THROW((void)CutTree::build(std::vector<Vec3>{Vec3(NAN, 0, 0)}, std::vector<std::uint32_t>{0}, 2, one),
               std::invalid_argument);
  EXPECT_THROW((void)CutTree::build(x, ids, 0, one), std::invalid_argument);
}
