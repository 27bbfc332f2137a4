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
  const SizeSampler sampler(p.sizes);
  const double inradius = region_inradius(p.region);
  if (!(sampler.largest() <= 2.0 * inradius))
    throw InvalidKey(p.sizes.kind == SizeDistributionKind::sieve ? "sieve_sizes" : "d_max",
                     "the largest particle (" + format_g(sampler.largest()) +
                         ") does not fit in the region, whose largest inscribed sphere has diameter " +
                         format_g(2.0 * inradius));
}

}  // namespace dem
