#include "engine/stress.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/exact_sum.hpp"
#include "contact/contact_provider.hpp"
#include "core/particle_store.hpp"
#include "engine/collective.hpp"
#include "engine/force_field.hpp"

namespace dem {

namespace {

/// The six components xx, yy, zz, yz, xz, xy of the symmetric part of a (x) b.
std::array<double, 6> symmetric_dyad(const Vec3& a, const Vec3& b) {
  return {a.x() * b.x(),
          a.y() * b.y(),
          a.z() * b.z(),
          0.5 * (a.y() * b.z() + a.z() * b.y()),
          0.5 * (a.x() * b.z() + a.z() * b.x()),
          0.5 * (a.x() * b.y() + a.y() * b.x())};
}

/// Sum over the records of one pair provider of w (x_i - x_j) (x) F_ij.
void add_records(const PairResults& r, std::span<const std::uint32_t> second, const ParticleStore& s,
                 const StressBox& box, std::array<ExactSum, 6>& out) {
  const std::size_t n = std::min(r.first.size(), second.size());
  const auto part = exact_sums<6>(n, [&](std::size_t k, std::array<ExactSum, 6>& t) {
    const std::uint32_t i = r.first[k], j = second[k];
    if (!s.books(i, j)) return;
    const Vec3& f = r.force[k];
    if ((f.array() == 0.0).all()) return;  // a pair apart, excluded, or a failed bond
    const int inside = (box.contains(s.position[i]) ? 1 : 0) + (box.contains(s.position[j]) ? 1 : 0);
    if (inside == 0) return;
    const double w = inside == 2 ? 1.0 : 0.5;
    // The branch x_i - x_j, with x_j at its image across a periodic face.
    const Vec3 branch = r.offset.empty() ? Vec3(s.position[i] - s.position[j])
                                         : Vec3(s.position[i] - (s.position[j] + r.offset[k]));
    const std::array<double, 6> d = symmetric_dyad(branch, f);
    for (int c = 0; c < 6; ++c) t[c].add(w * d[c]);
  });
  for (int c = 0; c < 6; ++c) out[c].merge(part[c]);
}

/// The second end of each record of a pair provider: the bond lists' (and
/// radial contact laws') through their Hessian capability, the contact
/// lists' through their neighbour list; empty for one-body providers.
std::span<const std::uint32_t> second_ends(const ProviderCapabilities& c) {
  if (c.hessian != nullptr && !c.hessian->record_second_ends().empty()) return c.hessian->record_second_ends();
  if (c.neighbour_list != nullptr) return c.neighbour_list->neighbours().list().partner;
  return {};
}

}  // namespace

StressMeasure measure_stress(const ForceField& forces, const ParticleStore& s, const StressBox& box,
                             Collective& collective) {
  const double volume = box.volume();
  if (!(volume > 0.0) || !std::isfinite(volume))
    throw std::invalid_argument("stress box: upper must exceed lower on every axis");
  // Pass 1: count, mass and momentum of the particles in the box.
  std::array<ExactSum, 5> bulk = exact_sums<5>(s.size(), [&](std::size_t i, std::array<ExactSum, 5>& t) {
    if (!s.owns(i) || !box.contains(s.position[i])) return;
    t[0].add(1.0);
    t[1].add(s.mass[i]);
    for (int a = 0; a < 3; ++a) t[2 + a].add(s.mass[i] * s.velocity[i][a]);
  });
  collective.reduce(bulk);
  const double mass = bulk[1].value();
  const Vec3 v_bar = mass > 0.0 ? Vec3(Vec3(bulk[2].value(), bulk[3].value(), bulk[4].value()) / mass) : Vec3(Vec3::Zero());
  // Pass 2: the records' branch-vector sums and the kinetic part.
  std::array<ExactSum, 12> sums;
  std::array<ExactSum, 6> records;
  for (std::size_t k = 0; k < forces.providers().size(); ++k) {
    const std::span<const std::uint32_t> second = second_ends(forces.capabilities(k));
    if (second.empty()) continue;
    add_records(forces.providers()[k]->pair_results(), second, s, box, records);
  }
  const auto kinetic = exact_sums<6>(s.size(), [&](std::size_t i, std::array<ExactSum, 6>& t) {
    if (!s.owns(i) || !box.contains(s.position[i])) return;
    const Vec3 u = s.velocity[i] - v_bar;
    const std::array<double, 6> d = symmetric_dyad(u, s.mass[i] * u);
    for (int c = 0; c < 6; ++c) t[c].add(d[c]);
  });
  for (int c = 0; c < 6; ++c) {
    sums[c] = records[c];
    sums[6 + c] = kinetic[c];
  }
  collective.reduce(sums);
  StressMeasure m;
  m.volume = volume;
  m.particles = bulk[0].value();
  for (int c = 0; c < 6; ++c) {
    ExactSum total = sums[c];
    total.merge(sums[6 + c]);
    m.sigma[c] = -total.value() / volume + 0.0;  // (+ 0.0: no -0 in the table)
    m.kinetic[c] = -sums[6 + c].value() / volume + 0.0;
  }
  return m;
}

}  // namespace dem
