#pragma once
/// \file force_provider.hpp
/// The interaction interface: what a bond law, a contact law, a wall or a
/// field implements so that the engine can assemble its forces without
/// knowing it.
///
/// Design note: what flows through a provider each force evaluation.
///
///     ParticleStore (x, R, r, m, id; read only)
///        │
///        ▼
///     provider.evaluate()      parallel over the provider's records; each
///        │                     record writes only its own result slot
///        ▼
///     PairResults + Incidence  per-record force (and moment) slots, and for
///        │                     each particle the records it belongs to, in a
///        │                     fixed order that the provider chooses
///        ▼
///     engine gather            per particle: pair providers in their order,
///        │                     each record's slot in incidence order; then
///        │                     one-body providers (walls, fields) add theirs
///        ▼
///     ParticleStore (F, tau)
///
/// A provider owns its records (bonds, contact pairs, walls) and their
/// per-record state; records name particles by slot, and the provider
/// renumbers them when the particles are re-ordered (renumber()). State that
/// must survive re-ordering is keyed by particle id (ParticleStore::id).
/// Providers never re-order particles themselves: the stepper does, as its
/// own phase, just before a rebuild (engine/simulation.hpp).
///
/// Hot loops stay inside evaluate() as templates or free functions over
/// spans: the engine makes a virtual call per provider per evaluation (and
/// one per block of particles for one-body providers), never one per record.
///
/// Determinism: evaluate() writes only per-record slots, and the gather adds
/// them in an order that depends on the records alone, so forces are
/// bitwise identical for any thread count.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_stream.hpp"
#include "core/diagnostics.hpp"
#include "core/hessian_blocks.hpp"
#include "core/particle_store.hpp"
#include "core/periodic_cell.hpp"
#include "core/types.hpp"

