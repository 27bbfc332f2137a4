#include "contact/contact_provider.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
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

PenaltyContactLaw PenaltyContactLaw::load(ByteReader& r) {
  PenaltyContactLaw law;
  law.stiffness = r.f64("penalty contact stiffness");
  if (!(std::isfinite(law.stiffness) && law.stiffness >= 0.0))
    throw StateError("inconsistent: penalty contact stiffness must be finite and >= 0");
  r.array(law.sliding_friction, 8, "filter friction", [](ByteReader& rr) { return rr.f64("filter friction"); });
  r.array(law.rolling_friction, 8, "filter friction", [](ByteReader& rr) { return rr.f64("filter friction"); });
  if (law.rolling_friction.size() != law.sliding_friction.size())
    throw StateError("inconsistent: the friction filter has " + std::to_string(law.sliding_friction.size()) +
                     " sliding and " + std::to_string(law.rolling_friction.size()) + " rolling coefficients");
  for (const double x : law.sliding_friction)
    if (!(std::isfinite(x) && x >= 0.0)) throw StateError("inconsistent: a filter friction coefficient is negative");
  for (const double x : law.rolling_friction)
    if (!(std::isfinite(x) && x >= 0.0)) throw StateError("inconsistent: a filter friction coefficient is negative");
  return law;
}

void ContactProviderBase::update_images(bool relist) {
  const NeighbourList& l = search_.list();
  if (!relist && offset_.size() == l.pair_count() && !offset_.empty()) {
    // The same pairs in a changed cell (a deforming one, every step).
    for (const std::uint32_t k : cross_) {
      const std::array<int, 3> n = image_shift(l.image[k]);
      offset_[k] = cell_.offset(n);
      velocity_offset_[k] = cell_.velocity_offset(n);
    }
    return;
  }
  cross_.clear();
  if (l.image.empty() || !cell_.any()) {
    offset_.clear();
    velocity_offset_.clear();
    return;
  }
  offset_.assign(l.pair_count(), Vec3::Zero());
  velocity_offset_.assign(l.pair_count(), Vec3::Zero());
  for (std::size_t k = 0; k < l.pair_count(); ++k) {
    if (l.image[k] == kNoImage) continue;
    const std::array<int, 3> n = image_shift(l.image[k]);
    offset_[k] = cell_.offset(n);
    velocity_offset_[k] = cell_.velocity_offset(n);
    cross_.push_back(static_cast<std::uint32_t>(k));
  }
}

const std::uint8_t* ContactProviderBase::block_skip() {
  if (cross_.empty()) return excluded_.empty() ? nullptr : excluded_.data();
  if (excluded_.empty()) skip_.assign(search_.list().pair_count(), 0);
  else skip_.assign(excluded_.begin(), excluded_.end());
  for (const std::uint32_t k : cross_) skip_[k] = 1;
  return skip_.data();
}

void ContactProviderBase::mark_excluded() {
  apply_released();
  if (excluded_keys_.empty()) {
    excluded_.clear();
    return;
  }
  excluded_.assign(keys_.size(), 0);
  std::size_t e = 0;
  for (const std::uint32_t k : sorted_) {  // pairs in ascending key
    while (e < excluded_keys_.size() && excluded_keys_[e] < keys_[k]) ++e;
    if (e < excluded_keys_.size() && excluded_keys_[e] == keys_[k]) excluded_[k] = 1;
  }
  // Zero their force slots once; evaluate() then leaves them alone (the
  // kinetic laws' other slots are zeroed at every rebuild).
  parallel_for_ranges(excluded_.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k)
      if (excluded_[k]) pair_force_[k] = Vec3::Zero();
  });
  index_included();
}

void ContactProviderBase::index_included() {
  const NeighbourList& l = search_.list();
  const std::size_t n = l.offsets.empty() ? 0 : l.offsets.size() - 1;
  if (l.owner.size() >= (std::size_t{1} << 31))
    throw std::length_error("contact provider: more than 2^31 - 1 candidate pairs with bonded pairs left out");
  entry_offsets_.resize(n + 1);
  // Count per particle, prefix in order, fill: parallel, the same result
  // for any thread count.
  const auto for_each_included = [&](std::size_t i, auto&& f) {
    for (std::uint32_t k = l.offsets[i]; k < l.offsets[i + 1]; ++k)
      if (!excluded_[k]) f(2 * k);
    for (std::uint32_t e = l.incoming_offsets[i]; e < l.incoming_offsets[i + 1]; ++e) {
      const std::uint32_t k = l.incoming_pairs[e];
      if (!excluded_[k]) f(2 * k + 1);
    }
  };
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t count = 0;
      for_each_included(i, [&](std::uint32_t) { ++count; });
      entry_offsets_[i + 1] = count;
    }
  });
  entry_offsets_[0] = 0;
  for (std::size_t i = 0; i < n; ++i) entry_offsets_[i + 1] += entry_offsets_[i];
  entries_.resize(entry_offsets_[n]);
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t at = entry_offsets_[i];
      for_each_included(i, [&](std::uint32_t entry) { entries_[at++] = entry; });
    }
  });
}

std::uint32_t ContactProviderBase::find_pair(std::uint64_t key) const {
  const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), key,
                                   [&](std::uint32_t k, std::uint64_t x) { return keys_[k] < x; });
  if (it == sorted_.end() || keys_[*it] != key) return kNoPair;
  return *it;
}

void ContactProviderBase::forget_excluded(std::span<const std::uint64_t> released) {
  // Kept aside and applied at the next mark_excluded() (a rebuild): a
  // fracture step does not copy the whole key list.
  released_.insert(released_.end(), released.begin(), released.end());
}

void ContactProviderBase::apply_released() { erase_keys(excluded_keys_, released_); }

void ContactProviderBase::restore(const ParticleStore& s, std::span<const Vec3> build_positions,
                                  std::size_t rebuild_count) {
  if (build_positions.size() != s.size())
    throw std::invalid_argument("restore_neighbour_list: " + std::to_string(build_positions.size()) +
                                " build positions for " + std::to_string(s.size()) + " particles");
  if (pending_build_edges_) {
    // The list as it was built: the images where they were then.
    PeriodicCell then = cell_;
    then.edges = *pending_build_edges_;
    search_.set_cell(then);
    search_.restore(build_positions, s.radius, rebuild_count);
    search_.set_cell(cell_);
    pending_build_edges_.reset();
  } else {
    search_.restore(build_positions, s.radius, rebuild_count);
  }
  stale_ = false;
  pending_ = false;
  update_images();
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
  parallel_sort_total(sorted.begin(), sorted.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
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

void ContactProviderBase::save_build_cell(ByteWriter& w) const {
  if (!cell_.any()) return;
  w.mat3(pending_ && pending_build_edges_ ? *pending_build_edges_ : search_.build_edges());
}

void ContactProviderBase::load_build_cell(ByteReader& r) {
  // Exactly one 3x3 matrix left, or nothing read (other trailing bytes are
  // refused by the section's end check).
  if (r.remaining() != 72) return;
  const Mat3 edges = r.mat3("contact list build cell");
  if (!edges.allFinite()) throw StateError("inconsistent: the contact list's build cell is not finite");
  pending_build_edges_ = edges;
}

}  // namespace dem
