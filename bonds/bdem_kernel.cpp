// The vectorised BDEM force loop (bonds/bdem_kernel.hpp): compiled once per
// SIMD target by Highway's foreach_target.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bonds/bdem_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "bonds/bdem_bond.hpp"
#include "bonds/bdem_kernel.hpp"
#include "bonds/bdem_provider.hpp"
#include "core/simd.hpp"

#ifndef DEM_BDEM_KERNEL_SHARED
#define DEM_BDEM_KERNEL_SHARED
namespace dem::bdem_kernel_detail {

inline lanes::BdemLaneInput<double> bond_input(const BdemKernelArgs& a, std::size_t b) {
  const std::uint32_t i = a.first[b], j = a.second[b];
  const Vec3& xi = a.position[i];
  const Vec3 xj = a.offset == nullptr ? a.position[j] : Vec3(a.position[j] + a.offset[b]);
  const Quat& qi = a.attitude[i];
  const Quat& qj = a.attitude[j];
  const Vec3& d0 = a.rest_direction[b];
  const BdemStiffness& k = a.types[a.type[b]].stiffness;
  return {{xi[0], xi[1], xi[2]},
          {xj[0], xj[1], xj[2]},
          {qi.w(), qi.x(), qi.y(), qi.z()},
          {qj.w(), qj.x(), qj.y(), qj.z()},
          {d0[0], d0[1], d0[2]},
          a.rest_length[b],
          k.normal,
          k.shear,
          k.bending,
          k.twist};
}

/// Stores bond b's results and returns 1 if it is over strength.
inline std::size_t finish_bond(const BdemKernelArgs& a, std::size_t b, const double force[3],
                               const double moment_i[3], const double moment_j[3], double axial_force,
                               double twist_moment, double shear_force2, double bending_moment2,
                               double cos_half_relative) {
  a.force[b] = Vec3(force[0], force[1], force[2]);
  a.moment[b] = Vec3(moment_i[0], moment_i[1], moment_i[2]);
  a.moment_second[b] = Vec3(moment_j[0], moment_j[1], moment_j[2]);
  const BdemBondType& t = a.types[a.type[b]];
  BdemBondResult r;
  r.axial_force = axial_force;
  r.twist_moment = twist_moment;
  r.shear_force2 = shear_force2;
  r.bending_moment2 = bending_moment2;
  std::uint8_t f = 0;
  const bool over = bdem_over_strength(r, t.stiffness, t.tension_only, t.tensile_strength, t.shear_strength);
  if (over) f |= kBdemOverStrength;
  if (cos_half_relative < 0.5) f |= kBdemTurned;
  a.flags[b] = f;
  return over ? 1 : 0;
}

inline std::size_t scalar_bond(const BdemKernelArgs& a, std::size_t b) {
  if (!a.live[b]) return 0;
  const lanes::BdemLaneInput<double> in = bond_input(a, b);
  lanes::BdemLaneOutput<double> o;
  lanes::BdemScalarOps<double> ops;
  lanes::bdem_lanes<lanes::BdemLaneResults::forces>(in, o, ops);
  return finish_bond(a, b, o.force, o.moment_i, o.moment_j, o.axial_force, o.twist_moment, o.shear_force2,
                     o.bending_moment2, o.cos_half_relative);
}

}  // namespace dem::bdem_kernel_detail
#endif  // DEM_BDEM_KERNEL_SHARED

