#pragma once
/// \file bond_images.hpp
/// Bonds across the faces of a periodic cell (core/periodic_cell.hpp,
/// docs/model.md §20): each bond reads its second end at the minimum image
/// x_j + H n, n = round(H^-1 (x_i - x_j)) on the periodic axes, found again
/// at every evaluation. A bond shorter than half the cell along every
/// periodic axis (the scene refuses longer ones) keeps the image it had at
/// the previous step, so the shift is the integer image shift the bond
/// carries, without any state to keep across re-ordering or checkpoints.

#include <vector>

#include "bonds/bond_list.hpp"
#include "core/parallel.hpp"
#include "core/particle_store.hpp"
#include "core/periodic_cell.hpp"

namespace dem {

/// Per bond, H n of its second end's minimum image (length) into `out`;
/// `out` emptied without a periodic axis. Parallel over bonds.
inline void bond_image_offsets(const BondList& bonds, const ParticleStore& s, const PeriodicCell& cell,
                               std::vector<Vec3>& out) {
  if (!cell.any()) {
    out.clear();
    return;
  }
  out.resize(bonds.size());
  parallel_for_ranges(bonds.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t b = begin; b < end; ++b)
      out[b] = cell.offset(cell.nearest_shift(s.position[bonds.first[b]] - s.position[bonds.second[b]]));
  });
}

}  // namespace dem