namespace dem {

/// Results of a provider whose records join two particles (a bond, a contact
/// pair). Spans over the provider's own arrays, valid until its next
/// evaluate(), rebuild() or renumber().
struct PairResults {
  /// Slot of the first end of each record (used for the moment arm).
  std::span<const std::uint32_t> first;
  /// Force on the first end of each record (force); the second end takes
  /// -force.
  std::span<const Vec3> force;
  /// Spatial moment on the first end of each record (force length); empty
  /// for central forces (no moments at all).
  std::span<const Vec3> moment;
  /// Spatial moment on the second end; empty: it follows from the balance of
  /// angular momentum of any objective pair interaction,
  /// tau_j = -tau_i - (x_i - x_j) x F_i (docs/model.md §2).
  std::span<const Vec3> moment_second;
  /// Non-conservative part of `force` per record (force); non-empty only for
  /// a provider whose every moment is non-conservative too, with
  /// moment_second given where there are moments. The ForceField then books
  /// the provider's W_contact from per-particle sums of these slots
  /// (ForceField::nonconservative_power) instead of calling its
  /// DissipationLedger::nonconservative_power.
  std::span<const Vec3> nc_force;
  /// Per record, where the second end is read from it in a periodic cell
  /// (core/periodic_cell.hpp): the record joins x_first to x_second +
  /// offset[k] (length; H n of the record's image, zero inside the cell).
  /// Empty: every record joins the particles themselves.
  std::span<const Vec3> offset;
};

/// The records each particle takes part in, as the gather visits them. For
/// particle i it adds, in this order:
///  1. the entries entries[entry_offsets[i] .. entry_offsets[i+1]), each
///     2 * record + end (end 0: i is the first end, 1: the second);
///  2. the records owned_offsets[i] .. owned_offsets[i+1]), in which i is the
///     first end (a contiguous range of records);
///  3. the records incoming[incoming_offsets[i] .. incoming_offsets[i+1]), in
///     which i is the second end.
/// Any part may be empty (empty offset spans). Offsets have n + 1 entries.
struct Incidence {
  std::span<const std::uint32_t> entry_offsets, entries;
  std::span<const std::uint32_t> owned_offsets;
  std::span<const std::uint32_t> incoming_offsets, incoming;
};

/// Something that happened to a record during an evaluation (a bond that
/// breaks, later); collected by the stepper after each evaluation, provider
/// by provider, each provider's events in record order.
struct InteractionEvent {
  std::uint64_t step = 0;      ///< the step during which it happened (set by the stepper)
  std::string provider;        ///< name() of the provider
  std::string kind;            ///< what happened, e.g. "bond_failure"
  std::uint32_t id_first = 0;  ///< particle ids of the record's ends
  std::uint32_t id_second = 0;
  double value = 0.0;          ///< a number that goes with it (provider-defined)
};

/// One failed bond (docs/model.md §10.4): a row of bond_failures.csv.
struct BondFailure {
  std::uint64_t step = 0;  ///< the step at whose end it failed (set by the stepper)
  double time = 0.0;       ///< t of that configuration (set by the stepper)
  std::uint32_t bond = 0;  ///< index in the scene's bond list (sorted by (i, j) ids, i < j)
  std::uint32_t id_i = 0, id_j = 0;  ///< particle ids, id_i < id_j
  bool tensile = true;     ///< mode: sigma/sigma_c >= tau/tau_c
  double sigma = 0.0, tau = 0.0;               ///< stresses of eqs. (12), (13) (Pa)
  double sigma_ratio = 0.0, tau_ratio = 0.0;   ///< sigma/sigma_c, tau/tau_c
  double axial_force = 0.0, shear_force = 0.0; ///< F_n (tension > 0), F_s (N)
  double bending_moment = 0.0, twist_moment = 0.0;  ///< M_b, M_t (N m)
  Vec3 midpoint = Vec3::Zero();  ///< (x_i + x_j)/2
  double energy = 0.0;     ///< W = V_b - U_contact,new (10.3), J
  double bond_energy = 0.0;  ///< V_b alone (J; not a column of bond_failures.csv)
};

/// The bonds that fail at one configuration, between Fracturing::fracture()
/// and book_fracture(): the freed pairs' keys (ascending) with the bond
/// energy V_b of each, and the contact energy each now has as an unbonded
/// pair (filled by the contact providers' release_pairs()).
struct FractureBatch {
  std::vector<std::uint64_t> keys;
  std::vector<double> bond_energy;
  std::vector<double> contact_energy;
  /// Slots of both ends of every failed pair (any order, repeats allowed):
  /// the only particles whose sums change, so the only ones gathered again.
  /// A provider that fails pairs without naming their ends here makes the
  /// force field gather every particle again.
  std::vector<std::uint32_t> slots;
  void clear() {
    keys.clear();
    bond_energy.clear();
    contact_energy.clear();
    slots.clear();
  }
};

/// Removes from `keys` (ascending) every key in `removed` (any order), and
/// clears `removed`: how providers drop the pair keys of failed bonds and
/// released contacts in one pass at a rebuild instead of at every fracture.
inline void erase_keys(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& removed) {
  if (removed.empty()) return;
  std::sort(removed.begin(), removed.end());
  std::vector<std::uint64_t> kept;
  kept.reserve(keys.size());
  std::set_difference(keys.begin(), keys.end(), removed.begin(), removed.end(), std::back_inserter(kept));
  keys.swap(kept);
  removed.clear();
}

/// How the records of a provider built for a whole system map onto a part of
/// it (an MPI rank's owned and ghost particles, engine/partition.hpp).
struct PartMap {
  static constexpr std::uint32_t kNotInPart = 0xffffffffu;
  /// Per slot of the particles the provider's records name: the particle's
  /// slot in the part, or kNotInPart.
  std::span<const std::uint32_t> part_slot;
  /// Scene indices (BondFailure::bond) of the bonds that have failed so far,
  /// ascending: the part's bonds start with these failed.
  std::span<const std::uint32_t> failed_bonds;
  /// This provider's Decomposable::pack_history() of every rank, one after
  /// another (empty: start without history).
  std::span<const std::byte> history;
};

/// Bytes held by one array of a provider (its capacity), for memory tables.
struct ArrayBytes {
  std::string name;
  std::size_t bytes = 0;
};

/// Bytes reserved by a vector (capacity times element size).
template <class V>
std::size_t capacity_bytes(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}

// --- capabilities -------------------------------------------------------------
//
// Beyond the core interface (ForceProvider below), a provider may have some
// of these capabilities; the engine asks each provider once, when it is added
// to a force field (ForceProvider::capabilities), and keeps the pointers. A
// provider implements a capability by deriving from its interface and naming
// itself in capabilities(); one without it leaves the pointer null and the
// engine leaves it out of that phase (which, for every capability below, is
// what a provider that does nothing there would give: the same bits).

/// Records that fail (bonds, docs/model.md §9.8, §10, §11.1): the fracture
/// phase of the stepper and the bonded pairs that contact must leave out.
class Fracturing {
 public:
  virtual ~Fracturing() = default;
  /// The pairs this provider bonds that must have no contact (pair_key of
  /// the particle ids, ascending): the live bonds of a BDEM bond provider;
  /// empty for others (Baker-Gonzalez bonded pairs keep their contact).
  virtual std::span<const std::uint64_t> bonded_pairs() const { return {}; }
  /// Fracture test at the configuration of the last evaluate()
  /// (docs/model.md §10.1, §10.2): marks every live record over strength as
  /// failed, zeroes its result slot (so that a new gather leaves it out), and
  /// appends its pair key and bond energy V_b to `batch` (keys ascending
  /// within this provider). Returns the number of new failures.
  virtual std::size_t fracture(const ParticleStore& particles, FractureBatch& batch) = 0;
  /// Per record, in record order, at the store's configuration: the stress
  /// ratio of the fracture test, max(sigma/sigma_c, tau/tau_c) (docs/model.md
  /// §10.1), 0 for a failed record. Resizes `out` to the record count. The
  /// implicit integrator's event control locates each failure in time with
  /// them (docs/model.md §12.8).
  virtual void stress_ratios(const ParticleStore& particles, std::vector<double>& out) const = 0;
  /// After fracture() and the ExcludedPairs providers' release_pairs():
  /// books each failure's W = V_b - U_contact,new (10.3) into its failure
  /// record and returns the sum of W over this provider's failures (in key
  /// order).
  virtual ExactSum book_fracture(const FractureBatch& batch) = 0;
  /// Moves the failure records since the last call to `out`, in key order
  /// (step and time are set by the stepper).
  virtual void take_failures(std::vector<BondFailure>& out) = 0;
  /// Adds n_broken and n_fragments (EnergyReport) of this provider's bonds
  /// at the current state.
  virtual void add_bond_counts(const ParticleStore& particles, EnergyReport& report) const = 0;
};

/// Records that must leave bonded pairs out and take freed ones in (contact
/// lists; docs/model.md §10.2, §10.3).
class ExcludedPairs {
 public:
  virtual ~ExcludedPairs() = default;
  /// Leave the pairs with these keys (ascending) out of every evaluation
  /// until release_pairs() (applies from the next rebuild()). Called by the
  /// force assembly before each rebuild with every Fracturing provider's
  /// bonded_pairs().
  virtual void set_excluded_pairs(std::span<const std::uint64_t> keys) = 0;
  /// batch.keys (ascending) are no longer bonded. Each such pair in the
  /// list takes part from now on: it is evaluated at the current
  /// configuration into its slot (state from State{}), and its conservative
  /// contact energy is added to batch.contact_energy[k] (sized like keys by
  /// the caller, zero for a pair that does not touch).
  virtual void release_pairs(const ParticleStore& particles, FractureBatch& batch) = 0;
};

/// Second derivatives of the provider's energy (the implicit integrator,
/// docs/model.md §12.4). The implicit integrator refuses a scene with a
/// provider that lacks this capability. A provider without potential
/// energy (gravity, a constant load) has it and adds nothing.
class HessianSource {
 public:
  virtual ~HessianSource() = default;
  /// Pair providers: the second end of each record of pair_results(), in
  /// record order (the implicit integrator's couplings).
  virtual std::span<const std::uint32_t> record_second_ends() const { return {}; }
  /// Pair providers: per record of pair_results() in [first, first +
  /// out.size()), the Hessian of its energy in (delta x_first, phi_first,
  /// delta x_second, phi_second) at the configuration of the last
  /// evaluate(), in the form `blocks` (zero for a record that does not act:
  /// a failed bond, a pair apart or excluded); out[k] is record first + k.
  /// A law without strains of its own (a contact U(r)) gives its projected
  /// block for gauss_newton. The range lies within the records (callers
  /// take them in chunks to bound their scratch: engine/block_hessian.hpp).
  /// Parallel inside; each record writes its own entry.
  virtual void element_hessians(const ParticleStore&, std::size_t /*first*/, std::span<Mat12> /*out*/,
                                HessianBlocks /*blocks*/) const {}
  /// One-body providers (walls, fields): adds the positive semi-definite
  /// Hessian blocks (delta x_i, phi_i) of their energy for the particles in
  /// [begin, end) to diag[i].
  virtual void add_body_hessians(const ParticleStore&, std::size_t /*begin*/, std::size_t /*end*/,
                                 std::span<Mat6> /*diag*/) const {}
};

/// Non-conservative forces and moments (damping, tangential and rolling
/// friction) for the W_contact ledger (docs/model.md §11.3).
class DissipationLedger {
 public:
  virtual ~DissipationLedger() = default;
  /// True if the last evaluate() produced non-conservative forces or moments.
  virtual bool dissipative() const = 0;
  /// The pairing of the last evaluate()'s non-conservative forces and
  /// moments with per-slot vectors u (length/time) and w (1/time):
  ///   sum over particles i of F^nc_i . u_i + tau^nc_i . w_i,
  /// where F^nc_i, tau^nc_i is what this provider adds to particle i. The
  /// stepper passes u = v^- + v^+, w = Omega^- + Omega^+ of a half kick
  /// and books W_contact += -(h/4) times the sum. An exact sum
  /// (core/exact_sum.hpp) of the records this process books
  /// (ParticleStore::books, owns).
  virtual ExactSum nonconservative_power(const ParticleStore& particles, std::span<const Vec3> u,
                                         std::span<const Vec3> w) const = 0;
  /// Potential energy that the last evaluate() took out of the provider's
  /// records by a change of their state at one configuration, not by a
  /// force (an adhesive contact that breaks at its pull-off distance loses
  /// its energy, docs/model.md §11.7), as an exact sum over the records this
  /// process books. The explicit stepper adds it to W_contact once after
  /// each step's force evaluation. Default: nothing.
  virtual ExactSum released_energy(const ParticleStore& /*particles*/) const { return ExactSum(); }
};

/// iBDEM's friction filter (docs/model.md §11.1).
class FrictionFilter {
 public:
  virtual ~FrictionFilter() = default;
  /// True if add_filter_changes() does anything (the filter is on).
  virtual bool applies_filter() const = 0;
  /// Adds each of its contacts' velocity change (from the velocities as
  /// they are, before any filtering) to dv[i] and dw[i] of the particles it
  /// touches, in an order that does not depend on the thread count. The
  /// stepper projects and clamps each particle's sum and books W_filter.
  virtual void add_filter_changes(const ParticleStore& particles, double h, std::span<Vec3> dv,
                                  std::span<Vec3> dw) const = 0;
};

/// Per-record history that a domain decomposition carries from one set of
/// parts to the next (engine/partition.hpp), and the release of what
/// evaluating needs in the whole system kept as the parts' template.
class Decomposable {
 public:
  virtual ~Decomposable() = default;
  /// Writes the history of the records this process books (pair records:
  /// ParticleStore::books; per-particle records: owns), with the last
  /// evaluation's result slots where an evaluation advances the history, so
  /// that make_part() (PartMap::history) continues it bit for bit on any
  /// rank. Providers without history write nothing.
  virtual void pack_history(const ParticleStore& /*particles*/, ByteWriter& /*out*/) const {}
  /// Frees what evaluating needs (result slots, pair lists, incidence,
  /// search structures, per-record history), keeping the settings and the
  /// static records make_part() copies: for the whole system's providers
  /// kept as the template of a decomposed run's parts, which are never
  /// evaluated again. The provider must not be evaluated afterwards.
  virtual void release_work() {}
};

/// A triangle surface at its current place (world frame), for output.
struct SurfaceFrame {
  std::string name;
  std::vector<Vec3> points;                             ///< length
  std::vector<std::array<std::uint32_t, 3>> triangles;  ///< indices of points
};

/// Triangle surfaces a provider holds (mesh walls, docs/model.md §11.9),
/// for the VTK output (meshes.pvd).
class SurfaceSource {
 public:
  virtual ~SurfaceSource() = default;
  /// Appends each surface at its place at the last evaluation's time.
  virtual void surfaces(std::vector<SurfaceFrame>& out) const = 0;
};

/// What one boundary (a plane wall, a triangle mesh) receives from the
/// particles at the last evaluate() (docs/model.md §11.8, §11.9): walls.csv's row
/// entries, the servo's input and the stepper's W_boundary.
struct BoundaryLoad {
  /// Indices into `sums`.
  enum : std::size_t { kForce = 0, kMoment = 3, kNcForce = 6, kNcMoment = 9, kSums = 12 };
  /// The boundary's name (walls.csv column prefix).
  std::string name;
  /// Exact sums over the particles this process owns (ParticleStore::owns)
  /// of what they exert ON the boundary: force x, y, z (force), moment
  /// x, y, z about `centre` (force length: sum of (x_i - c) x (-F_i) -
  /// tau_i, where F_i, tau_i are what the boundary gives particle i), then
  /// the non-conservative part of each (the kinetic laws' nc_force and
  /// every moment, docs/model.md §11.3). A Collective reduces them to the
  /// whole system's (the same bits on any rank count).
  std::array<ExactSum, kSums> sums;
  /// The point the moments are about (length): a plane wall's point, a
  /// mesh's rotation centre, at the last evaluate().
  Vec3 centre = Vec3::Zero();
  /// A plane wall's unit normal (towards the particles); zero for a mesh.
  Vec3 normal = Vec3::Zero();
  /// The velocity of `centre` and the angular velocity (length/time,
  /// 1/time) the boundary moved with over the step that led to the last
  /// evaluate() (MovingBoundary::advance sets them for the next step).
  Vec3 velocity = Vec3::Zero(), angular_velocity = Vec3::Zero();
  /// Displacement since t = 0 (length): a plane wall's, along its normal; a
  /// mesh's centre along its velocity direction (or 0).
  double displacement = 0.0;

