#include "engine/partition.hpp"
#include "engine/cut_tree.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "contact/contact_provider.hpp"
#include "engine/reorder.hpp"

namespace dem {

namespace {

/// The first contact provider's neighbour search, or nullptr.
const NeighbourSearch* search_of(const ForceField& f) {
  const NeighbourListOwner* c = f.neighbour_list();
  return c != nullptr ? &c->neighbours() : nullptr;
}

/// Each provider's Decomposable::pack_history of what `particles` books
/// (nothing for a provider without the capability).
void pack_history(const ForceField& f, std::size_t k, const ParticleStore& particles, ByteWriter& w) {
  if (const Decomposable* d = f.capabilities(k).decomposable) d->pack_history(particles, w);
}

/// Copies particles `members` of `from` (every field of its list) into a new store.
ParticleStore select_particles(const ParticleStore& from, std::span<const std::uint32_t> members) {
  ParticleStore to;
  to.for_each_field([&](const char* name, auto& dst) {
    from.for_each_field([&](const char* other, const auto& src) {
      if constexpr (std::is_same_v<std::decay_t<decltype(dst)>, std::decay_t<decltype(src)>>) {
        if (std::string_view(name) != other) return;
        dst.resize(members.size());
        for (std::size_t k = 0; k < members.size(); ++k) dst[k] = src[members[k]];
      }
    });
  });
  if (!from.order_key.empty()) {
    to.order_key.resize(members.size());
    for (std::size_t k = 0; k < members.size(); ++k) to.order_key[k] = from.order_key[members[k]];
  }
  if (!from.kinematic.empty()) {
    to.kinematic.resize(members.size());
    for (std::size_t k = 0; k < members.size(); ++k) to.kinematic[k] = from.kinematic[members[k]];
  }
  return to;
}

/// The periodic cell of `sim` now and its contact list's build edges.
void capture_cell(const Simulation& sim, GlobalState& g) {
  g.cell.reset();
  g.build_edges.reset();
  if (sim.cell() == nullptr) return;
  g.cell = *sim.cell();
  if (const NeighbourListOwner* list = sim.forces().neighbour_list()) g.build_edges = list->last_build().edges;
}

/// Clumps in the order of their first members' ids.
std::vector<Clump> sorted_clumps(std::vector<Clump> clumps) {
  std::stable_sort(clumps.begin(), clumps.end(), [](const Clump& a, const Clump& b) {
    return a.members.front() < b.members.front();
  });
  return clumps;
}

}  // namespace

/// Every shift H n with |n_a| <= reach_a on the periodic axes (n = 0 first).
std::vector<Vec3> image_offsets(const PeriodicCell& cell, double halo) {
  std::array<int, 3> reach{0, 0, 0};
  for (int a = 0; a < 3; ++a)
    if (cell.periodic[a]) reach[a] = 1 + static_cast<int>(std::floor(halo / cell.width(a) + 1e-6));
  std::vector<Vec3> out{Vec3::Zero()};
  for (int n2 = -reach[2]; n2 <= reach[2]; ++n2)
    for (int n1 = -reach[1]; n1 <= reach[1]; ++n1)
      for (int n0 = -reach[0]; n0 <= reach[0]; ++n0)
        if (n0 != 0 || n1 != 0 || n2 != 0) out.push_back(cell.offset({n0, n1, n2}));
  return out;
}

bool near_box(const Vec3& x, const Vec3& lo, const Vec3& hi, std::span<const Vec3> shifts, double halo) {
  if (!(lo.x() <= hi.x())) return false;  // (an empty box)
  for (const Vec3& o : shifts) {
    const Vec3 y = o.isZero(0.0) ? x : Vec3(x + o);
    const Vec3 d = (lo - y).cwiseMax(y - hi).cwiseMax(0.0);
    if (d.norm() < halo) return true;
  }
  return false;
}

namespace {

/// A whole set up without its first forces (Simulation::Start) has built
/// no list and evaluated nothing: its list's first build is at the
/// captured positions, at the cell's edges now, and no provider has a
/// history yet (each part's first evaluation makes the first one, as the
/// undivided run's does; a history packed from the template would stand
/// for an evaluation that never was). A template of a checkpoint's state
/// (Start::restored) has the checkpoint's build and histories instead.
void set_first_build(const Simulation& whole, GlobalState& g) {
  if (whole.first_forces() || whole.restored()) return;
  for (std::vector<std::byte>& h : g.histories) h.clear();
  if (search_of(whole.forces()) == nullptr) return;
  g.build_positions = g.particles.position;
  g.rebuild_count = 1;
  if (g.cell) g.build_edges = g.cell->edges;
}

/// The captured particles: no ghosts, order_key the slot where unset.
void set_whole_order(ParticleStore& p) {
  p.ghost.clear();
  if (p.order_key.size() != p.size()) {
    p.order_key.resize(p.size());
    std::iota(p.order_key.begin(), p.order_key.end(), std::uint64_t{0});
  }
}

/// Everything of capture_global_state() but the particles.
GlobalState capture_all_but_particles(const Simulation& whole) {
  GlobalState g;
  if (const NeighbourListOwner* list = whole.forces().neighbour_list()) {
    // (A checkpoint's template: the build its list restore waits for.)
    const NeighbourListOwner::LastBuild built = list->last_build();
    g.build_positions.assign(built.positions.begin(), built.positions.end());
    g.rebuild_count = built.rebuild_count;
  }
  capture_cell(whole, g);
  g.failed_bonds = whole.forces().failed_bonds();
  for (std::size_t k = 0; k < whole.forces().providers().size(); ++k) {
    g.histories.emplace_back();
    ByteWriter w(g.histories.back());
    pack_history(whole.forces(), k, whole.particles(), w);
  }
  g.clumps = sorted_clumps(whole.clumps());
  g.steps = whole.step_count();
  g.time_origin = whole.time_origin();
  g.step_origin = whole.step_origin();
  g.ledger = whole.ledger();
  g.implicit_clock = whole.implicit_clock();
  return g;
}

}  // namespace

GlobalState capture_global_state(const Simulation& whole) {
  GlobalState g = capture_all_but_particles(whole);
  g.particles = whole.particles();
  set_whole_order(g.particles);
  set_first_build(whole, g);
  return g;
}

GlobalState capture_and_release(Simulation& whole) {
  GlobalState g = capture_all_but_particles(whole);
  g.particles = whole.release_work_taking_particles();
  set_whole_order(g.particles);
  set_first_build(whole, g);
  return g;
}

std::vector<std::uint32_t> global_order(const ParticleStore& s) {
  std::vector<std::uint32_t> order(s.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (s.order_key[a] != s.order_key[b]) return s.order_key[a] < s.order_key[b];
    return s.id[a] < s.id[b];
  });
  return order;
}

