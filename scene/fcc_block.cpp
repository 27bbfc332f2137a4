#include "scene/fcc_block.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/neighbour_search.hpp"

namespace dem {

namespace {

/// The untilted sites in lexicographic (x, y, z) order.
std::vector<Vec3> fcc_sites(const FccBlockParameters& p) {
  if (!(std::isfinite(p.spacing) && p.spacing > 0.0))
    throw std::invalid_argument("fcc_block: spacing must be finite and > 0");
  for (const std::uint32_t c : p.cells)
    if (c == 0 || c > 4096) throw std::invalid_argument("fcc_block: cells must be in [1, 4096]");
  const double a = std::sqrt(2.0) * p.spacing;
  const double tol = 1e-9 * a;
  const Vec3 upper(p.cells[0] * a, p.cells[1] * a, p.cells[2] * a);
  static const Vec3 basis[4] = {Vec3(0, 0, 0), Vec3(0.5, 0.5, 0), Vec3(0.5, 0, 0.5), Vec3(0, 0.5, 0.5)};
  std::vector<Vec3> sites;
  for (std::uint32_t i = 0; i <= p.cells[0]; ++i)
    for (std::uint32_t j = 0; j <= p.cells[1]; ++j)
      for (std::uint32_t k = 0; k <= p.cells[2]; ++k)
        for (const Vec3& b : basis) {
          const Vec3 x = a * (Vec3(i, j, k) + b);
          const bool below = p.periodic ? (x.array() < upper.array() - tol).all() : (x.array() <= upper.array() + tol).all();
          if ((x.array() >= -tol).all() && below) sites.push_back(x);
        }
  if (sites.size() > (1ull << 31)) throw std::invalid_argument("fcc_block: more than 2^31 particles");
  std::sort(sites.begin(), sites.end(), [](const Vec3& u, const Vec3& v) {
    if (u.x() != v.x()) return u.x() < v.x();
    if (u.y() != v.y()) return u.y() < v.y();
    return u.z() < v.z();
  });
  return sites;
}

}  // namespace

std::uint64_t fcc_block_count(const FccBlockParameters& p) {
  // Per basis vector: lattice points with every coordinate in range.
  if (p.periodic) return 4ull * p.cells[0] * p.cells[1] * p.cells[2];
  std::uint64_t n = 0;
  static const int half[4][3] = {{0, 0, 0}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}};
  for (const auto& b : half) {
    std::uint64_t m = 1;
    for (int c = 0; c < 3; ++c) m *= b[c] ? p.cells[static_cast<std::size_t>(c)] : p.cells[static_cast<std::size_t>(c)] + 1;
    n += m;
  }
  return n;
}

std::uint64_t fcc_block_bond_count(const FccBlockParameters& p) {
  // Each site has at most 12 neighbours: an upper bound that is exact
  // enough for the memory estimate (6 bonds per particle in the bulk).
  return 6 * fcc_block_count(p);
}

Scene make_fcc_block(const FccBlockParameters& p) {
  if (!(std::isfinite(p.density) && p.density > 0.0)) throw std::invalid_argument("fcc_block: density must be > 0");
  const double axis_norm = p.rotation_axis.norm();
  if (!(axis_norm > 0.0) || !std::isfinite(axis_norm)) throw std::invalid_argument("fcc_block: rotation_axis must not be zero");
  std::vector<Vec3> sites = fcc_sites(p);
  const double a = std::sqrt(2.0) * p.spacing;
  const Vec3 centre(0.5 * p.cells[0] * a, 0.5 * p.cells[1] * a, 0.5 * p.cells[2] * a);
  const double angle = p.rotation_angle_deg * std::numbers::pi / 180.0;
  const Mat3 turn = Eigen::AngleAxisd(angle, p.rotation_axis / axis_norm).toRotationMatrix();
  for (Vec3& x : sites) x = centre + turn * (x - centre);
  Vec3 shift = p.origin;
  if (p.lowest_z) {
    double lowest = sites.front().z();
    for (const Vec3& x : sites) lowest = std::min(lowest, x.z());
    shift = Vec3(0, 0, *p.lowest_z - lowest);
  }
  const Vec3 moved_centre = centre + shift;
  Scene s;
  s.particles.reserve(sites.size());
  const double d = p.spacing;
  const double mass = p.density * std::numbers::pi * d * d * d / 6.0;
  for (const Vec3& x : sites) {
    ParticleSpec spec;
    spec.position = x + shift;
    spec.velocity = p.velocity + p.angular_velocity.cross(spec.position - moved_centre);
    spec.angular_velocity = p.angular_velocity;
    spec.diameter = d;
    spec.mass = mass;
    spec.inertia = mass * d * d / 10.0;
    s.particles.add(spec);
  }
  // Bonds: pairs at distance d (1e-6 d), found by the neighbour search.
  NeighbourSearch search(2e-6 * d);
  const std::vector<double> half(s.particles.size(), 0.5 * d);
  search.rebuild(s.particles.position, half);
  const NeighbourList& l = search.list();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::size_t k = 0; k < l.pair_count(); ++k) {
    const double r = (s.particles.position[l.owner[k]] - s.particles.position[l.partner[k]]).norm();
    if (std::abs(r - d) <= 1e-6 * d)
      pairs.emplace_back(std::min(l.owner[k], l.partner[k]), std::max(l.owner[k], l.partner[k]));
  }
  std::sort(pairs.begin(), pairs.end());
  s.bonds.reserve(pairs.size());
  for (const auto& [i, j] : pairs) s.bonds.add(s.particles, i, j, BondStiffness{});
  return s;
}

Scene make_chain(const ChainParameters& p) {
  if (p.count < 2) throw std::invalid_argument("chain: count must be at least 2");
  if (!(std::isfinite(p.diameter) && p.diameter > 0.0)) throw std::invalid_argument("chain: diameter must be > 0");
  if (!(std::isfinite(p.density) && p.density > 0.0)) throw std::invalid_argument("chain: density must be > 0");
  const double n = p.direction.norm();
  if (!(n > 0.0) || !std::isfinite(n)) throw std::invalid_argument("chain: direction must not be zero");
  const Vec3 u = p.direction / n;
  Scene s;
  const double d = p.diameter;
  const double mass = p.density * std::numbers::pi * d * d * d / 6.0;
  for (std::uint32_t k = 0; k < p.count; ++k) {
    ParticleSpec spec;
    spec.position = p.origin + (d * k) * u;
    spec.velocity = p.velocity;
    spec.diameter = d;
    spec.mass = mass;
    spec.inertia = mass * d * d / 10.0;
    s.particles.add(spec);
  }
  for (std::uint32_t k = 0; k + 1 < p.count; ++k) s.bonds.add(s.particles, k, k + 1, BondStiffness{});
  return s;
}

}  // namespace dem
