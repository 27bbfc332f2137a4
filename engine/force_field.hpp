#pragma once
/// \file force_field.hpp
/// The force assembly: an ordered list of force providers
/// (core/force_provider.hpp) and the one generic gather that turns their
/// per-record results into the force F_i and spatial moment tau_i of every
/// particle (docs/model.md §2 and §4), in parallel and deterministically.
///
/// Design note: data flow of one evaluation.
///
///     rebuild phase (the stepper, only when a provider's list is due):
///       rebuild_due() -> [stepper re-orders, renumber()] -> rebuild()
///     evaluate():
///       provider.evaluate()  for each provider, parallel over its records
///       gather               parallel over particles; for particle i, in
///                            this fixed order: each pair provider's records
///                            (Incidence order), then each one-body provider
///                            (walls, fields) in provider order
///
/// No thread ever adds into another particle's slot, so F and tau are
/// bitwise identical for any number of threads, and nothing is allocated per
/// step once the lists have reached their size. evaluate() has no side
/// effect on the particles' order or the records (an implicit solver may
/// call it at trial configurations).
///
/// Each provider's capabilities (core/force_provider.hpp) are asked once,
/// when it is added; each phase visits the providers that have the
/// capability it needs, in provider order.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "bonds/bond_graph.hpp"
#include "bonds/bond_list.hpp"
#include "contact/contact_provider.hpp"
#include "contact/neighbour_search.hpp"
#include "core/diagnostics.hpp"
#include "core/force_provider.hpp"
#include "core/particle_store.hpp"
#include "core/stage_times.hpp"

namespace dem {

/// One pair provider's results and incidence, as the gather reads them
/// (once per gather).
struct PairView {
  PairResults r;
  Incidence inc;
};

class ForceField {
 public:
  ForceField() = default;

  /// The built-in providers of a scene, in gather order: "bonds"
  /// (Baker-Gonzalez, docs/model.md §4), "contact" (Hertz-type, with a
  /// Verlet list of skin contact.skin), "walls", "gravity" (uniform g,
  /// length/time^2). Throws std::invalid_argument if a bond refers to a
  /// particle outside `particles`, a contact setting is negative or not
  /// finite, a wall normal is not a unit vector, a wall stiffness is
  /// negative, or g is not finite.
  ForceField(const ParticleStore& particles, BondList bonds, ContactSettings contact,
             std::vector<Wall> walls, Vec3 gravity = Vec3::Zero());

  ForceField(ForceField&&) noexcept = default;
  ForceField& operator=(ForceField&&) noexcept = default;

  /// Appends a provider: its pair records are gathered after those of the
  /// providers before it. Throws std::invalid_argument for a null provider
  /// or a name already used.
  void add(std::unique_ptr<ForceProvider> provider);
  /// The capabilities of providers()[k] (ForceProvider::capabilities).
  const ProviderCapabilities& capabilities(std::size_t k) const { return caps_.at(k); }

  // --- rebuild phase --------------------------------------------------------

  /// True if some provider's records must be rebuilt before the next
  /// evaluation (remembers which). Throws std::runtime_error for a
  /// non-finite position.
  bool rebuild_due(const ParticleStore& particles);
  /// The particles were re-ordered (new slot of old slot s: new_slot[s]):
  /// every provider renames its records.
  void renumber(std::span<const std::uint32_t> new_slot);
  /// Rebuilds the providers found due by rebuild_due() (all of them after a
  /// renumber()).
  void rebuild(const ParticleStore& particles);
  /// Marks every provider due (another MPI rank found a rebuild due).
  void mark_due() { std::fill(due_.begin(), due_.end(), 1); }
  /// Makes the next rebuild_due() find every provider due, whatever its own
  /// test says (positions were changed from outside the stepper, e.g. by a
  /// Python script); rebuild() clears the request.
  void request_rebuild() { rebuild_requested_ = true; }
  /// rebuild_due() and rebuild(), without re-ordering.
  void update_records(const ParticleStore& particles);

