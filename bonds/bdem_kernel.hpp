#pragma once
/// \file bdem_kernel.hpp
/// The force loop of the BDEM bonds (docs/model.md §9 and §10),
/// vectorised like the Baker-Gonzalez one (bonds/bond_kernel.hpp): bonds in
/// lane blocks, the arithmetic of bonds/bdem_lanes.inc, which bdem_bond()
/// runs for one bond; lanes whose shear angle needs atan2 (over about 0.57
/// degrees) and the bonds after the last whole block go to the scalar
/// kernel. Every bond's force, moments and fracture flags have the same
/// bits on every SIMD target (core/simd.hpp) and for every block split.

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"

namespace dem {

struct BdemBondType;

/// Bit flags the kernel writes per live bond.
inline constexpr std::uint8_t kBdemOverStrength = 1;  ///< over strength (10.2)
inline constexpr std::uint8_t kBdemTurned = 2;        ///< relative rotation past 2pi/3 (9.1)

/// What the kernel reads and writes; arrays indexed by bond (first, second,
/// rest_direction, rest_length, type, live and the outputs) or by particle
/// slot (position, attitude).
struct BdemKernelArgs {
  const std::uint32_t* first = nullptr;
  const std::uint32_t* second = nullptr;
  const Vec3* position = nullptr;        ///< x (length)
  /// Per bond: the second end is read at x_j + offset[b] (its image across
  /// a periodic face, core/periodic_cell.hpp); nullptr: at x_j.
  const Vec3* offset = nullptr;
  const Quat* attitude = nullptr;        ///< relative attitudes Q = R R0^T
  const Vec3* rest_direction = nullptr;  ///< d0
  const double* rest_length = nullptr;   ///< l0 (length)
  const std::uint32_t* type = nullptr;
  const BdemBondType* types = nullptr;
  const std::uint8_t* live = nullptr;    ///< 0: failed, nothing is written for it
  Vec3* force = nullptr;          ///< out: F on the first end (force)
  Vec3* moment = nullptr;         ///< out: spatial moment on the first end (force length)
  Vec3* moment_second = nullptr;  ///< out: spatial moment on the second end
  std::uint8_t* flags = nullptr;  ///< out: kBdemOverStrength | kBdemTurned
};

/// Evaluates the live bonds of [begin, end); returns how many are over
/// strength. Particle slots must be below 2^31 (32-bit signed gather
/// indices).
std::size_t bdem_bond_forces(const BdemKernelArgs& args, std::size_t begin, std::size_t end);

}  // namespace dem
