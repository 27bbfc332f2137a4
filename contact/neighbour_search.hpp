#pragma once
/// \file neighbour_search.hpp
/// Verlet neighbour list of candidate contact pairs (docs/model.md §4:
/// contact acts between every pair of overlapping particles, bonded or not),
/// found with a uniform cell grid of side 2 r_max + skin for dense packings
/// of similar spheres (radii within a factor 2, at most about 4 cells a
/// particle: lattices, bonded solids, granular beds), and with a nanoflann
/// kd-tree over the centres otherwise (polydisperse or scattered scenes,
/// where cells would be too many or too full). Both give the same list.
///
/// A pair (i, j), i < j, is a candidate when |x_i - x_j| < r_i + r_j + skin at
/// the last build. The list is rebuilt only when the displacements since that
/// build, d_i = x_i - x_i(build), are no longer all within skin/2 of one
/// common vector c: while they are, |d_i - d_j| <= skin for every pair,
/// which guarantees that no pair outside the list can overlap. The test
/// tries c = 0 (the classic rule: no particle moved more than skin/2) and
/// c = the centre of the box of the d_i, so motion that all particles share
/// (a body in free flight or free fall) does not count. Each pair appears
/// once.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/periodic_cell.hpp"
#include "core/types.hpp"

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
  /// In a periodic cell (NeighbourSearch::set_cell): the image code of each
  /// pair's partner (core/periodic_cell.hpp; kNoImage: the partner itself).
  /// Empty without a periodic axis.
  std::vector<std::uint8_t> image;

  std::size_t pair_count() const { return partner.size(); }
};

/// Where a pass over the new positions that the stepper makes anyway (the
/// integrator's drift, engine/integrator.hpp) writes the rebuild test's
/// per-block results, so that rebuild_due() need not read the positions
/// again: for each block of kReductionBlock particles (core/parallel.hpp),
/// the lowest slot whose position is not finite (or n), the largest
/// |d_i|^2 and the per-axis box of d_i = x_i - reference_i over the block's
/// particles before that slot. reference is nullptr when the list is stale
/// (no pass can help).
struct DriftSink {
  const Vec3* reference = nullptr;  ///< positions at the last build
  std::size_t count = 0;            ///< particles
  Vec3* low = nullptr;              ///< per block
  Vec3* high = nullptr;             ///< per block
  double* worst = nullptr;          ///< per block
  std::size_t* bad = nullptr;       ///< per block
};

/// The displacements d_i = x_i - x_i(build) of some particles since the
/// last build, as the rebuild test (see the file comment) needs them, in a
/// form that merges by an elementwise maximum: the summaries of the MPI
/// ranks' parts of one system (engine/collective.hpp) merge into the whole
/// system's, bit for bit, since max is exact and order-free.
struct DriftSummary {
  static constexpr double kNone = -std::numeric_limits<double>::infinity();
  /// 1 if a list is stale (never built, or built for another particle
  /// count), else 0; -low_x, -low_y, -low_z and high_x, high_y, high_z of
  /// the box of the d_i; the largest |d_i|^2 (length^2).
  std::array<double, 8> values{0.0, kNone, kNone, kNone, kNone, kNone, kNone, 0.0};

  bool stale() const { return values[0] > 0.0; }
  Vec3 low() const { return Vec3(-values[1], -values[2], -values[3]); }
  Vec3 high() const { return Vec3(values[4], values[5], values[6]); }
  double worst() const { return values[7]; }
  /// The centre of the box of the d_i (the common motion the test allows).
  Vec3 centre() const { return 0.5 * (low() + high()); }
};

class NeighbourSearch {
 public:
  /// skin: Verlet skin (length), finite and >= 0; throws std::invalid_argument.
  explicit NeighbourSearch(double skin);
  ~NeighbourSearch();
  NeighbourSearch(NeighbourSearch&&) noexcept;
  NeighbourSearch& operator=(NeighbourSearch&&) noexcept;

  /// Rebuilds the list from scratch at these positions (length) and radii
  /// (length), one per particle. Throws std::invalid_argument if the sizes
  /// differ, std::runtime_error naming the lowest particle whose position is
  /// not finite, std::length_error beyond 2^32 - 1 particles or pairs.
  void rebuild(std::span<const Vec3> positions, std::span<const double> radii);

  /// Rebuilds if the displacements since the last build are not all within
  /// skin/2 of one common vector (see above), none was made or the particle count changed; returns true if it
  /// rebuilt. Throws as rebuild() does (the positions are checked every call).
  /// A change of radii alone does not trigger a rebuild.
  bool update(std::span<const Vec3> positions, std::span<const double> radii);

  /// True if update() would rebuild now: the displacements since the last
  /// build are not all within skin/2 of one common vector, none was made or the particle count
  /// changed. Checks the positions and throws as rebuild() does. Lets a
  /// caller re-order the particles just before the rebuild.
  bool rebuild_due(std::span<const Vec3> positions, std::span<const double> radii);

  /// Rebuilds the list from the positions of an earlier build (as kept in a
  /// checkpoint) and sets the build count, so that a restarted run rebuilds
  /// at the same steps as the run it continues. Throws as rebuild() does.
  void restore(std::span<const Vec3> build_positions, std::span<const double> radii,
               std::size_t rebuild_count);

