// Validation of a packing's parameters as a whole (docs/model.md §21).
#include "scene/packing_spec.hpp"

#include <cmath>

#include "core/format.hpp"
#include "scene/invalid_key.hpp"

namespace dem {

void validate_packing(const PackingParameters& p) {
  validate_region(p.region);
  validate_size_distribution(p.sizes);
  if (p.solid_fraction && !(*p.solid_fraction > 0.0 && *p.solid_fraction <= kMaxSolidFraction))
    throw InvalidKey("solid_fraction", "expected a number in (0, 0.74] (0.7405 is the densest packing of equal "
                                       "spheres) or \"dense\", got " + format_g(*p.solid_fraction));
  if (p.tile_particles && *p.tile_particles > 0) {
    if (p.solid_fraction)
      throw InvalidKey("tile_particles", "applies to solid_fraction = \"dense\" only (a numeric solid_fraction is "
                                         "placed in the whole region at once)");
    if (*p.tile_particles < kMinTileParticles)
      throw InvalidKey("tile_particles", "expected 0 (no tiling) or at least " + std::to_string(kMinTileParticles) +
                                             " particles a tile, got " + std::to_string(*p.tile_particles));
  }
  const SizeSampler sampler(p.sizes);
  const double inradius = region_inradius(p.region);
  if (!(sampler.largest() <= 2.0 * inradius))
    throw InvalidKey(p.sizes.kind == SizeDistributionKind::sieve ? "sieve_sizes" : "d_max",
                     "the largest particle (" + format_g(sampler.largest()) +
                         ") does not fit in the region, whose largest inscribed sphere has diameter " +
                         format_g(2.0 * inradius));
}

}  // namespace dem