std::vector<Vec3> positions_in_cell(std::span<const Vec3> positions, const PeriodicCell* cell) {
  std::vector<Vec3> out(positions.begin(), positions.end());
  if (cell == nullptr || !cell->any()) return out;
  for (Vec3& x : out) {
    const std::array<int, 3> m = cell->cells_out(x);
    if (m[0] != 0 || m[1] != 0 || m[2] != 0) x -= cell->offset(m);
  }
  return out;
}

std::vector<std::uint32_t> bisect_owners(std::span<const Vec3> positions, std::span<const std::uint32_t> ids,
                                         std::size_t ranks, const PeriodicCell* cell) {
  if (ranks == 0) throw std::invalid_argument("bisect_owners: no ranks");
  const std::vector<Vec3> x = positions_in_cell(positions, cell);
  NoReductions whole;
  const CutTree tree = CutTree::build(x, ids, ranks, whole);
  std::vector<std::uint32_t> owner(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) owner[i] = tree.owner(x[i], ids[i]);
  return owner;
}

IdIndex::IdIndex(const ParticleStore& s) {
  const std::size_t n = s.size();
  std::uint64_t top = 0;
  for (const std::uint32_t id : s.id) top = std::max<std::uint64_t>(top, id);
  if (n > 0 && top < 2 * static_cast<std::uint64_t>(n)) {
    dense_.assign(static_cast<std::size_t>(top) + 1, PartMap::kNotInPart);
    for (std::size_t i = 0; i < n; ++i) dense_[s.id[i]] = static_cast<std::uint32_t>(i);
    return;
  }
  by_id_.resize(n);
  for (std::size_t i = 0; i < n; ++i) by_id_[i] = {s.id[i], static_cast<std::uint32_t>(i)};
  std::sort(by_id_.begin(), by_id_.end());
}

std::uint32_t IdIndex::slot(std::uint32_t id) const {
  if (!dense_.empty()) return id < dense_.size() ? dense_[id] : PartMap::kNotInPart;
  const auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::make_pair(id, 0u));
  return it != by_id_.end() && it->first == id ? it->second : PartMap::kNotInPart;
}