  /// The summary of the displacements of `positions` (one per particle of
  /// the last build) since that build; stale without a build or for another
  /// count. Serial; does not check finiteness (rebuild_due() does).
  DriftSummary drift_summary(std::span<const Vec3> positions) const;
  /// The rebuild test on a merged summary: true or false, or nullopt when
  /// it needs the largest |d_i - c|^2 about the box centre c
  /// (drift_spread(), merged by a maximum as well). In a deforming cell
  /// with the skin less the images' motion, as rebuild_due().
  std::optional<bool> rebuild_decision(const DriftSummary& merged) const;
  /// max_i |d_i - merged.centre()|^2 over `positions` (length^2).
  double drift_spread(std::span<const Vec3> positions, const DriftSummary& merged) const;
  /// The rebuild test with the merged spread (after rebuild_decision()
  /// gave nullopt).
  bool rebuild_decision(const DriftSummary& merged, double merged_spread) const;

  /// The arrays a fused drift pass over `count` particles fills (see
  /// DriftSink); then drift_sink_filled(positions) tells the next
  /// rebuild_due() at those positions to use them instead of its own pass.
  DriftSink drift_sink(std::size_t count);
  void drift_sink_filled(const Vec3* positions);

  /// A periodic cell (core/periodic_cell.hpp): from the next build on, a
  /// pair (i, j) is a candidate when some image x_j + H n of j is within
  /// r_i + r_j + skin of x_i, and the list keeps n as the pair's image
  /// code. The cell must be at least two cutoffs 2 r_max + skin wide on
  /// every periodic axis (one image at most per pair; the scene checks it).
  /// Positions need not lie in the cell. A cell that deforms moves the
  /// images by (H - H_build) n since the last build: the rebuild test then
  /// takes the skin less the sum of |H - H_build| over the periodic edges.
  void set_cell(const PeriodicCell& cell) { cell_ = cell; }
  const PeriodicCell& cell() const { return cell_; }
  /// The cell's edges at the last build (a checkpoint keeps them for a
  /// deforming cell: restore() must search the images where they were).
  const Mat3& build_edges() const { return build_edges_; }
  /// How far the images have moved since the last build: the sum of
  /// |H - H_build| over the periodic edges (length; zero for a fixed cell).
  double image_motion() const;

  const NeighbourList& list() const { return list_; }
  /// Positions at the last build (empty before the first).
  const std::vector<Vec3>& build_positions() const { return build_positions_; }
  double skin() const { return skin_; }
  /// Whether the last build searched the cell grid (dense packings of
  /// similar spheres) rather than the kd-tree; the list is the same.
  bool used_cell_grid() const { return used_grid_; }
  /// Number of builds so far (the first included).
  std::size_t rebuild_count() const { return rebuilds_; }

 private:
  struct Scratch;  ///< kd-tree and reused per-block buffers (defined in the .cpp)

  /// One parallel pass over the positions: throws std::runtime_error naming
  /// the lowest slot whose position is not finite, and returns (if `drift`,
  /// else 0) a bound of min_c max_i |d_i - c|^2 over the displacements d_i
  /// since the last build (length^2) that is exact enough to decide the
  /// rebuild (see above).
  double scan_positions(std::span<const Vec3> positions, bool drift);
  /// Builds the list from checked inputs.
  void build(std::span<const Vec3> positions, std::span<const double> radii);
  /// Stage 1 of a build in a periodic cell: the image points within reach
  /// of the cell's particles, the kd-tree over particles and images, and
  /// each query block's rows with their image codes.
  void find_periodic_rows(std::span<const Vec3> x, std::span<const double> radii, double r_max);

  double skin_;
  std::size_t rebuilds_ = 0;
  bool used_grid_ = false;
  const Vec3* prescanned_ = nullptr;     ///< positions a fused pass filled the drift blocks for
  std::size_t prescanned_build_ = 0;     ///< rebuilds_ when it did  ///< the last build searched a cell grid (else the kd-tree)
  NeighbourList list_;
  PeriodicCell cell_;                  ///< no periodic axis unless set_cell()
  Mat3 build_edges_ = Mat3::Zero();    ///< the cell's edges at the last build
  std::vector<Vec3> build_positions_;  ///< positions at the last build
  std::unique_ptr<Scratch> scratch_;
};

/// Reference O(n^2) search: every pair i < j with |x_i - x_j| < r_i + r_j + skin,
/// sorted. For tests.
std::vector<std::pair<std::uint32_t, std::uint32_t>> brute_force_pairs(
    std::span<const Vec3> positions, std::span<const double> radii, double skin);

/// Reference O(27 n^2) search in a periodic cell: every pair i < j with
/// some image shift n in {-1, 0, 1}^3 (zero on non-periodic axes) such that
/// |x_i - (x_j + H n)| < r_i + r_j + skin, as (i, j, image code), sorted.
/// For tests.
std::vector<std::array<std::uint32_t, 3>> brute_force_periodic_pairs(std::span<const Vec3> positions,
                                                                      std::span<const double> radii, double skin,
                                                                      const PeriodicCell& cell);

}  // namespace dem
