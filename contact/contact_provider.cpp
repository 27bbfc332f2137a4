#include "contact/contact_provider.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dem {

HertzContactLaw HertzContactLaw::load(ByteReader& r) {
  HertzContactLaw law;
  law.stiffness = r.f64("contact stiffness");
  if (!(std::isfinite(law.stiffness) && law.stiffness >= 0.0))
    throw StateError("inconsistent: contact stiffness must be finite and >= 0");
  return law;
}

void ContactProviderBase::restore(const ParticleStore& s, std::span<const Vec3> build_positions,
                                  std::size_t rebuild_count) {
  if (build_positions.size() != s.size())
    throw std::invalid_argument("restore_neighbour_list: " + std::to_string(build_positions.size()) +
                                " build positions for " + std::to_string(s.size()) + " particles");
  search_.restore(build_positions, s.radius, rebuild_count);
  stale_ = false;
  pending_ = false;
  after_rebuild(s);
}

std::vector<std::uint32_t> ContactProviderBase::match_pairs(const ParticleStore& s) {
  const NeighbourList& l = search_.list();
  const std::size_t m = l.pair_count();
  std::vector<std::uint64_t> keys(m);
  parallel_for_each(m, [&](std::size_t k) { keys[k] = pair_key(s.id[l.owner[k]], s.id[l.partner[k]]); });
  std::vector<std::uint32_t> sorted(m);
  std::iota(sorted.begin(), sorted.end(), 0u);
  // Keys are distinct (one pair per two particles), so the order is total.
  std::sort(sorted.begin(), sorted.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  std::vector<std::uint32_t> old_of_new(m, kNoPair);
  std::size_t o = 0;
  for (const std::uint32_t k : sorted) {
    while (o < sorted_.size() && keys_[sorted_[o]] < keys[k]) ++o;
    if (o < sorted_.size() && keys_[sorted_[o]] == keys[k]) old_of_new[k] = sorted_[o];
  }
  keys_.swap(keys);
  sorted_.swap(sorted);
  return old_of_new;
}

void ContactProviderBase::save_list(ByteWriter& w) const {
  w.f64(search_.skin());
  w.array(pending_ ? pending_positions_ : search_.build_positions(), [](ByteWriter& ww, const Vec3& x) { ww.vec3(x); });
  w.u64(pending_ ? pending_rebuilds_ : search_.rebuild_count());
}

}  // namespace dem
