#pragma once
/// \file pair_kernel.hpp
/// The force loop of the Hertz-type pair contact (docs/model.md §4,
/// eq. 57), vectorised like the bond kernel (bonds/bond_kernel.hpp): pairs
/// in lane blocks, the arithmetic of contact/pair_lanes.inc, which
/// contact_force() runs for one pair, so every pair's force has the same
/// bits on every SIMD target (core/simd.hpp) and for every block split.

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"

namespace dem {

/// What the kernel reads and writes: arrays indexed by pair (owner,
/// partner, excluded, force) or by particle slot (position, radius).
struct HertzPairArgs {
  const std::uint32_t* owner = nullptr;
  const std::uint32_t* partner = nullptr;
  const std::uint8_t* excluded = nullptr;  ///< per pair, non-zero: not evaluated (slot left as it is); may be nullptr
  const Vec3* position = nullptr;          ///< x (length)
  const double* radius = nullptr;          ///< r (length)
  double stiffness = 0.0;                  ///< K^pp (energy)
  Vec3* force = nullptr;                   ///< out: F on the owner (force)
};

/// Forces of pairs [begin, end) into args.force, on the target
/// core/simd.hpp chose.
void hertz_pair_forces(const HertzPairArgs& args, std::size_t begin, std::size_t end);

}  // namespace dem
