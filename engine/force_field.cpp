#include "engine/force_field.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "bonds/bond_provider.hpp"
#include "contact/wall_provider.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"
#include "fields/gravity_provider.hpp"

namespace dem {

namespace {

void require_nonnegative(double v, const std::string& what) {
  if (!(std::isfinite(v) && v >= 0.0))
    throw std::invalid_argument(what + " must be finite and >= 0, got " + format_g(v));
}

/// Particle i's sums over the pair records, accumulated in locals
/// (registers) and written back once: the force f and moment tau, and the
/// non-conservative parts f_nc, tau_nc of the providers that give them
/// (PairResults::nc_force).
struct ParticleSums {
  Vec3 f = Vec3::Zero(), tau = Vec3::Zero(), f_nc = Vec3::Zero(), tau_nc = Vec3::Zero();
};

/// Adds the records of one pair provider to particle i's sums, in incidence
/// order; with NonConservative, also to f_nc and tau_nc (every moment of
/// such a provider is non-conservative, and its second ends' moments are
/// given).
template <bool Moments, bool NonConservative>
inline void gather_pairs(const PairView& v, const ParticleStore& s, std::size_t i, const Vec3& x, ParticleSums& out) {
  const PairResults& r = v.r;
  const Incidence& inc = v.inc;
  const Vec3* force = r.force.data();
  const Vec3* nc = r.nc_force.data();
  ParticleSums sum = out;
  // Both inlined (always): called out of line, they would keep the sums
  // in memory instead of registers.
  const auto first_end = [&](std::uint32_t b) __attribute__((always_inline)) {
    sum.f += force[b];
    if constexpr (NonConservative) sum.f_nc += nc[b];
    if constexpr (Moments) {
      sum.tau += r.moment[b];
      if constexpr (NonConservative) sum.tau_nc += r.moment[b];
    }
  };
  // The second end's moment: given, or from the balance of angular momentum.
  const auto second_end = [&](std::uint32_t b) __attribute__((always_inline)) {
    sum.f -= force[b];
    if constexpr (NonConservative) sum.f_nc -= nc[b];
    if constexpr (Moments) {
      if (!r.moment_second.empty()) {
        sum.tau += r.moment_second[b];
        if constexpr (NonConservative) sum.tau_nc += r.moment_second[b];
      } else {
        // x_i - x_j, with x_j at its image across a periodic face.
        const Vec3 arm = r.offset.empty() ? Vec3(s.position[r.first[b]] - x)
                                          : Vec3(s.position[r.first[b]] - (x + r.offset[b]));
        sum.tau -= r.moment[b] + arm.cross(force[b]);
      }
    }
  };
  if (!inc.entry_offsets.empty()) {
    const std::uint32_t* entries = inc.entries.data();
    // The slots of a particle's records are scattered (records are sorted
    // by their first end): fetch a few entries ahead, running into the next
    // particle's entries (entries are one array).
    constexpr std::uint32_t kAhead = 12;
    const std::uint32_t total = static_cast<std::uint32_t>(inc.entries.size());
    for (std::uint32_t e = inc.entry_offsets[i], end = inc.entry_offsets[i + 1]; e < end; ++e) {
      if (e + kAhead < total) {
        const std::uint32_t ahead = entries[e + kAhead];
        __builtin_prefetch(&force[ahead >> 1]);
        if constexpr (NonConservative) __builtin_prefetch(&nc[ahead >> 1]);
        if constexpr (Moments) {
          if ((ahead & 1u) == 0 || r.moment_second.empty()) __builtin_prefetch(&r.moment[ahead >> 1]);
          else __builtin_prefetch(&r.moment_second[ahead >> 1]);
        }
      }
      const std::uint32_t entry = entries[e];
      if ((entry & 1u) == 0) first_end(entry >> 1);
      else second_end(entry >> 1);
    }
  }
  if (!inc.owned_offsets.empty())
    for (std::uint32_t k = inc.owned_offsets[i], end = inc.owned_offsets[i + 1]; k < end; ++k) first_end(k);
  if (!inc.incoming_offsets.empty()) {
    const std::uint32_t* incoming = inc.incoming.data();
    for (std::uint32_t e = inc.incoming_offsets[i], end = inc.incoming_offsets[i + 1]; e < end; ++e)
      second_end(incoming[e]);
  }
  out = sum;
}

/// gather_pairs with the template arguments of view v.
inline void gather_view(const PairView& v, const ParticleStore& s, std::size_t i, const Vec3& x, ParticleSums& out) {
  const bool moments = !v.r.moment.empty(), nc = !v.r.nc_force.empty();
  if (moments) {
    if (nc) gather_pairs<true, true>(v, s, i, x, out);
    else gather_pairs<true, false>(v, s, i, x, out);
  } else {
    if (nc) gather_pairs<false, true>(v, s, i, x, out);
    else gather_pairs<false, false>(v, s, i, x, out);
  }
}

}  // namespace

ForceField::ForceField(const ParticleStore& particles, BondList bonds, ContactSettings contact,
                       std::vector<Wall> walls, Vec3 gravity) {
  require_nonnegative(contact.skin, "contact skin");
  require_nonnegative(contact.stiffness, "contact stiffness K^pp");
  if (!gravity.allFinite()) throw std::invalid_argument("gravity is not finite");
  add(std::make_unique<BondProvider>(particles, std::move(bonds)));
  add(std::make_unique<HertzContactProvider>(HertzContactLaw{contact.stiffness}, contact.skin));
  add(std::make_unique<WallProvider>(std::move(walls)));
  add(std::make_unique<GravityProvider>(gravity));
  reorder_on_rebuild_ = contact.reorder_on_rebuild;
}

void ForceField::add(std::unique_ptr<ForceProvider> provider) {
  if (!provider) throw std::invalid_argument("ForceField::add: no provider");
  if (find(provider->name()) != nullptr)
    throw std::invalid_argument("ForceField::add: a provider named '" + provider->name() + "' is already there");
  caps_.push_back(provider->capabilities());
  providers_.push_back(std::move(provider));
  due_.push_back(0);
  // The periodic cell reaches every provider, before it and after it.
  if (caps_.back().cell != nullptr) {
    if (cell_ != nullptr) throw std::invalid_argument("ForceField::add: a second periodic cell");
    cell_ = caps_.back().cell;
    for (const auto& p : providers_) p->set_cell(cell_->cell());
  } else if (cell_ != nullptr) {
    providers_.back()->set_cell(cell_->cell());
  }
}

bool ForceField::set_cell_time(double t) {
  if (cell_ == nullptr || !cell_->set_time(t)) return false;
  for (const auto& p : providers_) p->set_cell(cell_->cell());
  return true;
}

bool ForceField::control_cell(const Mat3& stress, double t) {
  if (cell_ == nullptr || !cell_->control(stress, t)) return false;
  for (const auto& p : providers_) p->set_cell(cell_->cell());
  return true;
}

const ForceProvider* ForceField::find(const std::string& name) const {
  for (const auto& p : providers_)
    if (p->name() == name) return p.get();
  return nullptr;
}

ForceProvider* ForceField::find(const std::string& name) {
  for (const auto& p : providers_)
    if (p->name() == name) return p.get();
  return nullptr;
}

void ForceField::sync_exclusions() {
  // The bonded pairs of every provider (in practice one bond provider), as
  // one ascending key list, handed to every provider (contacts use it).
  std::vector<std::uint64_t> merged;
  const std::span<const std::uint64_t>* only = nullptr;
  std::span<const std::uint64_t> first;
  std::size_t with_pairs = 0;
  for (const ProviderCapabilities& c : caps_) {
    if (c.fracturing == nullptr) continue;
    const std::span<const std::uint64_t> k = c.fracturing->bonded_pairs();
    if (k.empty()) continue;
    if (with_pairs++ == 0) first = k;
    merged.insert(merged.end(), k.begin(), k.end());
  }
  if (with_pairs == 1) only = &first;
  if (with_pairs > 1) {
    std::sort(merged.begin(), merged.end());
    merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  }
  const std::span<const std::uint64_t> keys = only ? *only : std::span<const std::uint64_t>(merged);
  for (const ProviderCapabilities& c : caps_)
    if (c.excluded_pairs != nullptr) c.excluded_pairs->set_excluded_pairs(keys);
  exclusions_synced_ = true;
}

bool ForceField::rebuild_due(const ParticleStore& s) {
  if (!exclusions_synced_) sync_exclusions();
  bool any = false;
  for (std::size_t k = 0; k < providers_.size(); ++k) {
    const bool own = providers_[k]->rebuild_due(s);
    due_[k] = own || rebuild_requested_ ? 1 : 0;
    any = any || due_[k] != 0;
  }
  return any;
}

void ForceField::renumber(std::span<const std::uint32_t> new_slot) {
  for (const auto& p : providers_) p->renumber(new_slot);
  renumbered_ = true;
}

void ForceField::rebuild(const ParticleStore& s) {
  sync_exclusions();
  for (std::size_t k = 0; k < providers_.size(); ++k)
    if (renumbered_ || due_[k] != 0) providers_[k]->rebuild(s);
  std::fill(due_.begin(), due_.end(), 0);
  renumbered_ = false;
  rebuild_requested_ = false;
}

void ForceField::update_records(const ParticleStore& s) {
  if (rebuild_due(s)) rebuild(s);
}

void ForceField::evaluate(ParticleStore& s, StageTimes* times, const RangeHook* after_gather) {
  if (times == nullptr) {
    for (const auto& p : providers_) p->evaluate(s);
    gather(s, after_gather);
    return;
  }
  for (const auto& p : providers_) {
    StageClock clock(times, "evaluate: " + p->name());
    p->evaluate(s);
  }
  StageClock clock(times, after_gather != nullptr ? "gather (per-particle sums, walls, fields) + second kick"
                                                  : "gather (per-particle sums, walls, fields)");
  gather(s, after_gather);
}

std::size_t ForceField::pair_views(std::array<PairView, kMaxPairProviders>& views) const {
  std::size_t pairs = 0;
  for (const auto& p : providers_) {
    const Incidence inc = p->incidence();
    if (!inc.entry_offsets.empty() || !inc.owned_offsets.empty() || !inc.incoming_offsets.empty()) {
      if (pairs == kMaxPairProviders) throw std::length_error("ForceField: more than 16 pair providers");
      const PairResults r = p->pair_results();
      if (!r.nc_force.empty() && !r.moment.empty() && r.moment_second.empty())
        throw std::logic_error("ForceField: provider '" + p->name() +
                               "' gives non-conservative slots without its second ends' moments");
      views[pairs++] = PairView{r, inc};
    }
  }
  return pairs;
}

void ForceField::gather(ParticleStore& s, const RangeHook* after_gather,
                        std::span<const std::uint32_t> only) const {
  // Views of the pair providers (at most a handful; fixed-size, no allocation).
  std::array<PairView, kMaxPairProviders> views;
  const std::size_t pairs = pair_views(views);
  std::array<const ForceProvider*, kMaxPairProviders> bodies{};
  std::size_t body_count = 0;
  for (const auto& p : providers_) {
    if (body_count == kMaxPairProviders) throw std::length_error("ForceField: more than 16 providers");
    bodies[body_count++] = p.get();
  }
  const std::span<Vec3> force(s.force), moment(s.moment);
  // Without any moment the moments stay zero and are not written again
  // (the stepper zeroes them once, Simulation::start).
  bool moments = false, nonconservative = false;
  for (std::size_t p = 0; p < body_count; ++p) moments = moments || bodies[p]->gives_moments();
  for (std::size_t p = 0; p < pairs; ++p) nonconservative = nonconservative || !views[p].r.nc_force.empty();
  for (std::size_t p = 0; p < body_count; ++p)
    nonconservative = nonconservative || bodies[p]->books_body_nonconservative();
  if (nonconservative) resize_nonconservative(s.size());
  // The one-body providers' force and moment on [begin, end) (and their
  // non-conservative parts), after the pair records.
  const auto add_bodies = [&](std::size_t begin, std::size_t end) {
    for (std::size_t p = 0; p < body_count; ++p) {
      bodies[p]->add_body_forces(s, begin, end, force, moment);
      if (nonconservative) bodies[p]->add_body_nonconservative(s, begin, end, nc_force_, nc_moment_);
    }
  };
  const auto gather_one = [&](std::size_t i) {
    ParticleSums sum;
    for (std::size_t p = 0; p < pairs; ++p) gather_view(views[p], s, i, s.position[i], sum);
    force[i] = sum.f;
    if (moments) moment[i] = sum.tau;
    if (nonconservative) {
      nc_force_[i] = sum.f_nc;
      nc_moment_[i] = sum.tau_nc;
    }
  };
  if (!only.empty()) {
    // The listed particles alone (ascending, no repeats): the same sums.
    parallel_for_ranges(only.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) {
        const std::size_t i = only[k];
        gather_one(i);
        add_bodies(i, i + 1);
      }
    });
    return;
  }
  parallel_for_ranges(s.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) gather_one(i);
    add_bodies(begin, end);
    if (after_gather != nullptr) (*after_gather)(begin, end);
  });
}

