#include "bonds/bdem_provider.hpp"

#include "bonds/bdem_kernel.hpp"

#include "bonds/bond_hessian.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include "bonds/bond_provider.hpp"
#include "core/field_io.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"

namespace dem {

namespace {

constexpr std::uint8_t kOver = kBdemOverStrength;
constexpr std::uint8_t kTurned = kBdemTurned;

inline std::uint64_t key_of(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t lo = std::min(a, b), hi = std::max(a, b);
  return (static_cast<std::uint64_t>(lo) << 32) | hi;
}

bool all_identity(const std::vector<Quat>& q) {
  for (const Quat& a : q)
    if (!(a.w() == 1.0 && a.x() == 0.0 && a.y() == 0.0 && a.z() == 0.0)) return false;
  return true;
}

void check_material(const BdemMaterial& m, std::size_t k) {
  const std::string name = "bond material " + std::to_string(k) + ": ";
  if (!(std::isfinite(m.youngs_modulus) && m.youngs_modulus > 0.0))
    throw std::invalid_argument(name + "E must be finite and > 0, got " + format_g(m.youngs_modulus));
  if (!(m.poisson_ratio > -1.0 && m.poisson_ratio <= 0.5))
    throw std::invalid_argument(name + "nu must be in (-1, 0.5], got " + format_g(m.poisson_ratio));
  if (!(std::isfinite(m.bond_radius_factor) && m.bond_radius_factor > 0.0))
    throw std::invalid_argument(name + "beta must be finite and > 0, got " + format_g(m.bond_radius_factor));
  if (!(m.tensile_strength > 0.0) || !(m.shear_strength > 0.0))
    throw std::invalid_argument(name + "strengths must be > 0 (infinite: never fails)");
}

/// Union-find over particle slots joined by live bonds (path halving; the
/// root of a set is its smallest slot). Deterministic and serial.
std::vector<std::uint32_t> components(std::size_t n, const BondList& bonds, const std::vector<std::uint8_t>& live) {
  std::vector<std::uint32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  const auto find = [&](std::uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  for (std::size_t b = 0; b < bonds.size(); ++b) {
    if (!live[b]) continue;
    std::uint32_t a = find(bonds.first[b]), c = find(bonds.second[b]);
    if (a == c) continue;
    if (a > c) std::swap(a, c);
    parent[c] = a;
  }
  for (std::size_t i = 0; i < n; ++i) parent[i] = find(static_cast<std::uint32_t>(i));
  return parent;
}


}  // namespace

BdemMaterial bond_material(const BdemMaterial& a, const BdemMaterial& b) {
  if (&a == &b) return a;
  if (a.youngs_modulus == b.youngs_modulus && a.poisson_ratio == b.poisson_ratio &&
      a.bond_radius_factor == b.bond_radius_factor && a.tensile_strength == b.tensile_strength &&
      a.shear_strength == b.shear_strength && a.tension_only == b.tension_only)
    return a;
  BdemMaterial m;
  m.youngs_modulus = 2.0 * a.youngs_modulus * b.youngs_modulus / (a.youngs_modulus + b.youngs_modulus);
  m.poisson_ratio = 0.5 * (a.poisson_ratio + b.poisson_ratio);
  m.bond_radius_factor = std::min(a.bond_radius_factor, b.bond_radius_factor);
  m.tensile_strength = std::min(a.tensile_strength, b.tensile_strength);
  m.shear_strength = std::min(a.shear_strength, b.shear_strength);
  m.tension_only = a.tension_only || b.tension_only;
  return m;
}

BdemBondConstants bdem_bond_constants(const ParticleStore& particles, std::span<const BdemMaterial> materials,
                                      std::uint32_t i, std::uint32_t j, double rest_length) {
  BdemBondConstants c;
  c.material = bond_material(materials[particles.material[i]], materials[particles.material[j]]);
  const double r_b = c.material.bond_radius_factor * 0.5 * (particles.radius[i] + particles.radius[j]);
  c.stiffness = bdem_stiffness(c.material.youngs_modulus, c.material.poisson_ratio, r_b, rest_length);
  return c;
}

BdemBondProvider::BdemBondProvider(const ParticleStore& particles, BondList geometry,
                                   std::span<const BdemMaterial> materials)
    : bonds_(std::move(geometry)) {
  const std::size_t n = particles.size(), m = bonds_.size();
  for (std::size_t k = 0; k < materials.size(); ++k) check_material(materials[k], k);
  for (std::size_t b = 0; b < m; ++b)
    if (bonds_.first[b] >= n || bonds_.second[b] >= n || bonds_.first[b] == bonds_.second[b])
      throw std::invalid_argument("bond " + std::to_string(b) + " refers to a particle outside the " +
                                  std::to_string(n) + " particles (or to one particle twice)");
  for (std::size_t i = 0; i < n && m > 0; ++i)
    if (particles.material[i] >= materials.size())
      throw std::invalid_argument("particle " + std::to_string(particles.id[i]) + " has material " +
                                  std::to_string(particles.material[i]) + ", but there are " +
                                  std::to_string(materials.size()) + " bond materials");
  identity_reference_ = all_identity(particles.reference_attitude);

  // Types: one per distinct set of constants.
  std::map<std::array<double, 8>, std::uint32_t> type_of;
  bonds_.type.assign(m, 0);
  for (std::size_t b = 0; b < m; ++b) {
    const BdemBondConstants c =
        bdem_bond_constants(particles, materials, bonds_.first[b], bonds_.second[b], bonds_.rest_length[b]);
    const BdemMaterial& mat = c.material;
    const std::array<double, 8> key = {mat.youngs_modulus, mat.poisson_ratio, c.stiffness.bond_radius,
                                       bonds_.rest_length[b], mat.tensile_strength, mat.shear_strength,
                                       mat.tension_only ? 1.0 : 0.0, 0.0};
    auto it = type_of.find(key);
    if (it == type_of.end()) {
      BdemBondType t;
      t.stiffness = c.stiffness;
      t.tensile_strength = mat.tensile_strength;
      t.shear_strength = mat.shear_strength;
      t.tension_only = mat.tension_only;
      it = type_of.emplace(key, static_cast<std::uint32_t>(types_.size())).first;
      types_.push_back(t);
    }
    bonds_.type[b] = it->second;
  }

  // Scene index: rank of the pair key (id_i, id_j), i < j.
  std::vector<std::uint64_t> keys(m);
  for (std::size_t b = 0; b < m; ++b)
    keys[b] = key_of(particles.id[bonds_.first[b]], particles.id[bonds_.second[b]]);
  std::vector<std::uint32_t> by_key(m);
  std::iota(by_key.begin(), by_key.end(), 0u);
  std::sort(by_key.begin(), by_key.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  index_.assign(m, 0);
  live_keys_.resize(m);
  for (std::size_t r = 0; r < m; ++r) {
    index_[by_key[r]] = static_cast<std::uint32_t>(r);
    live_keys_[r] = keys[by_key[r]];
    if (r > 0 && live_keys_[r] == live_keys_[r - 1])
      throw std::invalid_argument("two bonds join particles " + std::to_string(live_keys_[r] >> 32) + " and " +
                                  std::to_string(live_keys_[r] & 0xffffffffu));
  }
  live_.assign(m, 1);
  over_.assign(m, 0);
  // (The result slots come with the first evaluation: a whole set up only
  // as the template of MPI parts never has them, engine/simulation.hpp Start.)
  incidence_.index(bonds_, n);
  has_bonds_ = m > 0;
}

std::unique_ptr<ForceProvider> BdemBondProvider::make_part(const ParticleStore& part, const PartMap& map) const {
  std::unique_ptr<BdemBondProvider> p(new BdemBondProvider());
  std::vector<std::uint32_t> kept;
  p->bonds_ = part_bonds(bonds_, map.part_slot, kept);
  p->types_ = types_;
  p->identity_reference_ = identity_reference_;
  p->has_bonds_ = has_bonds_;
  const std::size_t m = kept.size();
  p->index_.resize(m);
  p->live_.resize(m);
  for (std::size_t k = 0; k < m; ++k) {
    p->index_[k] = index_[kept[k]];
    const bool failed = std::binary_search(map.failed_bonds.begin(), map.failed_bonds.end(), p->index_[k]);
    p->live_[k] = failed ? 0 : 1;
    const std::uint32_t i = p->bonds_.first[k], j = p->bonds_.second[k];
    if (failed && part.books(i, j)) ++p->broken_;
    if (!failed) p->live_keys_.push_back(key_of(part.id[i], part.id[j]));
  }
  std::sort(p->live_keys_.begin(), p->live_keys_.end());
  p->over_.assign(m, 0);
  p->bond_force_.assign(m, Vec3::Zero());
  p->bond_moment_.assign(m, Vec3::Zero());
  p->bond_moment_second_.assign(m, Vec3::Zero());
  p->incidence_.index(p->bonds_, part.size());
  return p;
}

void BdemBondProvider::renumber(std::span<const std::uint32_t> new_slot) {
  images_.stale = true;
  const std::vector<std::uint32_t> order = renumber_and_sort_bonds(bonds_, new_slot);
  const auto apply = [&](auto& v) {
    auto old = v;
    for (std::size_t k = 0; k < order.size(); ++k) v[k] = old[order[k]];
  };
  apply(index_);
  apply(live_);
  if (bond_force_.size() == order.size()) {  // (none before the first evaluation)
    apply(bond_force_);
    apply(bond_moment_);
    apply(bond_moment_second_);
  }
  std::fill(over_.begin(), over_.end(), 0);
  over_count_ = 0;
  incidence_.index(bonds_, new_slot.size());
}

void BdemBondProvider::prepare_attitudes(const ParticleStore& s) const {
  if (identity_reference_) return;
  relative_.resize(s.size());
  parallel_for_ranges(s.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) relative_[i] = s.attitude[i] * s.reference_attitude[i].conjugate();
  });
}

void BdemBondProvider::evaluate(const ParticleStore& s) {
  if (bond_force_.size() != bonds_.size())
    for (std::vector<Vec3>* v : {&bond_force_, &bond_moment_, &bond_moment_second_}) v->assign(bonds_.size(), Vec3::Zero());
  prepare_attitudes(s);
  images_.update(bonds_, s, cell_);
  BdemKernelArgs a;
  a.first = bonds_.first.data();
  a.second = bonds_.second.data();
  a.position = s.position.data();
  a.offset = images_.offset.empty() ? nullptr : images_.offset.data();
  a.attitude = identity_reference_ ? s.attitude.data() : relative_.data();
  a.rest_direction = bonds_.rest_direction.data();
  a.rest_length = bonds_.rest_length.data();
  a.type = bonds_.type.data();
  a.types = types_.data();
  a.live = live_.data();
  a.force = bond_force_.data();
  a.moment = bond_moment_.data();
  a.moment_second = bond_moment_second_.data();
  a.flags = over_.data();
  // The vectorised loop (bonds/bdem_kernel.hpp) over ranges of whole 8-bond
  // blocks; a failed bond's slots stay zero.
  constexpr std::size_t kBlock = 8;
  const std::size_t m = bonds_.size();
  std::atomic<std::size_t> over{0};
  parallel_for_ranges((m + kBlock - 1) / kBlock, [&](std::size_t begin, std::size_t end) {
    const std::size_t local = bdem_bond_forces(a, begin * kBlock, std::min(end * kBlock, m));
    if (local) over.fetch_add(local, std::memory_order_relaxed);
  }, 64);
  over_count_ = over.load();
}

PairResults BdemBondProvider::pair_results() const {
  if (bond_force_.size() != bonds_.size()) return {};  // (never evaluated)
  // The second end's moment as the kernel gives it (the gather then needs
  // no position of the first end).
  PairResults r = bond_pair_results(bonds_, bond_force_, bond_moment_);
  r.moment_second = bond_moment_second_;
  r.offset = images_.offset;
  return r;
}

Incidence BdemBondProvider::incidence() const { return incidence_.incidence(bonds_); }

void BdemBondProvider::add_potential_energies(const ParticleStore& s, EnergyReport& report) const {
  prepare_attitudes(s);
  const std::array<ExactSum, 3> e = exact_sums<3>(bonds_.size(), [&](std::size_t b, std::array<ExactSum, 3>& t) {
    if (!live_[b] || !s.books(bonds_.first[b], bonds_.second[b])) return;
    const BdemBondResult r = evaluate_bond(s, b);
    t[0].add(r.stretch_energy);
    t[1].add(r.shear_energy);
    t[2].add(r.bend_twist_energy);
  });
  report.add("U_axial", e[0]);
  report.add("U_shear", e[1]);
  report.add("U_bend", e[2]);
}

std::span<const std::uint64_t> BdemBondProvider::bonded_pairs() const {
  erase_keys(live_keys_, gone_keys_);
  return live_keys_;
}

void BdemBondProvider::element_hessians(const ParticleStore& s, std::size_t first, std::span<Mat12> out,
                                        HessianBlocks blocks) const {
  prepare_attitudes(s);
  parallel_for_ranges(out.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t b = first + k;
      if (!live_[b]) {
        out[k].setZero();
        continue;
      }
      const std::uint32_t i = bonds_.first[b], j = bonds_.second[b];
      out[k] = bdem_bond_block(blocks, s.position[i], second_end(s, b), relative(s, i), relative(s, j),
                               bonds_.rest_direction[b], bonds_.rest_length[b], types_[bonds_.type[b]].stiffness);
    }
  });
}

