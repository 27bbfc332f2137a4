#include "engine/reorder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "bonds/bond_provider.hpp"
#include "core/parallel.hpp"

namespace dem {

namespace {

/// Spreads the low 21 bits of v so that there are two zero bits between any two.
std::uint64_t spread_bits(std::uint64_t v) {
  v &= 0x1fffffULL;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

template <class T>
void permute(std::vector<T>& v, std::span<const std::uint32_t> order, std::vector<T>& scratch) {
  scratch.resize(order.size());
  parallel_for_ranges(order.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) scratch[k] = v[order[k]];
  });
  v.swap(scratch);
}

}  // namespace

MortonFrame morton_frame(std::span<const Vec3> positions) {
  MortonFrame f;
  if (positions.empty()) return f;
  Vec3 lo = positions[0], hi = positions[0];
  for (const Vec3& x : positions) {
    if (!x.allFinite()) throw std::invalid_argument("morton_order: a position is not finite");
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  }
  f.lo = lo;
  f.hi = hi;
  return f;
}

std::vector<std::uint32_t> morton_order(std::span<const Vec3> positions, std::span<const std::uint32_t> ids,
                                        const MortonFrame* frame, std::vector<std::uint64_t>* codes) {
  const std::size_t n = positions.size();
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (n < 2 && frame == nullptr && codes == nullptr) return order;
  const MortonFrame own = frame == nullptr ? morton_frame(positions) : MortonFrame{};
  const MortonFrame& f = frame == nullptr ? own : *frame;
  const Vec3 lo = f.lo;
  const double extent = std::max((f.hi - lo).maxCoeff(), std::numeric_limits<double>::min());
  const double scale = static_cast<double>((1u << 21) - 1) / extent;
  std::vector<std::uint64_t> code(n);
  parallel_for_ranges(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const Vec3 q = ((positions[i] - lo) * scale).cwiseMax(0.0).cwiseMin(static_cast<double>((1u << 21) - 1));
      code[i] = spread_bits(static_cast<std::uint64_t>(q.x())) |
                spread_bits(static_cast<std::uint64_t>(q.y())) << 1 |
                spread_bits(static_cast<std::uint64_t>(q.z())) << 2;
    }
  });
  parallel_sort_total(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (code[a] != code[b]) return code[a] < code[b];
    return ids.empty() ? a < b : ids[a] < ids[b];
  });
  if (codes != nullptr) codes->swap(code);
  return order;
}

void permute_particles(ParticleStore& s, std::span<const std::uint32_t> order) {
  if (order.size() != s.size())
    throw std::invalid_argument("permute_particles: the order has " +
                                std::to_string(order.size()) + " entries for " +
                                std::to_string(s.size()) + " particles");
  s.for_each_field([&](const char*, auto& v) {
    std::decay_t<decltype(v)> scratch;
    permute(v, order, scratch);
  });
  if (!s.ghost.empty()) {
    std::vector<std::uint8_t> scratch;
    permute(s.ghost, order, scratch);
  }
  if (!s.order_key.empty()) {
    std::vector<std::uint64_t> scratch;
    permute(s.order_key, order, scratch);
  }
  if (!s.kinematic.empty()) {
    std::vector<std::uint8_t> scratch;
    permute(s.kinematic, order, scratch);
  }
}

std::vector<std::uint32_t> inverse_permutation(std::span<const std::uint32_t> order) {
  std::vector<std::uint32_t> inverse(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) inverse[order[k]] = static_cast<std::uint32_t>(k);
  return inverse;
}

void sort_for_locality(Scene& scene) {
  const std::vector<std::uint32_t> order = morton_order(scene.particles.position);
  permute_particles(scene.particles, order);
  renumber_and_sort_bonds(scene.bonds, inverse_permutation(order));
}

}  // namespace dem