  // --- evaluation -----------------------------------------------------------

  /// Writes F and tau at the current configuration into particles.force and
  /// particles.moment (overwriting them; when no provider gives moments,
  /// gives_moments(), the moments are left as they are: zero). Records must
  /// be current.
  /// With `times`, each provider's evaluation and the gather are timed
  /// into it (core/stage_times.hpp). With `after_gather`, the gather calls
  /// it for each range of particles [begin, end) once their F and tau are
  /// final, on the thread that gathered them (the stepper's second half
  /// kick); it must touch those particles only.
  using RangeHook = std::function<void(std::size_t, std::size_t)>;
  void evaluate(ParticleStore& particles, StageTimes* times = nullptr, const RangeHook* after_gather = nullptr);
  /// The gather alone: F and tau from the providers' current result slots
  /// (after fracture() changed some of them).
  /// With `only` (ascending slots, no repeats), just those particles.
  void gather(ParticleStore& particles, const RangeHook* after_gather = nullptr,
              std::span<const std::uint32_t> only = {}) const;
  /// Every provider's Decomposable::release_work(): for the whole system
  /// kept as the template of a decomposed run's parts (engine/partition.hpp).
  void release_work() {
    for (const ProviderCapabilities& c : caps_)
      if (c.decomposable != nullptr) c.decomposable->release_work();
  }
  /// The periodic cell (a provider with the CellHolder capability,
  /// engine/cell_provider.hpp), or nullptr: no periodic axis.
  const PeriodicCell* cell() const { return cell_ == nullptr ? nullptr : &cell_->cell(); }
  /// Sets the cell to its state at time t and, if it changed (a deforming
  /// cell), hands it to every provider again. Returns whether it changed.
  bool set_cell_time(double t);
  /// True if the cell's rate follows a target stress (CellHolder::controls_stress).
  bool cell_controls_stress() const { return cell_ != nullptr && cell_->controls_stress(); }
  /// The cell servo's step (CellHolder::control) from the cell's stress
  /// sigma at time t; if the cell's rate changed, hands the cell to every
  /// provider again. Returns whether it changed.
  bool control_cell(const Mat3& stress, double t);
  /// Every provider's ForceProvider::set_time_step(h).
  void set_time_step(double h) {
    for (const auto& p : providers_) p->set_time_step(h);
  }
  /// update_records() then evaluate(): never re-orders.
  void compute(ParticleStore& particles) {
    update_records(particles);
    evaluate(particles);
  }
  /// Potential energies of every provider by column; the records must be
  /// current (evaluate() was called at this configuration).
  EnergyReport potential_energies(const ParticleStore& particles) const;
  /// Events of the providers since the last call, provider by provider.
  void take_events(std::vector<InteractionEvent>& out);

  // --- dissipation and fracture (docs/model.md §10 and §11) ----------------