void visit_cut_bonds(const IdIndex& index, std::span<const std::uint64_t> bond_keys,
                     std::span<const std::uint32_t> owner,
                     const std::function<void(std::uint32_t, std::uint32_t)>& visit) {
  for (const std::uint64_t key : bond_keys) {
    const auto [i, j] = pair_key_ids(key);
    const std::uint32_t a = index.slot(i), b = index.slot(j);
    if (a == PartMap::kNotInPart || b == PartMap::kNotInPart || owner[a] == owner[b]) continue;
    visit(a, b);
  }
}

void keep_clumps_whole(std::vector<std::uint32_t>& owner, const ParticleStore& particles,
                       const std::vector<Clump>& clumps) {
  if (clumps.empty()) return;
  const IdIndex index(particles);
  const auto slot = [&](std::uint32_t id) {
    const std::uint32_t s = index.slot(id);
    if (s == PartMap::kNotInPart) throw std::invalid_argument("clump member " + std::to_string(id) + " is not a particle");
    return s;
  };
  for (const Clump& c : clumps) {
    const std::uint32_t rank = owner[slot(c.members.front())];
    for (const std::uint32_t id : c.members) owner[slot(id)] = rank;
  }
}

std::size_t PartLayout::owned_count() const {
  return static_cast<std::size_t>(std::count(ghost.begin(), ghost.end(), std::uint8_t{0}));
}

namespace {

/// The box of each rank's owned particles (positions `x`, owners `owner`);
/// an empty box (lo > hi) for a rank without any.
std::pair<std::vector<Vec3>, std::vector<Vec3>> owned_boxes(std::span<const Vec3> x,
                                                            std::span<const std::uint32_t> owner, std::size_t ranks) {
  std::vector<Vec3> lo(ranks, Vec3::Constant(std::numeric_limits<double>::infinity()));
  std::vector<Vec3> hi(ranks, Vec3::Constant(-std::numeric_limits<double>::infinity()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    lo[owner[i]] = lo[owner[i]].cwiseMin(x[i]);
    hi[owner[i]] = hi[owner[i]].cwiseMax(x[i]);
  }
  return {std::move(lo), std::move(hi)};
}

}  // namespace

std::vector<PartLayout> part_layouts(const ParticleStore& s, std::span<const std::uint32_t> owner, std::size_t ranks,
                                     double halo, std::span<const std::uint64_t> bond_keys, const PeriodicCell* cell) {
  const std::size_t n = s.size();
  // In a periodic cell: positions put back into it, and their images.
  const bool periodic = cell != nullptr && cell->any();
  const std::vector<Vec3> x = positions_in_cell(s.position, cell);
  const std::vector<Vec3> shifts = periodic ? image_offsets(*cell, halo) : std::vector<Vec3>{Vec3::Zero()};
  const auto [lo, hi] = owned_boxes(x, owner, ranks);
  std::vector<std::vector<std::uint8_t>> in(ranks, std::vector<std::uint8_t>(n, 0));  // 1 owned, 2 ghost
  for (std::size_t i = 0; i < n; ++i) {
    in[owner[i]][i] = 1;
    for (std::size_t r = 0; r < ranks; ++r)
      if (r != owner[i] && near_box(x[i], lo[r], hi[r], shifts, halo)) in[r][i] = 2;
  }
  if (!bond_keys.empty())
    visit_cut_bonds(IdIndex(s), bond_keys, owner, [&](std::uint32_t a, std::uint32_t b) {
      if (in[owner[a]][b] == 0) in[owner[a]][b] = 2;
      if (in[owner[b]][a] == 0) in[owner[b]][a] = 2;
    });
  std::vector<PartLayout> out(ranks);
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < n; ++i)
      if (in[r][i] != 0) {
        out[r].members.push_back(static_cast<std::uint32_t>(i));
        out[r].ghost.push_back(in[r][i] == 2 ? 1 : 0);
      }
  return out;
}

