#pragma once
/// \file stress.hpp
/// The macroscopic (Love-Weber) stress tensor of the particles in a box
/// (docs/model.md §19):
///
///   sigma = -(1/V) [ sum_records w (x_i - x_j) (x) F_ij
///                    + sum_{i in box} m_i (v_i - v_bar) (x) (v_i - v_bar) ],
///
/// F_ij the force record (i, j) puts on its first end i, w = 1 if both
/// centres are in the box and 1/2 if one is (0 otherwise), v_bar the
/// mass-weighted mean velocity of the particles in the box, V the box's
/// volume. Tension is positive. The symmetric part is reported (bond
/// moments make the branch-vector sum slightly unsymmetric). Walls, meshes
/// and body forces (gravity, loads) are not records and are left out: put
/// the box inside the specimen, away from them. In a periodic cell a record
/// across a face joins x_i to the image x_j + H n of its second end
/// (PairResults::offset), and the whole cell is the natural box
/// (StressBox::cell): every record counts fully, with that branch.

#include <array>
#include <cstddef>

#include "core/types.hpp"

namespace dem {

class Collective;
class ForceField;
class ParticleStore;

/// An axis-aligned box (length): the particles whose centres lie in
/// [lower, upper) on every axis; or the whole periodic cell
/// (docs/model.md §20.3): every particle and every record, of weight 1,
/// over the cell's volume.
struct StressBox {
  Vec3 lower = Vec3::Zero();
  Vec3 upper = Vec3::Zero();
  /// The whole periodic cell, of volume cell_volume (length^3).
  bool whole_cell = false;
  double cell_volume = 0.0;
  /// The whole periodic cell of this volume.
  static StressBox cell(double volume) {
    StressBox b;
    b.whole_cell = true;
    b.cell_volume = volume;
    return b;
  }
  double volume() const { return whole_cell ? cell_volume : (upper - lower).prod(); }
  bool contains(const Vec3& x) const {
    return whole_cell || ((x.array() >= lower.array()).all() && (x.array() < upper.array()).all());
  }
};

/// One row of stress.csv.
struct StressMeasure {
  double volume = 0.0;  ///< V (length^3)
  /// sigma_xx, sigma_yy, sigma_zz, sigma_yz, sigma_xz, sigma_xy (force/length^2,
  /// tension positive): the contact and bond part plus the kinetic part.
  std::array<double, 6> sigma{};
  /// The kinetic part alone, same order.
  std::array<double, 6> kinetic{};
  double particles = 0.0;  ///< number of particle centres in the box
};

/// The stress of the box at the configuration of the last force evaluation
/// (every pair provider's result slots and record ends, HessianSource::
/// record_second_ends; providers without them add nothing). Exact sums of
/// the particles this process owns and the records it books, reduced over
/// every rank by `collective`: the same bits on any rank x thread layout.
/// Collective: every rank calls it. Throws std::invalid_argument for a box
/// of zero or negative volume.
StressMeasure measure_stress(const ForceField& forces, const ParticleStore& particles, const StressBox& box,
                             Collective& collective);

}  // namespace dem