  /// The values of three sums from `at` (after the reduction).
  Vec3 value3(std::size_t at) const { return Vec3(sums[at].value(), sums[at + 1].value(), sums[at + 2].value()); }
  Vec3 force() const { return value3(kForce); }
  Vec3 moment() const { return value3(kMoment); }
  /// Adds force f and moment m (about `centre`) on the boundary, and their
  /// non-conservative parts f_nc and m_nc, to the sums.
  void add(const Vec3& f, const Vec3& m, const Vec3& f_nc, const Vec3& m_nc) {
    for (int a = 0; a < 3; ++a) {
      sums[kForce + a].add(f[a]);
      sums[kMoment + a].add(m[a]);
      sums[kNcForce + a].add(f_nc[a]);
      sums[kNcMoment + a].add(m_nc[a]);
    }
  }
  /// The power the particles deliver to the boundary, F.v + M.omega, and
  /// its non-conservative part (from the reduced sums).
  double power() const { return force().dot(velocity) + moment().dot(angular_velocity); }
  double nonconservative_power() const {
    return value3(kNcForce).dot(velocity) + value3(kNcMoment).dot(angular_velocity);
  }
};

/// Boundaries that report their loads and may move (plane walls with a
/// prescribed velocity or a servo, rigid meshes; docs/model.md §11.8, §11.9). The
/// explicit stepper (engine/simulation.hpp), per step n -> n+1:
///   1. after the particles' drift to t_{n+1}: advance(t_{n+1}, h, L_n),
///      with L_n the reduced loads of the evaluation at t_n; then books
///      W_boundary += k L_n.power() and W_contact -= k L_n.nonconservative_power()
///      with the velocities advance() set (k: the kick length, h/2 or h);
///   2. after the force evaluation at t_{n+1} and the kick: L_{n+1} from
///      boundary_loads(), reduced; books the same with L_{n+1} (maps 23, 25).
/// So W_boundary is the trapezoidal rule of the work the particles do on
/// the boundaries, and W_contact counts the dissipation at the relative
/// velocity of each contact: E_balance closes to O(h^2).
/// A provider whose boundaries never move (moves() false) costs nothing in
/// the step; its loads are still reported (walls.csv).
class MovingBoundary {
 public:
  virtual ~MovingBoundary() = default;
  /// The number of entries boundary_loads() appends (fixed for the
  /// provider's life).
  virtual std::size_t boundary_count() const = 0;
  /// Appends one BoundaryLoad per boundary, in a fixed order, for the
  /// configuration of the last evaluate() (sums over the particles this
  /// process owns; centre, normal, velocities and displacement as the
  /// boundary is now). Where moves(), the sums are those evaluate() found
  /// (also after the particles have drifted since); otherwise they may be
  /// computed here from the particles as they are.
  virtual void boundary_loads(const ParticleStore& particles, std::vector<BoundaryLoad>& out) const = 0;
  /// False if no boundary of this provider ever moves (advance() does
  /// nothing); a property of the provider, the same on every MPI rank.
  virtual bool moves() const = 0;
  /// Moves the boundaries from the configuration at t - h to that at t
  /// (after the particles' drift to t, before the force evaluation at t).
  /// `loads`: this provider's boundary_count() entries of the loads at the
  /// last evaluation (t - h), summed over all MPI ranks (a servo's input:
  /// the same bits on every rank count). Sets each entry's velocity and
  /// angular_velocity to those the boundary moves with over (t - h, t].
  virtual void advance(double t, double h, std::span<BoundaryLoad> loads) = 0;
};

/// The periodic cell of a scene (core/periodic_cell.hpp, docs/model.md
/// §20), held and saved by one provider (engine/cell_provider.hpp) so that
/// checkpoints carry it; the force field hands it to every provider
/// (ForceProvider::set_cell) and the stepper wraps the particles into it.
class CellHolder {
 public:
  virtual ~CellHolder() = default;
  virtual const PeriodicCell& cell() const = 0;
  /// Sets the cell to its state at time t (a deforming cell's edges at t;
  /// a fixed cell stays). Returns true if the cell changed.
  virtual bool set_time(double t) = 0;
  /// True if the cell's rate follows a target stress (the periodic-cell
  /// servo, docs/model.md §20.6): the stepper then calls control() at the
  /// start of every step.
  virtual bool controls_stress() const { return false; }
  /// The servo: from the cell's Love-Weber stress sigma (tension positive,
  /// pressure) measured at time t, sets the velocity gradient of the step
  /// that starts at t (the edges move at a constant rate until the next
  /// call). Returns true if the cell's rate changed.
  virtual bool control(const Mat3& /*stress*/, double /*t*/) { return false; }
};

/// The bond graph for output and fragments: declared with the bond list
/// (bonds/bond_graph.hpp); core names it only.
class BondGraph;
/// The owner of a contact neighbour list: declared with it
/// (contact/contact_provider.hpp); core names it only.
class NeighbourListOwner;

/// The capabilities of one provider: a pointer to each interface it
/// implements (the provider itself), null for the others.
struct ProviderCapabilities {
  Fracturing* fracturing = nullptr;
  ExcludedPairs* excluded_pairs = nullptr;
  HessianSource* hessian = nullptr;
  DissipationLedger* ledger = nullptr;
  FrictionFilter* filter = nullptr;
  Decomposable* decomposable = nullptr;
  const BondGraph* bond_graph = nullptr;
  NeighbourListOwner* neighbour_list = nullptr;
  MovingBoundary* boundary = nullptr;
  const SurfaceSource* surfaces = nullptr;
  CellHolder* cell = nullptr;
};

/// The core interface every provider implements: name, records and their
/// re-ordering, evaluation (per-record results and incidence, or one-body
/// forces), energies, checkpoint section and the provider of a part.
class ForceProvider {
 public:
  virtual ~ForceProvider() = default;