EnergyReport ForceField::potential_energies(const ParticleStore& s) const {
  EnergyReport r;
  for (const auto& p : providers_) p->add_potential_energies(s, r);
  return r;
}

void ForceField::take_events(std::vector<InteractionEvent>& out) {
  for (const auto& p : providers_) p->take_events(out);
}

bool ForceField::gives_moments() const {
  for (const auto& p : providers_)
    if (p->gives_moments()) return true;
  return false;
}

bool ForceField::dissipative() const {
  for (const ProviderCapabilities& c : caps_)
    if (c.ledger != nullptr && c.ledger->dissipative()) return true;
  return false;
}

bool ForceField::boundaries_move() const {
  for (const ProviderCapabilities& c : caps_)
    if (c.boundary != nullptr && c.boundary->moves()) return true;
  return false;
}

void ForceField::boundary_loads(const ParticleStore& s, std::vector<BoundaryLoad>& out) const {
  for (const ProviderCapabilities& c : caps_)
    if (c.boundary != nullptr) c.boundary->boundary_loads(s, out);
}

void ForceField::advance_boundaries(double t, double h, std::span<BoundaryLoad> loads) {
  std::size_t at = 0;
  for (const ProviderCapabilities& c : caps_) {
    if (c.boundary == nullptr) continue;
    const std::size_t n = c.boundary->boundary_count();
    if (at + n > loads.size()) throw std::logic_error("advance_boundaries: fewer loads than boundaries");
    if (c.boundary->moves()) c.boundary->advance(t, h, loads.subspan(at, n));
    at += n;
  }
}

