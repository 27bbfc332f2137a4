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
using DI = hn::Rebind<std::int64_t, D>;  // the lanes' indices
using DI32 = hn::Rebind<std::int32_t, D>;
using VI = hn::Vec<DI>;

/// Where the kernel reads and writes, as doubles with index vectors: the
/// particles' arrays through each lane's particle (3 i + c for a Vec3), the
/// pair constants through each lane's material pair, a block's states at a
/// fixed stride.
struct Bases {
  const double* position;
  const double* velocity;
  const double* spin;
  std::int64_t pair_stride;   // doubles per ContactPair
  std::int64_t state_stride;  // doubles per State
  std::int64_t rolling_at;    // offset of State::rolling, in doubles
};

Bases bases(const HertzMindlinPairArgs& a) {
  Bases b;
  b.position = a.position[0].data();
  b.velocity = a.velocity[0].data();
  b.spin = a.angular_velocity[0].data();
  static_assert(sizeof(ContactPair) % sizeof(double) == 0 && sizeof(HertzMindlinLaw::State) % sizeof(double) == 0);
  b.pair_stride = sizeof(ContactPair) / sizeof(double);
  b.state_stride = sizeof(HertzMindlinLaw::State) / sizeof(double);
  const HertzMindlinLaw::State probe;
  b.rolling_at = probe.rolling.data() - probe.xi.data();
  return b;
}

HWY_INLINE VI times3(VI x) { return hn::Add(hn::Add(x, x), x); }

/// The lanes' particles (i, j) and material pairs (scaled to doubles) of
/// the pairs `pair`: indices read one by one (the index arrays are 32-bit).
struct LaneIndices {
  VI i, j, pair;
};

HWY_INLINE LaneIndices lane_indices(const D d, const HertzMindlinPairArgs& a, const Bases& b, const VI pair) {
  const DI di;
  alignas(64) std::int64_t k[kMaxLanes], i[kMaxLanes], j[kMaxLanes], p[kMaxLanes];
  hn::Store(pair, di, k);
  for (std::size_t l = 0; l < hn::Lanes(d); ++l) {
    i[l] = a.owner[k[l]];
    j[l] = a.partner[k[l]];
    p[l] = static_cast<std::int64_t>(a.material[i[l]] * a.material_count + a.material[j[l]]) * b.pair_stride;
  }
  return {hn::Load(di, i), hn::Load(di, j), hn::Load(di, p)};
}

/// Phase 1, lanes k .. k + n: whether each pair touches, from the positions
/// and radii alone, with the arithmetic of hertz_mindlin_lanes.
HWY_INLINE hn::Mask<D> touching_lanes(const D d, const HertzMindlinPairArgs& a, const Bases& b, std::size_t k) {
  const DI di;
  const DI32 di32;
  const VI i = hn::PromoteTo(di, hn::LoadU(di32, reinterpret_cast<const std::int32_t*>(a.owner + k)));
  const VI j = hn::PromoteTo(di, hn::LoadU(di32, reinterpret_cast<const std::int32_t*>(a.partner + k)));
  const VI i3 = times3(i), j3 = times3(j);
  V rv[3];
  for (int c = 0; c < 3; ++c)
    rv[c] = hn::Sub(hn::GatherIndex(d, b.position + c, i3), hn::GatherIndex(d, b.position + c, j3));
  const V dist2 = hn::Add(hn::Add(hn::Mul(rv[0], rv[0]), hn::Mul(rv[1], rv[1])), hn::Mul(rv[2], rv[2]));
  const V reach = hn::Add(hn::GatherIndex(d, a.radius, i), hn::GatherIndex(d, a.radius, j));
  return hn::Lt(dist2, hn::Mul(reach, reach));
}

/// Pair k apart: what evaluate() leaves (zero slots, a fresh state).
HWY_INLINE void clear_pair(const HertzMindlinPairArgs& a, std::size_t k) {
  a.slots.force[k] = a.slots.nc_force[k] = a.slots.moment_i[k] = a.slots.moment_j[k] = Vec3::Zero();
  a.state[k] = HertzMindlinLaw::State{};
}

/// Phase 1 over [begin, end): clears the pairs apart and lists the touching
/// ones (neither for excluded pairs) in `touching`; returns where the lane
/// blocks stop (the rest is the caller's, pair by pair).
std::size_t sort_out(const D d, const HertzMindlinPairArgs& a, const Bases& b, std::size_t begin, std::size_t end,
                     std::vector<std::int64_t>& touching) {
  const DI di;
  const std::size_t n = hn::Lanes(d);
  touching.resize(end - begin + n);  // CompressStore may write a whole vector
  std::size_t count = 0, k = begin;
  alignas(64) std::uint8_t mask_bits[8];
  for (; k + n <= end; k += n) {
    const hn::Mask<D> touch = touching_lanes(d, a, b, k);
    bool any_excluded = false;
    if (a.excluded != nullptr)
      for (std::size_t l = 0; l < n; ++l) any_excluded |= a.excluded[k + l] != 0;
    if (!any_excluded) {
      count += hn::CompressStore(hn::Iota(di, static_cast<std::int64_t>(k)), hn::RebindMask(di, touch), di,
                                 touching.data() + count);
      if (hn::AllTrue(d, touch)) continue;
    }
    hn::StoreMaskBits(d, touch, mask_bits);
    for (std::size_t l = 0; l < n; ++l) {
      if (any_excluded && a.excluded[k + l] != 0) continue;
      const bool t = (mask_bits[l / 8] >> (l % 8)) & 1;
      if (!t) clear_pair(a, k + l);
      else if (any_excluded) touching[count++] = static_cast<std::int64_t>(k + l);
    }
  }
  touching.resize(count);
  return k;
}