RankLayout rank_layout(const ParticleStore& s, std::span<const std::uint32_t> owner, std::size_t rank,
                       std::size_t ranks, double halo, std::span<const std::uint64_t> bond_keys,
                       const PeriodicCell* cell) {
  const std::size_t n = s.size();
  const bool periodic = cell != nullptr && cell->any();
  const std::vector<Vec3> x = positions_in_cell(s.position, cell);
  const std::vector<Vec3> shifts = periodic ? image_offsets(*cell, halo) : std::vector<Vec3>{Vec3::Zero()};
  const auto [lo, hi] = owned_boxes(x, owner, ranks);
  const auto me = static_cast<std::uint32_t>(rank);
  std::vector<std::uint8_t> in(n, 0);  // 1 owned, 2 ghost (part_layouts' rule, for this rank)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> held;  // (rank q, owned slot q holds as a ghost)
  for (std::size_t i = 0; i < n; ++i) {
    const auto slot = static_cast<std::uint32_t>(i);
    if (owner[i] != me) {
      if (near_box(x[i], lo[rank], hi[rank], shifts, halo)) in[i] = 2;
      continue;
    }
    in[i] = 1;
    for (std::size_t q = 0; q < ranks; ++q)
      if (q != rank && near_box(x[i], lo[q], hi[q], shifts, halo)) held.emplace_back(static_cast<std::uint32_t>(q), slot);
  }
  if (!bond_keys.empty())
    visit_cut_bonds(IdIndex(s), bond_keys, owner, [&](std::uint32_t a, std::uint32_t b) {
      for (const auto& [end, other] : {std::pair{a, b}, std::pair{b, a}}) {
        if (owner[end] != me) continue;
        if (in[other] == 0) in[other] = 2;
        held.emplace_back(owner[other], end);
      }
    });
  RankLayout out;
  for (std::size_t i = 0; i < n; ++i)
    if (in[i] != 0) {
      out.layout.members.push_back(static_cast<std::uint32_t>(i));
      out.layout.ghost.push_back(in[i] == 2 ? 1 : 0);
    }
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  out.held_by.assign(ranks, {});
  for (const auto& [q, slot] : held) out.held_by[q].push_back(slot);
  return out;
}

PartFactory::PartFactory(Simulation whole) : whole_(std::move(whole)) {
  const ParticleStore& s = whole_.particles();
  const BondList& bonds = whole_.forces().bonds();
  bond_keys_.reserve(bonds.size());
  for (std::size_t b = 0; b < bonds.size(); ++b) bond_keys_.push_back(pair_key(s.id[bonds.first[b]], s.id[bonds.second[b]]));
  // Fails now, naming the provider, if a provider cannot be split (tried
  // on an empty part: no copy of the whole system's records).
  const std::vector<std::uint32_t> none(s.id.size(), PartMap::kNotInPart);  // (a released template keeps its ids)
  ParticleStore empty;
  empty.decomposed = true;
  (void)whole_.forces().make_part(empty, PartMap{none, {}, {}});
}

double PartFactory::interaction_range(const GlobalState& state) const {
  return interaction_range(state.particles, state.cell && state.cell->any() ? &*state.cell : nullptr);
}

double PartFactory::interaction_range(const ParticleStore& s, const PeriodicCell* cell) const {
  double r_max = 0.0;
  for (const double r : s.radius) r_max = std::max(r_max, r);
  const NeighbourSearch* search = search_of(whole_.forces());
  double range = 2.0 * r_max + (search != nullptr ? search->skin() : 0.0);
  if (!bond_keys_.empty()) {
    const IdIndex index(s);
    if (cell != nullptr && !cell->any()) cell = nullptr;
    for (const std::uint64_t key : bond_keys_) {
      const auto [i, j] = pair_key_ids(key);
      const std::uint32_t a = index.slot(i), b = index.slot(j);
      if (a == PartMap::kNotInPart || b == PartMap::kNotInPart) continue;
      Vec3 d = s.position[a] - s.position[b];
      if (cell != nullptr) d -= cell->offset(cell->nearest_shift(d));  // to the bond's image (bonds/bond_images.hpp)
      range = std::max(range, d.norm());
    }
  }
  return range;
}

Simulation PartFactory::make(const GlobalState& state, const PartLayout& layout, Collective* collective) const {
  return assemble(select_particles(state.particles, layout.members), selected_build_positions(state, layout), state,
                  layout, collective);
}

Simulation PartFactory::make(GlobalState&& state, const PartLayout& layout, Collective* collective) const {
  ParticleStore part = select_particles(state.particles, layout.members);
  std::optional<std::vector<Vec3>> built = selected_build_positions(state, layout);
  // The whole system's particles go before the part's records are made.
  state.particles = ParticleStore();
  std::vector<Vec3>().swap(state.build_positions);
  return assemble(std::move(part), std::move(built), state, layout, collective);
}