bool ForceField::applies_filter() const {
  for (const ProviderCapabilities& c : caps_)
    if (c.filter != nullptr && c.filter->applies_filter()) return true;
  return false;
}

void ForceField::resize_nonconservative(std::size_t n) const {
  if (nc_force_.size() == n) return;
  nc_force_.assign(n, Vec3::Zero());
  nc_moment_.assign(n, Vec3::Zero());
}

void ForceField::gather_nonconservative(const ParticleStore& s) const {
  std::array<PairView, kMaxPairProviders> views;
  const std::size_t pairs = pair_views(views);
  resize_nonconservative(s.size());
  parallel_for_ranges(s.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      ParticleSums sum;
      for (std::size_t p = 0; p < pairs; ++p)
        if (!views[p].r.nc_force.empty()) gather_view(views[p], s, i, s.position[i], sum);
      nc_force_[i] = sum.f_nc;
      nc_moment_[i] = sum.tau_nc;
    }
    for (const auto& p : providers_)
      if (p->books_body_nonconservative()) p->add_body_nonconservative(s, begin, end, nc_force_, nc_moment_);
  });
}

bool ForceField::booked_by_particle(std::size_t k) const {
  return providers_[k]->books_body_nonconservative() || !providers_[k]->pair_results().nc_force.empty();
}

