#pragma once
/// \file packing_geometry.hpp
/// What the packing genesis sees of space (docs/model.md §21.3): the region
/// with its periodic axes (depth, inward normal, minimum images, wrapping)
/// and a cell list over its bounding box. Lengths in the scene's unit.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

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

/// A cell list over the bounds, cells at least `reach` wide (at most about
/// two cells a particle); ids in id order within a cell.
class CellGrid {
 public:
  CellGrid(const Confinement& c, double reach, const std::vector<Vec3>& x) : c_(c) {
    for (int a = 0; a < 3; ++a)
      n_[a] = static_cast<int>(std::clamp(std::floor((c.upper[a] - c.lower[a]) / reach), 1.0, 1024.0));
    while (static_cast<double>(n_[0]) * n_[1] * n_[2] > 2.0 * static_cast<double>(x.size()) + 64.0) {
      int& big = n_[std::max_element(n_.begin(), n_.end()) - n_.begin()];
      big = std::max(1, big / 2);
    }
    for (int a = 0; a < 3; ++a) width_[a] = (c.upper[a] - c.lower[a]) / n_[a];
    std::vector<std::uint32_t> cell(x.size());
    start_.assign(static_cast<std::size_t>(n_[0]) * n_[1] * n_[2] + 1, 0);
    for (std::size_t i = 0; i < x.size(); ++i) ++start_[(cell[i] = index(coords(x[i]))) + 1];
    for (std::size_t k = 1; k < start_.size(); ++k) start_[k] += start_[k - 1];
    ids_.resize(x.size());
    std::vector<std::uint32_t> fill(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < x.size(); ++i) ids_[fill[cell[i]]++] = static_cast<std::uint32_t>(i);
  }

  /// Calls f(j) for every particle in the cells around x (each cell once,
  /// in increasing cell index, ids in increasing order within a cell).
  template <class F>
  void around(const Vec3& x, F&& f) const {
    const std::array<int, 3> c = coords(x);
    std::array<std::uint32_t, 27> cells;
    int count = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          std::array<int, 3> k{c[0] + dx, c[1] + dy, c[2] + dz};
          bool inside = true;
          for (int a = 0; a < 3; ++a) {
            if (c_.periodic[a]) k[a] = (k[a] + n_[a]) % n_[a];
            inside = inside && k[a] >= 0 && k[a] < n_[a];
          }
          if (inside) cells[count++] = index(k);
        }
    std::sort(cells.begin(), cells.begin() + count);
    count = static_cast<int>(std::unique(cells.begin(), cells.begin() + count) - cells.begin());
    for (int m = 0; m < count; ++m)
      for (std::uint32_t q = start_[cells[m]]; q < start_[cells[m] + 1]; ++q) f(ids_[q]);
  }

 private:
  std::array<int, 3> coords(const Vec3& x) const {
    std::array<int, 3> k;
    for (int a = 0; a < 3; ++a)
      k[a] = static_cast<int>(std::clamp(std::floor((x[a] - c_.lower[a]) / width_[a]), 0.0, n_[a] - 1.0));
    return k;
  }
  std::uint32_t index(const std::array<int, 3>& k) const {
    return static_cast<std::uint32_t>((k[2] * n_[1] + k[1]) * n_[0] + k[0]);
  }

  const Confinement& c_;
  std::array<int, 3> n_{};
  Vec3 width_ = Vec3::Zero();
  std::vector<std::uint32_t> start_, ids_;
};

}  // namespace dem