  /// True if some provider may give moments (ForceProvider::gives_moments, a
  /// property of the providers, not of their current records); false means
  /// every tau_i is zero at every step.
  bool gives_moments() const;
  /// True if some provider has non-conservative forces (the stepper then
  /// keeps the W_contact ledger).
  bool dissipative() const;
  /// Sum over providers of DissipationLedger::nonconservative_power, in provider
  /// order.
  ExactSum nonconservative_power(const ParticleStore& particles, std::span<const Vec3> u,
                               std::span<const Vec3> w) const;
  /// True if every DissipationLedger of the field is booked per particle
  /// (pair providers with PairResults::nc_force, one-body providers with
  /// ForceProvider::books_body_nonconservative): kick_power() applies.
  bool ledgers_by_particle() const;
  /// nonconservative_power(particles, v0 + v, w0 + w) with v, w the
  /// particles' velocities, without forming u and w: the same bits. The
  /// particles with kinematic[i] != 0 move at their prescribed v0, w0
  /// through the kick (the kick's change of their velocities is undone
  /// after it): theirs is u = 2 v0, w = 2 w0 (docs/model.md §16, kinematic groups).
  /// Requires ledgers_by_particle() (std::logic_error otherwise).
  ExactSum kick_power(const ParticleStore& particles, std::span<const Vec3> v0, std::span<const Vec3> w0,
                      std::span<const char> kinematic) const;
  /// Sum over providers of DissipationLedger::released_energy, in provider
  /// order: energy the last evaluate() released by state changes.
  ExactSum released_energy(const ParticleStore& particles) const;
  /// True if some provider applies iBDEM's friction filter.
  bool applies_filter() const;
  /// Adds every provider's friction-filter changes (FrictionFilter::add_filter_changes).
  void add_filter_changes(const ParticleStore& particles, double h, std::span<Vec3> dv,
                          std::span<Vec3> dw) const;
  // --- moving boundaries (core/force_provider.hpp MovingBoundary) -----------
  /// True if some provider's boundaries move (MovingBoundary::moves).
  bool boundaries_move() const;
  /// Every MovingBoundary's loads of the last evaluate(), in provider order
  /// (appended to `out`; sums over the particles this process owns).
  void boundary_loads(const ParticleStore& particles, std::vector<BoundaryLoad>& out) const;
  /// Each MovingBoundary's advance(t, h, its entries of `loads`), with
  /// `loads` laid out as boundary_loads() gives them.
  void advance_boundaries(double t, double h, std::span<BoundaryLoad> loads);

  /// The fracture phase of docs/model.md §10.2 at the configuration of the last
  /// evaluate(): the providers mark their records over strength, the contact
  /// providers take the freed pairs in (release_pairs), each failure's
  /// W = V_b - U_contact,new is booked, and, if anything failed, F and tau
  /// are gathered again without the failed records (no provider evaluates
  /// again). Returns the exact sum of W of the failures this process books
  /// (ParticleStore::books; zero when nothing failed).
  ExactSum fracture(ParticleStore& particles);
  /// The stress ratios of every record that can fail (Fracturing::
  /// stress_ratios), provider after provider, at the store's configuration;
  /// empty when nothing can fail. Per record: max(sigma/sigma_c,
  /// tau/tau_c), 0 once failed (docs/model.md §10.1, §12.8).
  void stress_ratios(const ParticleStore& particles, std::vector<double>& out) const;
  /// Failure records since the last call (provider order, key order).
  void take_failures(std::vector<BondFailure>& out);
  /// n_broken and n_fragments of the bond providers into `report`
  /// (n_fragments = particle count when no provider has bonds).
  void add_bond_counts(const ParticleStore& particles, EnergyReport& report) const;

  const std::vector<std::unique_ptr<ForceProvider>>& providers() const { return providers_; }
  /// The provider named `name`, or nullptr.
  const ForceProvider* find(const std::string& name) const;
  ForceProvider* find(const std::string& name);

  // --- the built-in providers (empty or default values when absent) ----------

  /// The first provider's bond graph (ProviderCapabilities::bond_graph), or
  /// nullptr.
  const BondGraph* bond_graph() const;
  /// The first bond graph whose bonds can fail (BondGraph::can_fail), or
  /// nullptr.
  const BondGraph* failing_bonds() const;
  /// The bonds of the bond provider (Baker-Gonzalez or BDEM).
  const BondList& bonds() const;
  /// Per bond of bonds(): 1 live, 0 failed; empty when no bond can fail.
  std::span<const std::uint8_t> bond_live() const;
  /// Per particle slot: failed bonds of the particle; empty when no bond
  /// can fail.
  std::vector<std::uint32_t> broken_per_particle(const ParticleStore& particles) const;
  /// Per particle slot: the smallest particle id of its live-bond fragment;
  /// empty when no bond can fail.
  std::vector<std::uint32_t> fragment_labels(const ParticleStore& particles) const;
  /// Scene indices of the failed bonds of every bond graph that can fail,
  /// ascending.
  std::vector<std::uint32_t> failed_bonds() const;
  /// Live bonds turned past 2pi/3 at the last evaluation (docs/model.md §9.1).
  std::uint64_t overturned_bonds() const;
  /// K^pp, skin and the re-ordering setting: the settings of the built-in
  /// constructor that stand for the first contact whose law has them
  /// (NeighbourListOwner::contact_settings: the Hertz law); stiffness and
  /// skin 0 when none has.
  ContactSettings contact() const;
  /// The first neighbour-list owner (ProviderCapabilities::neighbour_list),
  /// or nullptr.
  const NeighbourListOwner* neighbour_list() const;
  /// Its neighbour search; throws std::logic_error without one.
  const NeighbourSearch& neighbours() const;
  /// The first contact provider's DriftSink (NeighbourSearch::drift_sink);
  /// an empty one without a contact provider.
  DriftSink drift_sink(std::size_t count);
  /// NeighbourSearch::drift_sink_filled of that provider.
  void drift_sink_filled(const Vec3* positions);
  /// Whether the stepper re-orders the particles at rebuilds.
  bool reorder_on_rebuild() const { return reorder_on_rebuild_; }
  void set_reorder_on_rebuild(bool on) { reorder_on_rebuild_ = on; }

