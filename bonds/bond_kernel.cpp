// The vectorised Baker-Gonzalez force loop (bonds/bond_kernel.hpp): this
// file is compiled once per SIMD target by Highway's foreach_target.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bonds/bond_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "bonds/bond_kernel.hpp"
#include "bonds/bond_potential.hpp"
#include "core/simd.hpp"

// Shared by every target's pass through this file: defined once.
#ifndef DEM_BOND_KERNEL_SHARED
#define DEM_BOND_KERNEL_SHARED
namespace dem {
namespace bond_kernel_detail {

/// Bond b's inputs as scalars (the scalar path, the lane fill and the fix-ups).
inline lanes::BondLaneInput<double> bond_input(const BondKernelArgs& a, std::size_t b) {
  const std::uint32_t i = a.first[b], j = a.second[b];
  Quat qi = a.attitude[i], qj = a.attitude[j];
  if (a.reference_attitude != nullptr) {
    qi = qi * a.reference_attitude[i].conjugate();
    qj = qj * a.reference_attitude[j].conjugate();
  }
  const Vec3& xi = a.position[i];
  const Vec3 xj = a.offset == nullptr ? a.position[j] : Vec3(a.position[j] + a.offset[b]);
  const Vec3& d0 = a.rest_direction[b];
  const BondStiffness& k = a.stiffness_types[a.type[b]];
  return {{xi[0], xi[1], xi[2]},
          {xj[0], xj[1], xj[2]},
          {qi.w(), qi.x(), qi.y(), qi.z()},
          {qj.w(), qj.x(), qj.y(), qj.z()},
          {d0[0], d0[1], d0[2]},
          1.0 / a.rest_length[b],
          k.bending,
          k.axial,
          k.shear};
}

inline void scalar_bond(const BondKernelArgs& a, std::size_t b) {
  const lanes::BondLaneInput<double> in = bond_input(a, b);
  lanes::BondLaneOutput<double> out;
  lanes::ScalarOps<double> ops;
  lanes::bond_lanes<false>(in, out, ops);
  a.force[b] = Vec3(out.force_i[0], out.force_i[1], out.force_i[2]);
  a.moment[b] = Vec3(out.moment_i[0], out.moment_i[1], out.moment_i[2]);
}

}  // namespace bond_kernel_detail
}  // namespace dem
#endif  // DEM_BOND_KERNEL_SHARED

HWY_BEFORE_NAMESPACE();
namespace dem {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#include "bonds/bond_ends_lanes.inc"
#include "bonds/bond_lanes.inc"

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;

/// bond_lanes' Ops for vectors: the series for every lane; `fix` marks the
/// lanes whose angle needs atan2 (the scalar kernel redoes them).
struct VecOps {
  D d;
  hn::Mask<D> fix;
  V c(double v) const { return hn::Set(d, v); }
  V sqrt(V x) const { return hn::Sqrt(x); }
  V sign(V w) const { return hn::IfThenElse(w >= hn::Zero(d), hn::Set(d, 1.0), hn::Set(d, -1.0)); }
  V theta_factor(V s2, V w2, V w) {
    fix = hn::Not(s2 < hn::Set(d, 1e-4) * w2);
    return bond_lanes_series_factor(s2, w2, w, *this);
  }
};

constexpr std::size_t kMaxLanes = 8;
constexpr int kInputs = 21;  // doubles per bond in BondLaneInput

void BondForcesRange(const BondKernelArgs& a, std::size_t begin, std::size_t end) {
  const D d;
  const std::size_t n = hn::Lanes(d);
  static_assert(sizeof(lanes::BondLaneInput<double>) == kInputs * sizeof(double));
  alignas(64) double lane_in[kInputs][kMaxLanes];
  alignas(64) double lane_fix[kMaxLanes];
  // With identity reference attitudes the inputs are gathered straight
  // from the particle arrays by index (gather_bond_ends); otherwise lane by
  // lane through bond_input.
  const hn::Rebind<std::int64_t, D> di;
  const hn::Rebind<std::int32_t, D> d32;
  const bool direct = a.reference_attitude == nullptr;
  const double* stiff = &a.stiffness_types[0].bending;
  static_assert(sizeof(BondStiffness) == 3 * sizeof(double));
  std::size_t b = begin;
  for (; b + n <= end; b += n) {
    BondLaneInput<V> in;
    if (direct) {
      gather_bond_ends(d, a.first, a.second, a.position, a.offset, a.attitude, a.rest_direction, b, end, in);
      const auto t = hn::PromoteTo(di, hn::LoadU(d32, reinterpret_cast<const std::int32_t*>(a.type + b)));
      const auto t3 = hn::Add(hn::ShiftLeft<1>(t), t);
      in.inv_r0 = hn::Set(d, 1.0) / hn::LoadU(d, a.rest_length + b);
      in.k_bending = hn::GatherIndex(d, stiff, t3);
      in.k_axial = hn::GatherIndex(d, stiff + 1, t3);
      in.k_shear = hn::GatherIndex(d, stiff + 2, t3);
    } else {
      for (std::size_t l = 0; l < n; ++l) {
        const lanes::BondLaneInput<double> s = bond_kernel_detail::bond_input(a, b + l);
        const double* flat = &s.x_i[0];
        for (int f = 0; f < kInputs; ++f) lane_in[f][l] = flat[f];
      }
      V* flat_in = &in.x_i[0];
      for (int f = 0; f < kInputs; ++f) flat_in[f] = hn::Load(d, lane_in[f]);
    }
    BondLaneOutput<V> out;
    VecOps ops{d, hn::FirstN(d, 0)};
    bond_lanes<false>(in, out, ops);
    // The bonds' slots are consecutive Vec3 (x, y, z): interleaved stores.
    hn::StoreInterleaved3(out.force_i[0], out.force_i[1], out.force_i[2], d, a.force[b].data());
    hn::StoreInterleaved3(out.moment_i[0], out.moment_i[1], out.moment_i[2], d, a.moment[b].data());
    if (!hn::AllFalse(d, ops.fix)) {
      hn::Store(hn::VecFromMask(d, ops.fix), d, lane_fix);
      for (std::size_t l = 0; l < n; ++l)
        if (lane_fix[l] != 0.0) bond_kernel_detail::scalar_bond(a, b + l);
    }
  }
  for (; b < end; ++b) bond_kernel_detail::scalar_bond(a, b);
}

}  // namespace HWY_NAMESPACE
}  // namespace dem
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace dem {

HWY_EXPORT(BondForcesRange);

void bond_forces(const BondKernelArgs& args, std::size_t begin, std::size_t end) {
  if (simd_scalar_forced()) {
    for (std::size_t b = begin; b < end; ++b) bond_kernel_detail::scalar_bond(args, b);
    return;
  }
  HWY_DYNAMIC_DISPATCH(BondForcesRange)(args, begin, end);
}

}  // namespace dem
#endif
