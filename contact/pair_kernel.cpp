// The vectorised Hertz pair force loop (contact/pair_kernel.hpp): compiled
// once per SIMD target by Highway's foreach_target.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "contact/pair_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "contact/contact_potential.hpp"
#include "contact/pair_kernel.hpp"
#include "core/simd.hpp"

#ifndef DEM_PAIR_KERNEL_SHARED
#define DEM_PAIR_KERNEL_SHARED
namespace dem::pair_kernel_detail {
inline void scalar_pair(const HertzPairArgs& a, std::size_t k) {
  if (a.excluded != nullptr && a.excluded[k] != 0) return;
  const std::uint32_t i = a.owner[k], j = a.partner[k];
  a.force[k] = contact_force(a.position[i], a.position[j], a.radius[i], a.radius[j], a.stiffness);
}
}  // namespace dem::pair_kernel_detail
#endif  // DEM_PAIR_KERNEL_SHARED

HWY_BEFORE_NAMESPACE();
namespace dem {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#include "contact/pair_lanes.inc"

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

struct VecPairOps {
  static constexpr bool kScalar = false;
  D d;
  V c(double v) const { return hn::Set(d, v); }
  V sqrt(V x) const { return hn::Sqrt(x); }
  M touching(V r2, V reach2, V r) const { return hn::And(r2 < reach2, r > hn::Zero(d)); }
  V select(M m, V v) const { return hn::IfThenElseZero(m, v); }
};

constexpr std::size_t kMaxLanes = 8;

void HertzPairForcesRange(const HertzPairArgs& a, std::size_t begin, std::size_t end) {
  const D d;
  const std::size_t n = hn::Lanes(d);
  alignas(64) double lane_in[8][kMaxLanes];  // x_i, x_j, r_i, r_j
  alignas(64) double lane_out[3][kMaxLanes];
  const V k_contact = hn::Set(d, a.stiffness);
  VecPairOps ops{d};
  std::size_t k = begin;
  for (; k + n <= end; k += n) {
    bool any_excluded = false;
    // The partners are scattered: their lines are fetched a few blocks ahead.
    constexpr std::size_t kAhead = 64;
    if (k + kAhead + n <= end)
      for (std::size_t l = 0; l < n; ++l) {
        const std::uint32_t j = a.partner[k + kAhead + l];
        __builtin_prefetch(&a.position[j]);
        __builtin_prefetch(&a.radius[j]);
      }
    for (std::size_t l = 0; l < n; ++l) {
      const std::uint32_t i = a.owner[k + l], j = a.partner[k + l];
      const Vec3& xi = a.position[i];
      const Vec3& xj = a.position[j];
      lane_in[0][l] = xi[0];
      lane_in[1][l] = xi[1];
      lane_in[2][l] = xi[2];
      lane_in[3][l] = xj[0];
      lane_in[4][l] = xj[1];
      lane_in[5][l] = xj[2];
      lane_in[6][l] = a.radius[i];
      lane_in[7][l] = a.radius[j];
      if (a.excluded != nullptr && a.excluded[k + l] != 0) any_excluded = true;
    }
    const V xi[3] = {hn::Load(d, lane_in[0]), hn::Load(d, lane_in[1]), hn::Load(d, lane_in[2])};
    const V xj[3] = {hn::Load(d, lane_in[3]), hn::Load(d, lane_in[4]), hn::Load(d, lane_in[5])};
    V f[3];
    hertz_force_lanes(xi, xj, hn::Load(d, lane_in[6]), hn::Load(d, lane_in[7]), k_contact, f, ops);
    if (!any_excluded) {
      // The pairs' slots are consecutive Vec3: one interleaved store.
      hn::StoreInterleaved3(f[0], f[1], f[2], d, a.force[k].data());
      continue;
    }
    for (int c = 0; c < 3; ++c) hn::Store(f[c], d, lane_out[c]);
    for (std::size_t l = 0; l < n; ++l) {
      if (a.excluded[k + l] != 0) continue;
      a.force[k + l] = Vec3(lane_out[0][l], lane_out[1][l], lane_out[2][l]);
    }
  }
  for (; k < end; ++k) pair_kernel_detail::scalar_pair(a, k);
}

}  // namespace HWY_NAMESPACE
}  // namespace dem
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace dem {

HWY_EXPORT(HertzPairForcesRange);

void hertz_pair_forces(const HertzPairArgs& args, std::size_t begin, std::size_t end) {
  if (simd_scalar_forced()) {
    for (std::size_t k = begin; k < end; ++k) pair_kernel_detail::scalar_pair(args, k);
    return;
  }
  HWY_DYNAMIC_DISPATCH(HertzPairForcesRange)(args, begin, end);
}

}  // namespace dem
#endif