std::size_t BdemBondProvider::fracture(const ParticleStore& s, FractureBatch& batch) {
  pending_.clear();
  pending_books_.clear();
  pending_energy_.clear();
  batch_begin_ = batch.keys.size();
  if (over_count_ == 0) return 0;
  std::vector<std::uint32_t> failing;
  failing.reserve(over_count_);
  for (std::size_t b = 0; b < bonds_.size(); ++b)
    if (live_[b] && (over_[b] & kOver)) failing.push_back(static_cast<std::uint32_t>(b));
  std::sort(failing.begin(), failing.end(), [&](std::uint32_t a, std::uint32_t b) { return index_[a] < index_[b]; });
  // Failed keys are dropped from live_keys_ when it is next asked for
  // (bonded_pairs(), at a rebuild), not at every fracture step.
  for (const std::uint32_t b : failing) {
    const BdemBondType& t = types_[bonds_.type[b]];
    const BdemBondResult r = evaluate_bond(s, b);
    const BdemStress st = bdem_stress(r, t.stiffness, t.tension_only);
    const std::uint32_t i = bonds_.first[b], j = bonds_.second[b];
    BondFailure f;
    f.bond = index_[b];
    f.id_i = std::min(s.id[i], s.id[j]);
    f.id_j = std::max(s.id[i], s.id[j]);
    f.sigma = st.sigma;
    f.tau = st.tau;
    f.sigma_ratio = st.sigma / t.tensile_strength;
    f.tau_ratio = st.tau / t.shear_strength;
    f.tensile = f.sigma_ratio >= f.tau_ratio;
    f.axial_force = r.axial_force;
    f.shear_force = r.shear_force;
    f.bending_moment = r.bending_moment;
    f.twist_moment = r.twist_moment;
    f.midpoint = 0.5 * (s.position[i] + second_end(s, b));
    pending_.push_back(f);
    pending_books_.push_back(s.books(i, j) ? 1 : 0);
    pending_energy_.push_back(r.stretch_energy + r.shear_energy + r.bend_twist_energy);
    live_[b] = 0;
    over_[b] = 0;
    bond_force_[b] = Vec3::Zero();
    bond_moment_[b] = Vec3::Zero();
    bond_moment_second_[b] = Vec3::Zero();
    const std::uint64_t key = key_of(f.id_i, f.id_j);
    gone_keys_.push_back(key);
    batch.keys.push_back(key);
    batch.slots.push_back(i);
    batch.slots.push_back(j);
    batch.bond_energy.push_back(pending_energy_.back());
  }
  // Broken bonds are counted where they are booked (once over MPI ranks).
  for (const std::uint8_t b : pending_books_) broken_ += b;
  over_count_ = 0;
  return failing.size();
}

