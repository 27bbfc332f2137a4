// The vectorised Hertz-Mindlin pair loop (contact/hertz_mindlin_kernel.hpp):
// compiled once per SIMD target by Highway's foreach_target.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "contact/hertz_mindlin_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "contact/hertz_mindlin_kernel.hpp"
#include "core/simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace dem {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#include "contact/hertz_mindlin_lanes.inc"

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

struct VecHmOps {
  D d;
  V c(double v) const { return hn::Set(d, v); }
  V sqrt(V x) const { return hn::Sqrt(x); }
  V abs(V x) const { return hn::Abs(x); }
  V neg(V x) const { return hn::Neg(x); }
  M lt(V a, V b) const { return hn::Lt(a, b); }
  M and_(M a, M b) const { return hn::And(a, b); }
  V select(M m, V yes, V no) const { return hn::IfThenElse(m, yes, no); }
};

constexpr std::size_t kMaxLanes = 8;

/// The lanes' inputs, one row per quantity (transposed from the particles'
/// and pairs' arrays).
struct LaneRows {
  static constexpr int kIn = 27, kState = 6;
  alignas(64) double in[kIn][kMaxLanes];
  alignas(64) double state[kState][kMaxLanes];
};

HWY_INLINE void put3(LaneRows& rows, int q, std::size_t l, const Vec3& v) {
  rows.in[q][l] = v[0];
  rows.in[q + 1][l] = v[1];
  rows.in[q + 2][l] = v[2];
}

HWY_INLINE void fill_lane(const HertzMindlinPairArgs& a, std::size_t k, std::size_t l, LaneRows& rows) {
  const std::uint32_t i = a.owner[k], j = a.partner[k];
  put3(rows, 0, l, a.position[i]);
  put3(rows, 3, l, a.position[j]);
  put3(rows, 6, l, a.velocity[i]);
  put3(rows, 9, l, a.velocity[j]);
  put3(rows, 12, l, a.angular_velocity[i]);
  put3(rows, 15, l, a.angular_velocity[j]);
  rows.in[18][l] = a.radius[i];
  rows.in[19][l] = a.radius[j];
  rows.in[20][l] = a.mass[i];
  rows.in[21][l] = a.mass[j];
  const ContactPair& p = a.pairs[a.material[i] * a.material_count + a.material[j]];
  rows.in[22][l] = p.e_star;
  rows.in[23][l] = p.g_star;
  rows.in[24][l] = p.damping;
  rows.in[25][l] = p.mu_s;
  rows.in[26][l] = p.mu_r;
  const HertzMindlinLaw::State& st = a.state[k];
  for (int c = 0; c < 3; ++c) {
    rows.state[c][l] = st.xi[c];
    rows.state[3 + c][l] = st.rolling[c];
  }
}

HWY_INLINE void load_lanes(const D d, const LaneRows& rows, HmLanesIn<V>& in, HmLanesState<V>& st) {
  for (int c = 0; c < 3; ++c) {
    in.xi[c] = hn::Load(d, rows.in[c]);
    in.xj[c] = hn::Load(d, rows.in[3 + c]);
    in.vi[c] = hn::Load(d, rows.in[6 + c]);
    in.vj[c] = hn::Load(d, rows.in[9 + c]);
    in.wi[c] = hn::Load(d, rows.in[12 + c]);
    in.wj[c] = hn::Load(d, rows.in[15 + c]);
    st.xi[c] = hn::Load(d, rows.state[c]);
    st.roll[c] = hn::Load(d, rows.state[3 + c]);
  }
  in.ri = hn::Load(d, rows.in[18]);
  in.rj = hn::Load(d, rows.in[19]);
  in.mi = hn::Load(d, rows.in[20]);
  in.mj = hn::Load(d, rows.in[21]);
  in.e_star = hn::Load(d, rows.in[22]);
  in.g_star = hn::Load(d, rows.in[23]);
  in.damping = hn::Load(d, rows.in[24]);
  in.mu_s = hn::Load(d, rows.in[25]);
  in.mu_r = hn::Load(d, rows.in[26]);
}

/// Writes lane l's results (skipped for an excluded pair, as the scalar loop does).
HWY_INLINE void store_lane(const HertzMindlinPairArgs& a, std::size_t k, std::size_t l, const double (&out)[18][kMaxLanes]) {
  for (int c = 0; c < 3; ++c) {
    a.slots.force[k][c] = out[c][l];
    a.slots.nc_force[k][c] = out[3 + c][l];
    a.slots.moment_i[k][c] = out[6 + c][l];
    a.slots.moment_j[k][c] = out[9 + c][l];
    a.state[k].xi[c] = out[12 + c][l];
    a.state[k].rolling[c] = out[15 + c][l];
  }
}

std::size_t HertzMindlinPairBlocks(const HertzMindlinPairArgs& a, std::size_t begin, std::size_t end) {
  const D d;
  const std::size_t n = hn::Lanes(d);
  HmLanesModel model;
  model.h = a.time_step;
  model.rolling = static_cast<int>(a.models.rolling);
  model.rolling_damping = a.models.rolling_damping;
  model.clamp = clamps_force(a.models.damping);
  const VecHmOps ops{d};
  LaneRows rows;
  alignas(64) double out[18][kMaxLanes];
  std::size_t k = begin;
  for (; k + n <= end; k += n) {
    for (std::size_t l = 0; l < n; ++l) fill_lane(a, k + l, l, rows);
    HmLanesIn<V> in;
    HmLanesState<V> st;
    load_lanes(d, rows, in, st);
    HmLanesOut<V> res;
    hertz_mindlin_lanes(in, model, st, res, ops);
    for (int c = 0; c < 3; ++c) {
      hn::Store(res.force[c], d, out[c]);
      hn::Store(res.nc[c], d, out[3 + c]);
      hn::Store(res.mi[c], d, out[6 + c]);
      hn::Store(res.mj[c], d, out[9 + c]);
      hn::Store(st.xi[c], d, out[12 + c]);
      hn::Store(st.roll[c], d, out[15 + c]);
    }
    for (std::size_t l = 0; l < n; ++l)
      if (a.excluded == nullptr || a.excluded[k + l] == 0) store_lane(a, k + l, l, out);
  }
  return k;
}

}  // namespace HWY_NAMESPACE
}  // namespace dem
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace dem {

HWY_EXPORT(HertzMindlinPairBlocks);

std::size_t hertz_mindlin_pair_blocks(const HertzMindlinPairArgs& args, std::size_t begin, std::size_t end) {
  if (simd_scalar_forced()) return begin;
  return HWY_DYNAMIC_DISPATCH(HertzMindlinPairBlocks)(args, begin, end);
}

bool hertz_mindlin_kernel_covers(const HertzMindlinModels& models) {
  switch (models.rolling) {
    case RollingModel::none:
    case RollingModel::epsd:
    case RollingModel::epsd2:
    case RollingModel::cdt:
      return true;
    default:  // a model added since: pair by pair
      return false;
  }
}

}  // namespace dem
#endif
