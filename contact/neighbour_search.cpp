/// \file neighbour_search.cpp
/// Verlet neighbour list built with a cell grid or a nanoflann kd-tree.
///
/// A build runs in four stages, each deterministic for any thread count:
///
///   positions ──cell grid or kd-tree──▶ per-block rows ──prefix sum──▶ offsets
///                               │                           │
///                               └──copy in block order──────┴──▶ partner, owner
///                                                                   │
///                                  lower partners, binary search┘──▶ incoming_*
///
/// 1. The particles are cut into fixed blocks of kQueryBlock (independent of
///    the thread count). Each block looks up its particles' 27 surrounding
///    cells (or queries the tree with radius r_i + r_max + skin), keeps the partners j > i that pass the exact
///    test |x_i - x_j| < r_i + r_j + skin, sorts each row ascending, and
///    writes the rows into its own buffer and the row lengths into offsets.
/// 2. Prefix sums turn the row lengths into offsets: over the blocks'
///    totals, then within each block in parallel.
/// 3. The blocks copy their buffers into partner/owner at their offsets.
/// 4. The transpose: stage 1 also kept each particle's partners j < i
///    (sorted); row j of the transpose is then the pairs of those partners,
///    found by binary search in their rows, so each incoming row is in
///    ascending k. Parallel over particles.
///
/// Sorting each row makes the result independent of the search's traversal
/// order (grid and tree give the same list). All buffers keep their capacity between builds.

#include "contact/neighbour_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nanoflann.hpp>

#include "core/parallel.hpp"

namespace dem {
namespace {

/// Particles per query block (fixed, so the work split never depends on the
/// thread count).
constexpr std::size_t kQueryBlock = 256;
/// Largest number of points in a kd-tree leaf.
constexpr std::size_t kLeafSize = 10;
/// Relative margin of the search ranges (cell side, tree query radius) over
/// the largest cutoff: far above the rounding of the searches, far below
/// any physical length; the exact candidate test decides every pair.
constexpr double kSearchMargin = 1e-9;

/// |a - b|^2 (length^2), summed in the order x, y, z. The tree search and the
/// brute-force reference both call it, so they decide every pair alike.
inline double squared_distance(const Vec3& a, const Vec3& b) {
  const double dx = a[0] - b[0];
  const double dy = a[1] - b[1];
  const double dz = a[2] - b[2];
  return dx * dx + dy * dy + dz * dz;
}

/// The candidate test |x_i - x_j| < r_i + r_j + skin, on squares.
inline bool is_candidate(double d2, double r_i, double r_j, double skin) {
  const double cutoff = r_i + r_j + skin;
  return d2 < cutoff * cutoff;
}

/// nanoflann dataset adaptor over the particle centres.
struct CentreCloud {
  std::span<const Vec3> centres;

  std::size_t kdtree_get_point_count() const { return centres.size(); }
  double kdtree_get_pt(std::size_t i, std::size_t dim) const { return centres[i][dim]; }
  template <class Box>
  bool kdtree_get_bbox(Box&) const {
    return false;  // let the tree compute it
  }
};

using KdTree = nanoflann::KDTreeSingleIndexAdaptor<
    nanoflann::L2_Simple_Adaptor<double, CentreCloud>, CentreCloud, 3, std::uint32_t>;

/// nanoflann result set for one query particle i: appends every partner
/// j > i that passes the exact candidate test to `out` and every j < i that
/// does to `lower` (the transpose's row of i), unsorted.
class PartnerCollector {
 public:
  PartnerCollector(std::uint32_t i, double query_radius, std::span<const Vec3> x,
                   std::span<const double> r, double skin, std::vector<std::uint32_t>& out,
                   std::vector<std::uint32_t>& lower)
      : i_(i), radius2_(query_radius * query_radius), x_(x), r_(r), skin_(skin), out_(out), lower_(lower) {}

  bool full() const { return true; }
  double worstDist() const { return radius2_; }
  bool addPoint(double /*tree_d2*/, std::uint32_t j) {
    if (j != i_ && is_candidate(squared_distance(x_[i_], x_[j]), r_[i_], r_[j], skin_))
      (j > i_ ? out_ : lower_).push_back(j);
    return true;  // keep searching
  }

