#pragma once
/// \file periodic_cell.hpp
/// A periodic cell (docs/model.md §20): the parallelepiped spanned by three
/// edge vectors from an origin, periodic along some of its axes. A particle
/// that leaves through a periodic face comes back through the opposite one,
/// and records (contact pairs, bonds) act across periodic faces by the
/// minimum image: a record's second end is seen at its image x_j + H n,
/// where H is the matrix of edge vectors (columns) and n an integer vector
/// with n_a = 0 on non-periodic axes, and it moves there at v_j + Hdot n
/// (Lees-Edwards, for a deforming cell).
///
/// A record's image is coded in one byte, 13 + n_0 + 3 n_1 + 9 n_2 for
/// n in {-1, 0, 1}^3 (kNoImage = 13: the particle itself); a cell of at
/// least two interaction ranges along each periodic axis (checked where a
/// scene is built) leaves at most one image of any particle within reach of
/// another, so one byte holds every record's image.

#include <array>
#include <cmath>
#include <cstdint>

#include "core/types.hpp"

namespace dem {

/// The image code of a record whose second end is the particle itself.
inline constexpr std::uint8_t kNoImage = 13;

/// The integer shift n of an image code (each component -1, 0 or 1).
inline std::array<int, 3> image_shift(std::uint8_t code) {
  const int c = code;
  return {c % 3 - 1, (c / 3) % 3 - 1, c / 9 - 1};
}

/// The image code of a shift n in {-1, 0, 1}^3.
inline std::uint8_t image_code(const std::array<int, 3>& n) {
  return static_cast<std::uint8_t>(13 + n[0] + 3 * n[1] + 9 * n[2]);
}

struct PeriodicCell {
  /// The corner the edges start from (length).
  Vec3 origin = Vec3::Zero();
  /// H: column a is the edge vector of axis a (length); a box
  /// [lower, upper) has H = diag(upper - lower) and origin = lower.
  Mat3 edges = Mat3::Identity();
  /// Which axes are periodic.
  std::array<bool, 3> periodic{false, false, false};
  /// Hdot = L H: the rate of the edge vectors (length/time) of a cell
  /// deformed at the velocity gradient L; zero for a fixed cell.
  Mat3 edge_rate = Mat3::Zero();

  /// A box [lower, upper) with the given periodic axes.
  static PeriodicCell box(const Vec3& lower, const Vec3& upper, std::array<bool, 3> periodic) {
    PeriodicCell c;
    c.origin = lower;
    c.edges = (upper - lower).asDiagonal();
    c.periodic = periodic;
    return c;
  }

  /// True if some axis is periodic.
  bool any() const { return periodic[0] || periodic[1] || periodic[2]; }
  /// The volume |det H| (length^3).
  double volume() const { return std::abs(edges.determinant()); }
  /// The distance between the two faces across axis a (length): V / |e_b x e_c|.
  double width(int a) const {
    const Vec3 n = edges.col((a + 1) % 3).cross(edges.col((a + 2) % 3));
    return volume() / n.norm();
  }
  /// The smallest width over the periodic axes (+inf without one).
  double smallest_periodic_width() const {
    double w = INFINITY;
    for (int a = 0; a < 3; ++a)
      if (periodic[a]) w = std::min(w, width(a));
    return w;
  }
  /// Fractional coordinates H^-1 (x - origin).
  Vec3 fractional(const Vec3& x) const { return edges.inverse() * (x - origin); }
  /// H n: where the image of shift n lies from the particle (length). Zero
  /// components of n add nothing, so a box's image offsets are exact
  /// multiples of its edge lengths.
  Vec3 offset(const std::array<int, 3>& n) const {
    Vec3 o = Vec3::Zero();
    for (int a = 0; a < 3; ++a)
      if (n[a] != 0) o += static_cast<double>(n[a]) * edges.col(a);
    return o;
  }
  /// Hdot n: how fast that image moves relative to the particle (length/time).
  Vec3 velocity_offset(const std::array<int, 3>& n) const {
    Vec3 o = Vec3::Zero();
    for (int a = 0; a < 3; ++a)
      if (n[a] != 0) o += static_cast<double>(n[a]) * edge_rate.col(a);
    return o;
  }
  /// The shift n, on the periodic axes, that brings the vector d (x_i - x_j,
  /// length) to its minimum image d - H n: n = round(H^-1 d).
  std::array<int, 3> nearest_shift(const Vec3& d) const {
    const Vec3 f = edges.inverse() * d;
    std::array<int, 3> n{0, 0, 0};
    for (int a = 0; a < 3; ++a)
      if (periodic[a]) n[a] = static_cast<int>(std::nearbyint(f[a]));
    return n;
  }
  /// How many cells x lies beyond the cell along each periodic axis:
  /// floor of its fractional coordinate (0 inside).
  std::array<int, 3> cells_out(const Vec3& x) const {
    const Vec3 f = fractional(x);
    std::array<int, 3> m{0, 0, 0};
    for (int a = 0; a < 3; ++a)
      if (periodic[a]) m[a] = static_cast<int>(std::floor(f[a]));
    return m;
  }
};

}  // namespace dem