  /// Short name: the tag of the provider's checkpoint section (at most 8
  /// characters, e.g. "bonds", "contact", "walls", "gravity") and its name
  /// in messages.
  virtual std::string name() const = 0;

  /// The optional interfaces this provider implements (see above). Asked
  /// once, when the provider joins a force field; the answer must not
  /// change afterwards.
  virtual ProviderCapabilities capabilities() { return {}; }

  // --- records and re-ordering -------------------------------------------

  /// True if the provider's record list (a neighbour list) must be rebuilt
  /// before the next evaluation. Called once per step by the stepper, which
  /// re-orders the particles (if asked) before calling rebuild(). May throw
  /// std::runtime_error for a non-finite position.
  virtual bool rebuild_due(const ParticleStore&) { return false; }
  /// Rebuilds the record list at the current configuration (state of records
  /// that persist is kept, keyed by particle id).
  virtual void rebuild(const ParticleStore&) {}
  /// The particles were re-ordered: the particle in old slot s is now in
  /// slot new_slot[s]. Renames the records' particle slots.
  virtual void renumber(std::span<const std::uint32_t> new_slot) = 0;
  /// The stepper's time step h (time, finite and > 0), given whenever a
  /// Simulation is made (also after `dem restart --time-step`): a provider
  /// that integrates a history with h (Hertz-Mindlin's tangential spring)
  /// takes it; others ignore it.
  virtual void set_time_step(double /*h*/) {}
  /// The scene's periodic cell (core/periodic_cell.hpp), given when the
  /// cell joins the force field, to every provider added after it, and
  /// again whenever it changes (a deforming cell: every step). A provider
  /// whose records join two particles reads the second end at its minimum
  /// image from then on (PairResults::offset); others ignore it. Without
  /// a call there is no periodic axis.
  virtual void set_cell(const PeriodicCell& /*cell*/) {}

