#include "engine/cell_work.hpp"

#include "engine/force_field.hpp"

namespace dem {

namespace {

/// The second end of each record of a pair provider (engine/stress.cpp's rule).
std::span<const std::uint32_t> second_ends(const ProviderCapabilities& c) {
  if (c.hessian != nullptr && !c.hessian->record_second_ends().empty()) return c.hessian->record_second_ends();
  if (c.neighbour_list != nullptr) return c.neighbour_list->neighbours().list().partner;
  return {};
}

}  // namespace

std::array<ExactSum, 2> cross_face_power(const ForceField& forces, const ParticleStore& s, const Mat3& g) {
  std::array<ExactSum, 2> total;
  for (std::size_t k = 0; k < forces.providers().size(); ++k) {
    const PairResults r = forces.providers()[k]->pair_results();
    if (r.offset.empty()) continue;
    const std::span<const std::uint32_t> second = second_ends(forces.capabilities(k));
    const std::size_t n = std::min({r.first.size(), second.size(), r.offset.size()});
    const auto part = exact_sums<2>(n, [&](std::size_t b, std::array<ExactSum, 2>& t) {
      const Vec3& o = r.offset[b];
      if ((o.array() == 0.0).all() || !s.books(r.first[b], second[b])) return;
      const Vec3 w = g * o;  // Hdot n
      t[0].add(r.force[b].dot(w));
      if (!r.nc_force.empty()) t[1].add(r.nc_force[b].dot(w));
    });
    total[0].merge(part[0]);
    total[1].merge(part[1]);
  }
  return total;
}

}  // namespace dem
