#include "engine/cut_tree.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dem {

namespace {

/// The bits of a coordinate as an unsigned key in the coordinate's order
/// (-0 taken as +0: they compare equal).
std::uint64_t ordered(double v) {
  if (v == 0.0) v = 0.0;
  const auto b = std::bit_cast<std::uint64_t>(v);
  return (b >> 63) != 0 ? ~b : b | (std::uint64_t{1} << 63);
}

double from_ordered(std::uint64_t k) {
  return std::bit_cast<double>((k >> 63) != 0 ? k & ~(std::uint64_t{1} << 63) : ~k);
}

/// A node of the level being cut: its index, its ranks, and once counted
/// its particles' box and the cut's target (the order index of the first
/// particle on its right).
struct Open {
  std::uint32_t node = 0;
  std::uint32_t first_rank = 0;
  std::size_t ranks = 0;
  std::uint64_t count = 0;
  int axis = -1;
  std::uint64_t target = 0;
};

/// The local particles of the level's cut nodes: which node (level slot),
/// their key on its axis, and their id.
struct Members {
  std::vector<std::uint32_t> slot;
  std::vector<std::uint64_t> key;
  std::vector<std::uint32_t> id;
};

/// Per cut node, the smallest value v in [0, top] with at least target + 1
/// (less `below`) of its members counted by `counted(member, v)`: a
/// bisection of global counts, every step one sum over the ranks.
template <class Counted>
std::vector<std::uint64_t> smallest_reaching(const Members& m, const std::vector<Open>& cut,
                                             const std::vector<std::uint64_t>& below, std::uint64_t top,
                                             RankReductions& reduce, Counted counted) {
  std::vector<std::uint64_t> lo(cut.size(), 0), hi(cut.size(), top), counts(cut.size());
  for (;;) {
    bool open = false;
    for (std::size_t g = 0; g < cut.size(); ++g) open = open || lo[g] < hi[g];
    if (!open) return lo;  // (the same on every rank: lo and hi follow global sums)
    std::fill(counts.begin(), counts.end(), 0);
    for (std::size_t k = 0; k < m.slot.size(); ++k) {
      const std::uint32_t g = m.slot[k];
      if (counted(k, lo[g] + (hi[g] - lo[g]) / 2)) ++counts[g];
    }
    reduce.sum(counts);
    for (std::size_t g = 0; g < cut.size(); ++g) {
      if (lo[g] == hi[g]) continue;
      const std::uint64_t mid = lo[g] + (hi[g] - lo[g]) / 2;
      if (counts[g] >= cut[g].target - below[g] + 1) hi[g] = mid;
      else lo[g] = mid + 1;
    }
  }
}

}  // namespace