HWY_BEFORE_NAMESPACE();
namespace dem {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#include "bonds/bdem_lanes.inc"
#include "bonds/bond_ends_lanes.inc"

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;

/// bdem_lanes' Ops for vectors: the series shear angle in every lane; `fix`
/// marks the lanes that need atan2 (the scalar kernel redoes them).
struct BdemVecOps {
  D d;
  hn::Mask<D> fix;
  V c(double v) const { return hn::Set(d, v); }
  V sqrt(V x) const { return hn::Sqrt(x); }
  V abs(V x) const { return hn::Abs(x); }
  V flip(V x) const { return hn::IfThenElse(x < hn::Zero(d), hn::Set(d, -1.0), hn::Set(d, 1.0)); }
  void shear_angle(V sine2, V cosine, V& theta, V& g, V& theta2) {
    const auto series_ok = hn::And(cosine > hn::Zero(d), sine2 < hn::Set(d, 1e-4) * cosine * cosine);
    fix = hn::Not(series_ok);
    bdem_lanes_series(sine2, cosine, theta, g, theta2, *this);
  }
};

constexpr std::size_t kMaxLanes = 8;
constexpr int kOutputs = 14;  // force, moment_i, moment_j, 5 fracture values

std::size_t BdemBondForcesRange(const BdemKernelArgs& a, std::size_t begin, std::size_t end) {
  const D d;
  const std::size_t n = hn::Lanes(d);
  alignas(64) double lane_in[4][kMaxLanes];
  alignas(64) double lane_out[kOutputs][kMaxLanes];
  alignas(64) double lane_fix[kMaxLanes];
  std::size_t over = 0;
  std::size_t b = begin;
  for (; b + n <= end; b += n) {
    // The two ends by index gathers; stiffnesses lane by lane.
    BdemLaneInput<V> in;
    gather_bond_ends(d, a.first, a.second, a.position, a.offset, a.attitude, a.rest_direction, b, end, in);
    in.l0 = hn::LoadU(d, a.rest_length + b);
    for (std::size_t l = 0; l < n; ++l) {
      const BdemStiffness& k = a.types[a.type[b + l]].stiffness;
      lane_in[0][l] = k.normal;
      lane_in[1][l] = k.shear;
      lane_in[2][l] = k.bending;
      lane_in[3][l] = k.twist;
    }
    in.k_normal = hn::Load(d, lane_in[0]);
    in.k_shear = hn::Load(d, lane_in[1]);
    in.k_bending = hn::Load(d, lane_in[2]);
    in.k_twist = hn::Load(d, lane_in[3]);
    BdemLaneOutput<V> out;
    BdemVecOps ops{d, hn::FirstN(d, 0)};
    bdem_lanes<BdemLaneResults::forces>(in, out, ops);
    for (int c = 0; c < 3; ++c) {
      hn::Store(out.force[c], d, lane_out[c]);
      hn::Store(out.moment_i[c], d, lane_out[3 + c]);
      hn::Store(out.moment_j[c], d, lane_out[6 + c]);
    }
    hn::Store(out.axial_force, d, lane_out[9]);
    hn::Store(out.twist_moment, d, lane_out[10]);
    hn::Store(out.shear_force2, d, lane_out[11]);
    hn::Store(out.bending_moment2, d, lane_out[12]);
    hn::Store(out.cos_half_relative, d, lane_out[13]);
    const bool any_fix = !hn::AllFalse(d, ops.fix);
    if (any_fix) hn::Store(hn::VecFromMask(d, ops.fix), d, lane_fix);
    for (std::size_t l = 0; l < n; ++l) {
      const std::size_t bond = b + l;
      if (!a.live[bond]) continue;
      if (any_fix && lane_fix[l] != 0.0) {
        over += bdem_kernel_detail::scalar_bond(a, bond);
        continue;
      }
      const double f[3] = {lane_out[0][l], lane_out[1][l], lane_out[2][l]};
      const double mi[3] = {lane_out[3][l], lane_out[4][l], lane_out[5][l]};
      const double mj[3] = {lane_out[6][l], lane_out[7][l], lane_out[8][l]};
      over += bdem_kernel_detail::finish_bond(a, bond, f, mi, mj, lane_out[9][l], lane_out[10][l], lane_out[11][l],
                                              lane_out[12][l], lane_out[13][l]);
    }
  }
  for (; b < end; ++b) over += bdem_kernel_detail::scalar_bond(a, b);
  return over;
}

}  // namespace HWY_NAMESPACE
}  // namespace dem
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace dem {

HWY_EXPORT(BdemBondForcesRange);

std::size_t bdem_bond_forces(const BdemKernelArgs& args, std::size_t begin, std::size_t end) {
  if (simd_scalar_forced()) {
    std::size_t over = 0;
    for (std::size_t b = begin; b < end; ++b) over += bdem_kernel_detail::scalar_bond(args, b);
    return over;
  }
  return HWY_DYNAMIC_DISPATCH(BdemBondForcesRange)(args, begin, end);
}

}  // namespace dem
#endif