  // --- evaluation ----------------------------------------------------------

  /// Evaluates every record at the current configuration into its result
  /// slots (parallel inside, deterministic). Records must be current.
  virtual void evaluate(const ParticleStore& particles) = 0;
  /// This provider's per-record results; empty for one-body providers.
  virtual PairResults pair_results() const { return {}; }
  /// The records of each particle, in gather order; empty for one-body
  /// providers.
  virtual Incidence incidence() const { return {}; }
  /// One-body providers (walls, fields): adds their force and moment on the
  /// particles in [begin, end) to force[i] and moment[i]. Called by the
  /// gather after the pair providers, per block of particles.
  virtual void add_body_forces(const ParticleStore&, std::size_t /*begin*/, std::size_t /*end*/,
                               std::span<Vec3> /*force*/, std::span<Vec3> /*moment*/) const {}
  /// True for a one-body provider whose add_body_nonconservative() gives
  /// the non-conservative part of what add_body_forces() adds (all of its
  /// moment): the ForceField then books its W_contact per particle with the
  /// pair records' (PairResults::nc_force) instead of calling its
  /// DissipationLedger::nonconservative_power.
  virtual bool books_body_nonconservative() const { return false; }
  /// Adds the non-conservative force and moment on the particles in
  /// [begin, end) to nc_force[i] and nc_moment[i] (force, force length).
  /// Called by the gather after add_body_forces(), per block of particles.
  virtual void add_body_nonconservative(const ParticleStore&, std::size_t /*begin*/, std::size_t /*end*/,
                                        std::span<Vec3> /*nc_force*/, std::span<Vec3> /*nc_moment*/) const {}
  /// False if this provider never gives a moment, neither per record
  /// (PairResults::moment) nor in add_body_forces() (the safe default is
  /// true). A property of the provider, not of its current records: when no
  /// provider gives moments, the stepper leaves the angular velocities out
  /// of the kicks and the gather leaves the (zero) moments unwritten.
  virtual bool gives_moments() const { return true; }