 private:
  std::uint32_t i_;
  double radius2_;
  std::span<const Vec3> x_;
  std::span<const double> r_;
  double skin_;
  std::vector<std::uint32_t>& out_;
  std::vector<std::uint32_t>& lower_;
};

/// nanoflann result set for one query particle i in a periodic cell, over
/// the particles followed by their image points: each point p is particle
/// owner[p] seen through image code[p]. Appends (j << 8 | code) of every
/// partner j > i that passes the candidate test to `out`, and every j < i
/// to `lower`. The test is made as the lower end's query makes it, x_lo -
/// (x_hi + H n) with n the higher end's image, so that both ends decide
/// every pair alike.
class PeriodicCollector {
 public:
  PeriodicCollector(std::uint32_t i, double query_radius, std::span<const Vec3> x, std::span<const double> r,
                    double skin, const PeriodicCell& cell, std::span<const std::uint32_t> owner,
                    std::span<const std::uint8_t> code, std::vector<std::uint64_t>& out,
                    std::vector<std::uint32_t>& lower)
      : i_(i), radius2_(query_radius * query_radius), x_(x), r_(r), skin_(skin), cell_(cell), owner_(owner),
        code_(code), out_(out), lower_(lower) {}

  bool full() const { return true; }
  double worstDist() const { return radius2_; }
  bool addPoint(double /*tree_d2*/, std::uint32_t p) {
    const std::uint32_t j = owner_[p];
    if (j == i_) return true;
    const std::uint8_t c = code_[p];
    if (j > i_) {
      const Vec3 image = c == kNoImage ? x_[j] : Vec3(x_[j] + cell_.offset(image_shift(c)));
      if (is_candidate(squared_distance(x_[i_], image), r_[i_], r_[j], skin_))
        out_.push_back(static_cast<std::uint64_t>(j) << 8 | c);
    } else {
      // The pair (j, i): i seen from j through the opposite image.
      const std::array<int, 3> n = image_shift(c);
      const std::uint8_t back = image_code({-n[0], -n[1], -n[2]});
      const Vec3 image = back == kNoImage ? x_[i_] : Vec3(x_[i_] + cell_.offset(image_shift(back)));
      if (is_candidate(squared_distance(x_[j], image), r_[j], r_[i_], skin_)) lower_.push_back(j);
    }
    return true;  // keep searching
  }

