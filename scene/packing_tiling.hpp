#pragma once
/// \file packing_tiling.hpp
/// Large "dense" packings by tiling (docs/model.md §21.8): the jamming
/// genesis is run once in a small periodic box, the tile, and its
/// particles are repeated over the region's bounds, keeping those wholly
/// inside the region. This is YADE's randomDensePack with `spheresInCell`
/// (a periodic packing repeated by `SpherePack.cellFill`, then clipped by
/// the predicate). The genesis costs what the tile costs, whatever the
/// specimen's size; the price is a packing periodic with the tile's edges.

#include <array>
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "scene/packing_geometry.hpp"
#include "scene/packing_spec.hpp"

namespace dem {

/// Particles a tile holds when `tile_particles` is not given (about: the
/// tile's edges divide the region's bounds).
inline constexpr std::uint64_t kDefaultTileParticles = 2000;
/// Without `tile_particles`, a "dense" packing is tiled when it would hold
/// more particles than this (the genesis of the whole region costs tens of
/// minutes at 10^4 particles; docs/model.md §21.3).
inline constexpr std::uint64_t kAutoTileAbove = 20000;

/// How a "dense" packing is tiled.
struct TilePlan {
  /// The tile: the box [0, side) periodic on every axis, the region's
  /// size distribution and seed, solid_fraction "dense".
  PackingParameters tile;
  Vec3 side = Vec3::Zero();              ///< the tile's edges (length): the bounds' edges / count
  std::array<std::uint32_t, 3> count{};  ///< tiles along x, y, z
};

/// The particles a tile of `p` holds: p.tile_particles if given (0: not
/// tiled), else kDefaultTileParticles for a "dense" packing whose region
/// holds more than kAutoTileAbove drawn particles (`region_count`), else 0.
std::uint64_t tile_particles_of(const PackingParameters& p, std::uint64_t region_count);

/// The tiles over the region's bounds for tiles of about `tile_particles`
/// (the region holding `region_count` at the drawn solid fraction): edges
/// near cbrt(tile volume), each a whole fraction of the bounds' edge, so
/// that a periodic box is filled exactly. Throws InvalidKey naming
/// "tile_particles" for a tile narrower than 3 largest diameters.
TilePlan plan_tiles(const PackingParameters& p, std::uint64_t tile_particles, std::uint64_t region_count);

/// Repeats the tile's particles (diameters `d`, centres `x` in
/// [0, side)) over the tiles of `plan`, tile by tile (x fastest, then y,
/// z), each tile's particles in their order, and keeps those whose sphere
/// lies wholly inside `c` (the faces of periodic axes do not count;
/// centres wrapped on them). Appends to `d_out`, `x_out`.
void repeat_tile(const TilePlan& plan, const Confinement& c, const std::vector<double>& d,
                 const std::vector<Vec3>& x, std::vector<double>& d_out, std::vector<Vec3>& x_out);

}  // namespace dem
