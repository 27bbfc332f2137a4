#pragma once
/// \file bond_kernel.hpp
/// The force loop of the Baker-Gonzalez bonds (docs/model.md §4),
/// vectorised: bonds in lane blocks (one bond a lane, as many lanes as the
/// target has doubles: 8 on AVX-512, 4 on AVX2, 2 on SSE4), the arithmetic
/// of bonds/bond_lanes.inc, which bond_all() runs for one bond. Lanes whose
/// rotation angle needs atan2 (relative rotation over about 1.1 degrees)
/// and the bonds after the last whole block are computed by the scalar
/// kernel, in bond order. The result of every bond is bitwise the same for
/// every target (core/simd.hpp), every block split and every thread count.

#include <cstddef>
#include <cstdint>

#include "bonds/bond_list.hpp"
#include "core/types.hpp"

namespace dem {

/// What the kernel reads and writes; arrays indexed by bond (first,
/// second, rest_length, rest_direction, type, force, moment) or by
/// particle slot (position, attitude, reference_attitude).
struct BondKernelArgs {
  const std::uint32_t* first = nullptr;
  const std::uint32_t* second = nullptr;
  const Vec3* position = nullptr;             ///< x (length)
  /// Per bond: the second end is read at x_j + offset[b] (its image across
  /// a periodic face, core/periodic_cell.hpp); nullptr: at x_j.
  const Vec3* offset = nullptr;
  const Quat* attitude = nullptr;             ///< R as unit quaternions
  const Quat* reference_attitude = nullptr;   ///< R0; nullptr when every R0 is the identity
  const double* rest_length = nullptr;        ///< r0 (length); the kernel takes 1.0 / r0 as bond_all does
  const Vec3* rest_direction = nullptr;       ///< d0
  const std::uint32_t* type = nullptr;        ///< stiffness type of each bond
  const BondStiffness* stiffness_types = nullptr;
  Vec3* force = nullptr;   ///< out: F on the first end (force)
  Vec3* moment = nullptr;  ///< out: spatial moment on the first end (force length)
};

/// Force and first-end moment of bonds [begin, end) into args.force and
/// args.moment, on the target core/simd.hpp chose.
/// Particle slots must be below 2^31 (they are read as 32-bit signed
/// indices for the vector gathers).
void bond_forces(const BondKernelArgs& args, std::size_t begin, std::size_t end);

}  // namespace dem