 private:
  std::uint32_t i_;
  double radius2_;
  std::span<const Vec3> x_;
  std::span<const double> r_;
  double skin_;
  const PeriodicCell& cell_;
  std::span<const std::uint32_t> owner_;
  std::span<const std::uint8_t> code_;
  std::vector<std::uint64_t>& out_;
  std::vector<std::uint32_t>& lower_;
};

/// A uniform grid of cubic cells of side 2 r_max + skin over the box of the
/// centres: every candidate partner of a particle lies in its own cell or
/// one of the 26 around it. `cells` = 0: the grid is not worth it (see
/// plan_cell_grid) and the kd-tree is used.
struct CellGrid {
  Vec3 low = Vec3::Zero();
  double inv_side = 0.0;
  std::int64_t dims[3] = {0, 0, 0};
  std::size_t cells = 0;
};

/// The grid serves dense packings of similar spheres (lattices, bonded
/// solids, granular beds): at most 4 cells a particle plus 4096, and radii
/// within a factor 2 (else a cell of 2 r_max + skin holds too many small
/// spheres). Scattered or polydisperse scenes stay with the kd-tree.
CellGrid plan_cell_grid(std::span<const Vec3> x, double r_min, double r_max, double skin) {
  CellGrid g;
  const std::size_t n = x.size();
  // A hair wider than the largest cutoff, so that the rounding of the cell
  // coordinates can never put two candidates two cells apart.
  const double side = (2.0 * r_max + skin) * (1.0 + kSearchMargin);
  if (n == 0 || !(side > 0.0) || !(r_max <= 2.0 * r_min)) return g;
  Vec3 low = x[0], high = x[0];
  for (const Vec3& p : x) {
    low = low.cwiseMin(p);
    high = high.cwiseMax(p);
  }
  // (Cell indices are 32-bit.)
  const double limit = std::min(4.0 * static_cast<double>(n) + 4096.0, 4294967294.0);
  double cells = 1.0;
  for (int c = 0; c < 3; ++c) {
    const double d = std::floor((high[c] - low[c]) / side) + 1.0;
    if (!(d >= 1.0 && d < limit)) return g;
    cells *= d;
    g.dims[c] = static_cast<std::int64_t>(d);
  }
  if (!(cells <= limit)) return g;
  g.low = low;
  g.inv_side = 1.0 / side;
  g.cells = static_cast<std::size_t>(cells);
  return g;
}

inline std::int64_t cell_coordinate(const CellGrid& g, const Vec3& p, int c) {
  const auto k = static_cast<std::int64_t>((p[c] - g.low[c]) * g.inv_side);
  return std::clamp<std::int64_t>(k, 0, g.dims[c] - 1);
}

/// Counting sort of the particles by cell (ascending slot within a cell).
void fill_cell_grid(const CellGrid& g, std::span<const Vec3> x, std::vector<std::uint32_t>& start,
                    std::vector<std::uint32_t>& particles, std::vector<std::uint32_t>& cell_of) {
  const std::size_t n = x.size();
  cell_of.resize(n);
  parallel_for_ranges(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const std::int64_t cx = cell_coordinate(g, x[i], 0), cy = cell_coordinate(g, x[i], 1),
                         cz = cell_coordinate(g, x[i], 2);
      cell_of[i] = static_cast<std::uint32_t>(cx + g.dims[0] * (cy + g.dims[1] * cz));
    }
  });
  start.assign(g.cells + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++start[cell_of[i] + 1];
  for (std::size_t c = 0; c < g.cells; ++c) start[c + 1] += start[c];
  particles.resize(n);
  for (std::size_t i = 0; i < n; ++i) particles[start[cell_of[i]]++] = static_cast<std::uint32_t>(i);
  // start[c] now holds the end of cell c: shift back.
  for (std::size_t c = g.cells; c > 0; --c) start[c] = start[c - 1];
  start[0] = 0;
}

/// The partners j > i of particle i that pass the candidate test into
/// `out`, those j < i into `lower`, unsorted.
void grid_partners(const CellGrid& g, const std::vector<std::uint32_t>& start,
                   const std::vector<std::uint32_t>& particles, const std::vector<std::uint32_t>& cell_of,
                   std::uint32_t i, std::span<const Vec3> x, std::span<const double> r, double skin,
                   std::vector<std::uint32_t>& out, std::vector<std::uint32_t>& lower) {
  const std::int64_t c = cell_of[i];
  const std::int64_t cx = c % g.dims[0], cy = (c / g.dims[0]) % g.dims[1], cz = c / (g.dims[0] * g.dims[1]);
  const Vec3& xi = x[i];
  const double ri = r[i];
  for (std::int64_t z = std::max<std::int64_t>(cz - 1, 0); z <= std::min(cz + 1, g.dims[2] - 1); ++z)
    for (std::int64_t y = std::max<std::int64_t>(cy - 1, 0); y <= std::min(cy + 1, g.dims[1] - 1); ++y) {
      // The cells x-1 .. x+1 of one row are contiguous in `particles`.
      const std::int64_t row = g.dims[0] * (y + g.dims[1] * z);
      const std::uint32_t from = start[static_cast<std::size_t>(row + std::max<std::int64_t>(cx - 1, 0))];
      const std::uint32_t to = start[static_cast<std::size_t>(row + std::min(cx + 1, g.dims[0] - 1) + 1)];
      for (std::uint32_t e = from; e < to; ++e) {
        const std::uint32_t j = particles[e];
        if (j != i && is_candidate(squared_distance(xi, x[j]), ri, r[j], skin)) (j > i ? out : lower).push_back(j);
      }
    }
}

std::string to_text(double value) {
  std::ostringstream s;
  s.precision(17);
  s << value;
  return s.str();
}

void check_sizes(std::span<const Vec3> positions, std::span<const double> radii) {
  if (positions.size() != radii.size())
    throw std::invalid_argument("NeighbourSearch: " + std::to_string(positions.size()) +
                                " positions but " + std::to_string(radii.size()) + " radii");
  if (positions.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("NeighbourSearch: more than 2^32 - 1 particles");
}

}  // namespace

/// The kd-tree and the buffers reused from one build or update to the next.
/// Kept on the heap so that the tree's reference to `cloud` survives moves.
struct NeighbourSearch::Scratch {
  CentreCloud cloud;
  KdTree tree{3, cloud,
              nanoflann::KDTreeSingleIndexAdaptorParams(
                  kLeafSize, nanoflann::KDTreeSingleIndexAdaptorFlags::SkipInitialBuildIndex)};
  /// Partners of each query block, its rows one after another.
  std::vector<std::vector<std::uint32_t>> block_partners;
  /// Partners j < i of each query block's particles, row after row (the
  /// transpose's rows), and each row's length.
  std::vector<std::vector<std::uint32_t>> block_lower;
  std::vector<std::uint32_t> lower_count;
  std::vector<std::uint64_t> block_start;  ///< per query block: its first pair (stage 2)
  std::vector<Vec3> block_low, block_high;  ///< per scan block: smallest and largest displacement, per axis
  std::vector<double> block_drift;          ///< per scan block: largest squared (centred) displacement
  std::vector<std::size_t> block_bad;     ///< per scan block: lowest non-finite slot, or n
  std::vector<std::uint32_t> cell_start;       ///< cell grid: first entry of each cell in cell_particles, size cells+1
  std::vector<std::uint32_t> cell_particles;   ///< cell grid: the particles cell by cell, ascending slot in each
  std::vector<std::uint32_t> cell_of;          ///< cell grid: cell of each particle
  /// Periodic cell: the image codes of each query block's rows (beside
  /// block_partners), and the particles followed by their image points
  /// with each point's particle and image code.
  std::vector<std::vector<std::uint8_t>> block_images;
  std::vector<Vec3> points;
  std::vector<std::uint32_t> point_owner;
  std::vector<std::uint8_t> point_code;
};

NeighbourSearch::NeighbourSearch(double skin)
    : skin_(skin), scratch_(std::make_unique<Scratch>()) {
  if (!std::isfinite(skin) || skin < 0.0)
    throw std::invalid_argument("NeighbourSearch: skin must be finite and >= 0, got " +
                                to_text(skin));
}

NeighbourSearch::~NeighbourSearch() = default;
NeighbourSearch::NeighbourSearch(NeighbourSearch&&) noexcept = default;
NeighbourSearch& NeighbourSearch::operator=(NeighbourSearch&&) noexcept = default;

void NeighbourSearch::rebuild(std::span<const Vec3> positions, std::span<const double> radii) {
  check_sizes(positions, radii);
  scan_positions(positions, false);
  build(positions, radii);
}

void NeighbourSearch::restore(std::span<const Vec3> build_positions, std::span<const double> radii,
                              std::size_t rebuild_count) {
  rebuild(build_positions, radii);
  rebuilds_ = rebuild_count;
}

bool NeighbourSearch::rebuild_due(std::span<const Vec3> positions, std::span<const double> radii) {
  check_sizes(positions, radii);
  const bool stale = rebuilds_ == 0 || positions.size() != build_positions_.size();
  const double drift2 = scan_positions(positions, !stale);
  const double half_skin = 0.5 * (skin_ - image_motion());
  return stale || half_skin < 0.0 || drift2 > half_skin * half_skin;
}

double NeighbourSearch::image_motion() const {
  // A deforming cell moved every image by (H - H_build) n, |n_a| <= 1:
  // that much less skin is left for the particles' own displacements.
  double moved = 0.0;
  for (int a = 0; a < 3; ++a)
    if (cell_.periodic[a]) moved += (cell_.edges.col(a) - build_edges_.col(a)).norm();
  return moved;
}

bool NeighbourSearch::update(std::span<const Vec3> positions, std::span<const double> radii) {
  if (!rebuild_due(positions, radii)) return false;
  build(positions, radii);
  return true;
}

DriftSummary NeighbourSearch::drift_summary(std::span<const Vec3> positions) const {
  DriftSummary d;
  if (rebuilds_ == 0 || positions.size() != build_positions_.size()) {
    d.values[0] = 1.0;
    return d;
  }
  std::array<double, 8>& v = d.values;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const Vec3 dx = positions[i] - build_positions_[i];
    for (int a = 0; a < 3; ++a) {
      v[1 + a] = std::max(v[1 + a], -dx[a]);
      v[4 + a] = std::max(v[4 + a], dx[a]);
    }
    v[7] = std::max(v[7], dx.squaredNorm());
  }
  return d;
}

