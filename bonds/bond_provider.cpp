#include "bonds/bond_provider.hpp"

#include "bonds/bond_hessian.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "bonds/bond_kernel.hpp"
#include "bonds/bond_potential.hpp"
#include "core/field_io.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"

namespace dem {

namespace {

/// Q = R R0^T, the rotation of a particle since its reference attitude
/// (R itself when every reference attitude is the identity, as in the
/// generated scenes: the product would only multiply by 1).
inline Quat relative_attitude(const ParticleStore& s, std::size_t i, bool identity_reference) {
  if (identity_reference) return s.attitude[i];
  return s.attitude[i] * s.reference_attitude[i].conjugate();
}

bool all_identity(const std::vector<Quat>& q) {
  for (const Quat& a : q)
    if (!(a.w() == 1.0 && a.x() == 0.0 && a.y() == 0.0 && a.z() == 0.0)) return false;
  return true;
}

}  // namespace

BondProvider::BondProvider(const ParticleStore& particles, BondList bonds) : bonds_(std::move(bonds)) {
  const std::size_t n = particles.size();
  for (std::size_t b = 0; b < bonds_.size(); ++b)
    if (bonds_.first[b] >= n || bonds_.second[b] >= n)
      throw std::invalid_argument("bond " + std::to_string(b) + " refers to a particle outside the " +
                                  std::to_string(n) + " particles");
  incidence_.index(bonds_, n);
  // (The result slots come with the first evaluation: a whole set up only
  // as the template of MPI parts never has them, engine/simulation.hpp Start.)
  identity_reference_ = all_identity(particles.reference_attitude);
  has_bonds_ = !bonds_.empty();
}

std::unique_ptr<ForceProvider> BondProvider::make_part(const ParticleStore& part, const PartMap& map) const {
  std::vector<std::uint32_t> kept;
  auto p = std::make_unique<BondProvider>(part, part_bonds(bonds_, map.part_slot, kept));
  p->identity_reference_ = identity_reference_;
  p->has_bonds_ = has_bonds_;
  return p;
}

BondList part_bonds(const BondList& bonds, std::span<const std::uint32_t> part_slot, std::vector<std::uint32_t>& kept) {
  kept.clear();
  for (std::size_t b = 0; b < bonds.size(); ++b)
    if (part_slot[bonds.first[b]] != PartMap::kNotInPart && part_slot[bonds.second[b]] != PartMap::kNotInPart)
      kept.push_back(static_cast<std::uint32_t>(b));
  BondList out;
  const auto pick = [&](const auto& from, auto& to) {
    to.resize(kept.size());
    for (std::size_t k = 0; k < kept.size(); ++k) to[k] = from[kept[k]];
  };
  pick(bonds.first, out.first);
  pick(bonds.second, out.second);
  pick(bonds.rest_length, out.rest_length);
  pick(bonds.rest_direction, out.rest_direction);
  pick(bonds.type, out.type);
  out.stiffness_types = bonds.stiffness_types;
  if (!out.stiffness_types.empty()) out.rebuild_type_index();
  const std::vector<std::uint32_t> order = renumber_and_sort_bonds(out, part_slot);
  std::vector<std::uint32_t> sorted(kept.size());
  for (std::size_t k = 0; k < order.size(); ++k) sorted[k] = kept[order[k]];
  kept.swap(sorted);
  return out;
}

void BondProvider::renumber(std::span<const std::uint32_t> new_slot) {
  images_.stale = true;
  renumber_and_sort_bonds(bonds_, new_slot);
  incidence_.index(bonds_, new_slot.size());
}

void BondProvider::evaluate(const ParticleStore& s) {
  if (bond_force_.size() != bonds_.size()) {
    bond_force_.resize(bonds_.size());
    bond_moment_.resize(bonds_.size());
  }
  images_.update(bonds_, s, cell_);
  BondKernelArgs a;
  a.first = bonds_.first.data();
  a.second = bonds_.second.data();
  a.position = s.position.data();
  a.offset = images_.offset.empty() ? nullptr : images_.offset.data();
  a.attitude = s.attitude.data();
  a.reference_attitude = identity_reference_ ? nullptr : s.reference_attitude.data();
  a.rest_length = bonds_.rest_length.data();
  a.rest_direction = bonds_.rest_direction.data();
  a.type = bonds_.type.data();
  a.stiffness_types = bonds_.stiffness_types.data();
  a.force = bond_force_.data();
  a.moment = bond_moment_.data();
  // Ranges of whole 8-bond blocks, so that only the last bonds fall to the
  // scalar tail (the split changes no bit, only the speed).
  constexpr std::size_t kBlock = 8;
  const std::size_t m = bonds_.size();
  parallel_for_ranges((m + kBlock - 1) / kBlock, [&](std::size_t begin, std::size_t end) {
    bond_forces(a, begin * kBlock, std::min(end * kBlock, m));
  }, 64);
}

void BondProvider::element_hessians(const ParticleStore& s, std::size_t first, std::span<Mat12> out,
                                    HessianBlocks blocks) const {
  parallel_for_ranges(out.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const std::size_t b = first + r;
      const std::uint32_t i = bonds_.first[b], j = bonds_.second[b];
      const BondStiffness& k = bonds_.stiffness(b);
      out[r] = bond_block(blocks, s.position[i], s.position[j], relative_attitude(s, i, identity_reference_),
                          relative_attitude(s, j, identity_reference_), bonds_.rest_length[b],
                          bonds_.rest_direction[b], k.bending, k.axial, k.shear);
    }
  });
}