void BdemBondProvider::stress_ratios(const ParticleStore& s, std::vector<double>& out) const {
  out.resize(bonds_.size());
  parallel_for_ranges(bonds_.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t b = begin; b < end; ++b) {
      if (!live_[b]) {
        out[b] = 0.0;
        continue;
      }
      const BdemBondType& t = types_[bonds_.type[b]];
      const BdemStress st = bdem_stress(evaluate_bond(s, b), t.stiffness, t.tension_only);
      out[b] = std::max(st.sigma / t.tensile_strength, st.tau / t.shear_strength);
    }
  });
}

ExactSum BdemBondProvider::book_fracture(const FractureBatch& batch) {
  ExactSum work;
  for (std::size_t k = 0; k < pending_.size(); ++k) {
    if (!pending_books_[k]) continue;  // booked by the rank that owns its lower-id end
    const double contact = batch.contact_energy.empty() ? 0.0 : batch.contact_energy[batch_begin_ + k];
    pending_[k].bond_energy = pending_energy_[k];
    pending_[k].energy = pending_energy_[k] - contact;
    work.add(pending_[k].energy);
    booked_.push_back(pending_[k]);
  }
  pending_.clear();
  pending_books_.clear();
  pending_energy_.clear();
  return work;
}

void BdemBondProvider::take_failures(std::vector<BondFailure>& out) {
  out.insert(out.end(), booked_.begin(), booked_.end());
  booked_.clear();
}