// The expressions, and roundings, of scan_positions() and rebuild_due():
// the bound min(worst, half diagonal^2), then the spread about the centre.
// With a deforming cell, the skin less the images' motion (image_motion()).
std::optional<bool> NeighbourSearch::rebuild_decision(const DriftSummary& d) const {
  if (d.stale()) return true;
  const double half_skin = 0.5 * (skin_ - image_motion());
  if (half_skin < 0.0) return true;
  const double half_skin2 = 0.25 * skin_ * skin_;
  const double bound = std::min(d.worst(), (0.5 * (d.high() - d.low())).squaredNorm());
  if (bound <= half_skin2) return bound > half_skin * half_skin;
  return std::nullopt;
}

double NeighbourSearch::drift_spread(std::span<const Vec3> positions, const DriftSummary& d) const {
  const Vec3 centre = d.centre();
  double spread = 0.0;
  for (std::size_t i = 0; i < positions.size(); ++i)
    spread = std::max(spread, (positions[i] - build_positions_[i] - centre).squaredNorm());
  return spread;
}

bool NeighbourSearch::rebuild_decision(const DriftSummary& d, double spread) const {
  const double half_skin = 0.5 * (skin_ - image_motion());
  const double bound = std::min(d.worst(), (0.5 * (d.high() - d.low())).squaredNorm());
  return std::min(bound, spread) > half_skin * half_skin;
}

