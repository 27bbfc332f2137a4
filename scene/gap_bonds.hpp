#pragma once
/// \file gap_bonds.hpp
/// Binder bonds by surface gap ([bonds] pairs = "gap", docs/scene-format.md
/// and docs/model.md §21.5): every pair of particles whose surfaces are at
/// most a given gap apart, g_ij = |x_i - x_j| - r_i - r_j <= g_max (a
/// length, or a fraction of the smaller radius), touching and overlapping
/// pairs included (g_ij <= 0).

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "core/periodic_cell.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

/// The largest gap bonded anywhere (length): max_gap, or max_gap_ratio
/// times the largest radius of `radii` (length); with binder_volume_fraction
/// the largest radius (the widest gap it may choose: kWidestBinderGapRatio
/// times it). Requires pairs = gap.
double widest_bond_gap(const BondSpec& bonds, std::span<const double> radii);

/// The widest gap binder_volume_fraction may choose, as a fraction of the
/// smaller radius.
inline constexpr double kWidestBinderGapRatio = 1.0;

/// The volume of the binder bridge of a bond (docs/model.md §21.5): the
/// cylinder of radius a between the centres, `length` apart, less the
/// parts of the two spheres (radii r_i, r_j >= a) inside it, each
/// (2π/3)(r³ - (r² - a²)^{3/2}); 0 where the spheres overlap so far that
/// this is negative. All lengths in one unit; volume in its cube.
double bridge_volume(double length, double r_i, double r_j, double a);

/// The bond gap ratio for a binder volume fraction f = V_b / (V_b + V_p)
/// (docs/model.md §21.5): the pairs within kWidestBinderGapRatio of the
/// smaller radius (nearest images in a periodic `cell`) are taken in
/// increasing gap / min(r_i, r_j), their bridges of radius
/// bridge_radius(i, j) (at most min(r_i, r_j)) added up, and the ratio of the pair at which
/// the sum first reaches f / (1 - f) times the particles' volume V_p is
/// returned. Throws std::invalid_argument naming binder_volume_fraction if
/// all those pairs' bridges hold less.
double binder_gap_ratio(double fraction, std::span<const Vec3> positions, std::span<const double> radii,
                        const PeriodicCell& cell, const std::function<double(std::uint32_t, std::uint32_t)>& bridge_radius);

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