bool ForceField::ledgers_by_particle() const {
  for (std::size_t k = 0; k < providers_.size(); ++k)
    if (caps_[k].ledger != nullptr && !booked_by_particle(k)) return false;
  return true;
}

ExactSum ForceField::kick_power(const ParticleStore& s, std::span<const Vec3> v0, std::span<const Vec3> w0,
                                std::span<const char> kinematic) const {
  if (!ledgers_by_particle()) throw std::logic_error("ForceField::kick_power: a ledger is not booked per particle");
  bool any = false;
  for (std::size_t k = 0; k < providers_.size(); ++k) any = any || (caps_[k].ledger != nullptr);
  if (!any) return ExactSum();
  if (nc_force_.size() != s.size()) gather_nonconservative(s);
  return exact_sum(s.size(), [&](std::size_t i) {
    if (!s.owns(i)) return 0.0;
    if (!kinematic.empty() && kinematic[i])
      return nc_force_[i].dot(v0[i] + v0[i]) + nc_moment_[i].dot(w0[i] + w0[i]);
    const Vec3 u = v0[i] + s.velocity[i], w = w0[i] + s.angular_velocity[i];
    return nc_force_[i].dot(u) + nc_moment_[i].dot(w);
  });
}

ExactSum ForceField::nonconservative_power(const ParticleStore& s, std::span<const Vec3> u,
                                           std::span<const Vec3> w) const {
  // Providers with non-conservative slots (PairResults::nc_force) and
  // one-body providers that book per particle
  // (ForceProvider::books_body_nonconservative) are booked per particle: sum over owned i of F^nc_i . u_i + tau^nc_i . w_i, with
  // F^nc_i, tau^nc_i gathered beside F_i and tau_i (docs/model.md §11.3);
  // the others through their own ledger.
  ExactSum sum;
  bool by_particle = false;
  for (std::size_t k = 0; k < providers_.size(); ++k) {
    if (caps_[k].ledger == nullptr) continue;
    if (booked_by_particle(k)) {
      by_particle = true;
      continue;
    }
    sum.merge(caps_[k].ledger->nonconservative_power(s, u, w));
  }
  if (!by_particle) return sum;
  // Sums not gathered yet at this state (a restored run before its first
  // gather): gather them alone.
  if (nc_force_.size() != s.size()) gather_nonconservative(s);
  sum.merge(exact_sum(s.size(), [&](std::size_t i) {
    if (!s.owns(i)) return 0.0;
    return nc_force_[i].dot(u[i]) + nc_moment_[i].dot(w[i]);
  }));
  return sum;
}

