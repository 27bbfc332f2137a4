#pragma once
/// \file contact_provider.hpp
/// Particle-particle contact as a force provider (core/force_provider.hpp):
/// the Verlet neighbour list of contact/neighbour_search.hpp gives the
/// records (candidate pairs), a contact law gives each pair's force.
///
/// Every pair has its own slot in every scene: evaluate() computes each
/// pair's force once into it, and the gather adds it to the owner (first
/// end, the lower slot) and subtracts it from the partner. A particle's pairs
/// are visited as owner in ascending partner slot, then as partner in
/// ascending pair index.
///
/// Per-pair state (tangential history, later) lives beside the slots, one
/// Law::State per pair, and is keyed by the particle ids of the pair's two
/// ends: at each rebuild a pair that stays in the list keeps its state and a
/// new pair starts from State{}. The key order (id_lo, id_hi) is a total
/// order on pairs; the carry-over merges the old and new pair lists in that
/// order, so it does not depend on slots, re-ordering or threads. Laws whose
/// State is empty (the frictionless law of docs/model.md §4) keep no
/// state and skip the carry-over.
///
/// A contact law is a class with
///   struct State;                                  (empty, or per-pair history)
///   Vec3 force(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j, State&) const;
///   double energy(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j, const State&) const;
///   static constexpr const char* energy_column;    (e.g. "U_contact")
///   void save(ByteWriter&) const;  static Law load(ByteReader&);
///   and for a non-empty State: void save_state(ByteWriter&, const State&),
///   State load_state(ByteReader&) (static, or const members where the bytes
///   depend on the law's options: they are called on the provider's law).

#include <algorithm>
#include <concepts>
#include <cmath>
#include <cstdint>
#include <array>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/neighbour_search.hpp"
#include "contact/pair_kernel.hpp"
#include "core/force_provider.hpp"
#include "core/parallel.hpp"

namespace dem {

/// Particle-particle contact settings of a scene.
struct ContactSettings {
  double stiffness = 0.0;  ///< K^pp (energy), >= 0; 0 disables contact
  double skin = 0.0;       ///< Verlet skin of the neighbour list (length), >= 0
  /// Sort the particles along a Morton curve (and renumber every provider's
  /// records) each time the neighbour list is rebuilt, so that neighbours
  /// stay close in memory. Particle slots then change during a run;
  /// ParticleStore::id keeps each particle's identity. A setting of the
  /// stepper (engine/simulation.hpp), kept here with the scene's contact.
  bool reorder_on_rebuild = true;
};

/// The frictionless Hertz-type law of docs/model.md §4 (eqs. 56-57): no
/// per-pair state.
struct HertzContactLaw {
  struct State {};
  static constexpr const char* energy_column = "U_contact";
  double stiffness = 0.0;  ///< K^pp (energy)

  Vec3 force(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j, State&) const {
    return contact_force(x_i, x_j, r_i, r_j, stiffness);
  }
  double energy(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j, const State&) const {
    return particle_contact(x_i, x_j, r_i, r_j, stiffness).energy;
  }
  /// U''(r) at centre distance r < reach = r_i + r_j (the implicit
  /// integrator's Hessian, docs/model.md §12.4): (3/2) K/reach² [1 - r/reach]^{1/2}.
  double radial_curvature(double r, double reach) const {
    return 1.5 * stiffness / (reach * reach) * std::sqrt(1.0 - r / reach);
  }
  /// Zero stiffness: no contact at all (the gather skips the provider).
  bool active() const { return stiffness > 0.0; }
  /// ContactSettings::stiffness: K^pp is what the [contact] settings of a
  /// scene hold for this law alone (the law of the combined estimate,
  /// docs/model.md §7, and the contact of ForceField's built-in
  /// constructor), so that a field can report the settings it was built from.
  double settings_stiffness() const { return stiffness; }
  /// The vectorised loop (contact/pair_kernel.hpp) in ranges of whole
  /// 8-pair blocks: the same bits as force() pair by pair.
  void block_forces(const NeighbourList& list, const ParticleStore& s, const std::uint8_t* excluded,
                    std::span<Vec3> pair_force) const {
    HertzPairArgs a;
    a.owner = list.owner.data();
    a.partner = list.partner.data();
    a.excluded = excluded;
    a.position = s.position.data();
    a.radius = s.radius.data();
    a.stiffness = stiffness;
    a.force = pair_force.data();
    constexpr std::size_t kBlock = 8;
    const std::size_t m = list.pair_count();
    parallel_for_ranges((m + kBlock - 1) / kBlock, [&](std::size_t begin, std::size_t end) {
      hertz_pair_forces(a, begin * kBlock, std::min(end * kBlock, m));
    }, 64);
  }
  void save(ByteWriter& w) const { w.f64(stiffness); }
  static HertzContactLaw load(ByteReader& r);
};

/// iBDEM's repulsion between unbonded particles (docs/model.md §11.1, eq. 32 with
/// the [.]_+ the paper drops): V = ½ k_ec [r_i + r_j - |x_i - x_j|]_+²,
/// F_i = k_ec [.]_+ d. No per-pair state; conservative.
struct PenaltyContactLaw {
  struct State {};
  static constexpr const char* energy_column = "U_contact";
  double stiffness = 0.0;  ///< k_ec (force/length), >= 0
  /// iBDEM's friction filter (docs/model.md §11.1, eqs. 34-35 corrected): off
  /// unless the per-material coefficients are given (indexed by
  /// ParticleStore::material; a pair takes the geometric mean).
  std::vector<double> sliding_friction, rolling_friction;
  bool filter() const { return !sliding_friction.empty(); }

  Vec3 force(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j, State&) const {
    const Vec3 rv = x_i - x_j;
    const double r2 = rv.squaredNorm(), reach = r_i + r_j;
    if (!(r2 < reach * reach)) return Vec3::Zero();
    const double r = std::sqrt(r2);
    return (stiffness * (reach - r) / r) * rv;
  }
  double energy(const Vec3& x_i, const Vec3& x_j, double r_i, double r_j, const State&) const {
    const double overlap = r_i + r_j - (x_i - x_j).norm();
    return overlap > 0.0 ? 0.5 * stiffness * overlap * overlap : 0.0;
  }
  /// U''(r) at centre distance r < reach: k_ec (docs/model.md §12.4).
  double radial_curvature(double, double) const { return stiffness; }
  /// The filter's changes of one touching pair whose repulsion is `force`
  /// (on i), added to dv, dw of both ends (filter_change below).
  void add_filter_changes(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const Vec3& force, double h,
                          std::span<Vec3> dv, std::span<Vec3> dw) const;

