// Binder bonds by surface gap (docs/model.md §21.5).
#include "scene/gap_bonds.hpp"

#include <algorithm>
#include <stdexcept>

#include "contact/neighbour_search.hpp"
#include "core/format.hpp"

namespace dem {

double widest_bond_gap(const BondSpec& bonds, std::span<const double> radii) {
  if (bonds.max_gap) return *bonds.max_gap;
  const double r_max = radii.empty() ? 0.0 : *std::max_element(radii.begin(), radii.end());
  return bonds.max_gap_ratio.value_or(0.0) * r_max;
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
    throw std::invalid_argument("[bonds] " + std::string(bonds.max_gap ? "max_gap" : "max_gap_ratio") +
                                ": the longest possible bond, " + format_g(2.0 * r_max + widest) +
                                ", is not shorter than half the periodic cell of [domain] (" +
                                format_g(0.5 * cell.smallest_periodic_width()) + ")");
  // The search's candidates (|x_i - x_j| < r_i + r_j + skin) contain every
  // pair within the gap once the skin is a little wider than it.
  NeighbourSearch search(widest * (1.0 + 1e-12) + 1e-300);
  search.set_cell(cell);
  search.rebuild(positions, radii);
  const NeighbourList& l = search.list();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::size_t k = 0; k < l.pair_count(); ++k) {
    const std::uint32_t i = l.owner[k], j = l.partner[k];
    const Vec3 r = positions[i] - positions[j];
    const Vec3 image = cell.any() ? cell.offset(cell.nearest_shift(r)) : Vec3(Vec3::Zero());
    const double gap = (r - image).norm() - radii[i] - radii[j];
    if (gap <= bond_gap(bonds, radii[i], radii[j])) pairs.emplace_back(std::min(i, j), std::max(i, j));
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace dem
