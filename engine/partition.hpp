#pragma once
/// \file partition.hpp
/// Domain decomposition, the part without a transport: which particles an
/// MPI rank owns, which it holds as ghosts, and the Simulation of its part
/// of the system. mpi/domain.hpp moves the data between ranks.
///
/// Design note: why every layout of MPI ranks and threads gives the same bits.
///
///  - A part holds its owned particles and ghost copies of every particle
///    within `halo` of them or bonded to one of them, in the order of the
///    whole system restricted to them (ParticleStore::order_key). Its
///    providers hold every record whose particles are all in the part
///    (ForceProvider::make_part), in that order too: each particle's records
///    are then the same as in the undivided run, in the same order, so F and
///    tau of every owned particle are the same bits (LAMMPS's "newton off":
///    a record between two ranks is evaluated on both).
///  - Re-ordering uses the whole system's Morton frame and ties by id, so a
///    part re-ordered at a rebuild is still in the restricted order.
///  - Every global sum is exact (core/exact_sum.hpp) over what the rank
///    books: owned particles, records whose lower-id end it owns.
///  - Rebuilds happen at the same steps on every rank (a logical or).
///  - A clump (engine/clump.hpp) is owned whole: all its members by the
///    owner of its first member (keep_clumps_whole), which alone advances
///    it, from its members' complete forces, in the undivided run's order;
///    other ranks hold its members as ghosts, placed by the owner.
///  - A periodic cell (core/periodic_cell.hpp, docs/model.md §20) is on
///    every rank with the same state (CellProvider::make_part). Its faces
///    need no shifted copies: a record reads its second end at an image
///    x_j + H n, so a part holds each particle once, at its true position,
///    and "within `halo`" is measured to the nearest image (part_layouts).
///    Every rank puts its particles, owned and ghosts, back through the
///    faces alike at the common rebuilds (per particle, from its position
///    alone), so that the parts keep the whole run's positions; the owners
///    are bisected by their positions put back into the cell.
///
/// Ghost shell: with `margin` M, a part made when every particle was at
/// x(t0) stays valid while no particle has moved more than M since t0, for
/// halo = max(2 r_max + skin, longest bond) + 2 M: any pair that a rebuild
/// can list for an owned particle is then in the part. mpi/domain.hpp
/// makes new parts before that (and stops with an error if one step moved
/// a particle further than the margin): explicit runs bound the motion by
/// the sum of h max |v|, implicit runs measure it at every Newton iterate.
/// A deforming cell moves the images too, by (H - H0) n, |n_a| <= 1: the
/// bound then adds, per step, h times twice the sum of |Hdot| over the
/// periodic edges (the image a record reads, and those its two ends were
/// put back through, each moved by at most that sum; mpi/domain.cpp).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <span>
#include <vector>

#include "core/particle_store.hpp"
#include "core/periodic_cell.hpp"
#include "engine/simulation.hpp"

namespace dem {

/// The whole system's dynamic state, from which any part can be made.
struct GlobalState {
  /// Every particle, in the order of the undivided run (order_key filled,
  /// no ghosts).
  ParticleStore particles;
  /// Per particle: the contact list's build position (empty without a
  /// contact provider), and the number of builds so far.
  std::vector<Vec3> build_positions;
  std::uint64_t rebuild_count = 0;
  /// The periodic cell at this state (nullopt without one), and its edges
  /// at the contact list's last build (nullopt without a list).
  std::optional<PeriodicCell> cell;
  std::optional<Mat3> build_edges;
  /// Scene indices of the failed bonds, ascending.
  std::vector<std::uint32_t> failed_bonds;
  /// Per force provider: Decomposable::pack_history() of every rank, one
  /// after another (contact and wall friction histories).
  std::vector<std::vector<std::byte>> histories;
  /// Every clump (body state and members), by its first member's id.
  std::vector<Clump> clumps;
  std::uint64_t steps = 0;
  double time_origin = 0.0;
  std::uint64_t step_origin = 0;
  Simulation::Ledger ledger;
  ImplicitClock implicit_clock;  ///< the implicit event control's step sizes
};

/// The state of an undivided simulation (order_key = slot).
GlobalState capture_global_state(const Simulation& whole);
/// The same, and `whole` released (Simulation::release_work) on the way:
/// its providers' work is freed before its particles are moved (not
/// copied) into the state, so that nothing is held twice.
GlobalState capture_and_release(Simulation& whole);

/// Puts particles (owned ones of several ranks, with order_key) into the
/// whole system's order: ascending (order_key, id).
std::vector<std::uint32_t> global_order(const ParticleStore& particles);

/// The owner rank of each particle: recursive coordinate bisection on
/// particle counts (each cut across the longest side of its particles' box,
/// ranks split in halves, particles in the same proportion; ties by id), so
/// that every rank owns floor or ceil of N/ranks particles. With a periodic
/// `cell`, of the positions put back into it (positions_in_cell).
std::vector<std::uint32_t> bisect_owners(std::span<const Vec3> positions, std::span<const std::uint32_t> ids,
                                         std::size_t ranks, const PeriodicCell* cell = nullptr);

/// Each position put back into the cell along its periodic axes, x - H m
/// with m = floor(H^-1 (x - o)) (length); the positions themselves
/// without a cell.
std::vector<Vec3> positions_in_cell(std::span<const Vec3> positions, const PeriodicCell* cell);

/// The slot of each particle id in a store. Where the ids are dense (the
/// largest below twice the store's size: a whole system, or a part of
/// one small system), a table of a slot per id, 4 bytes each, read in one
/// step; else sorted (id, slot) pairs, 8 bytes a particle, a binary search
/// per lookup. The store must not change while the index is used.
class IdIndex {
 public:
  explicit IdIndex(const ParticleStore& particles);
  /// The slot of particle `id`, or PartMap::kNotInPart if the store has none.
  std::uint32_t slot(std::uint32_t id) const;

