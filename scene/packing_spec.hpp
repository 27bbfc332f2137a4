#pragma once
/// \file packing_spec.hpp
/// The parameters of a `[[particles]] source = "packing"` table
/// (docs/scene-format.md; the method: docs/model.md §21).

#include <cstdint>
#include <optional>

#include "scene/packing_region.hpp"
#include "scene/size_distribution.hpp"

namespace dem {

/// The solid fraction "dense" draws the particles for: an estimate of the
/// jamming point (random close packing of equal spheres, 0.64). The genesis
/// then scales the radii to where the packing jams, so the delivered solid
/// fraction is the jamming point's (docs/model.md §21.3).
inline constexpr double kDenseSolidFraction = 0.64;

/// The largest solid fraction a scene may ask for: pi / sqrt(18) = 0.7405,
/// the densest packing of equal spheres, rounded down.
inline constexpr double kMaxSolidFraction = 0.74;

/// The fewest particles a scene may ask a tile of a tiled "dense" packing
/// to hold (scene/packing_tiling.hpp): a smaller tile repeats too soon to
/// be a random packing. The tile made holds about that many: its edges
/// are rounded to whole fractions of the bounds (plan_tiles), which can
/// take it below the request (61 for 100 in tests/scenes/packing_tiled.toml).
inline constexpr std::uint64_t kMinTileParticles = 100;

struct PackingParameters {
  PackingRegion region;
  SizeDistribution sizes;
  /// The target solid fraction in (0, 0.74]; nullopt: "dense".
  std::optional<double> solid_fraction;
  std::uint64_t seed = 0;
  /// "dense" only: the particles of the periodic tile that is repeated
  /// over the region (scene/packing_tiling.hpp); 0: not tiled; nullopt:
  /// chosen by the count (tile_particles_of).
  std::optional<std::uint64_t> tile_particles;
  /// The solid fraction the particle count is chosen for.
  double target_solid_fraction() const { return solid_fraction.value_or(kDenseSolidFraction); }
};

/// Validates the region and size distribution (throws InvalidKey naming the
/// key) and that the region holds the largest particle ("d_max" or the
/// largest sieve size).
void validate_packing(const PackingParameters& p);

}  // namespace dem