PairResults BondProvider::pair_results() const {
  if (bond_force_.size() != bonds_.size()) return {};  // (never evaluated)
  PairResults r = bond_pair_results(bonds_, bond_force_, bond_moment_);
  r.offset = images_.offset;
  return r;
}

Incidence BondProvider::incidence() const { return incidence_.incidence(bonds_); }

void BondProvider::add_potential_energies(const ParticleStore& s, EnergyReport& r) const {
  const std::array<ExactSum, 3> be = exact_sums<3>(bonds_.size(), [&](std::size_t b, std::array<ExactSum, 3>& t) {
    const std::uint32_t i = bonds_.first[b], j = bonds_.second[b];
    if (!s.books(i, j)) return;
    const Quat qi = relative_attitude(s, i, identity_reference_),
               qj = relative_attitude(s, j, identity_reference_);
    t[0].add(bond_bending(qi, qj, bonds_.stiffness(b).bending).energy);
    const Vec3 xj = images_.offset.empty() ? s.position[j] : Vec3(s.position[j] + images_.offset[b]);
    t[1].add(bond_axial(s.position[i], xj, bonds_.rest_length[b], bonds_.stiffness(b).axial).energy);
    t[2].add(bond_shear(s.position[i], xj, qi, qj, bonds_.rest_direction[b], bonds_.stiffness(b).shear).energy);
  });
  r.add("U_bend", be[0]);
  r.add("U_axial", be[1]);
  r.add("U_shear", be[2]);
}

std::vector<ArrayBytes> BondProvider::memory_use() const {
  std::vector<ArrayBytes> out;
  bonds_.for_each_field([&](const char* name, const auto& v) { out.push_back({std::string("bond ") + name, capacity_bytes(v)}); });
  out.push_back({"bond force slots", capacity_bytes(bond_force_)});
  out.push_back({"bond moment slots", capacity_bytes(bond_moment_)});
  out.push_back({"bond incidence (offsets, entries)", incidence_.bytes()});
  return out;
}

void BondProvider::save(ByteWriter& w) const {
  save_fields(w, bonds_, bonds_.size(), "bond");
  w.u64(bonds_.stiffness_types.size());
  for (const BondStiffness& k : bonds_.stiffness_types) {
    w.f64(k.bending);
    w.f64(k.axial);
    w.f64(k.shear);
  }
}

