#include "engine/reorder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

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
  for (std::size_t k = 0; k < order.size(); ++k) scratch[k] = v[order[k]];
  v.swap(scratch);
}

}  // namespace

std::vector<std::uint32_t> morton_order(std::span<const Vec3> positions) {
  const std::size_t n = positions.size();
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (n < 2) return order;
  Vec3 lo = positions[0], hi = positions[0];
  for (const Vec3& x : positions) {
    if (!x.allFinite()) throw std::invalid_argument("morton_order: a position is not finite");
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  }
  const double extent = std::max((hi - lo).maxCoeff(), std::numeric_limits<double>::min());
  const double scale = static_cast<double>((1u << 21) - 1) / extent;
  std::vector<std::uint64_t> code(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 q = (positions[i] - lo) * scale;
    code[i] = spread_bits(static_cast<std::uint64_t>(q.x())) |
              spread_bits(static_cast<std::uint64_t>(q.y())) << 1 |
              spread_bits(static_cast<std::uint64_t>(q.z())) << 2;
  }
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return code[a] != code[b] ? code[a] < code[b] : a < b;
  });
  return order;
}

void permute_particles(ParticleStore& s, std::span<const std::uint32_t> order) {
  if (order.size() != s.size())
    throw std::invalid_argument("permute_particles: the order has " +
                                std::to_string(order.size()) + " entries for " +
                                std::to_string(s.size()) + " particles");
  std::vector<Vec3> v3;
  std::vector<Quat> q;
  std::vector<double> d;
  std::vector<std::uint32_t> u;
  permute(s.position, order, v3);
  permute(s.velocity, order, v3);
  permute(s.angular_velocity, order, v3);
  permute(s.force, order, v3);
  permute(s.moment, order, v3);
  permute(s.reference_position, order, v3);
  permute(s.attitude, order, q);
  permute(s.reference_attitude, order, q);
  permute(s.mass, order, d);
  permute(s.inertia, order, d);
  permute(s.radius, order, d);
  permute(s.id, order, u);
}

void renumber_and_sort_bonds(BondList& bonds, std::span<const std::uint32_t> inverse) {
  const std::size_t m = bonds.size();
  for (std::size_t b = 0; b < m; ++b) {
    std::uint32_t i = inverse[bonds.first[b]], j = inverse[bonds.second[b]];
    if (i > j) {
      std::swap(i, j);
      bonds.rest_direction[b] = -bonds.rest_direction[b];
    }
    bonds.first[b] = i;
    bonds.second[b] = j;
  }
  std::vector<std::uint32_t> order(m);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (bonds.first[a] != bonds.first[b]) return bonds.first[a] < bonds.first[b];
    if (bonds.second[a] != bonds.second[b]) return bonds.second[a] < bonds.second[b];
    return a < b;
  });
  bonds.permute(order);
}

void sort_for_locality(Scene& scene) {
  const std::vector<std::uint32_t> order = morton_order(scene.particles.position);
  std::vector<std::uint32_t> inverse(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) inverse[order[k]] = static_cast<std::uint32_t>(k);
  permute_particles(scene.particles, order);
  renumber_and_sort_bonds(scene.bonds, inverse);
}

}  // namespace dem
