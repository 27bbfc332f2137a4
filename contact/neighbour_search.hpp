#pragma once
/// \file neighbour_search.hpp
/// Verlet neighbour list of candidate contact pairs, found with a nanoflann
/// kd-tree over particle centres (MODEL.md section 4: contact acts between
/// every pair of overlapping particles, bonded or not).
///
/// A pair (i, j), i < j, is a candidate when |x_i - x_j| < r_i + r_j + skin at
/// the last build. The list is rebuilt only when some particle has moved more
/// than skin/2 since that build, which guarantees that no pair outside the
/// list can overlap. Each pair appears once.

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "engine/types.hpp"

namespace dem {

/// Half neighbour list in compressed-row form, ordered by (i, j).
struct NeighbourList {
  /// Row offsets, size n+1: the pairs of particle i are
  /// [offsets[i], offsets[i+1]) with partners `partner[k] > i`, ascending.
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> partner;  ///< j of each pair k
  std::vector<std::uint32_t> owner;    ///< i of each pair k (for loops over pairs)
  /// Transpose: the pairs in which particle j is the partner are
  /// incoming_pairs[incoming_offsets[j] .. incoming_offsets[j+1]), ascending
  /// pair index k. Size n+1 and number of pairs.
  std::vector<std::uint32_t> incoming_offsets;
  std::vector<std::uint32_t> incoming_pairs;

  std::size_t pair_count() const { return partner.size(); }
};

class NeighbourSearch {
 public:
  /// skin: Verlet skin (length), finite and >= 0; throws std::invalid_argument.
  explicit NeighbourSearch(double skin);
  ~NeighbourSearch();
  NeighbourSearch(NeighbourSearch&&) noexcept;
  NeighbourSearch& operator=(NeighbourSearch&&) noexcept;

  /// Rebuilds the list from scratch at these positions and radii (same size).
  void rebuild(std::span<const Vec3> positions, std::span<const double> radii);

  /// Rebuilds if some particle has moved more than skin/2 since the last
  /// build (or none was made); returns true if it rebuilt. Throws
  /// std::runtime_error naming the particle if a position is not finite.
  bool update(std::span<const Vec3> positions, std::span<const double> radii);

  const NeighbourList& list() const { return list_; }
  double skin() const { return skin_; }
  /// Number of builds so far (the first included).
  std::size_t rebuild_count() const { return rebuilds_; }

 private:
  double skin_;
  std::size_t rebuilds_ = 0;
  NeighbourList list_;
  std::vector<Vec3> build_positions_;  ///< positions at the last build
  struct Scratch;                      ///< reused per-block buffers
  std::vector<std::vector<std::uint32_t>> block_partners_;
};

/// Reference O(n^2) search: every pair i < j with |x_i - x_j| < r_i + r_j + skin,
/// sorted. For tests.
std::vector<std::pair<std::uint32_t, std::uint32_t>> brute_force_pairs(
    std::span<const Vec3> positions, std::span<const double> radii, double skin);

}  // namespace dem