  /// Adds this provider's potential energies to the report by their named
  /// columns (EnergyReport::add), at the current configuration. Records must
  /// be current. Exact sums (core/exact_sum.hpp) of the records and
  /// particles this process books (ParticleStore::books, owns), so that the
  /// reports of MPI ranks merge into the whole system's.
  virtual void add_potential_energies(const ParticleStore& particles, EnergyReport& report) const = 0;

  /// Moves the events of the last evaluation to `out`, in record order.
  virtual void take_events(std::vector<InteractionEvent>& /*out*/) {}

  /// The provider's arrays and the bytes each holds (for memory tables;
  /// may leave out small ones).
  virtual std::vector<ArrayBytes> memory_use() const { return {}; }

  // --- domain decomposition (engine/partition.hpp) ------------------------------

  /// The provider of a part of the system (`part`: the particles of an MPI
  /// rank, ghosts flagged): its records whose particles are all in the part
  /// (ends renamed by map.part_slot, in the order the whole system's
  /// provider would have them at the part's particle order), with the
  /// settings and static data of this provider, bonds failed as
  /// map.failed_bonds says and per-record history from map.history
  /// (Decomposable::pack_history). nullptr: this provider cannot be split
  /// (a decomposed run refuses the scene, naming it). Records of this
  /// provider must name the particles of the whole system in the slots
  /// map.part_slot is indexed by.
  virtual std::unique_ptr<ForceProvider> make_part(const ParticleStore& /*part*/, const PartMap& /*map*/) const {
    return nullptr;
  }

  // --- checkpoints ------------------------------------------------------------

  /// Writes everything needed to continue bit for bit (records, their state,
  /// settings) into the provider's checkpoint section.
  virtual void save(ByteWriter& out) const = 0;
};

}  // namespace dem