void BdemBondProvider::add_bond_counts(const ParticleStore& s, EnergyReport& report) const {
  report.broken_bonds += broken_;
  const std::vector<std::uint32_t> root = components(s.size(), bonds_, live_);
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < root.size(); ++i) count += root[i] == i ? 1 : 0;
  report.fragments += count;
}

std::vector<std::uint32_t> BdemBondProvider::broken_per_particle(std::size_t n) const {
  std::vector<std::uint32_t> out(n, 0);
  for (std::size_t b = 0; b < bonds_.size(); ++b)
    if (!live_[b]) {
      ++out[bonds_.first[b]];
      ++out[bonds_.second[b]];
    }
  return out;
}

std::vector<std::uint32_t> BdemBondProvider::fragment_labels(const ParticleStore& s) const {
  const std::vector<std::uint32_t> root = components(s.size(), bonds_, live_);
  std::vector<std::uint32_t> smallest(s.size(), 0xffffffffu);
  for (std::size_t i = 0; i < root.size(); ++i) smallest[root[i]] = std::min(smallest[root[i]], s.id[i]);
  std::vector<std::uint32_t> out(s.size());
  for (std::size_t i = 0; i < root.size(); ++i) out[i] = smallest[root[i]];
  return out;
}

std::uint64_t BdemBondProvider::overturned_count() const {
  std::uint64_t c = 0;
  for (std::size_t b = 0; b < over_.size(); ++b) c += (live_[b] && (over_[b] & kTurned)) ? 1 : 0;
  return c;
}