  /// The force field of a part of the system (engine/partition.hpp): every
  /// provider's ForceProvider::make_part() for `part`, in order, with this
  /// field's re-ordering setting; the contact list is empty until
  /// restore_neighbour_list(). Throws std::invalid_argument naming a
  /// provider that cannot be split.
  /// histories: per provider, its PartMap::history.
  ForceField make_part(const ParticleStore& part, const PartMap& map,
                       std::span<const std::vector<std::byte>> histories = {}) const;

  /// Rebuilds the contact provider's list from the positions of its last
  /// build in an earlier run (a checkpoint), so that the continued run
  /// rebuilds at the same steps. Throws std::invalid_argument if the sizes
  /// differ from the particle count, std::logic_error without a contact
  /// provider. build_edges: in a periodic cell, its edges at that build
  /// (NeighbourListOwner::restore_build_cell); nullptr: as they are now.
  void restore_neighbour_list(const ParticleStore& particles, std::span<const Vec3> build_positions,
                              std::size_t rebuild_count, const Mat3* build_edges = nullptr);

 private:
  std::vector<std::unique_ptr<ForceProvider>> providers_;
  std::vector<ProviderCapabilities> caps_;  ///< per provider
  /// The first neighbour-list owner (its list is the field's), or nullptr.
  NeighbourListOwner* first_list() const;
  void sync_exclusions();

  /// The pair providers' results and incidence (those with records), in
  /// provider order, into `views`; returns how many.
  static constexpr std::size_t kMaxPairProviders = 16;
  std::size_t pair_views(std::array<PairView, kMaxPairProviders>& views) const;
  /// Per particle: the non-conservative force and moment of the providers
  /// with non-conservative slots, summed by the last gather (or by
  /// gather_nonconservative), for nonconservative_power.
  mutable std::vector<Vec3> nc_force_, nc_moment_;
  void resize_nonconservative(std::size_t n) const;
  /// True if provider k's ledger is booked per particle.
  bool booked_by_particle(std::size_t k) const;
  void gather_nonconservative(const ParticleStore& particles) const;

  std::vector<char> due_;  ///< per provider: found due by rebuild_due()
  bool rebuild_requested_ = false;  ///< request_rebuild() since the last rebuild()
  bool exclusions_synced_ = false;
  FractureBatch batch_;
  bool renumbered_ = false;
  bool reorder_on_rebuild_ = true;
  CellHolder* cell_ = nullptr;  ///< the periodic cell's holder (one of providers_), or nullptr
};

/// Kinetic energies and momenta of the particles (docs/model.md §5), in
/// deterministic block sums; the potential fields are left zero. Particles
/// whose entry in `skip` is non-zero (clump members, whose motion their
/// clump carries) are left out; an empty `skip` leaves out none.
EnergyReport kinetic_energies_and_momenta(const ParticleStore& particles,
                                          std::span<const char> skip = {});

}  // namespace dem
