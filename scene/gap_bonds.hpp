#pragma once
/// \file gap_bonds.hpp
/// Binder bonds by surface gap ([bonds] pairs = "gap", docs/scene-format.md
/// and docs/model.md §21.5): every pair of particles whose surfaces are at
/// most a given gap apart, g_ij = |x_i - x_j| - r_i - r_j <= g_max (a
/// length, or a fraction of the smaller radius), touching and overlapping
/// pairs included (g_ij <= 0).

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/periodic_cell.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

/// The largest gap bonded anywhere (length): max_gap, or max_gap_ratio
/// times the largest radius of `radii` (length). Requires pairs = gap.
double widest_bond_gap(const BondSpec& bonds, std::span<const double> radii);

/// The largest gap bonded between particles of radii r_i, r_j (length).
double bond_gap(const BondSpec& bonds, double r_i, double r_j);

/// The bonded pairs (i < j, sorted) of particles at `positions` (length)
/// with `radii` (length), both of one length n: every pair with g_ij <=
/// bond_gap(r_i, r_j), measured to the nearest image in a periodic `cell`.
/// Found by the neighbour search (contact/neighbour_search.hpp) with skin
/// widest_bond_gap, then filtered exactly. Throws std::invalid_argument if
/// the widest bond reaches beyond half the cell's smallest periodic width.
std::vector<std::pair<std::uint32_t, std::uint32_t>> gap_bond_pairs(const BondSpec& bonds,
                                                                    std::span<const Vec3> positions,
                                                                    std::span<const double> radii,
                                                                    const PeriodicCell& cell);

}  // namespace dem