/// Phase 2: the touching pairs `touching[q .. q + n)` in one lane block.
HWY_INLINE void touching_block(const D d, const HertzMindlinPairArgs& a, const Bases& b, const HmLanesModel& model,
                               const VecHmOps& ops, const std::int64_t* touching) {
  const DI di;
  const VI pair = hn::LoadU(di, touching);
  const LaneIndices x = lane_indices(d, a, b, pair);
  const VI i3 = times3(x.i), j3 = times3(x.j);
  HmLanesIn<V> in;
  for (int c = 0; c < 3; ++c) {
    in.xi[c] = hn::GatherIndex(d, b.position + c, i3);
    in.xj[c] = hn::GatherIndex(d, b.position + c, j3);
    in.vi[c] = hn::GatherIndex(d, b.velocity + c, i3);
    in.vj[c] = hn::GatherIndex(d, b.velocity + c, j3);
    in.wi[c] = hn::GatherIndex(d, b.spin + c, i3);
    in.wj[c] = hn::GatherIndex(d, b.spin + c, j3);
  }
  in.ri = hn::GatherIndex(d, a.radius, x.i);
  in.rj = hn::GatherIndex(d, a.radius, x.j);
  in.mi = hn::GatherIndex(d, a.mass, x.i);
  in.mj = hn::GatherIndex(d, a.mass, x.j);
  const double* pairs = &a.pairs[0].e_star;
  in.e_star = hn::GatherIndex(d, pairs + 0, x.pair);
  in.g_star = hn::GatherIndex(d, pairs + 1, x.pair);
  in.damping = hn::GatherIndex(d, pairs + 2, x.pair);
  in.mu_s = hn::GatherIndex(d, pairs + 3, x.pair);
  in.mu_r = hn::GatherIndex(d, pairs + 4, x.pair);
  const VI s = hn::Mul(pair, hn::Set(di, b.state_stride));
  const double* state = a.state[0].xi.data();
  HmLanesState<V> st;
  for (int c = 0; c < 3; ++c) {
    st.xi[c] = hn::GatherIndex(d, state + c, s);
    st.roll[c] = hn::GatherIndex(d, state + b.rolling_at + c, s);
  }
  HmLanesOut<V> res;
  hertz_mindlin_lanes(in, model, st, res, ops);
  const VI k3 = times3(pair);
  double* state_out = a.state[0].xi.data();
  for (int c = 0; c < 3; ++c) {
    hn::ScatterIndex(res.force[c], d, a.slots.force[0].data() + c, k3);
    hn::ScatterIndex(res.nc[c], d, a.slots.nc_force[0].data() + c, k3);
    hn::ScatterIndex(res.mi[c], d, a.slots.moment_i[0].data() + c, k3);
    hn::ScatterIndex(res.mj[c], d, a.slots.moment_j[0].data() + c, k3);
    hn::ScatterIndex(st.xi[c], d, state_out + c, s);
    hn::ScatterIndex(st.roll[c], d, state_out + b.rolling_at + c, s);
  }
}

std::size_t HertzMindlinPairBlocks(const HertzMindlinPairArgs& a, std::size_t begin, std::size_t end,
                                   std::vector<std::int64_t>& touching) {
  const D d;
  const std::size_t n = hn::Lanes(d);
  HmLanesModel model;
  model.h = a.time_step;
  model.rolling = static_cast<int>(a.models.rolling);
  model.rolling_damping = a.models.rolling_damping;
  model.clamp = clamps_force(a.models.damping);
  const VecHmOps ops{d};
  const Bases b = bases(a);
  const std::size_t stop = sort_out(d, a, b, begin, end, touching);
  std::size_t q = 0;
  for (; q + n <= touching.size(); q += n) touching_block(d, a, b, model, ops, touching.data() + q);
  touching.erase(touching.begin(), touching.begin() + static_cast<std::ptrdiff_t>(q));
  return stop;
}

}  // namespace HWY_NAMESPACE
}  // namespace dem
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace dem {

HWY_EXPORT(HertzMindlinPairBlocks);

std::size_t hertz_mindlin_pair_blocks(const HertzMindlinPairArgs& args, std::size_t begin, std::size_t end,
                                      std::vector<std::int64_t>& touching) {
  touching.clear();
  if (simd_scalar_forced()) return begin;
  return HWY_DYNAMIC_DISPATCH(HertzMindlinPairBlocks)(args, begin, end, touching);
}

bool hertz_mindlin_kernel_covers(const HertzMindlinModels& models) {
  if (models.twisting != TwistingModel::none) return false;
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