std::optional<std::vector<Vec3>> PartFactory::selected_build_positions(const GlobalState& state,
                                                                       const PartLayout& layout) {
  if (state.build_positions.empty()) return std::nullopt;  // (no contact list)
  std::vector<Vec3> built(layout.members.size());
  for (std::size_t k = 0; k < built.size(); ++k) built[k] = state.build_positions[layout.members[k]];
  return built;
}

Simulation PartFactory::assemble(ParticleStore part, std::optional<std::vector<Vec3>> built, const GlobalState& state,
                                 const PartLayout& layout, Collective* collective) const {
  part.ghost = layout.ghost;
  part.decomposed = true;
  // Each slot of the template's particles -> its slot in the part.
  const IdIndex index(part);
  const ParticleStore& t = whole_.particles();
  std::vector<std::uint32_t> part_slot(t.id.size());  // (the template may keep its ids alone: release_work)
  for (std::size_t s = 0; s < t.id.size(); ++s) part_slot[s] = index.slot(t.id[s]);
  ForceField forces = whole_.forces().make_part(part, PartMap{part_slot, state.failed_bonds, {}}, state.histories);
  if (built) {
    forces.restore_neighbour_list(part, *built, state.rebuild_count, state.build_edges ? &*state.build_edges : nullptr);
  }
  std::vector<ParticleGroup> groups = whole_.groups();  // (a part indexes the members it holds)
  std::vector<Clump> clumps;
  for (const Clump& c : state.clumps) {
    const std::uint32_t first = index.slot(c.members.front());
    if (first != PartMap::kNotInPart && part.owns(first)) clumps.push_back(c);
  }
  Simulation sim(std::move(part), std::move(forces), std::move(clumps), whole_.map(), whole_.time_step(), state.steps,
                 Simulation::Start{collective, true});
  // Bonds over strength at `state` that it has not failed (the first parts
  // of a whole set up without its first forces) fail in the part's first
  // fracture test, as in the undivided run's: their work, summed over the
  // ranks by `collective`, joins the ledger. On one rank's terms the work
  // of the others would be missing: refused below.
  Simulation::Ledger ledger = state.ledger;
  if (sim.ledger().fracture != 0.0) ledger.fracture += sim.ledger().fracture;
  sim.set_time_origin(state.time_origin, state.step_origin);
  sim.set_ledger(ledger);
  sim.set_implicit_clock(state.implicit_clock);
  if (!groups.empty()) sim.set_groups(std::move(groups));
  sim.set_implicit_settings(whole_.implicit_settings());
  if (collective == nullptr)
    for (const std::uint32_t b : sim.forces().failed_bonds())
      if (!std::binary_search(state.failed_bonds.begin(), state.failed_bonds.end(), b))
        throw std::logic_error("a part of the system found bonds over strength that the whole had not failed");
  return sim;
}