ExactSum ForceField::released_energy(const ParticleStore& s) const {
  ExactSum sum;
  for (const ProviderCapabilities& c : caps_)
    if (c.ledger != nullptr) sum.merge(c.ledger->released_energy(s));
  return sum;
}

void ForceField::add_filter_changes(const ParticleStore& s, double h, std::span<Vec3> dv,
                                    std::span<Vec3> dw) const {
  for (const ProviderCapabilities& c : caps_)
    if (c.filter != nullptr) c.filter->add_filter_changes(s, h, dv, dw);
}

void ForceField::stress_ratios(const ParticleStore& s, std::vector<double>& out) const {
  out.clear();
  std::vector<double> one;
  for (const ProviderCapabilities& c : caps_) {
    if (c.fracturing == nullptr) continue;
    c.fracturing->stress_ratios(s, one);
    out.insert(out.end(), one.begin(), one.end());
  }
}

ExactSum ForceField::fracture(ParticleStore& s) {
  batch_.clear();
  std::size_t failed = 0;
  for (const ProviderCapabilities& c : caps_)
    if (c.fracturing != nullptr) failed += c.fracturing->fracture(s, batch_);
  if (failed == 0) return ExactSum();
  if (!std::is_sorted(batch_.keys.begin(), batch_.keys.end()))
    throw std::logic_error("ForceField::fracture: the failed pairs of several providers overlap in key order");
  batch_.contact_energy.assign(batch_.keys.size(), 0.0);
  for (const ProviderCapabilities& c : caps_)
    if (c.excluded_pairs != nullptr) c.excluded_pairs->release_pairs(s, batch_);
  ExactSum work;
  for (const ProviderCapabilities& c : caps_)
    if (c.fracturing != nullptr) work.merge(c.fracturing->book_fracture(batch_));
  // Only the ends of the failed pairs have new sums (when every provider
  // named them); the rest of the particles keep theirs.
  std::vector<std::uint32_t>& slots = batch_.slots;
  if (slots.size() == 2 * batch_.keys.size()) {
    std::sort(slots.begin(), slots.end());
    slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
    gather(s, nullptr, slots);
  } else {
    gather(s);
  }
  return work;
}