 private:
  std::vector<std::uint32_t> dense_;  ///< per id: its slot (dense ids), else empty
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id_;
};

/// Calls `visit(a, b)` for every bond of `bond_keys` (pair_key of the ids)
/// whose two particles are both in the store of `index` (slots a, b) and
/// have different owners (`owner` per slot): the bonds that make each
/// rank hold the other end as a ghost (part_layouts(), Domain::migrate).
void visit_cut_bonds(const IdIndex& index, std::span<const std::uint64_t> bond_keys,
                     std::span<const std::uint32_t> owner,
                     const std::function<void(std::uint32_t, std::uint32_t)>& visit);

/// Gives every member of each clump the owner of its first member, so that
/// clumps are never split (`owner` per particle of `particles`, as from
/// bisect_owners). Throws std::invalid_argument for a member id that is not
/// a particle.
void keep_clumps_whole(std::vector<std::uint32_t>& owner, const ParticleStore& particles,
                       const std::vector<Clump>& clumps);

/// One rank's particles: indices into GlobalState::particles, ascending,
/// and per member whether it is a ghost.
struct PartLayout {
  std::vector<std::uint32_t> members;
  std::vector<std::uint8_t> ghost;
  std::size_t owned_count() const;
};

/// The layout of each rank: its owned particles, and as ghosts every other
/// particle whose centre is within `halo` of their bounding box or that is
/// bonded to one of them (bond_keys: pair_key of the ids of every bond).
/// With a periodic `cell`: the box of the owned particles put back into
/// the cell, and the distance from it to the nearest image x + H n of the
/// particle put back into the cell (every n with |n_a| <= 1 + halo/width_a
/// on the periodic axes: all the images within `halo`).
std::vector<PartLayout> part_layouts(const ParticleStore& particles, std::span<const std::uint32_t> owner,
                                     std::size_t ranks, double halo, std::span<const std::uint64_t> bond_keys,
                                     const PeriodicCell* cell = nullptr);

/// The particles at `slots` of `part` (every field, order_key, and the
/// contact list's build position when there is one), the histories of what
/// its providers book, and `clumps`, as bytes: a piece for unpack_state().
std::vector<std::byte> pack_piece(const Simulation& part, std::span<const std::uint32_t> slots,
                                  std::span<const Clump> clumps);

/// pack_piece() of a part's owned particles and its clumps, for an MPI
/// rank to send.
std::vector<std::byte> pack_owned(const Simulation& part);

/// One rank's part of part_layouts(), found without the others' (time
/// proportional to the particles and bonds, not to them times the ranks):
/// `layout` is part_layouts(...)[rank], and held_by[q] the slots of the
/// particles `rank` owns that rank q holds as ghosts, ascending (empty for
/// q = rank): those it sends q after every step.
struct RankLayout {
  PartLayout layout;
  std::vector<std::vector<std::uint32_t>> held_by;
};
RankLayout rank_layout(const ParticleStore& particles, std::span<const std::uint32_t> owner, std::size_t rank,
                       std::size_t ranks, double halo, std::span<const std::uint64_t> bond_keys,
                       const PeriodicCell* cell = nullptr);

/// Every shift H n of the periodic `cell` with |n_a| <= 1 + halo/width_a on
/// its periodic axes (n = 0 first): the images within `halo`.
std::vector<Vec3> image_offsets(const PeriodicCell& cell, double halo);

/// True if an image x + shift of `x` (positions put back into the cell) is
/// closer than `halo` to the box [lo, hi] (false for an empty box): the
/// ghost test of part_layouts().
bool near_box(const Vec3& x, const Vec3& lo, const Vec3& hi, std::span<const Vec3> shifts, double halo);

/// What every part of a decomposed run shares: the scalars of the whole
/// state (step, ledger, clock, the contact list's builds, the periodic cell
/// and its build edges) as `part` holds them, and the failed bonds
/// `failed_bonds` (scene indices, ascending); no particles.
GlobalState shared_state(const Simulation& part, std::vector<std::uint32_t> failed_bonds);

/// The whole state from the packed owned particles of every rank (any
/// order of pieces), put into the whole system's order, with the scalars
/// of `shared` (shared_state()); `providers`: the part's provider count.
/// Throws std::runtime_error for a piece that does not unpack.
/// Each piece is freed once unpacked, and the particles are put in order
/// in place: the state is held about once, not beside its pieces or a copy.
GlobalState unpack_state(std::vector<std::vector<std::byte>> pieces, std::size_t providers, GlobalState shared);

/// A digest of the whole system's bonds (FNV-1a 64 of the particle count
/// and the pair_key of the ids of every bond, ascending: the same whatever
/// order a run has put its particles and bonds in): a checkpoint in parts
/// (run/checkpoint_parts.hpp) tells by it that the scene it is put back
/// together with is the one it was written from.
std::uint64_t bond_digest(const Simulation& whole);

/// What the run loop (run/run_loop.hpp, run/observers.hpp) needs of a run decomposed over MPI
/// ranks (mpi/domain.hpp implements it). Every call is collective: all
/// ranks make it at the same point.
class DecomposedRun {
 public:
  virtual ~DecomposedRun() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  /// After each step: makes new parts when particles have moved too far
  /// since the last ones (the part Simulation is replaced in place).
  virtual void after_step() = 0;
  /// The whole system as set up: what it holds (bonds, providers, groups).
  /// Its particles are released (size 0, ids kept: Simulation::release_work)
  /// and its bonds' live flags are those it was set up with.
  virtual const Simulation& reference() const = 0;
  /// Particles of the whole system.
  virtual std::size_t particle_count() const = 0;
  /// The scene indices of the bonds failed so far, ascending (every rank
  /// keeps them).
  virtual const std::vector<std::uint32_t>& failed_bonds() const = 0;
  /// Rank 0's `value`, on every rank.
  virtual std::uint64_t broadcast(std::uint64_t value) = 0;
  /// Every rank's `mine`, on rank 0 in rank order; empty on the others.
  virtual std::vector<std::vector<std::byte>> gather_to_root(const std::vector<std::byte>& mine) = 0;
  /// Per slot of this rank's part: the smallest particle id of its fragment
  /// of the whole system's live-bond graph (VTK point data "fragment").
  virtual std::vector<std::uint32_t> fragment_labels(const ParticleStore& part) const = 0;
  /// True on every rank if `mine` is true on any (a signal, a failure).
  virtual bool any(bool mine) = 0;
  /// Stops every rank with this exit status (after a failure on one rank
  /// that the others, waiting in a collective call, would not see).
  [[noreturn]] virtual void abort(int status) = 0;
};

/// Makes the Simulations of parts from a whole one kept as the template
/// (its providers' settings and static records, its particles' ids).
class PartFactory {
 public:
  /// Throws std::invalid_argument for what cannot be split: a provider
  /// without ForceProvider::make_part.
  explicit PartFactory(Simulation whole);