CutTree CutTree::build(std::span<const Vec3> x, std::span<const std::uint32_t> ids, std::size_t ranks,
                       RankReductions& reduce) {
  if (ranks == 0) throw std::invalid_argument("CutTree: no ranks");
  for (const Vec3& p : x)
    if (!p.allFinite()) throw std::invalid_argument("CutTree: a position is not finite");
  CutTree t;
  t.nodes_.emplace_back();
  std::vector<std::uint32_t> at(x.size(), 0);  // each local particle's node
  std::vector<Open> level{Open{0, 0, ranks}};
  while (!level.empty()) {
    const std::uint32_t base = level.front().node;  // (a level's nodes are consecutive)
    const std::size_t n = level.size();
    std::vector<std::uint64_t> counts(n, 0);
    std::vector<double> lo(3 * n, std::numeric_limits<double>::infinity()), hi(3 * n, -lo[0]);
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (at[i] < base || at[i] >= base + n) continue;
      const std::size_t g = at[i] - base;
      ++counts[g];
      for (int a = 0; a < 3; ++a) {
        lo[3 * g + a] = std::min(lo[3 * g + a], x[i][a]);
        hi[3 * g + a] = std::max(hi[3 * g + a], x[i][a]);
      }
    }
    reduce.sum(counts);
    reduce.min(lo);
    reduce.max(hi);
    // Leaves, and the nodes to cut with their axis and target.
    std::vector<Open> cut;
    std::vector<std::uint32_t> cut_of(n, ~0u);
    for (std::size_t g = 0; g < n; ++g) {
      Open o = level[g];
      o.count = counts[g];
      if (o.ranks <= 1 || o.count <= 1) {
        t.nodes_[o.node].rank = o.first_rank;
        continue;
      }
      const Vec3 side = Vec3(hi[3 * g], hi[3 * g + 1], hi[3 * g + 2]) - Vec3(lo[3 * g], lo[3 * g + 1], lo[3 * g + 2]);
      side.maxCoeff(&o.axis);
      o.target = o.count * (o.ranks / 2) / o.ranks;
      cut_of[g] = static_cast<std::uint32_t>(cut.size());
      cut.push_back(o);
    }
    if (cut.empty()) break;
    Members m;
    std::vector<std::size_t> member_of(x.size(), ~std::size_t{0});
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (at[i] < base || at[i] >= base + n || cut_of[at[i] - base] == ~0u) continue;
      const std::uint32_t c = cut_of[at[i] - base];
      member_of[i] = m.slot.size();
      m.slot.push_back(c);
      m.key.push_back(ordered(x[i][cut[c].axis]));
      m.id.push_back(ids[i]);
    }
    // The cut's coordinate: the smallest key with target + 1 keys at or below it.
    const std::vector<std::uint64_t> none(cut.size(), 0);
    const std::vector<std::uint64_t> key = smallest_reaching(
        m, cut, none, std::numeric_limits<std::uint64_t>::max(), reduce,
        [&](std::size_t k, std::uint64_t v) { return m.key[k] <= v; });
    // Then the id among the particles at that coordinate.
    std::vector<std::uint64_t> below(cut.size(), 0);
    for (std::size_t k = 0; k < m.slot.size(); ++k)
      if (m.key[k] < key[m.slot[k]]) ++below[m.slot[k]];
    reduce.sum(below);
    const std::vector<std::uint64_t> id = smallest_reaching(
        m, cut, below, std::numeric_limits<std::uint32_t>::max(), reduce,
        [&](std::size_t k, std::uint64_t v) { return m.key[k] == key[m.slot[k]] && m.id[k] <= v; });
    // The children: the next level, consecutive.
    std::vector<Open> next;
    for (std::size_t c = 0; c < cut.size(); ++c) {
      const Open& o = cut[c];
      const auto left = static_cast<std::uint32_t>(t.nodes_.size());
      Node& node = t.nodes_[o.node];
      node.axis = o.axis;
      node.coordinate = from_ordered(key[c]);
      node.id = static_cast<std::uint32_t>(id[c]);
      node.left = left;
      node.right = left + 1;
      t.nodes_.emplace_back();
      t.nodes_.emplace_back();
      next.push_back(Open{left, o.first_rank, o.ranks / 2});
      next.push_back(Open{left + 1, o.first_rank + static_cast<std::uint32_t>(o.ranks / 2), o.ranks - o.ranks / 2});
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (member_of[i] == ~std::size_t{0}) continue;
      const std::size_t k = member_of[i];
      const Node& node = t.nodes_[cut[m.slot[k]].node];
      const std::uint64_t c = key[m.slot[k]];
      at[i] = m.key[k] < c || (m.key[k] == c && m.id[k] < node.id) ? node.left : node.right;
    }
    level = std::move(next);
  }
  return t;
}

std::uint32_t CutTree::owner(const Vec3& x, std::uint32_t id) const {
  std::uint32_t k = 0;
  while (nodes_[k].axis >= 0) {
    const Node& n = nodes_[k];
    const std::uint64_t a = ordered(x[n.axis]), c = ordered(n.coordinate);
    k = a < c || (a == c && id < n.id) ? n.left : n.right;
  }
  return nodes_[k].rank;
}

}  // namespace dem