void ForceField::take_failures(std::vector<BondFailure>& out) {
  for (const ProviderCapabilities& c : caps_)
    if (c.fracturing != nullptr) c.fracturing->take_failures(out);
}

void ForceField::add_bond_counts(const ParticleStore& s, EnergyReport& r) const {
  r.fragments = 0;
  r.broken_bonds = 0;
  for (const ProviderCapabilities& c : caps_)
    if (c.fracturing != nullptr) c.fracturing->add_bond_counts(s, r);
  if (r.fragments == 0) r.fragments = s.size();
}

const BondGraph* ForceField::bond_graph() const {
  for (const ProviderCapabilities& c : caps_)
    if (c.bond_graph != nullptr) return c.bond_graph;
  return nullptr;
}

const BondGraph* ForceField::failing_bonds() const {
  for (const ProviderCapabilities& c : caps_)
    if (c.bond_graph != nullptr && c.bond_graph->can_fail()) return c.bond_graph;
  return nullptr;
}

const BondList& ForceField::bonds() const {
  static const BondList none;
  const BondGraph* g = bond_graph();
  return g != nullptr ? g->bonds() : none;
}

std::span<const std::uint8_t> ForceField::bond_live() const {
  const BondGraph* g = failing_bonds();
  return g != nullptr ? g->live_flags() : std::span<const std::uint8_t>();
}

std::vector<std::uint32_t> ForceField::broken_per_particle(const ParticleStore& s) const {
  const BondGraph* g = failing_bonds();
  return g != nullptr ? g->broken_per_particle(s.size()) : std::vector<std::uint32_t>();
}

std::vector<std::uint32_t> ForceField::fragment_labels(const ParticleStore& s) const {
  const BondGraph* g = failing_bonds();
  return g != nullptr ? g->fragment_labels(s) : std::vector<std::uint32_t>();
}

std::vector<std::uint32_t> ForceField::failed_bonds() const {
  std::vector<std::uint32_t> failed;
  for (const ProviderCapabilities& c : caps_) {
    if (c.bond_graph == nullptr || !c.bond_graph->can_fail()) continue;
    const std::span<const std::uint8_t> live = c.bond_graph->live_flags();
    const std::span<const std::uint32_t> index = c.bond_graph->scene_indices();
    for (std::size_t k = 0; k < live.size(); ++k)
      if (!live[k]) failed.push_back(index[k]);
  }
  std::sort(failed.begin(), failed.end());
  return failed;
}

std::uint64_t ForceField::overturned_bonds() const {
  const BondGraph* g = failing_bonds();
  return g != nullptr ? g->overturned_count() : 0;
}