  /// The part of `layout` at `state`, with its first forces and the clumps
  /// whose first member it owns (keep_clumps_whole: then all their
  /// members). With `collective` (every rank making its part at once),
  /// the part runs its first fracture test on all ranks' terms: bonds over
  /// strength that `state` has not failed fail there (their failures wait
  /// in Simulation::take_failures(), their work is in the ledger), as they
  /// fail in the undivided run's constructor (a whole set up without first
  /// forces, Simulation::Start). Without one, on one rank's terms, such
  /// bonds are a std::logic_error.
  Simulation make(const GlobalState& state, const PartLayout& layout, Collective* collective = nullptr) const;
  /// The same from a state that is let go on the way: its particles and
  /// build positions are freed as soon as the part's are selected, before
  /// the part's records are made (a rank then never holds the whole
  /// system's particles and its part's records at once).
  Simulation make(GlobalState&& state, const PartLayout& layout, Collective* collective = nullptr) const;

  const Simulation& whole() const { return whole_; }
  /// The whole system's state (capture_and_release), once: the template
  /// then keeps only its particles' ids, its providers' settings and static
  /// records.
  GlobalState take_state() { return capture_and_release(whole_); }
  /// The template's work and particles freed (their ids kept), where the
  /// state comes from elsewhere (a checkpoint in parts).
  void release_template() { whole_.release_work(); }
  /// pair_key of the ids of every bond of the whole system.
  const std::vector<std::uint64_t>& bond_keys() const { return bond_keys_; }
  /// 2 r_max + skin, or the longest bond at `state` if longer (length; a
  /// bond across a periodic face measured to its minimum image).
  double interaction_range(const GlobalState& state) const;
  /// The same over the particles `particles` (for an MPI rank: the ones it
  /// holds) in the periodic cell `cell` (none: nullptr or no periodic axis).
  double interaction_range(const ParticleStore& particles, const PeriodicCell* cell) const;

 private:
  /// The build positions of the layout's members (nullopt: no contact list).
  static std::optional<std::vector<Vec3>> selected_build_positions(const GlobalState& state, const PartLayout& layout);
  /// make() from the part's particles and build positions, selected.
  Simulation assemble(ParticleStore part, std::optional<std::vector<Vec3>> built, const GlobalState& state,
                      const PartLayout& layout, Collective* collective) const;

  Simulation whole_;
  std::vector<std::uint64_t> bond_keys_;
};

}  // namespace dem