DriftSink NeighbourSearch::drift_sink(std::size_t count) {
  prescanned_ = nullptr;
  DriftSink sink;
  if (rebuilds_ == 0 || count != build_positions_.size()) return sink;
  if (!scratch_) scratch_ = std::make_unique<Scratch>();
  Scratch& s = *scratch_;
  const std::size_t blocks = (count + kReductionBlock - 1) / kReductionBlock;
  s.block_low.resize(blocks);
  s.block_high.resize(blocks);
  s.block_drift.resize(blocks);
  s.block_bad.resize(blocks);
  sink.reference = build_positions_.data();
  sink.count = count;
  sink.low = s.block_low.data();
  sink.high = s.block_high.data();
  sink.worst = s.block_drift.data();
  sink.bad = s.block_bad.data();
  return sink;
}

void NeighbourSearch::drift_sink_filled(const Vec3* positions) {
  prescanned_ = positions;
  prescanned_build_ = rebuilds_;
}

double NeighbourSearch::scan_positions(std::span<const Vec3> positions, bool drift) {
  if (!scratch_) scratch_ = std::make_unique<Scratch>();  // after a move
  Scratch& s = *scratch_;
  const std::size_t n = positions.size();
  const std::size_t blocks = (n + kReductionBlock - 1) / kReductionBlock;
  // The blocks a fused pass filled for exactly these positions and this build.
  const bool prescanned = drift && prescanned_ == positions.data() && prescanned_build_ == rebuilds_ &&
                          n == build_positions_.size() && s.block_bad.size() == blocks;
  prescanned_ = nullptr;
  s.block_low.resize(blocks);
  s.block_high.resize(blocks);
  s.block_drift.resize(blocks);
  s.block_bad.resize(blocks);
  // Pass 1: finiteness, the largest |d_i|^2 and the box of the d_i.
  if (!prescanned) parallel_for_ranges(
      blocks,
      [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          Vec3 low = Vec3::Zero(), high = Vec3::Zero();
          double worst = 0.0;
          bool first = true;
          std::size_t bad = n;
          const std::size_t end = std::min(n, (b + 1) * kReductionBlock);
          for (std::size_t i = b * kReductionBlock; i < end; ++i) {
            const Vec3& x = positions[i];
            if (!(std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]))) {
              bad = i;
              break;
            }
            if (!drift) continue;
            const Vec3 d = x - build_positions_[i];
            worst = std::max(worst, d.squaredNorm());
            low = first ? d : low.cwiseMin(d);
            high = first ? d : high.cwiseMax(d);
            first = false;
          }
          s.block_low[b] = low;
          s.block_high[b] = high;
          s.block_drift[b] = worst;
          s.block_bad[b] = bad;
        }
      },
      1);
  // Max and min are exact and order-free; block order keeps it plain.
  Vec3 low = Vec3::Zero(), high = Vec3::Zero();
  double worst = 0.0;
  std::size_t bad = n;
  for (std::size_t b = 0; b < blocks; ++b) {
    low = b == 0 ? s.block_low[b] : low.cwiseMin(s.block_low[b]);
    high = b == 0 ? s.block_high[b] : high.cwiseMax(s.block_high[b]);
    worst = std::max(worst, s.block_drift[b]);
    bad = std::min(bad, s.block_bad[b]);
  }
  if (bad < n)
    throw std::runtime_error("NeighbourSearch: position of particle " + std::to_string(bad) +
                             " is not finite");
  // For any centre c, |d_i - d_j| <= 2 max_k |d_k - c|. Bounds of that
  // maximum: c = 0 (worst), the box centre (its half diagonal), and, when
  // both pass skin/2, the exact distance from the box centre (pass 2).
  const double half_skin2 = 0.25 * skin_ * skin_;
  const double bound = std::min(worst, (0.5 * (high - low)).squaredNorm());
  if (!drift || bound <= half_skin2) return bound;
  const Vec3 centre = 0.5 * (low + high);
  parallel_for_ranges(
      blocks,
      [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          double w = 0.0;
          const std::size_t end = std::min(n, (b + 1) * kReductionBlock);
          for (std::size_t i = b * kReductionBlock; i < end; ++i)
            w = std::max(w, (positions[i] - build_positions_[i] - centre).squaredNorm());
          s.block_drift[b] = w;
        }
      },
      1);
  double spread = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) spread = std::max(spread, s.block_drift[b]);
  return std::min(bound, spread);
}