std::unique_ptr<BondProvider> BondProvider::load(ByteReader& r, const ParticleStore& particles) {
  BondList b;
  const std::size_t n = load_fields(r, b, "bond");
  const std::size_t types = r.count("bond stiffness type", 24);
  const auto fail = [](const std::string& m) { throw StateError("inconsistent: " + m); };
  const auto finite_nonnegative = [](double x) { return std::isfinite(x) && x >= 0.0; };
  b.stiffness_types.reserve(types);
  for (std::size_t t = 0; t < types; ++t) {
    BondStiffness k;
    k.bending = r.f64("bond stiffness types");
    k.axial = r.f64("bond stiffness types");
    k.shear = r.f64("bond stiffness types");
    if (!(finite_nonnegative(k.bending) && finite_nonnegative(k.axial) && finite_nonnegative(k.shear)))
      fail("bond stiffness type " + std::to_string(t) + " has a stiffness that is negative or not finite");
    b.stiffness_types.push_back(k);
  }
  const std::size_t particle_count = particles.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = "bond " + std::to_string(i) + " (" + std::to_string(b.first[i]) + ", " +
                             std::to_string(b.second[i]) + ")";
    if (b.first[i] >= particle_count || b.second[i] >= particle_count)
      fail(name + ": particle index out of range (" + std::to_string(particle_count) + " particles)");
    if (b.first[i] == b.second[i]) fail(name + ": a particle bonded to itself");
    if (!(std::isfinite(b.rest_length[i]) && b.rest_length[i] > 0.0))
      fail(name + ": rest length must be finite and > 0, got " + format_g(b.rest_length[i], 17));
    if (!b.rest_direction[i].allFinite() || !(std::abs(b.rest_direction[i].norm() - 1.0) < 1e-9))
      fail(name + ": rest direction is not a unit vector");
    if (b.type[i] >= types)
      fail(name + ": stiffness type " + std::to_string(b.type[i]) + " out of range (" +
           std::to_string(types) + " types)");
  }
  try {
    b.rebuild_type_index();
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  return std::make_unique<BondProvider>(particles, std::move(b));
}

std::vector<std::uint32_t> renumber_and_sort_bonds(BondList& bonds, std::span<const std::uint32_t> new_slot) {
  const std::size_t m = bonds.size();
  for (std::size_t b = 0; b < m; ++b) {
    std::uint32_t i = new_slot[bonds.first[b]], j = new_slot[bonds.second[b]];
    if (i > j) {
      std::swap(i, j);
      bonds.rest_direction[b] = -bonds.rest_direction[b];
    }
    bonds.first[b] = i;
    bonds.second[b] = j;
  }
  // Ascending (first, second, old index), the one total order: a counting
  // sort by the first end (stable: old indices ascend within each end),
  // then each particle's few bonds by their second ends, stably. Time
  // proportional to the bonds and the slots, where a comparison sort of
  // millions of bonds took most of a scene's set-up.
  std::uint32_t slots = 0;
  for (std::size_t b = 0; b < m; ++b) slots = std::max(slots, bonds.first[b] + 1);
  std::vector<std::uint32_t> start(static_cast<std::size_t>(slots) + 1, 0);
  for (std::size_t b = 0; b < m; ++b) ++start[bonds.first[b] + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::uint32_t> order(m);
  {
    std::vector<std::uint32_t> at(start.begin(), start.end() - 1);
    for (std::size_t b = 0; b < m; ++b) order[at[bonds.first[b]]++] = static_cast<std::uint32_t>(b);
  }
  parallel_for_ranges(slots, [&](std::size_t begin, std::size_t end) {
    for (std::size_t p = begin; p < end; ++p)  // (an insertion sort: a dozen bonds an end)
      for (std::uint32_t k = start[p] + 1; k < start[p + 1]; ++k) {
        const std::uint32_t b = order[k];
        std::uint32_t q = k;
        for (; q > start[p] && bonds.second[order[q - 1]] > bonds.second[b]; --q) order[q] = order[q - 1];
        order[q] = b;
      }
  });
  bonds.permute(order);
  return order;
}

}  // namespace dem