  void save(ByteWriter& w) const {
    w.f64(stiffness);
    w.array(sliding_friction, [](ByteWriter& ww, double x) { ww.f64(x); });
    w.array(rolling_friction, [](ByteWriter& ww, double x) { ww.f64(x); });
  }
  static PenaltyContactLaw load(ByteReader& r);
};

/// The friction filter's change for one contact (docs/model.md §11.1): with
/// the relative centre velocity v_ij, its part v_t across the normal n,
/// the relative spin w_ij and the repulsion |F_n| over a step dt,
///   dv = -min(1, mu_s |F_n| dt / (m |v_t|)) v_t,
///   dw = -min(1, mu_r |F_n| r dt / (J |w_ij|)) w_ij
/// for the particle of mass m, inertia J and radius r.
inline void filter_change(const Vec3& v_ij, const Vec3& w_ij, const Vec3& n, double f_n, double dt, double mu_s,
                          double mu_r, double m, double j, double r, Vec3& dv, Vec3& dw) {
  const Vec3 v_t = v_ij - v_ij.dot(n) * n;
  const double vt = v_t.norm();
  if (vt > 0.0) dv -= std::min(1.0, mu_s * f_n * dt / (m * vt)) * v_t;
  const double w = w_ij.norm();
  if (w > 0.0) dw -= std::min(1.0, mu_r * f_n * r * dt / (j * w)) * w_ij;
}

inline void PenaltyContactLaw::add_filter_changes(const ParticleStore& s, std::uint32_t i, std::uint32_t j,
                                                  const Vec3& force, double h, std::span<Vec3> dv,
                                                  std::span<Vec3> dw) const {
  const double f_n = force.norm();
  if (f_n == 0.0) return;
  const Vec3 n = (s.position[i] - s.position[j]).normalized();
  const std::uint32_t a = s.material[i], b = s.material[j];
  const double mu_s = std::sqrt(sliding_friction[a] * sliding_friction[b]);
  const double mu_r = std::sqrt(rolling_friction[a] * rolling_friction[b]);
  const Vec3 v_ij = s.velocity[i] - s.velocity[j], w_ij = s.angular_velocity[i] - s.angular_velocity[j];
  filter_change(v_ij, w_ij, n, f_n, h, mu_s, mu_r, s.mass[i], s.inertia[i], s.radius[i], dv[i], dw[i]);
  filter_change(-v_ij, -w_ij, -n, f_n, h, mu_s, mu_r, s.mass[j], s.inertia[j], s.radius[j], dv[j], dw[j]);
}

/// A pair's key: the ids of its two ends, lower in the high half.
inline std::uint64_t pair_key(std::uint32_t id_a, std::uint32_t id_b) {
  const std::uint32_t lo = std::min(id_a, id_b), hi = std::max(id_a, id_b);
  return (static_cast<std::uint64_t>(lo) << 32) | hi;
}

/// The two ids of a pair_key(), the lower first.
inline std::pair<std::uint32_t, std::uint32_t> pair_key_ids(std::uint64_t key) {
  return {static_cast<std::uint32_t>(key >> 32), static_cast<std::uint32_t>(key & 0xffffffffu)};
}

/// Where a record reads its second end in a periodic cell
/// (core/periodic_cell.hpp): at x_j + offset, moving at v_j + velocity
/// (H n and Hdot n of the record's image; zero for the particle itself).
struct PairImage {
  Vec3 offset = Vec3::Zero();    ///< length
  Vec3 velocity = Vec3::Zero();  ///< length/time
  /// Where the image of a particle at x lies.
  Vec3 position_of(const Vec3& x) const { return x + offset; }
  /// How fast the image of a particle moving at v moves: v itself in a
  /// cell that does not deform (not v + 0, which would turn a -0 into +0).
  Vec3 velocity_of(const Vec3& v) const { return (velocity.array() == 0.0).all() ? v : Vec3(v + velocity); }
};

/// The owner of a contact neighbour list (contact/neighbour_search.hpp): a
/// capability of a force provider (core/force_provider.hpp,
/// ProviderCapabilities::neighbour_list). The engine reads the list's
/// builds through it (the drift scan of the stepper, the rebuild test of a
/// decomposed run, checkpoints and parts restore it).
class NeighbourListOwner {
 public:
  virtual ~NeighbourListOwner() = default;
  virtual const NeighbourSearch& neighbours() const = 0;
  virtual NeighbourSearch& neighbours() = 0;
  /// The list's last build: the positions it was built at (length; empty
  /// before the first), the builds so far, and the periodic cell's edges
  /// then. Those of a checkpoint's list where its restore is still
  /// pending (load() until the stepper first asks): what a template of a
  /// checkpoint's state hands over (engine/partition.hpp) without building
  /// the whole system's list.
  struct LastBuild {
    std::span<const Vec3> positions;
    std::size_t rebuild_count = 0;
    Mat3 edges = Mat3::Zero();
  };
  virtual LastBuild last_build() const = 0;
  /// Rebuilds the list from the positions of an earlier build (a checkpoint)
  /// and sets the build count, so that a continued run rebuilds at the same
  /// steps. Throws std::invalid_argument if the sizes differ.
  virtual void restore(const ParticleStore& s, std::span<const Vec3> build_positions, std::size_t rebuild_count) = 0;
  /// In a periodic cell: the cell's edges H (length, columns) at the build
  /// that the next restore() repeats, so that it searches the images where
  /// they were then (a part of a decomposed run made from the whole run's
  /// state, engine/partition.hpp; a checkpoint section carries them itself).
  virtual void restore_build_cell(const Mat3& edges) = 0;
  /// After restore() of a part made with history (make_part): the pairs
  /// take their states and result slots.
  virtual void apply_part_history() = 0;
  /// The [contact] settings (K^pp, skin) this provider's law and list
  /// stand for, for a law whose constants are those settings
  /// (HertzContactLaw::settings_stiffness); nullopt for other laws.
  virtual std::optional<ContactSettings> contact_settings() const { return std::nullopt; }
};

/// The law-independent part: the neighbour list, the per-pair force slots
/// and the bookkeeping of the pairs' keys.
class ContactProviderBase : public ForceProvider,
                            public NeighbourListOwner,
                            public ExcludedPairs,
                            public Decomposable {
 public:
  /// skin: Verlet skin (length), finite and >= 0, else std::invalid_argument.
  explicit ContactProviderBase(double skin) : search_(skin) {}

  bool rebuild_due(const ParticleStore& s) override {
    if (pending_) finish_restore(s);
    return stale_ || search_.rebuild_due(s.position, s.radius);
  }
  void rebuild(const ParticleStore& s) override {
    search_.rebuild(s.position, s.radius);
    stale_ = false;
    update_images();
    after_rebuild(s);
  }
  /// A periodic cell: the list searches its images from the next build
  /// on (a change of periodic axes rebuilds it), and each pair whose
  /// partner is an image reads it at x_j + H n, v_j + Hdot n.
  void set_cell(const PeriodicCell& cell) override {
    if (cell.periodic != cell_.periodic) stale_ = true;
    cell_ = cell;
    search_.set_cell(cell);
    update_images(false);
  }
  /// The list is rebuilt before the next evaluation (the stepper re-orders
  /// only at rebuilds, so nothing is lost).
  void renumber(std::span<const std::uint32_t>) override { stale_ = true; }
  PairResults pair_results() const override {
    PairResults r;
    r.first = search_.list().owner;
    r.force = pair_force_;
    r.offset = offset_;
    return r;
  }
  Incidence incidence() const override {
    Incidence inc;
    if (!active()) return inc;
    if (!excluded_.empty()) {  // only the pairs that take part
      inc.entry_offsets = entry_offsets_;
      inc.entries = entries_;
      return inc;
    }
    const NeighbourList& l = search_.list();
    inc.owned_offsets = l.offsets;
    inc.incoming_offsets = l.incoming_offsets;
    inc.incoming = l.incoming_pairs;
    return inc;
  }

  /// Rebuilds the list from the positions of an earlier build (a checkpoint)
  /// and sets the build count, so that a continued run rebuilds at the same
  /// steps. Throws std::invalid_argument if the sizes differ.
  void restore(const ParticleStore& s, std::span<const Vec3> build_positions, std::size_t rebuild_count) override;
  void restore_build_cell(const Mat3& edges) override { pending_build_edges_ = edges; }
  /// Completes a restore that load() deferred (the list is built only when
  /// the stepper first asks, so that reading a checkpoint allocates no
  /// more than a small multiple of its size). Throws StateError if stored
  /// per-pair keys differ from the rebuilt list's. Called by rebuild_due().
  void finish_restore(const ParticleStore& s) {
    if (!pending_) return;
    pending_ = false;
    std::vector<Vec3> built;
    built.swap(pending_positions_);
    restore(s, built, pending_rebuilds_);
    apply_pending_state();
  }

  /// After restore() of a part made with history (make_part): the pairs
  /// take their states and result slots.
  void apply_part_history() override {
    if (!part_history_) return;
    part_history_ = false;
    apply_part_state();
  }

  const NeighbourSearch& neighbours() const override { return search_; }
  NeighbourSearch& neighbours() override { return search_; }
  LastBuild last_build() const override {
    if (!pending_) return {search_.build_positions(), search_.rebuild_count(), search_.build_edges()};
    return {pending_positions_, pending_rebuilds_, pending_build_edges_ ? *pending_build_edges_ : search_.build_edges()};
  }
  std::vector<ArrayBytes> memory_use() const override {
    const NeighbourList& l = search_.list();
    return {{"contact pair list (owner, partner)", capacity_bytes(l.owner) + capacity_bytes(l.partner)},
            {"contact pair incidence (offsets, incoming)",
             capacity_bytes(l.offsets) + capacity_bytes(l.incoming_offsets) + capacity_bytes(l.incoming_pairs) +
                 capacity_bytes(entry_offsets_) + capacity_bytes(entries_)},
            {"contact pair force slots", capacity_bytes(pair_force_)},
            {"contact pair keys and state", capacity_bytes(keys_) + capacity_bytes(sorted_) + state_bytes()},
            {"neighbour build positions", capacity_bytes(search_.build_positions())}};
  }
  double skin() const { return search_.skin(); }
  void release_work() override {
    search_ = NeighbourSearch(search_.skin());
    std::vector<Vec3>().swap(pair_force_);
    for (std::vector<std::uint64_t>* v : {&keys_, &excluded_keys_, &released_}) std::vector<std::uint64_t>().swap(*v);
    for (std::vector<std::uint32_t>* v : {&sorted_, &entry_offsets_, &entries_}) std::vector<std::uint32_t>().swap(*v);
    std::vector<std::uint8_t>().swap(excluded_);
    std::vector<Vec3>().swap(pending_positions_);
    release_pair_state();
  }
  /// False when the law does nothing (zero stiffness): the gather skips it.
  virtual bool active() const { return true; }
  /// Key (pair_key of the ids) of each pair of the list (kept only by laws
  /// with per-pair state, or while pairs are excluded; empty otherwise).
  const std::vector<std::uint64_t>& keys() const { return keys_; }

  /// Bonded pairs (ascending keys) have no contact: from the next rebuild
  /// on, a listed pair with such a key gets a zero force and no energy.
  void set_excluded_pairs(std::span<const std::uint64_t> keys) override {
    excluded_keys_.assign(keys.begin(), keys.end());
    released_.clear();
  }
  /// Per pair of the list: left out (a bonded pair); empty when none is.
  const std::vector<std::uint8_t>& excluded() const { return excluded_; }

 protected:
  /// Bytes of the per-pair state.
  virtual std::size_t state_bytes() const { return 0; }
  /// Frees the per-pair state and result slots (release_work()).
  virtual void release_pair_state() {}
  /// Moves the per-pair state read by load() onto the restored list.
  virtual void apply_pending_state() {}
  /// The same for a part's history (pending pairs in ascending key order).
  virtual void apply_part_state() {}
  /// Called after every (re)build: sizes the slots, carries the state over.
  virtual void after_rebuild(const ParticleStore& s) = 0;
  /// Keys of the new list from the particle ids, and the permutation that
  /// sorts them; returns the matching old pair of each new pair (or
  /// kNoPair), found by a merge in key order.
  std::vector<std::uint32_t> match_pairs(const ParticleStore& s);
  void save_list(ByteWriter& w) const;
  /// In a periodic cell, the cell's edges at the list's last build, at the
  /// end of the section (nothing without a periodic axis, so other scenes'
  /// sections are unchanged); load_build_cell() reads them if present, and
  /// restore() searches the images where they were at that build.
  void save_build_cell(ByteWriter& w) const;
  void load_build_cell(ByteReader& r);
  /// Whether pair keys are needed (stateful law or excluded pairs).
  bool keyed(bool stateful) const { return stateful || !excluded_keys_.empty(); }
  /// Marks the pairs whose key is in excluded_keys_ (a merge in key order)
  /// and indexes the others (index_included()).
  void mark_excluded();
  /// The incidence of the pairs not excluded, in the list's own order for
  /// each particle (owned pairs, then incoming): the gather then skips the
  /// bonded pairs, whose slots are zero, and adds the same terms in the
  /// same order.
  void index_included();
  /// The list index of the pair with this key, or kNoPair.
  std::uint32_t find_pair(std::uint64_t key) const;
  /// Drops released keys from excluded_keys_ (at the next mark_excluded()).
  void forget_excluded(std::span<const std::uint64_t> released);
  /// Applies the pending forget_excluded() calls.
  void apply_released();
  /// The image offsets of the list's pairs at the current cell (empty
  /// without a periodic axis); `relist`: after a build, also which pairs'
  /// partners are images (else only their offsets are computed again).
  void update_images(bool relist = true);
  /// What a vectorised loop over the list leaves out: the excluded pairs,
  /// and in a periodic cell also the pairs whose partner is an image
  /// (evaluated pair by pair after it); nullptr: none.
  const std::uint8_t* block_skip();
  /// Where pair k reads its partner: the partner itself, or its image.
  PairImage image_of(std::size_t k) const {
    if (offset_.empty()) return PairImage{};
    return PairImage{offset_[k], velocity_offset_[k]};
  }
  /// True if pair k's partner is an image.
  bool crosses(std::size_t k) const {
    const std::vector<std::uint8_t>& image = search_.list().image;
    return !image.empty() && image[k] != kNoImage;
  }

  static constexpr std::uint32_t kNoPair = 0xffffffffu;
  NeighbourSearch search_;
  std::vector<Vec3> pair_force_;       ///< per pair: force on the owner
  std::vector<std::uint64_t> keys_;    ///< per pair: pair_key (stateful laws)
  std::vector<std::uint32_t> sorted_;  ///< pairs in ascending key (stateful laws)
  std::vector<std::uint64_t> excluded_keys_;  ///< bonded pairs, ascending
  std::vector<std::uint64_t> released_;       ///< keys released since, not yet dropped from excluded_keys_
  std::vector<std::uint8_t> excluded_;        ///< per pair (empty: none excluded)
  std::vector<std::uint32_t> entry_offsets_, entries_;  ///< incidence of the pairs not excluded
  PeriodicCell cell_;                       ///< no periodic axis unless set_cell()
  std::vector<Vec3> offset_;                ///< per pair: H n of its image (empty: no periodic axis)
  std::vector<Vec3> velocity_offset_;       ///< per pair: Hdot n (empty: no periodic axis)
  std::vector<std::uint32_t> cross_;        ///< the pairs whose partner is an image, ascending
  std::vector<std::uint8_t> skip_;          ///< block_skip()'s flags
  bool stale_ = false;
  /// A restore read from a checkpoint, not yet built (finish_restore()).
  bool pending_ = false;
  /// A part made with history that restore() has not applied yet.
  bool part_history_ = false;
  std::vector<Vec3> pending_positions_;
  std::uint64_t pending_rebuilds_ = 0;
  std::optional<Mat3> pending_build_edges_;  ///< load_build_cell() or restore_build_cell(), until restore()
};

/// What a velocity-dependent (kinetic) law gives for one pair.
struct PairOutput {
  Vec3 force = Vec3::Zero();     ///< on the first end (the second takes -force)
  Vec3 nc_force = Vec3::Zero();  ///< the non-conservative part of force (docs/model.md §11.3)
  Vec3 moment_i = Vec3::Zero();  ///< spatial moment on the first end
  Vec3 moment_j = Vec3::Zero();  ///< spatial moment on the second end
  /// Potential energy the pair lost in this evaluation by a change of its
  /// state rather than by a force (an adhesive contact that breaks,
  /// docs/model.md §11.7): booked in W_contact (ReleasingLaw only).
  double released = 0.0;
};

template <class Law>
concept KineticLaw = Law::kKinetic;

/// The per-pair result slots of a kinetic law's provider (PairOutput's
/// force, nc_force, moment_i, moment_j, each indexed by pair).
struct KineticSlots {
  Vec3* force = nullptr;
  Vec3* nc_force = nullptr;
  Vec3* moment_i = nullptr;
  Vec3* moment_j = nullptr;
};

/// Kinetic laws with a vectorised loop over the whole pair list, which
/// gives the bits of evaluate() pair by pair:
///   bool block_evaluate(const NeighbourList&, const ParticleStore&, const std::uint8_t* excluded,
///                       State* state, KineticSlots slots) const;
/// returning false where it does not cover the law's settings (the provider
/// then evaluates pair by pair).
template <class Law>
concept BlockKineticLaw = requires(const Law& law, const NeighbourList& l, const ParticleStore& s,
                                   typename Law::State* st, KineticSlots slots) {
  { law.block_evaluate(l, s, static_cast<const std::uint8_t*>(nullptr), st, slots) } -> std::convertible_to<bool>;
};

/// Kinetic laws whose contacts can lose potential energy by a change of
/// state at one configuration (an adhesive contact that breaks at its
/// pull-off distance, docs/model.md §11.7): `static constexpr bool kReleases
/// = true`, and evaluate() sets PairOutput::released. The providers keep one
/// slot of it per record and report it as DissipationLedger::released_energy.
template <class Law>
concept ReleasingLaw = requires { requires Law::kReleases; };

/// Stateless repulsive laws U(r) of the centre distance r, U'(r) <= 0, that
/// give U''(r) in contact (radial_curvature): their pair Hessian is
/// [[A, -A], [-A, A]] with A = U'' d dᵀ + (U'/r)(I - d dᵀ), whose projection
/// to positive semi-definite keeps A = U'' d dᵀ (docs/model.md §12.4).
template <class Law>
concept RadialLaw = requires(const Law& law) {
  { law.radial_curvature(1.0, 1.0) } -> std::convertible_to<double>;
};

/// Laws that may apply iBDEM's friction filter (docs/model.md §11.1).
template <class Law>
concept FilterLaw = requires(const Law& law) {
  { law.filter() } -> std::convertible_to<bool>;
};

/// Laws with a vectorised kernel over the whole pair list, which gives the
/// same bits as their force() pair by pair:
///   void block_forces(const NeighbourList&, const ParticleStore&,
///                     const std::uint8_t* excluded, std::span<Vec3> pair_force) const;
template <class Law>
concept BlockKernelLaw = requires(const Law& law, const NeighbourList& l, const ParticleStore& s, std::span<Vec3> f) {
  law.block_forces(l, s, static_cast<const std::uint8_t*>(nullptr), f);
};

/// Laws whose constant is ContactSettings::stiffness (K^pp of the Hertz law):
///   double settings_stiffness() const;
template <class Law>
concept SettingsLaw = requires(const Law& law) {
  { law.settings_stiffness() } -> std::convertible_to<double>;
};

template <class Law>
class ContactProvider final : public ContactProviderBase,
                              public HessianSource,
                              public DissipationLedger,
                              public FrictionFilter {
 public:
  static constexpr bool kStateful = !std::is_empty_v<typename Law::State>;
  /// Laws with velocities, moments and non-conservative parts (Hertz-Mindlin):
  ///   void evaluate(const ParticleStore&, uint32 i, uint32 j, State&, PairOutput&) const;
  ///   double energy(const ParticleStore&, uint32 i, uint32 j, const State&) const;
  /// and the same with a `const PairImage&` after j for a pair across a
  /// periodic face (the partner read at its image; the same arithmetic
  /// on x_j + offset and v_j + velocity).
  static constexpr bool kKinetic = KineticLaw<Law>;
  static constexpr bool kReleasing = ReleasingLaw<Law>;

  ContactProvider(Law law, double skin, std::string name = "contact")
      : ContactProviderBase(skin), law_(std::move(law)), name_(std::move(name)) {}

  std::string name() const override { return name_; }
  /// The list, its bonded-pair exclusions and history; Hessian blocks for
  /// radial laws (docs/model.md §12.4), the ledger for kinetic laws
  /// (§11.3), the friction filter for laws that may apply it (§11.1).
  ProviderCapabilities capabilities() override {
    ProviderCapabilities c;
    c.excluded_pairs = this;
    c.decomposable = this;
    c.neighbour_list = this;
    if constexpr (RadialLaw<Law>) c.hessian = this;
    if constexpr (kKinetic) c.ledger = this;
    if constexpr (FilterLaw<Law>) c.filter = this;
    return c;
  }
  std::optional<ContactSettings> contact_settings() const override {
    if constexpr (SettingsLaw<Law>) return ContactSettings{law_.settings_stiffness(), skin()};
    return std::nullopt;
  }
  /// The same law and skin with an empty list (the part restores it,
  /// ForceField::restore_neighbour_list). Laws with per-pair state (a
  /// friction history) cannot be split yet: nullptr.
  std::unique_ptr<ForceProvider> make_part(const ParticleStore& part, const PartMap& map) const override {
    auto p = std::make_unique<ContactProvider<Law>>(law_, skin(), name_);
    if constexpr (kStateful) {
      if (map.history.empty()) return p;
      // The pairs of every rank's history whose two particles are in the
      // part, by key: exactly the pairs of the part's restored list.
      std::vector<std::uint32_t> ids(part.id.begin(), part.id.end());
      std::sort(ids.begin(), ids.end());
      const auto in_part = [&](std::uint32_t id) { return std::binary_search(ids.begin(), ids.end(), id); };
      struct Entry {
        std::uint64_t key;
        typename Law::State state;
        std::array<Vec3, 4> slots;
      };
      std::vector<Entry> entries;
      ByteReader r(map.history);
      while (r.remaining() > 0) {
        Entry e{};
        e.key = r.u64("contact pair key");
        e.state = law_.load_state(r);
        if constexpr (kKinetic)
          for (Vec3& v : e.slots) v = r.vec3("contact pair results");
        if (const auto [i, j] = pair_key_ids(e.key); in_part(i) && in_part(j)) entries.push_back(e);
      }
      std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
      for (const Entry& e : entries) {
        p->pending_keys_.push_back(e.key);
        p->pending_state_.push_back(e.state);
        if constexpr (kKinetic) p->pending_slots_.insert(p->pending_slots_.end(), e.slots.begin(), e.slots.end());
      }
      p->part_history_ = true;
    }
    return p;
  }
  /// Each listed pair this process books: key, state and (kinetic laws) the
  /// four result slots of the last evaluation.
  /// A checkpoint's pairs still pending (a template of its state, which
  /// books them all): as load() read them, in the list's order then.
  void pack_history(const ParticleStore& s, ByteWriter& w) const override {
    if constexpr (kStateful) {
      if (pending_) {
        if (s.is_part()) throw std::logic_error("pack_history: a part's contact list restore is pending");
        for (std::size_t k = 0; k < pending_keys_.size(); ++k) {
          w.u64(pending_keys_[k]);
          law_.save_state(w, pending_state_[k]);
          if constexpr (kKinetic)
            for (int q = 0; q < 4; ++q) w.vec3(pending_slots_[4 * k + q]);
        }
        return;
      }
      const NeighbourList& l = search_.list();
      for (std::size_t k = 0; k < l.pair_count(); ++k) {
        if (!s.books(l.owner[k], l.partner[k])) continue;
        w.u64(keys_[k]);
        law_.save_state(w, state_[k]);
        if constexpr (kKinetic) {
          w.vec3(pair_force_[k]);
          w.vec3(nc_force_[k]);
          w.vec3(moment_i_[k]);
          w.vec3(moment_j_[k]);
        }
      }
    }
  }
  /// Laws that integrate a history with the time step take the stepper's.
  void set_time_step(double h) override {
    if constexpr (requires { law_.set_time_step(h); }) law_.set_time_step(h);
  }
  /// Laws with moments (Hertz-Mindlin) give them whether or not any pair is
  /// listed now.
  bool gives_moments() const override { return kKinetic; }
  /// Laws that can do nothing say so (`bool active() const`).
  bool active() const override {
    if constexpr (requires { law_.active(); }) return law_.active();
    return true;
  }

  void evaluate(const ParticleStore& s) override {
    if (!active()) return;
    if (skip_evaluate_) {  // restored from a checkpoint: the slots are this configuration's
      skip_evaluate_ = false;
      return;
    }
    const NeighbourList& list = search_.list();
    const std::uint8_t* excluded = excluded_.empty() ? nullptr : excluded_.data();
    // The vectorised loops leave out the pairs across a periodic face,
    // evaluated pair by pair after them.
    if constexpr (BlockKernelLaw<Law>) {
      law_.block_forces(list, s, block_skip(), pair_force_);
      evaluate_crossing(s);
      return;
    }
    if constexpr (BlockKineticLaw<Law>) {
      const KineticSlots slots{pair_force_.data(), nc_force_.data(), moment_i_.data(), moment_j_.data()};
      if (law_.block_evaluate(list, s, block_skip(), state_.data(), slots)) {
        evaluate_crossing(s);
        return;
      }
    }
    parallel_for_ranges(list.pair_count(), [&](std::size_t begin, std::size_t end) {
      typename Law::State none{};
      for (std::size_t k = begin; k < end; ++k) {
        // An excluded pair's slots were zeroed when it was marked
        // (mark_excluded), and the gather does not visit it.
        if (excluded != nullptr && excluded[k]) continue;
        const std::uint32_t i = list.owner[k], j = list.partner[k];
        typename Law::State& st = [&]() -> typename Law::State& {
          if constexpr (kStateful) return state_[k];
          else return none;
        }();
        evaluate_pair(s, k, i, j, st);
      }
    });
  }

  std::span<const std::uint32_t> record_second_ends() const override { return search_.list().partner; }
  void element_hessians(const ParticleStore& s, std::size_t first, std::span<Mat12> out,
                        HessianBlocks blocks) const override {
    if constexpr (RadialLaw<Law>) {
      const NeighbourList& list = search_.list();
      parallel_for_ranges(out.size(), [&](std::size_t begin, std::size_t end) {
        for (std::size_t q = begin; q < end; ++q) {
          const std::size_t k = first + q;
          Mat12& h = out[q];
          h.setZero();
          if (!active() || (!excluded_.empty() && excluded_[k])) continue;
          const std::uint32_t i = list.owner[k], j = list.partner[k];
          const Vec3 rv = s.position[i] - s.position[j];
          const double reach = s.radius[i] + s.radius[j], r = rv.norm();
          if (!(r < reach) || !(r > 0.0)) continue;
          const Vec3 d = rv / r;
          Mat3 a = law_.radial_curvature(r, reach) * (d * d.transpose());
          // U'(r)/r (I - d dᵀ), U' = -|F|: negative, so the projection drops
          // it (and so does Gauss-Newton over the strain r - L: the same block).
          typename Law::State none{};
          if (blocks == HessianBlocks::exact)
            a -= law_.force(s.position[i], s.position[j], s.radius[i], s.radius[j], none).norm() / r *
                 (Mat3::Identity() - d * d.transpose());
          h.block<3, 3>(0, 0) = a;
          h.block<3, 3>(0, 6) = -a;
          h.block<3, 3>(6, 0) = -a;
          h.block<3, 3>(6, 6) = a;
        }
      });
    }
  }

  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override {
    const NeighbourList& list = search_.list();
    const ExactSum u = exact_sum(list.pair_count(), [&](std::size_t k) {
      if (!excluded_.empty() && excluded_[k]) return 0.0;
      const std::uint32_t i = list.owner[k], j = list.partner[k];
      if (!s.books(i, j)) return 0.0;
      if constexpr (kStateful) return energy_of(s, k, i, j, state_[k]);
      else return energy_of(s, k, i, j, typename Law::State{});
    });
    r.add(Law::energy_column, u);
  }

  /// Section: the law's parameters, the skin, the neighbour list's build
  /// positions and count, and (stateful laws) each pair's key and state.
  void save(ByteWriter& w) const override {
    law_.save(w);
    save_list(w);
    if constexpr (kStateful) {
      const std::vector<std::uint64_t>& keys = pending_ ? pending_keys_ : keys_;
      const std::vector<typename Law::State>& state = pending_ ? pending_state_ : state_;
      w.u64(keys.size());
      for (std::size_t k = 0; k < keys.size(); ++k) {
        w.u64(keys[k]);
        law_.save_state(w, state[k]);
      }
      if constexpr (kKinetic) {
        // The last evaluation's slots: a restart continues from them
        // instead of evaluating again (which would advance the history).
        for (std::size_t k = 0; k < keys.size(); ++k)
          if (pending_) {
            for (int q = 0; q < 4; ++q) w.vec3(pending_slots_[4 * k + q]);
          } else {
            w.vec3(pair_force_[k]);
            w.vec3(nc_force_[k]);
            w.vec3(moment_i_[k]);
            w.vec3(moment_j_[k]);
          }
      }
    }
    save_build_cell(w);
  }

  /// The provider saved by save(); its list is rebuilt from the stored build
  /// positions when the stepper first asks (finish_restore()). Throws
  /// StateError if anything is inconsistent (finish_restore() if stored pair
  /// keys differ from the rebuilt list's).
  static std::unique_ptr<ContactProvider> load(ByteReader& r, const ParticleStore& s,
                                               std::string name = "contact") {
    Law law = Law::load(r);
    const double skin = r.f64("contact skin");
    if (!(std::isfinite(skin) && skin >= 0.0))
      throw StateError("inconsistent: Verlet skin must be finite and >= 0");
    auto p = std::make_unique<ContactProvider>(std::move(law), skin, std::move(name));
    std::vector<Vec3> built;
    r.array(built, 24, "neighbour build position", [](ByteReader& rr) { return rr.vec3("neighbour build positions"); });
    if (!built.empty() && built.size() != s.size())
      throw StateError("inconsistent: " + std::to_string(built.size()) + " neighbour build positions for " +
                       std::to_string(s.size()) + " particles (expected 0 or " + std::to_string(s.size()) + ")");
    for (std::size_t i = 0; i < built.size(); ++i)
      if (!built[i].allFinite())
        throw StateError("inconsistent: neighbour build position " + std::to_string(i) + " is not finite");
    const std::uint64_t rebuilds = r.u64("neighbour rebuild count");
    if (!built.empty()) {
      p->pending_ = true;
      p->pending_positions_ = std::move(built);
      p->pending_rebuilds_ = rebuilds;
    }
    if constexpr (kStateful) {
      const std::size_t n = r.count("contact pair state", 8);
      if (n > 0 && !p->pending_)
        throw StateError("inconsistent: " + std::to_string(n) + " contact pair states without a neighbour list");
      for (std::size_t k = 0; k < n; ++k) {
        p->pending_keys_.push_back(r.u64("contact pair key"));
        p->pending_state_.push_back(p->law_.load_state(r));
      }
      if constexpr (kKinetic) {
        if (n > r.remaining() / 96) throw StateError("truncated: the contact pair results are cut short");
        p->pending_slots_.reserve(4 * n);
        for (std::size_t k = 0; k < 4 * n; ++k) p->pending_slots_.push_back(r.vec3("contact pair results"));
      }
    }
    p->load_build_cell(r);
    return p;
  }

  /// The freed pairs of a fracture (docs/model.md §10.2, §10.3): each listed one
  /// takes part from now on, evaluated at once into its slot (state from
  /// State{}), and its energy is added to batch.contact_energy.
  void release_pairs(const ParticleStore& s, FractureBatch& batch) override {
    if (excluded_keys_.empty() && excluded_.empty()) return;
    const NeighbourList& list = search_.list();
    bool released = false;
    for (std::size_t n = 0; n < batch.keys.size(); ++n) {
      const std::uint32_t k = excluded_.empty() ? kNoPair : find_pair(batch.keys[n]);
      if (k == kNoPair || !excluded_[k]) continue;
      excluded_[k] = 0;
      released = true;
      const std::uint32_t i = list.owner[k], j = list.partner[k];
      typename Law::State fresh{};
      if constexpr (kStateful) {
        state_[k] = fresh;
        evaluate_pair(s, k, i, j, state_[k]);
        batch.contact_energy[n] += energy_of(s, k, i, j, state_[k]);
      } else {
        if (active()) evaluate_pair(s, k, i, j, fresh);
        else pair_force_[k] = Vec3::Zero();
        batch.contact_energy[n] += energy_of(s, k, i, j, fresh);
      }
    }
    if (released) index_included();
    forget_excluded(batch.keys);
  }

  PairResults pair_results() const override {
    PairResults r = ContactProviderBase::pair_results();
    if constexpr (kKinetic) {
      r.moment = moment_i_;
      r.moment_second = moment_j_;
      r.nc_force = nc_force_;
    }
    return r;
  }
  bool dissipative() const override { return kKinetic; }

  bool applies_filter() const override {
    if constexpr (FilterLaw<Law>) return law_.filter();
    return false;
  }
  /// iBDEM's friction filter (docs/model.md §11.1): each touching unbonded pair's
  /// changes from the velocities as they are, in pair order (serial: the
  /// same for any thread count).
  void add_filter_changes(const ParticleStore& s, double h, std::span<Vec3> dv, std::span<Vec3> dw) const override {
    if constexpr (FilterLaw<Law>) {
      if (!law_.filter()) return;
      const NeighbourList& list = search_.list();
      for (std::size_t k = 0; k < list.pair_count(); ++k)
        if (excluded_.empty() || !excluded_[k])
          law_.add_filter_changes(s, list.owner[k], list.partner[k], pair_force_[k], h, dv, dw);
    }
  }

  /// The energy the pairs this process books released in the last
  /// evaluate() (ReleasingLaw; zero for other laws).
  ExactSum released_energy(const ParticleStore& s) const override {
    if constexpr (!kReleasing) {
      return ExactSum();
    } else {
      const NeighbourList& list = search_.list();
      return exact_sum(list.pair_count(), [&](std::size_t k) {
        return s.books(list.owner[k], list.partner[k]) ? released_[k] : 0.0;
      });
    }
  }

  /// sum over pairs of f_nc.(u_i - u_j) + tau_i.w_i + tau_j.w_j (the
  /// moments of a kinetic law are all non-conservative).
  ExactSum nonconservative_power(const ParticleStore& s, std::span<const Vec3> u,
                                 std::span<const Vec3> w) const override {
    if constexpr (!kKinetic) {
      return ExactSum();
    } else {
      const NeighbourList& list = search_.list();
      // A pair apart has zero slots and adds nothing (for finite u, w):
      // neither its particles' velocities are fetched nor a term added.
      // (Computing every pair's term without this test is slower: the
      // loads cost more than the test's mispredictions.)
      return exact_sum(list.pair_count(), [&](std::size_t k) {
        if ((nc_force_[k].array() == 0.0).all() && (moment_i_[k].array() == 0.0).all() &&
            (moment_j_[k].array() == 0.0).all())
          return 0.0;
        const std::uint32_t i = list.owner[k], j = list.partner[k];
        if (!s.books(i, j)) return 0.0;
        return nc_force_[k].dot(u[i] - u[j]) + moment_i_[k].dot(w[i]) + moment_j_[k].dot(w[j]);
      });
    }
  }

  const Law& law() const { return law_; }
  std::size_t state_bytes() const override {
    return capacity_bytes(state_) + capacity_bytes(nc_force_) + capacity_bytes(moment_i_) + capacity_bytes(moment_j_) +
           capacity_bytes(released_);
  }
  void release_pair_state() override {
    std::vector<typename Law::State>().swap(state_);
    for (std::vector<Vec3>* v : {&nc_force_, &moment_i_, &moment_j_, &pending_slots_}) std::vector<Vec3>().swap(*v);
    std::vector<double>().swap(released_);
    // (A checkpoint's pairs still pending in a template: handed over to the parts.)
    std::vector<std::uint64_t>().swap(pending_keys_);
    std::vector<typename Law::State>().swap(pending_state_);
  }
  /// Per-pair state, in pair order (empty for stateless laws).
  const std::vector<typename Law::State>& state() const { return state_; }

 private:
  /// The pairs across a periodic face that the vectorised loops left out.
  void evaluate_crossing(const ParticleStore& s) {
    if (cross_.empty()) return;
    const NeighbourList& list = search_.list();
    parallel_for_ranges(cross_.size(), [&](std::size_t begin, std::size_t end) {
      typename Law::State none{};
      for (std::size_t c = begin; c < end; ++c) {
        const std::uint32_t k = cross_[c];
        if (!excluded_.empty() && excluded_[k]) continue;
        typename Law::State& st = [&]() -> typename Law::State& {
          if constexpr (kStateful) return state_[k];
          else return none;
        }();
        evaluate_pair(s, k, list.owner[k], list.partner[k], st);
      }
    });
  }
  void evaluate_pair(const ParticleStore& s, std::size_t k, std::uint32_t i, std::uint32_t j,
                     typename Law::State& st) {
    if constexpr (kKinetic) {
      PairOutput out;
      if (crosses(k)) law_.evaluate(s, i, j, image_of(k), st, out);
      else law_.evaluate(s, i, j, st, out);
      pair_force_[k] = out.force;
      nc_force_[k] = out.nc_force;
      moment_i_[k] = out.moment_i;
      moment_j_[k] = out.moment_j;
      if constexpr (kReleasing) released_[k] = out.released;
    } else if (crosses(k)) {
      pair_force_[k] = law_.force(s.position[i], Vec3(s.position[j] + offset_[k]), s.radius[i], s.radius[j], st);
    } else {
      pair_force_[k] = law_.force(s.position[i], s.position[j], s.radius[i], s.radius[j], st);
    }
  }
  double energy_of(const ParticleStore& s, std::size_t k, std::uint32_t i, std::uint32_t j,
                   const typename Law::State& st) const {
    if constexpr (kKinetic) {
      if (crosses(k)) return law_.energy(s, i, j, image_of(k), st);
      return law_.energy(s, i, j, st);
    } else {
      if (crosses(k)) return law_.energy(s.position[i], Vec3(s.position[j] + offset_[k]), s.radius[i], s.radius[j], st);
      return law_.energy(s.position[i], s.position[j], s.radius[i], s.radius[j], st);
    }
  }

  void after_rebuild(const ParticleStore& s) override {
    pair_force_.resize(search_.list().pair_count());
    if constexpr (kKinetic) {
      nc_force_.assign(pair_force_.size(), Vec3::Zero());
      moment_i_.assign(pair_force_.size(), Vec3::Zero());
      moment_j_.assign(pair_force_.size(), Vec3::Zero());
    }
    if constexpr (kReleasing) released_.assign(pair_force_.size(), 0.0);
    if (keyed(kStateful)) {
      const std::vector<std::uint32_t> old_of_new = match_pairs(s);
      if constexpr (kStateful) {
        std::vector<typename Law::State> next(old_of_new.size());
        for (std::size_t k = 0; k < next.size(); ++k)
          if (old_of_new[k] != kNoPair) next[k] = state_[old_of_new[k]];
        state_.swap(next);
      }
    }
    mark_excluded();
  }

  void apply_part_state() override {
    if constexpr (kStateful) {
      // The pending pairs are in key order; the list's own order is what
      // apply_pending_state() takes.
      std::vector<std::uint64_t> keys(keys_.size());
      std::vector<typename Law::State> state(keys_.size());
      std::vector<Vec3> slots;
      for (std::size_t k = 0; k < keys_.size(); ++k) {
        const auto it = std::lower_bound(pending_keys_.begin(), pending_keys_.end(), keys_[k]);
        if (it == pending_keys_.end() || *it != keys_[k])
          throw std::logic_error("a contact pair of an MPI rank's part has no history");
        const std::size_t q = static_cast<std::size_t>(it - pending_keys_.begin());
        keys[k] = keys_[k];
        state[k] = pending_state_[q];
        if constexpr (kKinetic) slots.insert(slots.end(), pending_slots_.begin() + 4 * q, pending_slots_.begin() + 4 * q + 4);
      }
      pending_keys_.swap(keys);
      pending_state_.swap(state);
      if constexpr (kKinetic) pending_slots_.swap(slots);
      apply_pending_state();
    }
  }

  void apply_pending_state() override {
    if constexpr (kStateful) {
      if (pending_keys_.size() != keys_.size())
        throw StateError("inconsistent: " + std::to_string(pending_keys_.size()) + " contact pair states for " +
                         std::to_string(keys_.size()) + " pairs of the rebuilt list");
      for (std::size_t k = 0; k < keys_.size(); ++k) {
        if (pending_keys_[k] != keys_[k])
          throw StateError("inconsistent: contact pair " + std::to_string(k) + " has another key than the rebuilt list");
        state_[k] = pending_state_[k];
      }
      if constexpr (kKinetic) {
        for (std::size_t k = 0; k < keys_.size(); ++k) {
          pair_force_[k] = pending_slots_[4 * k];
          nc_force_[k] = pending_slots_[4 * k + 1];
          moment_i_[k] = pending_slots_[4 * k + 2];
          moment_j_[k] = pending_slots_[4 * k + 3];
        }
        pending_slots_.clear();
        skip_evaluate_ = true;
      }
      pending_keys_.clear();
      pending_state_.clear();
    }
  }

  Law law_;
  std::string name_;
  std::vector<typename Law::State> state_;
  std::vector<Vec3> nc_force_, moment_i_, moment_j_;  ///< kinetic laws: per pair
  /// Releasing laws: per pair, the energy released by the last evaluation
  /// (not in checkpoints: the stepper books it right after the evaluation,
  /// and a restored provider's first evaluation is skipped, not booked).
  std::vector<double> released_;
  std::vector<Vec3> pending_slots_;  ///< kinetic laws: the checkpoint's slots until finish_restore()
  bool skip_evaluate_ = false;       ///< the next evaluate() keeps the restored slots
  std::vector<std::uint64_t> pending_keys_;            ///< read by load(), until finish_restore()
  std::vector<typename Law::State> pending_state_;
};

/// The contact provider of docs/model.md §4.
using HertzContactProvider = ContactProvider<HertzContactLaw>;
/// iBDEM's penalty contact between unbonded pairs (docs/model.md §11.1).
using PenaltyContactProvider = ContactProvider<PenaltyContactLaw>;

}  // namespace dem
