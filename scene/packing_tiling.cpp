// Large "dense" packings by tiling a periodic one (docs/model.md §21.8).
#include "scene/packing_tiling.hpp"

#include <algorithm>
#include <cmath>

#include "core/format.hpp"
#include "scene/invalid_key.hpp"
#include "scene/size_distribution.hpp"

namespace dem {

std::uint64_t tile_particles_of(const PackingParameters& p, std::uint64_t region_count) {
  if (p.tile_particles) return *p.tile_particles;
  return !p.solid_fraction && region_count > kAutoTileAbove ? kDefaultTileParticles : 0;
}

TilePlan plan_tiles(const PackingParameters& p, std::uint64_t tile_particles, std::uint64_t region_count) {
  const auto [lower, upper] = region_bounds(p.region);
  // The tile's volume: the region's per drawn particle, times its count.
  const double edge = std::cbrt(region_volume(p.region) * double(tile_particles) / double(std::max<std::uint64_t>(region_count, 1)));
  TilePlan plan;
  for (int a = 0; a < 3; ++a) {
    const double width = upper[a] - lower[a];
    plan.count[a] = static_cast<std::uint32_t>(std::clamp(std::round(width / edge), 1.0, 1e6));
    plan.side[a] = width / plan.count[a];
  }
  const double largest = SizeSampler(p.sizes).largest();
  if (!(plan.side.minCoeff() >= 3.0 * largest))
    throw InvalidKey("tile_particles", "a tile of " + std::to_string(tile_particles) + " particles has an edge of " +
                                           format_g(plan.side.minCoeff()) +
                                           ", less than 3 largest diameters (" + format_g(3.0 * largest) +
                                           "); give more tile_particles, or 0 for no tiling");
  plan.tile.region.kind = PackingRegionKind::box;
  plan.tile.region.lower = Vec3::Zero();
  plan.tile.region.upper = plan.side;
  plan.tile.sizes = p.sizes;
  plan.tile.seed = p.seed;
  plan.tile.tile_particles = 0;
  return plan;
}

void repeat_tile(const TilePlan& plan, const Confinement& c, const std::vector<double>& d,
                 const std::vector<Vec3>& x, std::vector<double>& d_out, std::vector<Vec3>& x_out) {
  for (std::uint32_t k = 0; k < plan.count[2]; ++k)
    for (std::uint32_t j = 0; j < plan.count[1]; ++j)
      for (std::uint32_t i = 0; i < plan.count[0]; ++i) {
        const Vec3 offset = c.lower + Vec3(i * plan.side[0], j * plan.side[1], k * plan.side[2]);
        for (std::size_t q = 0; q < d.size(); ++q) {
          const Vec3 y = c.wrap(offset + x[q]);
          if (c.depth(y) < 0.5 * d[q]) continue;
          d_out.push_back(d[q]);
          x_out.push_back(y);
        }
      }
}

}  // namespace dem