std::vector<ArrayBytes> BdemBondProvider::memory_use() const {
  std::vector<ArrayBytes> out;
  bonds_.for_each_field([&](const char* name, const auto& v) { out.push_back({std::string("bond ") + name, capacity_bytes(v)}); });
  out.push_back({"bond force and moment slots",
                 capacity_bytes(bond_force_) + capacity_bytes(bond_moment_) + capacity_bytes(bond_moment_second_)});
  out.push_back({"bond incidence (offsets, entries)", incidence_.bytes()});
  out.push_back({"bond scene index, live and strength flags, live keys",
                 capacity_bytes(index_) + capacity_bytes(live_) + capacity_bytes(over_) + capacity_bytes(live_keys_)});
  out.push_back({"relative attitudes", capacity_bytes(relative_)});
  return out;
}

void BdemBondProvider::save(ByteWriter& w) const {
  save_fields(w, bonds_, bonds_.size(), "bond");
  w.u64(types_.size());
  for (const BdemBondType& t : types_) {
    const BdemStiffness& k = t.stiffness;
    for (const double x : {k.normal, k.shear, k.bending, k.twist, k.bond_radius, k.area, k.inertia, k.polar,
                           t.tensile_strength, t.shear_strength})
      w.f64(x);
    w.u8(t.tension_only ? 1 : 0);
  }
  for (const std::uint32_t x : index_) w.u32(x);
  for (const std::uint8_t x : live_) w.u8(x);
  w.u64(broken_);
}