namespace {

template <class T>
void put(std::vector<std::byte>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

template <class T>
T take(std::span<const std::byte> in, std::size_t& at) {
  if (at + sizeof(T) > in.size()) throw std::runtime_error("a packed particle piece is truncated");
  T v;
  std::memcpy(static_cast<void*>(&v), in.data() + at, sizeof(T));
  at += sizeof(T);
  return v;
}

}  // namespace

std::vector<std::byte> pack_piece(const Simulation& part, std::span<const std::uint32_t> slots,
                                  std::span<const Clump> clumps) {
  const ParticleStore& s = part.particles();
  const NeighbourSearch* search = search_of(part.forces());
  std::vector<std::byte> out;
  put(out, static_cast<std::uint64_t>(slots.size()));
  put(out, static_cast<std::uint8_t>(search != nullptr ? 1 : 0));
  s.for_each_field([&](const char*, const auto& v) {
    for (const std::uint32_t i : slots) put(out, v[i]);
  });
  for (const std::uint32_t i : slots) put(out, s.order_key.empty() ? std::uint64_t{i} : s.order_key[i]);
  if (search != nullptr)
    for (const std::uint32_t i : slots) put(out, search->build_positions()[i]);
  // Each provider's history of what this rank books.
  put(out, static_cast<std::uint64_t>(part.forces().providers().size()));
  for (std::size_t k = 0; k < part.forces().providers().size(); ++k) {
    std::vector<std::byte> h;
    ByteWriter w(h);
    pack_history(part.forces(), k, s, w);
    put(out, static_cast<std::uint64_t>(h.size()));
    out.insert(out.end(), h.begin(), h.end());
  }
  std::vector<std::byte> c;
  ByteWriter w(c);
  save_clumps(w, std::vector<Clump>(clumps.begin(), clumps.end()));
  put(out, static_cast<std::uint64_t>(c.size()));
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

std::vector<std::byte> pack_owned(const Simulation& part) {
  const ParticleStore& s = part.particles();
  std::vector<std::uint32_t> owned;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.owns(i)) owned.push_back(static_cast<std::uint32_t>(i));
  return pack_piece(part, owned, part.clumps());
}

GlobalState shared_state(const Simulation& part, std::vector<std::uint32_t> failed_bonds) {
  GlobalState g;
  if (const NeighbourSearch* search = search_of(part.forces())) g.rebuild_count = search->rebuild_count();
  capture_cell(part, g);
  g.failed_bonds = std::move(failed_bonds);
  g.steps = part.step_count();
  g.time_origin = part.time_origin();
  g.step_origin = part.step_origin();
  g.ledger = part.ledger();
  g.implicit_clock = part.implicit_clock();
  return g;
}

GlobalState unpack_state(std::vector<std::vector<std::byte>> pieces, std::size_t providers, GlobalState shared) {
  ParticleStore all;
  std::vector<Vec3> built;
  bool with_list = false;
  std::vector<std::vector<std::byte>> histories(providers);
  std::vector<Clump> clumps;
  for (std::vector<std::byte>& held : pieces) {
    const std::vector<std::byte> piece = std::move(held);  // (freed at the end of this iteration)
    std::size_t at = 0;
    const auto n = static_cast<std::size_t>(take<std::uint64_t>(piece, at));
    with_list = take<std::uint8_t>(piece, at) != 0;
    // (Each particle takes far more than a byte: a count past the bytes is a bad piece.)
    if (n > piece.size()) throw std::runtime_error("a packed particle piece is truncated");
    all.for_each_field([&](const char*, auto& v) {
      using T = typename std::decay_t<decltype(v)>::value_type;
      for (std::size_t k = 0; k < n; ++k) v.push_back(take<T>(piece, at));
    });
    for (std::size_t k = 0; k < n; ++k) all.order_key.push_back(take<std::uint64_t>(piece, at));
    if (with_list)
      for (std::size_t k = 0; k < n; ++k) built.push_back(take<Vec3>(piece, at));
    const auto count = static_cast<std::size_t>(take<std::uint64_t>(piece, at));
    if (count != histories.size()) throw std::runtime_error("a packed particle piece has another provider count");
    for (std::vector<std::byte>& h : histories) {
      const auto bytes = static_cast<std::size_t>(take<std::uint64_t>(piece, at));
      if (bytes > piece.size() - at) throw std::runtime_error("a packed particle piece is truncated");
      h.insert(h.end(), piece.begin() + static_cast<std::ptrdiff_t>(at), piece.begin() + static_cast<std::ptrdiff_t>(at + bytes));
      at += bytes;
    }
    const auto bytes = static_cast<std::size_t>(take<std::uint64_t>(piece, at));
    if (bytes > piece.size() - at) throw std::runtime_error("a packed particle piece is truncated");
    ByteReader r(std::span<const std::byte>(piece.data() + at, bytes));
    for (Clump& c : load_clumps(r, std::numeric_limits<std::uint32_t>::max())) clumps.push_back(std::move(c));
    at += bytes;
    if (at != piece.size()) throw std::runtime_error("a packed particle piece has bytes left over");
  }
  const std::vector<std::uint32_t> order = global_order(all);
  GlobalState g = std::move(shared);
  permute_particles(all, order);  // (field by field: no second copy of the particles)
  g.particles = std::move(all);
  if (with_list) {
    g.build_positions.resize(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) g.build_positions[k] = built[order[k]];
  }
  g.histories = std::move(histories);
  g.clumps = sorted_clumps(std::move(clumps));
  return g;
}

std::uint64_t bond_digest(const Simulation& whole) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  const auto mix = [&](std::uint64_t v) {
    for (int k = 0; k < 8; ++k) {
      h ^= (v >> (8 * k)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  const ParticleStore& s = whole.particles();
  const BondList& bonds = whole.forces().bonds();
  // (In id order: a run re-orders its particles and bonds, not its pairs.)
  std::vector<std::uint64_t> keys(bonds.size());
  for (std::size_t b = 0; b < bonds.size(); ++b) keys[b] = pair_key(s.id[bonds.first[b]], s.id[bonds.second[b]]);
  std::sort(keys.begin(), keys.end());
  mix(s.id.size());
  for (const std::uint64_t k : keys) mix(k);
  return h;
}

}  // namespace dem
