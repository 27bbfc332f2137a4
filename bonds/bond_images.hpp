#pragma once
/// \file bond_images.hpp
/// Bonds across the faces of a periodic cell (core/periodic_cell.hpp,
/// docs/model.md §20.2): each bond reads its second end at the minimum
/// image x_j + H n, n = round(H^-1 (x_i - x_j)) on the periodic axes, found
/// again wherever its ends may have been put back through a face (at the
/// records' rebuilds and re-orderings) and after a restart. A bond shorter
/// than half the cell (the scene refuses longer ones) keeps the image it
/// had, so n is the integer image shift the bond carries, with no state to
/// keep across re-ordering or checkpoints.

#include <array>
#include <cmath>
#include <vector>

#include "bonds/bond_list.hpp"
#include "core/parallel.hpp"
#include "core/particle_store.hpp"
#include "core/periodic_cell.hpp"

namespace dem {

/// The image shifts of a bond provider's bonds and their offsets: the
/// shifts n found by minimum image only when the bonds or their ends may
/// have changed (`stale`: after a re-ordering, a rebuild of the records, at
/// which the stepper puts particles back through the faces), the offsets
/// H n again only when the shifts or the cell changed (`cell_changed`),
/// so that a step costs nothing for them in between.
struct BondImages {
  std::vector<std::array<int, 3>> shift;  ///< per bond: n
  std::vector<Vec3> offset;               ///< per bond: H n (empty: no periodic axis)
  bool stale = true;
  bool cell_changed = true;

  void update(const BondList& bonds, const ParticleStore& s, const PeriodicCell& cell) {
    if (!cell.any()) {
      shift.clear();
      offset.clear();
      return;
    }
    if (stale || shift.size() != bonds.size()) {
      find_shifts(bonds, s, cell);
      stale = false;
      cell_changed = true;
    }
    if (!cell_changed) return;
    offset.resize(bonds.size());
    parallel_for_ranges(bonds.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t b = begin; b < end; ++b) {
        const std::array<int, 3>& n = shift[b];
        offset[b] = (n[0] | n[1] | n[2]) == 0 ? Vec3(Vec3::Zero()) : cell.offset(n);
      }
    });
    cell_changed = false;
  }

 private:
  /// n = round(H^-1 (x_i - x_j)) (PeriodicCell::nearest_shift) with the
  /// inverse computed once, and for a box one product per axis; rounding
  /// to the nearest integer, halves away from zero (a bond shorter than
  /// half the cell is never near a half).
  void find_shifts(const BondList& bonds, const ParticleStore& s, const PeriodicCell& cell) {
    shift.resize(bonds.size());
    const Mat3 inverse = cell.edges.inverse();
    const bool box = (cell.edges - Mat3(cell.edges.diagonal().asDiagonal())).isZero(0.0);
    const auto nearest = [](double x) { return static_cast<int>(x < 0.0 ? x - 0.5 : x + 0.5); };
    parallel_for_ranges(bonds.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t b = begin; b < end; ++b) {
        const Vec3 d = s.position[bonds.first[b]] - s.position[bonds.second[b]];
        const Vec3 f = box ? Vec3(d.cwiseProduct(inverse.diagonal())) : Vec3(inverse * d);
        std::array<int, 3>& n = shift[b];
        for (int a = 0; a < 3; ++a) n[a] = cell.periodic[a] ? nearest(f[a]) : 0;
      }
    });
  }
};

}  // namespace dem
