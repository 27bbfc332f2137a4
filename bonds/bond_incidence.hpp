#pragma once
/// \file bond_incidence.hpp
/// What every bond provider shares: each particle's bonds as compressed
/// rows (entry = 2 * bond + end, ascending bond index: the gather order that
/// makes the sums independent of the thread count), and the PairResults /
/// Incidence views of core/force_provider.hpp over a provider's bond slots.

#include <cstdint>
#include <span>
#include <vector>

#include "bonds/bond_list.hpp"
#include "core/force_provider.hpp"

namespace dem {

class BondIncidence {
 public:
  /// Rebuilds the rows for `bonds` over n particles.
  void index(const BondList& bonds, std::size_t n) {
    offsets_.assign(n + 1, 0);
    for (std::size_t b = 0; b < bonds.size(); ++b) {
      ++offsets_[bonds.first[b] + 1];
      ++offsets_[bonds.second[b] + 1];
    }
    for (std::size_t i = 0; i < n; ++i) offsets_[i + 1] += offsets_[i];
    entries_.resize(offsets_[n]);
    std::vector<std::uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
    for (std::size_t b = 0; b < bonds.size(); ++b) {
      entries_[fill[bonds.first[b]]++] = static_cast<std::uint32_t>(2 * b);
      entries_[fill[bonds.second[b]]++] = static_cast<std::uint32_t>(2 * b + 1);
    }
  }
  /// The gather's view (empty without bonds).
  Incidence incidence(const BondList& bonds) const {
    Incidence inc;
    if (bonds.empty()) return inc;
    inc.entry_offsets = offsets_;
    inc.entries = entries_;
    return inc;
  }
  std::size_t bytes() const { return capacity_bytes(offsets_) + capacity_bytes(entries_); }

 private:
  std::vector<std::uint32_t> offsets_, entries_;
};

/// Results of a bond provider: force and spatial moment on each bond's
/// first end (the second end's moment from the balance of angular momentum).
inline PairResults bond_pair_results(const BondList& bonds, std::span<const Vec3> force, std::span<const Vec3> moment) {
  PairResults r;
  r.first = bonds.first;
  r.force = force;
  r.moment = moment;
  return r;
}

}  // namespace dem