std::unique_ptr<BdemBondProvider> BdemBondProvider::load(ByteReader& r, const ParticleStore& particles) {
  std::unique_ptr<BdemBondProvider> p(new BdemBondProvider());
  const auto fail = [](const std::string& m) { throw StateError("inconsistent: " + m); };
  BondList& b = p->bonds_;
  const std::size_t m = load_fields(r, b, "bond");
  const std::size_t n = particles.size();
  const std::size_t types = r.count("BDEM bond type", 81);
  for (std::size_t t = 0; t < types; ++t) {
    BdemBondType bt;
    BdemStiffness& k = bt.stiffness;
    double* fields[] = {&k.normal, &k.shear, &k.bending, &k.twist, &k.bond_radius, &k.area, &k.inertia, &k.polar,
                        &bt.tensile_strength, &bt.shear_strength};
    for (double* f : fields) *f = r.f64("BDEM bond type");
    for (int q = 0; q < 8; ++q)
      if (!(std::isfinite(*fields[q]) && *fields[q] >= 0.0))
        fail("BDEM bond type " + std::to_string(t) + " has a stiffness that is negative or not finite");
    if (!(bt.tensile_strength > 0.0) || !(bt.shear_strength > 0.0))
      fail("BDEM bond type " + std::to_string(t) + " has a strength that is not > 0");
    const std::uint8_t flag = r.u8("BDEM tension_only");
    if (flag > 1) fail("BDEM bond type " + std::to_string(t) + ": tension_only is not 0 or 1");
    bt.tension_only = flag == 1;
    set_stress_factors(k);
    p->types_.push_back(bt);
  }
  p->index_.resize(m);
  for (std::size_t k = 0; k < m; ++k) p->index_[k] = r.u32("bond scene index");
  p->live_.resize(m);
  std::uint64_t dead = 0;
  for (std::size_t k = 0; k < m; ++k) {
    p->live_[k] = r.u8("bond live flag");
    if (p->live_[k] > 1) fail("bond " + std::to_string(k) + ": live flag is not 0 or 1");
    dead += p->live_[k] ? 0 : 1;
  }
  p->broken_ = r.u64("broken bond count");
  if (p->broken_ != dead)
    fail(std::to_string(p->broken_) + " broken bonds recorded, " + std::to_string(dead) + " flagged");
  std::vector<char> seen(m, 0);
  for (std::size_t k = 0; k < m; ++k) {
    const std::string name = "bond " + std::to_string(k);
    if (b.first[k] >= n || b.second[k] >= n) fail(name + ": particle index out of range (" + std::to_string(n) + " particles)");
    if (b.first[k] == b.second[k]) fail(name + ": a particle bonded to itself");
    if (!(std::isfinite(b.rest_length[k]) && b.rest_length[k] > 0.0)) fail(name + ": rest length must be finite and > 0");
    if (!b.rest_direction[k].allFinite() || !(std::abs(b.rest_direction[k].norm() - 1.0) < 1e-9))
      fail(name + ": rest direction is not a unit vector");
    if (b.type[k] >= types) fail(name + ": type out of range");
    if (p->index_[k] >= m || seen[p->index_[k]]) fail(name + ": scene indexes are not a permutation");
    seen[p->index_[k]] = 1;
  }
  b.stiffness_types.assign(1, BondStiffness{});
  for (std::size_t k = 0; k < m; ++k)
    if (p->live_[k]) p->live_keys_.push_back(key_of(particles.id[b.first[k]], particles.id[b.second[k]]));
  std::sort(p->live_keys_.begin(), p->live_keys_.end());
  p->identity_reference_ = all_identity(particles.reference_attitude);
  p->has_bonds_ = m > 0;
  p->over_.assign(m, 0);
  p->bond_force_.assign(m, Vec3::Zero());
  p->bond_moment_.assign(m, Vec3::Zero());
  p->bond_moment_second_.assign(m, Vec3::Zero());
  p->incidence_.index(p->bonds_, n);
  return p;
}

}  // namespace dem
