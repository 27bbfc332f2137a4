#pragma once
/// \file cut_tree.hpp
/// The recursive coordinate bisection of a decomposed run (engine/partition.hpp
/// bisect_owners) as a tree of cuts, built by the ranks together from the
/// particles each holds: no rank needs the whole system's positions (issue 28:
/// the bisection from counts, the step before sending each particle only to
/// its new owner).
///
/// The bisection: the particles of a node (at the root, all of them) are
/// cut across the longest side of their bounding box; with k ranks and n
/// particles the first floor(k/2) ranks take the n floor(k/2)/k particles
/// first in the order (coordinate, id), the others the rest; a node of one
/// rank, or of at most one particle, is a leaf. A cut is kept as the key
/// (coordinate, id) of the first particle on its right, so that
/// owner(x, id) places any position, also one no rank held when the tree
/// was made.
///
/// Built together: each node's count and box are sums, minima and maxima
/// over the ranks; its cut is found by bisection on the keys, each step one
/// sum of counts (64 steps over the coordinate's ordered bits, then 32 over
/// the id among equal coordinates), all nodes of a level at once. Every
/// step is an exact integer sum or an exact minimum or maximum, so every rank
/// makes the same tree, and it is the tree of the particles of all ranks
/// together, whatever rank held which (tests/test_cut_tree.cpp).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/types.hpp"

namespace dem {

/// Reductions over the ranks that build a tree together, in place, element
/// by element; every rank calls each one at the same point.
class RankReductions {
 public:
  virtual ~RankReductions() = default;
  virtual void sum(std::span<std::uint64_t> values) = 0;
  virtual void min(std::span<double> values) = 0;
  virtual void max(std::span<double> values) = 0;
};

/// One process holding every particle: each reduction is its own value.
class NoReductions final : public RankReductions {
 public:
  void sum(std::span<std::uint64_t>) override {}
  void min(std::span<double>) override {}
  void max(std::span<double>) override {}
};

/// The cuts of a recursive coordinate bisection.
class CutTree {
 public:
  struct Node {
    int axis = -1;                  ///< -1: a leaf
    double coordinate = 0.0;        ///< the cut's key: (coordinate, id) of the
    std::uint32_t id = 0;           ///< first particle on its right
    std::uint32_t left = 0, right = 0;  ///< children (node indices)
    std::uint32_t rank = 0;         ///< a leaf's rank
  };

  /// The tree of the particles at positions `x` with ids `ids` that this
  /// rank holds, over `ranks` ranks, with the particles the other ranks
  /// hold (through `reduce`; NoReductions when this process holds them all).
  /// Collective. Throws std::invalid_argument for no ranks, or a position
  /// that is not finite.
  static CutTree build(std::span<const Vec3> x, std::span<const std::uint32_t> ids, std::size_t ranks,
                       RankReductions& reduce);

  /// The rank of a particle at `x` with id `id`.
  std::uint32_t owner(const Vec3& x, std::uint32_t id) const;

  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  std::vector<Node> nodes_;  ///< the root first
};

}  // namespace dem