ContactSettings ForceField::contact() const {
  ContactSettings c;
  c.reorder_on_rebuild = reorder_on_rebuild_;
  for (const ProviderCapabilities& k : caps_) {
    if (k.neighbour_list == nullptr) continue;
    if (const std::optional<ContactSettings> law = k.neighbour_list->contact_settings()) {
      c.stiffness = law->stiffness;
      c.skin = law->skin;
      break;
    }
  }
  return c;
}

NeighbourListOwner* ForceField::first_list() const {
  for (const ProviderCapabilities& c : caps_)
    if (c.neighbour_list != nullptr) return c.neighbour_list;
  return nullptr;
}

const NeighbourListOwner* ForceField::neighbour_list() const { return first_list(); }

const NeighbourSearch& ForceField::neighbours() const {
  if (const NeighbourListOwner* c = first_list()) return c->neighbours();
  throw std::logic_error("ForceField: no contact provider, so no neighbour list");
}

DriftSink ForceField::drift_sink(std::size_t count) {
  NeighbourListOwner* c = first_list();
  return c != nullptr ? c->neighbours().drift_sink(count) : DriftSink{};
}

void ForceField::drift_sink_filled(const Vec3* positions) {
  if (NeighbourListOwner* c = first_list()) c->neighbours().drift_sink_filled(positions);
}

ForceField ForceField::make_part(const ParticleStore& part, const PartMap& map,
                                 std::span<const std::vector<std::byte>> histories) const {
  ForceField f;
  for (std::size_t k = 0; k < providers_.size(); ++k) {
    const auto& p = providers_[k];
    PartMap own = map;
    if (k < histories.size()) own.history = histories[k];
    std::unique_ptr<ForceProvider> q = p->make_part(part, own);
    if (!q)
      throw std::invalid_argument("the force provider '" + p->name() +
                                  "' cannot be split over MPI ranks yet; run this scene on one rank");
    f.add(std::move(q));
  }
  f.reorder_on_rebuild_ = reorder_on_rebuild_;
  return f;
}

void ForceField::restore_neighbour_list(const ParticleStore& s, std::span<const Vec3> build_positions,
                                        std::size_t rebuild_count, const Mat3* build_edges) {
  NeighbourListOwner* c = first_list();
  if (c == nullptr) throw std::logic_error("restore_neighbour_list: no contact provider");
  // The bonded pairs are left out of the restored list as of a rebuild.
  if (!exclusions_synced_) sync_exclusions();
  if (build_edges != nullptr) c->restore_build_cell(*build_edges);
  c->restore(s, build_positions, rebuild_count);
  c->apply_part_history();
}

EnergyReport kinetic_energies_and_momenta(const ParticleStore& s, std::span<const char> skip) {
  // Exact sums (core/exact_sum.hpp) of the particles this process owns.
  const std::array<ExactSum, 8> k = exact_sums<8>(s.size(), [&](std::size_t i, std::array<ExactSum, 8>& t) {
    if ((!skip.empty() && skip[i] != 0) || !s.owns(i)) return;
    const Vec3 mv = s.mass[i] * s.velocity[i];
    const Vec3 l = s.position[i].cross(mv) + s.inertia[i] * s.angular_velocity[i];
    t[0].add(0.5 * s.mass[i] * s.velocity[i].squaredNorm());
    t[1].add(0.5 * s.inertia[i] * s.angular_velocity[i].squaredNorm());
    for (int c = 0; c < 3; ++c) {
      t[2 + c].add(mv[c]);
      t[5 + c].add(l[c]);
    }
  });
  EnergyReport r;
  static constexpr const char* kColumns[8] = {"E_kin_trans", "E_kin_rot", "P_x", "P_y", "P_z", "L_x", "L_y", "L_z"};
  for (int c = 0; c < 8; ++c) r.add(kColumns[c], k[c]);
  return r;
}

}  // namespace dem