void NeighbourSearch::build(std::span<const Vec3> positions, std::span<const double> radii) {
  if (!scratch_) scratch_ = std::make_unique<Scratch>();
  Scratch& s = *scratch_;
  const std::size_t n = positions.size();
  build_positions_.assign(positions.begin(), positions.end());
  build_edges_ = cell_.edges;
  const std::span<const Vec3> x(build_positions_);
  const double r_max = n == 0 ? 0.0 : *std::max_element(radii.begin(), radii.end());
  const double r_min = n == 0 ? 0.0 : *std::min_element(radii.begin(), radii.end());
  const bool periodic = cell_.any();
  const CellGrid grid = periodic ? CellGrid{} : plan_cell_grid(x, r_min, r_max, skin_);
  used_grid_ = grid.cells > 0;
  if (used_grid_) {
    fill_cell_grid(grid, x, s.cell_start, s.cell_particles, s.cell_of);
  } else if (!periodic) {
    s.cloud.centres = x;
    s.tree.buildIndex();
  }

  // Stage 1: rows per block; row lengths into offsets[i + 1].
  NeighbourList& l = list_;
  l.offsets.assign(n + 1, 0);
  const std::size_t blocks = (n + kQueryBlock - 1) / kQueryBlock;
  if (s.block_partners.size() < blocks) s.block_partners.resize(blocks);
  if (s.block_lower.size() < blocks) s.block_lower.resize(blocks);
  s.lower_count.resize(n);
  const nanoflann::SearchParams params(32, 0.0f, false);
  if (periodic) find_periodic_rows(x, radii, r_max);
  else parallel_for_ranges(
      blocks,
      [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          std::vector<std::uint32_t>& out = s.block_partners[b];
          std::vector<std::uint32_t>& lower = s.block_lower[b];
          out.clear();
          lower.clear();
          const std::size_t end = std::min(n, (b + 1) * kQueryBlock);
          for (std::size_t i = b * kQueryBlock; i < end; ++i) {
            const std::size_t start = out.size(), lower_start = lower.size();
            if (used_grid_) {
              grid_partners(grid, s.cell_start, s.cell_particles, s.cell_of, static_cast<std::uint32_t>(i), x, radii,
                            skin_, out, lower);
            } else {
              // The query radius a hair over the largest cutoff, so that the
              // tree's rounded pruning finds every candidate from both ends
              // (the exact test decides; the transpose needs both).
              PartnerCollector collect(static_cast<std::uint32_t>(i),
                                       (radii[i] + r_max + skin_) * (1.0 + kSearchMargin), x, radii, skin_, out, lower);
              s.tree.findNeighbors(collect, x[i].data(), params);
            }
            std::sort(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
            std::sort(lower.begin() + static_cast<std::ptrdiff_t>(lower_start), lower.end());
            l.offsets[i + 1] = static_cast<std::uint32_t>(out.size() - start);
            s.lower_count[i] = static_cast<std::uint32_t>(lower.size() - lower_start);
          }
        }
      },
      1);

  // Stage 2: prefix sums, over the blocks' totals (serial, n/256 items),
  // then within each block (parallel); the same for the transpose's rows.
  s.block_start.resize(blocks + 1);
  l.incoming_offsets.resize(n + 1);
  l.incoming_offsets[0] = 0;
  std::uint64_t total = 0, total_lower = 0;
  std::vector<std::uint64_t> lower_start(blocks + 1);
  for (std::size_t b = 0; b < blocks; ++b) {
    s.block_start[b] = total;
    lower_start[b] = total_lower;
    total += s.block_partners[b].size();
    total_lower += s.block_lower[b].size();
  }
  if (total > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("NeighbourSearch: more than 2^32 - 1 candidate pairs");
  if (total_lower != total) throw std::logic_error("NeighbourSearch: the list and its transpose differ in size");
  parallel_for_ranges(
      blocks,
      [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          auto sum = static_cast<std::uint32_t>(s.block_start[b]);
          auto sum_lower = static_cast<std::uint32_t>(lower_start[b]);
          const std::size_t end = std::min(n, (b + 1) * kQueryBlock);
          for (std::size_t i = b * kQueryBlock; i < end; ++i) {
            sum += l.offsets[i + 1];
            l.offsets[i + 1] = sum;
            sum_lower += s.lower_count[i];
            l.incoming_offsets[i + 1] = sum_lower;
          }
        }
      },
      1);

  // Stage 3: copy the blocks in place.
  l.partner.resize(total);
  l.owner.resize(total);
  if (periodic) l.image.resize(total);
  else l.image.clear();
  parallel_for_ranges(
      blocks,
      [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          const std::vector<std::uint32_t>& in = s.block_partners[b];
          const std::size_t first = b * kQueryBlock;
          std::copy(in.begin(), in.end(), l.partner.begin() + l.offsets[first]);
          if (periodic)
            std::copy(s.block_images[b].begin(), s.block_images[b].end(), l.image.begin() + l.offsets[first]);
          const std::size_t end = std::min(n, first + kQueryBlock);
          for (std::size_t i = first; i < end; ++i)
            std::fill(l.owner.begin() + l.offsets[i], l.owner.begin() + l.offsets[i + 1],
                      static_cast<std::uint32_t>(i));
        }
      },
      1);

  // Stage 4: the transpose. Row j lists the pairs (i, j), i < j, in
  // ascending i, hence ascending k: k = offsets[i] + the place of j in the
  // sorted row of i. Parallel over particles, each row its own.
  l.incoming_pairs.resize(total);
  parallel_for_ranges(
      blocks,
      [&](std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b) {
          const std::vector<std::uint32_t>& lower = s.block_lower[b];
          std::size_t e = 0;
          const std::size_t end = std::min(n, (b + 1) * kQueryBlock);
          for (std::size_t j = b * kQueryBlock; j < end; ++j) {
            std::uint32_t q = l.incoming_offsets[j];
            for (std::uint32_t c = 0; c < s.lower_count[j]; ++c, ++e, ++q) {
              const std::uint32_t i = lower[e];
              const auto row_begin = l.partner.begin() + l.offsets[i];
              const auto row_end = l.partner.begin() + l.offsets[i + 1];
              const auto at = std::lower_bound(row_begin, row_end, static_cast<std::uint32_t>(j));
              if (at == row_end || *at != j)
                throw std::logic_error("NeighbourSearch: the pair (" + std::to_string(i) + ", " + std::to_string(j) +
                                       ") was found from one end only");
              l.incoming_pairs[q] = static_cast<std::uint32_t>(at - l.partner.begin());
            }
          }
        }
      },
      1);

  ++rebuilds_;
}

