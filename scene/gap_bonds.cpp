// Binder bonds by surface gap (docs/model.md §21.5).
#include "scene/gap_bonds.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <tuple>

#include "contact/neighbour_search.hpp"
#include "core/format.hpp"

namespace dem {

namespace {

/// The pairs (i < j, distance to the nearest image) closer than r_i + r_j +
/// skin, from the neighbour search (in its order).
struct NearPair {
  std::uint32_t i, j;
  double length;
};

std::vector<NearPair> near_pairs(std::span<const Vec3> positions, std::span<const double> radii, double skin,
                                 const PeriodicCell& cell) {
  // The search's candidates (|x_i - x_j| < r_i + r_j + skin) contain every
  // pair within the gap once the skin is a little wider than it.
  NeighbourSearch search(skin * (1.0 + 1e-12) + 1e-300);
  search.set_cell(cell);
  search.rebuild(positions, radii);
  const NeighbourList& l = search.list();
  std::vector<NearPair> pairs(l.pair_count());
  for (std::size_t k = 0; k < l.pair_count(); ++k) {
    const std::uint32_t i = l.owner[k], j = l.partner[k];
    const Vec3 r = positions[i] - positions[j];
    const Vec3 image = cell.any() ? cell.offset(cell.nearest_shift(r)) : Vec3(Vec3::Zero());
    pairs[k] = {std::min(i, j), std::max(i, j), (r - image).norm()};
  }
  return pairs;
}

}  // namespace

double widest_bond_gap(const BondSpec& bonds, std::span<const double> radii) {
  if (bonds.max_gap) return *bonds.max_gap;
  const double r_max = radii.empty() ? 0.0 : *std::max_element(radii.begin(), radii.end());
  if (bonds.binder_volume_fraction) return kWidestBinderGapRatio * r_max;
  // (A ratio chosen for a binder volume may be negative: overlapping pairs only.)
  return std::max(0.0, bonds.max_gap_ratio.value_or(0.0) * r_max);
}

double bridge_volume(double length, double r_i, double r_j, double a) {
  const auto inside = [a](double r) { return 2.0 * std::numbers::pi / 3.0 * (r * r * r - std::pow(r * r - a * a, 1.5)); };
  return std::max(0.0, std::numbers::pi * a * a * length - inside(r_i) - inside(r_j));
}

double binder_gap_ratio(double fraction, std::span<const Vec3> positions, std::span<const double> radii,
                        const PeriodicCell& cell, const std::function<double(std::uint32_t, std::uint32_t)>& bridge_radius) {
  const double r_max = radii.empty() ? 0.0 : *std::max_element(radii.begin(), radii.end());
  const std::vector<NearPair> pairs = near_pairs(positions, radii, kWidestBinderGapRatio * r_max, cell);
  double particles = 0.0;
  for (const double r : radii) particles += 4.0 / 3.0 * std::numbers::pi * r * r * r;
  const double target = fraction / (1.0 - fraction) * particles;
  struct Entry {
    double ratio, volume;
    std::uint32_t i, j;
  };
  std::vector<Entry> e;
  for (const auto& [i, j, length] : pairs) {
    const double ratio = (length - radii[i] - radii[j]) / std::min(radii[i], radii[j]);
    if (ratio > kWidestBinderGapRatio) continue;
    const double a = std::min(bridge_radius(i, j), std::min(radii[i], radii[j]));
    e.push_back({ratio, bridge_volume(length, radii[i], radii[j], a), i, j});
  }
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.ratio, a.i, a.j) < std::tie(b.ratio, b.i, b.j);
  });
  double sum = 0.0;
  for (const Entry& x : e) {
    sum += x.volume;
    // (Up by 1e-12: gap <= ratio min(r_i, r_j) holds for this pair after rounding.)
    if (sum >= target) return x.ratio + 1e-12;
  }
  throw std::invalid_argument("[bonds] binder_volume_fraction: " + format_g(fraction) +
                              " is more than the bridges of every pair within a gap of the smaller radius hold (" +
                              format_g(sum / (sum + particles), 4) +
                              "); give a smaller fraction or a larger bond_radius_ratio");
}

double bond_gap(const BondSpec& bonds, double r_i, double r_j) {
  return bonds.max_gap ? *bonds.max_gap : bonds.max_gap_ratio.value_or(0.0) * std::min(r_i, r_j);
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> gap_bond_pairs(const BondSpec& bonds,
                                                                    std::span<const Vec3> positions,
                                                                    std::span<const double> radii,
                                                                    const PeriodicCell& cell) {
  const double widest = widest_bond_gap(bonds, radii);
  const double r_max = radii.empty() ? 0.0 : *std::max_element(radii.begin(), radii.end());
  // (Every bond shorter than half the cell: check_bonds_in_cell; a wider
  // search would find two images of one particle.)
  if (cell.any() && !(2.0 * r_max + widest < 0.5 * cell.smallest_periodic_width()))
    throw std::invalid_argument("[bonds] " +
                                std::string(bonds.max_gap ? "max_gap"
                                            : bonds.binder_volume_fraction ? "binder_volume_fraction"
                                                                           : "max_gap_ratio") +
                                ": the longest possible bond, " + format_g(2.0 * r_max + widest) +
                                ", is not shorter than half the periodic cell of [domain] (" +
                                format_g(0.5 * cell.smallest_periodic_width()) + ")");
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (const auto& [i, j, length] : near_pairs(positions, radii, widest, cell))
    if (length - radii[i] - radii[j] <= bond_gap(bonds, radii[i], radii[j])) pairs.emplace_back(i, j);
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace dem
