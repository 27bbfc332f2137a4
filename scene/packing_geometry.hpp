#pragma once
/// \file packing_geometry.hpp
/// What the packing genesis sees of space (docs/model.md §21.3): the region
/// with its periodic axes (depth, inward normal, minimum images, wrapping)
/// (its pairs are found by the engine's neighbour list,
/// contact/neighbour_search.hpp). Lengths in the scene's unit.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "contact/neighbour_search.hpp"
#include "core/periodic_cell.hpp"
#include "core/types.hpp"
#include "scene/packing_region.hpp"

namespace dem {

/// The region with its periodic axes (true: a periodic cell along that
/// axis, whose faces do not confine; the region is then a box).
struct Confinement {
  const PackingRegion& region;
  std::array<bool, 3> periodic;
  Vec3 lower, upper;  ///< the bounds (a periodic box: the cell)

  /// The distance to the confining boundary, positive inside (region_depth,
  /// ignoring the faces of periodic axes; +inf for a fully periodic box).
  double depth(const Vec3& x) const {
    if (region.kind != PackingRegionKind::box) return region_depth(region, x);
    double d = INFINITY;
    for (int a = 0; a < 3; ++a)
      if (!periodic[a]) d = std::min({d, x[a] - lower[a], upper[a] - x[a]});
    return d;
  }
  /// The unit inward normal at x (the depth's gradient by central differences).
  Vec3 inward(const Vec3& x) const {
    const double h = 1e-7 * (upper - lower).maxCoeff();
    Vec3 g = Vec3::Zero();
    for (int a = 0; a < 3; ++a) {
      Vec3 e = Vec3::Zero();
      e[a] = h;
      g[a] = periodic[a] ? 0.0 : depth(x + e) - depth(x - e);
    }
    const double n = g.norm();
    return n > 0.0 ? Vec3(g / n) : Vec3::Zero();
  }
  /// Calls f(overlap, n) for each confining surface that a sphere of radius
  /// a at x crosses: overlap = a - distance > 0, n its unit inward normal.
  /// The surfaces are apart (a box's faces, a cylinder's mantle and end
  /// caps), so the harmonic wall energy is smooth along edges and corners;
  /// a sphere's or torus's one surface by its depth.
  template <class F>
  void walls(const Vec3& x, double a, F&& f) const {
    const auto touch = [&](double distance, const Vec3& n) {
      if (a - distance > 0.0) f(a - distance, n);
    };
    switch (region.kind) {
      case PackingRegionKind::box:
        for (int k = 0; k < 3; ++k)
          if (!periodic[k]) {
            touch(x[k] - lower[k], Vec3::Unit(k));
            touch(upper[k] - x[k], -Vec3::Unit(k));
          }
        return;
      case PackingRegionKind::cylinder: {
        const Vec3 r = x - region.base;
        const double s = r.dot(region.axis);
        const Vec3 radial = r - s * region.axis;
        const double rho = radial.norm();
        touch(s, region.axis);
        touch(region.height - s, -region.axis);
        if (rho > 0.0) touch(region.radius - rho, -radial / rho);
        return;
      }
      default:
        touch(region_depth(region, x), inward(x));
    }
  }
  /// The shortest image of a separation on the periodic axes.
  Vec3 image(Vec3 r) const {
    for (int a = 0; a < 3; ++a)
      if (periodic[a]) r[a] -= (upper[a] - lower[a]) * std::nearbyint(r[a] / (upper[a] - lower[a]));
    return r;
  }
  /// x wrapped into [lower, upper) on the periodic axes.
  Vec3 wrap(Vec3 x) const {
    for (int a = 0; a < 3; ++a)
      if (periodic[a]) {
        const double l = upper[a] - lower[a];
        x[a] -= l * std::floor((x[a] - lower[a]) / l);
        if (x[a] >= upper[a]) x[a] = lower[a];
      }
    return x;
  }
};

/// Where pair k of the neighbour list reads its partner: x_j, or in a
/// periodic cell the image x_j + H n of the pair's image code (§20.2).
inline Vec3 partner_image(const NeighbourList& list, const PeriodicCell& cell, const std::vector<Vec3>& x,
                          std::size_t k) {
  const Vec3& xj = x[list.partner[k]];
  return list.image.empty() || list.image[k] == kNoImage ? xj : Vec3(xj + cell.offset(image_shift(list.image[k])));
}

}  // namespace dem
