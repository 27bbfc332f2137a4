#pragma once
/// \file hertz_mindlin_kernel.hpp
/// The pair loop of the Hertz-Mindlin contact (docs/model.md §11.2, with the
/// rolling models none, EPSD, EPSD2 and CDT of §11.6, without twisting), vectorised like the
/// frictionless one (contact/pair_kernel.hpp): pairs in lane blocks, the
/// arithmetic of contact/hertz_mindlin_lanes.inc, so every pair's force,
/// moments and history have the bits HertzMindlinLaw::evaluate gives it, on
/// every SIMD target (core/simd.hpp) and for every block split.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "contact/hertz_mindlin.hpp"

namespace dem {

/// What the kernel reads and writes: arrays indexed by pair (owner,
/// partner, excluded, state and the four result slots) or by particle slot.
struct HertzMindlinPairArgs {
  const std::uint32_t* owner = nullptr;
  const std::uint32_t* partner = nullptr;
  const std::uint8_t* excluded = nullptr;  ///< per pair, non-zero: left as it is; may be nullptr
  const Vec3* position = nullptr;          ///< x (length)
  const Vec3* velocity = nullptr;          ///< v (length/time)
  const Vec3* angular_velocity = nullptr;  ///< Omega (1/time)
  const double* radius = nullptr;          ///< r (length)
  const double* mass = nullptr;            ///< m (mass)
  const std::uint32_t* material = nullptr; ///< material index of each particle
  const ContactPair* pairs = nullptr;      ///< material_count² pair constants, [a * count + b]
  std::uint32_t material_count = 0;
  double time_step = 0.0;                  ///< h of the history updates (time)
  HertzMindlinModels models;               ///< rolling none, epsd, epsd2 or cdt (not others)
  HertzMindlinLaw::State* state = nullptr; ///< per pair, in and out
  KineticSlots slots;                      ///< per pair, out
};

/// Evaluates pairs [begin, end) on the target core/simd.hpp chose, in two
/// passes: lane blocks sort the pairs into apart (cleared: zero slots, a
/// fresh state) and touching (listed), then the touching ones are evaluated
/// a lane block at a time. Returns where the first pass's blocks stop; the
/// caller evaluates one by one the pairs from there to `end` and those left
/// in `touching` (fewer than a block; pair indices). Excluded pairs are
/// left alone. With the scalar loop forced, does nothing (returns begin,
/// `touching` empty). `touching` is the caller's buffer, kept between calls
/// so that a step allocates nothing.
std::size_t hertz_mindlin_pair_blocks(const HertzMindlinPairArgs& args, std::size_t begin, std::size_t end,
                                      std::vector<std::int64_t>& touching);

/// Whether the kernel covers these models (else: evaluate pair by pair).
bool hertz_mindlin_kernel_covers(const HertzMindlinModels& models);

}  // namespace dem