void NeighbourSearch::find_periodic_rows(std::span<const Vec3> x, std::span<const double> radii, double r_max) {
  Scratch& s = *scratch_;
  const std::size_t n = x.size();
  // The image points within one cutoff of the particles' fractional box
  // (widened by cutoff / width on each periodic axis): every image within
  // reach of a particle, in particle order and then code order.
  const double cutoff = (2.0 * r_max + skin_) * (1.0 + kSearchMargin);
  Vec3 low = Vec3::Constant(INFINITY), high = Vec3::Constant(-INFINITY), margin = Vec3::Zero();
  std::vector<Vec3> f(n);
  for (std::size_t i = 0; i < n; ++i) {
    f[i] = cell_.fractional(x[i]);
    low = low.cwiseMin(f[i]);
    high = high.cwiseMax(f[i]);
  }
  for (int a = 0; a < 3; ++a)
    if (cell_.periodic[a]) margin[a] = cutoff / cell_.width(a);
  std::vector<std::uint8_t> codes;
  for (std::uint8_t c = 0; c < 27; ++c) {
    const std::array<int, 3> m = image_shift(c);
    bool allowed = c != kNoImage;
    for (int a = 0; a < 3; ++a) allowed = allowed && (m[a] == 0 || cell_.periodic[a]);
    if (allowed) codes.push_back(c);
  }
  s.points.assign(x.begin(), x.end());
  s.point_owner.resize(n);
  std::iota(s.point_owner.begin(), s.point_owner.end(), 0u);
  s.point_code.assign(n, kNoImage);
  for (std::size_t i = 0; i < n; ++i)
    for (const std::uint8_t c : codes) {
      const std::array<int, 3> m = image_shift(c);
      bool near = true;
      for (int a = 0; a < 3 && near; ++a) {
        const double g = f[i][a] + m[a];
        near = g >= low[a] - margin[a] && g <= high[a] + margin[a];
      }
      if (!near) continue;
      s.points.push_back(x[i] + cell_.offset(m));
      s.point_owner.push_back(static_cast<std::uint32_t>(i));
      s.point_code.push_back(c);
    }
  if (s.points.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("NeighbourSearch: more than 2^32 - 1 particles and images");
  s.cloud.centres = s.points;
  s.tree.buildIndex();
  const std::size_t blocks = (n + kQueryBlock - 1) / kQueryBlock;
  if (s.block_images.size() < blocks) s.block_images.resize(blocks);
  const nanoflann::SearchParams params(32, 0.0f, false);
  parallel_for_ranges(
      blocks,
      [&](std::size_t b0, std::size_t b1) {
        std::vector<std::uint64_t> row;
        for (std::size_t b = b0; b < b1; ++b) {
          std::vector<std::uint32_t>& out = s.block_partners[b];
          std::vector<std::uint8_t>& images = s.block_images[b];
          std::vector<std::uint32_t>& lower = s.block_lower[b];
          out.clear();
          images.clear();
          lower.clear();
          const std::size_t end = std::min(n, (b + 1) * kQueryBlock);
          for (std::size_t i = b * kQueryBlock; i < end; ++i) {
            const std::size_t lower_start = lower.size();
            row.clear();
            PeriodicCollector collect(static_cast<std::uint32_t>(i), (radii[i] + r_max + skin_) * (1.0 + kSearchMargin),
                                      x, radii, skin_, cell_, s.point_owner, s.point_code, row, lower);
            s.tree.findNeighbors(collect, x[i].data(), params);
            std::sort(row.begin(), row.end());
            for (const std::uint64_t key : row) {
              out.push_back(static_cast<std::uint32_t>(key >> 8));
              images.push_back(static_cast<std::uint8_t>(key & 0xffu));
            }
            std::sort(lower.begin() + static_cast<std::ptrdiff_t>(lower_start), lower.end());
            list_.offsets[i + 1] = static_cast<std::uint32_t>(row.size());
            s.lower_count[i] = static_cast<std::uint32_t>(lower.size() - lower_start);
          }
        }
      },
      1);
}

std::vector<std::array<std::uint32_t, 3>> brute_force_periodic_pairs(std::span<const Vec3> positions,
                                                                      std::span<const double> radii, double skin,
                                                                      const PeriodicCell& cell) {
  check_sizes(positions, radii);
  std::vector<std::array<std::uint32_t, 3>> pairs;
  const auto n = static_cast<std::uint32_t>(positions.size());
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t j = i + 1; j < n; ++j)
      for (std::uint8_t c = 0; c < 27; ++c) {
        const std::array<int, 3> m = image_shift(c);
        bool allowed = true;
        for (int a = 0; a < 3; ++a) allowed = allowed && (m[a] == 0 || cell.periodic[a]);
        if (!allowed) continue;
        const Vec3 image = c == kNoImage ? positions[j] : Vec3(positions[j] + cell.offset(m));
        if (is_candidate(squared_distance(positions[i], image), radii[i], radii[j], skin)) pairs.push_back({i, j, c});
      }
  return pairs;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> brute_force_pairs(
    std::span<const Vec3> positions, std::span<const double> radii, double skin) {
  check_sizes(positions, radii);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  const auto n = static_cast<std::uint32_t>(positions.size());
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t j = i + 1; j < n; ++j)
      if (is_candidate(squared_distance(positions[i], positions[j]), radii[i], radii[j], skin))
        pairs.emplace_back(i, j);
  return pairs;
}

}  // namespace dem
