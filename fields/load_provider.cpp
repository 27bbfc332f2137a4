#include "fields/load_provider.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <string>

#include "core/parallel.hpp"

namespace dem {

LoadProvider::LoadProvider(const ParticleStore& s, std::vector<std::uint32_t> ids, std::vector<Vec3> force)
    : ids_(std::move(ids)), force_(std::move(force)) {
  if (ids_.size() != force_.size())
    throw std::invalid_argument("LoadProvider: " + std::to_string(ids_.size()) + " ids for " +
                                std::to_string(force_.size()) + " forces");
  const std::size_t n = s.size();
  std::vector<std::uint32_t> slot_of_id(n, 0xffffffffu);
  for (std::size_t i = 0; i < n; ++i)
    if (s.id[i] < n) slot_of_id[s.id[i]] = static_cast<std::uint32_t>(i);
  per_slot_.assign(n, Vec3::Zero());
  std::vector<char> seen(n, 0);
  for (std::size_t k = 0; k < ids_.size(); ++k) {
    const std::uint32_t id = ids_[k];
    if (id >= n || slot_of_id[id] == 0xffffffffu)
      throw std::invalid_argument("load on particle id " + std::to_string(id) + ", which is not a particle");
    if (seen[id]) throw std::invalid_argument("two loads on particle id " + std::to_string(id));
    seen[id] = 1;
    if (!force_[k].allFinite()) throw std::invalid_argument("the load on particle id " + std::to_string(id) + " is not finite");
    per_slot_[slot_of_id[id]] = force_[k];
  }
}

std::unique_ptr<ForceProvider> LoadProvider::make_part(const ParticleStore& part, const PartMap&) const {
  std::unique_ptr<LoadProvider> p(new LoadProvider());
  p->ids_ = ids_;
  p->force_ = force_;
  p->per_slot_.assign(part.size(), Vec3::Zero());
  if (ids_.empty()) return p;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> slot_by_id(part.size());
  for (std::size_t i = 0; i < part.size(); ++i) slot_by_id[i] = {part.id[i], static_cast<std::uint32_t>(i)};
  std::sort(slot_by_id.begin(), slot_by_id.end());
  for (std::size_t k = 0; k < ids_.size(); ++k) {
    const auto it = std::lower_bound(slot_by_id.begin(), slot_by_id.end(), std::make_pair(ids_[k], 0u));
    if (it != slot_by_id.end() && it->first == ids_[k]) p->per_slot_[it->second] = force_[k];
  }
  return p;
}

void LoadProvider::renumber(std::span<const std::uint32_t> new_slot) {
  std::vector<Vec3> next(per_slot_.size(), Vec3::Zero());
  for (std::size_t s = 0; s < per_slot_.size(); ++s) next[new_slot[s]] = per_slot_[s];
  per_slot_.swap(next);
}

void LoadProvider::add_body_forces(const ParticleStore&, std::size_t begin, std::size_t end, std::span<Vec3> force,
                                   std::span<Vec3>) const {
  if (ids_.empty()) return;
  for (std::size_t i = begin; i < end; ++i) force[i] += per_slot_[i];
}

void LoadProvider::add_potential_energies(const ParticleStore& s, EnergyReport& r) const {
  if (ids_.empty()) return;
  const ExactSum u = exact_sum(s.size(), [&](std::size_t i) {
    if (!s.owns(i)) return 0.0;
    return -per_slot_[i].dot(s.position[i] - s.reference_position[i]);
  });
  r.add("U_load", u);
  r.add("S_field", exact_sum(s.size(), [&](std::size_t i) { return s.owns(i) ? per_slot_[i].norm() * s.radius[i] : 0.0; }));
}

void LoadProvider::save(ByteWriter& w) const {
  w.u64(ids_.size());
  for (std::size_t k = 0; k < ids_.size(); ++k) {
    w.u32(ids_[k]);
    w.vec3(force_[k]);
  }
}

std::unique_ptr<LoadProvider> LoadProvider::load(ByteReader& r, const ParticleStore& s) {
  const std::size_t n = r.count("load", 28);
  std::vector<std::uint32_t> ids(n);
  std::vector<Vec3> force(n);
  for (std::size_t k = 0; k < n; ++k) {
    ids[k] = r.u32("load particle id");
    force[k] = r.vec3("load force");
  }
  try {
    return std::make_unique<LoadProvider>(s, std::move(ids), std::move(force));
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("inconsistent: ") + e.what());
  }
}

}  // namespace dem
