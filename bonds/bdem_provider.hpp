#pragma once
/// \file bdem_provider.hpp
/// The BDEM bonds of iBDEM (docs/model.md §9) with stress-based fracture
/// (section 10) as a force provider (core/force_provider.hpp).
///
/// Records: the bonds of a BondList (geometry: ends, rest length l0, rest
/// direction d0) with a type per bond (stiffnesses of 9.2 and strengths of
/// 10.1), the bond's index in the scene's bond list (sorted by (id_i, id_j),
/// i < j; the `bond` column of bond_failures.csv) and a live flag.
///
/// evaluate() computes, in parallel over bonds, the force and spatial moment
/// on each live bond's first end into its slot (the second end's moment
/// follows from the balance of angular momentum, 9.4) and flags the bonds
/// whose stresses (10.1) exceed a strength; failed bonds have zero slots.
/// Each particle's bonds are gathered in ascending bond order, so forces
/// are bitwise identical for any thread count. The particles' attitudes are
/// quaternions already; with reference attitudes other than the identity,
/// Q_i = R_i R_i0^T is formed once per particle per evaluation (9.1).
///
/// fracture() (10.2): the flagged bonds fail together at this
/// configuration; each is evaluated once more for its failure record (10.4)
/// and its energy V_b, its slot is zeroed and its pair key leaves
/// bonded_pairs() (contact providers then take the pair in, 11.1).
/// book_fracture() books W = V_b - U_contact,new (10.3).
///
/// Bonded pairs have no contact (docs/model.md Part II choices): bonded_pairs()
/// lists the live bonds' keys.

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "bonds/bdem_bond.hpp"
#include "bonds/bond_graph.hpp"
#include "bonds/bond_images.hpp"
#include "bonds/bond_incidence.hpp"
#include "bonds/bond_list.hpp"
#include "core/force_provider.hpp"
#include "core/law_schema.hpp"

namespace dem {

/// The bond properties of one material (docs/model.md §9.2, §10.1).
struct BdemMaterial {
  double youngs_modulus = 0.0;      ///< E (Pa), > 0
  double poisson_ratio = 0.3;       ///< nu, in (-1, 0.5]
  double bond_radius_factor = 1.0;  ///< beta: r_b = beta (r_i + r_j)/2, > 0
  double tensile_strength = std::numeric_limits<double>::infinity();  ///< sigma_c (Pa), > 0
  double shear_strength = std::numeric_limits<double>::infinity();    ///< tau_c (Pa), > 0
  bool tension_only = false;  ///< sigma from max(F_n, 0) instead of |F_n| (10.1)
};

/// The properties of a bond between particles of materials a and b: the
/// same material's own, or for two materials E as the two halves in series
/// (2 E_a E_b/(E_a + E_b)), the mean nu, the smaller beta and strengths, and
/// tension_only if either says so.
BdemMaterial bond_material(const BdemMaterial& a, const BdemMaterial& b);

/// The bond between slots i and j of `particles` at rest length l0: the
/// bond_material() of their materials (ParticleStore::material indexes
/// `materials`) and its stiffnesses (9.2) with r_b = beta (r_i + r_j)/2.
/// Throws std::invalid_argument as bdem_stiffness() does.
struct BdemBondConstants {
  BdemMaterial material;
  BdemStiffness stiffness;
};
BdemBondConstants bdem_bond_constants(const ParticleStore& particles, std::span<const BdemMaterial> materials,
                                      std::uint32_t i, std::uint32_t j, double rest_length);

/// One distinct set of bond constants.
struct BdemBondType {
  BdemStiffness stiffness;
  double tensile_strength = 0.0;  ///< sigma_c (Pa)
  double shear_strength = 0.0;    ///< tau_c (Pa)
  bool tension_only = false;
};

class BdemBondProvider final : public ForceProvider,
                               public Fracturing,
                               public HessianSource,
                               public Decomposable,
                               public BondGraph {
 public:
  /// geometry: the bonds (ends by slot of `particles`, l0, d0; the BondList
  /// stiffness triples are not used). materials: indexed by
  /// particles.material. Stiffnesses from 9.2 with r_b = beta (r_i + r_j)/2.
  /// Throws std::invalid_argument if a bond refers to a particle outside
  /// `particles`, a particle's material index is out of range, a material
  /// value is not physical, or two bonds join the same pair.
  BdemBondProvider(const ParticleStore& particles, BondList geometry, std::span<const BdemMaterial> materials);

  std::string name() const override { return "bdem"; }
  /// Fracture (docs/model.md §10), Hessian blocks (§12.4), the bond graph
  /// and the release of its work arrays.
  ProviderCapabilities capabilities() override {
    return {.fracturing = this, .hessian = this, .decomposable = this, .bond_graph = this};
  }
  /// Bonds give moments; a scene without bonds never gets any (bonds are
  /// only ever added at set-up).
  bool gives_moments() const override { return has_bonds_; }
  /// The bonds with both ends in the part (engine/partition.hpp), live
  /// unless map.failed_bonds names them; the failed ones the part books
  /// (ParticleStore::books) are its broken count.
  std::unique_ptr<ForceProvider> make_part(const ParticleStore& part, const PartMap& map) const override;
  void renumber(std::span<const std::uint32_t> new_slot) override;
  void evaluate(const ParticleStore& particles) override;
  /// In a periodic cell each bond reads its second end at its minimum
  /// image (bonds/bond_images.hpp), found again at every evaluation.
  void set_cell(const PeriodicCell& cell) override {
    cell_ = cell;
    images_.cell_changed = true;
  }
  /// The stepper puts particles back through periodic faces before a
  /// rebuild of the records: the bonds' image shifts are found again.
  void rebuild(const ParticleStore&) override { images_.stale = true; }
  PairResults pair_results() const override;
  Incidence incidence() const override;
  /// U_axial = sum V_stretch, U_shear = sum V_shear, U_bend = sum V_bt over
  /// live bonds (docs/model.md §9.8).
  void add_potential_energies(const ParticleStore& particles, EnergyReport& report) const override;
  /// docs/model.md §12.4: each live bond's block in the form asked
  /// (bdem_bond_block, bonds/bond_hessian.hpp); zero for a failed bond.
  std::span<const std::uint32_t> record_second_ends() const override { return bonds_.second; }
  void element_hessians(const ParticleStore& particles, std::size_t first, std::span<Mat12> out,
                        HessianBlocks blocks) const override;
  std::vector<ArrayBytes> memory_use() const override;
  void release_work() override {  // (bonds_, types_, index_, live_ stay: make_part copies them)
    incidence_ = BondIncidence{};
    for (std::vector<Vec3>* v : {&bond_force_, &bond_moment_, &bond_moment_second_}) std::vector<Vec3>().swap(*v);
    std::vector<std::uint8_t>().swap(over_);
    std::vector<std::uint8_t>().swap(turned_);
    std::vector<Quat>().swap(relative_);
  }
  /// Section: the BondList fields, the types, each bond's scene index and
  /// live flag, and the failure count.
  void save(ByteWriter& out) const override;
  /// Throws StateError for anything inconsistent.
  static std::unique_ptr<BdemBondProvider> load(ByteReader& in, const ParticleStore& particles);

  std::span<const std::uint64_t> bonded_pairs() const override;
  std::size_t fracture(const ParticleStore& particles, FractureBatch& batch) override;
  void stress_ratios(const ParticleStore& particles, std::vector<double>& out) const override;
  ExactSum book_fracture(const FractureBatch& batch) override;
  void take_failures(std::vector<BondFailure>& out) override;
  void add_bond_counts(const ParticleStore& particles, EnergyReport& report) const override;

  const BondList& bonds() const override { return bonds_; }
  bool can_fail() const override { return true; }
  std::span<const std::uint8_t> live_flags() const override { return live_; }
  std::span<const std::uint32_t> scene_indices() const override { return index_; }
  /// Per bond (current order): 1 live, 0 failed.
  const std::vector<std::uint8_t>& live() const { return live_; }
  const std::vector<BdemBondType>& types() const { return types_; }
  /// Scene index of each bond (current order).
  const std::vector<std::uint32_t>& scene_index() const { return index_; }
  std::uint64_t broken_count() const { return broken_; }
  /// Per particle slot: the number of its failed bonds.
  std::vector<std::uint32_t> broken_per_particle(std::size_t particle_count) const override;
  /// Per particle slot: the smallest particle id of its connected component
  /// of the live-bond graph (a fragment label that does not change with
  /// re-ordering).
  std::vector<std::uint32_t> fragment_labels(const ParticleStore& particles) const override;
  /// Live bonds whose relative rotation passed 2pi/3 (docs/model.md §9.1: the run
  /// summary's count, expected 0), at the last evaluate().
  std::uint64_t overturned_count() const override;

 private:
  BdemBondProvider() = default;
  void prepare_attitudes(const ParticleStore& particles) const;
  const Quat& relative(const ParticleStore& s, std::uint32_t i) const {
    return identity_reference_ ? s.attitude[i] : relative_[i];
  }
  /// Where bond b reads its second end: x_j, or its image across a
  /// periodic face.
  Vec3 second_end(const ParticleStore& s, std::size_t b) const {
    const Vec3& xj = s.position[bonds_.second[b]];
    return images_.offset.empty() ? xj : Vec3(xj + images_.offset[b]);
  }
  [[gnu::always_inline]] BdemBondResult evaluate_bond(const ParticleStore& s, std::size_t b) const {
    const std::uint32_t i = bonds_.first[b], j = bonds_.second[b];
    return bdem_bond(s.position[i], second_end(s, b), relative(s, i), relative(s, j), bonds_.rest_direction[b],
                     bonds_.rest_length[b], types_[bonds_.type[b]].stiffness);
  }

  BondList bonds_;
  std::vector<BdemBondType> types_;
  std::vector<std::uint32_t> index_;  ///< scene index of each bond
  std::vector<std::uint8_t> live_;    ///< 1 live, 0 failed
  std::vector<std::uint8_t> over_;    ///< per bond: over strength at the last evaluate()
  std::vector<std::uint8_t> turned_;  ///< per bond: relative rotation over 2pi/3 at the last evaluate()
  /// Pair keys of the live bonds, ascending, less gone_keys_ (dropped
  /// when bonded_pairs() is next called).
  mutable std::vector<std::uint64_t> live_keys_;
  mutable std::vector<std::uint64_t> gone_keys_;
  BondIncidence incidence_;  ///< bonds of each particle, ascending
  std::vector<Vec3> bond_force_, bond_moment_, bond_moment_second_;
  PeriodicCell cell_;         ///< no periodic axis unless set_cell()
  BondImages images_;         ///< per bond: its image shift and offset (empty: no periodic axis)
  /// Q_i = R_i R_i0^T per slot (non-identity references only): a scratch
  /// array filled at each evaluation and energy report.
  mutable std::vector<Quat> relative_;
  bool identity_reference_ = true;
  bool has_bonds_ = false;  ///< the whole system has bonds (a part keeps it)
  std::uint64_t broken_ = 0;
  std::size_t over_count_ = 0;
  /// Failures of the current fracture phase (key order) and where their keys
  /// start in the batch.
  std::vector<BondFailure> pending_;
  std::vector<double> pending_energy_;
  std::vector<std::uint8_t> pending_books_;  ///< per pending failure: booked by this process (ParticleStore::books)
  std::size_t batch_begin_ = 0;
  std::vector<BondFailure> booked_;
};

/// The critical step of BDEM bonds (docs/model.md §9) from every bond's own
/// stiffnesses, masses and inertias: each particle on its bonds with the
/// other ends held, 2/omega_i with omega_i^2 = k_i/m_i (translation) or
/// kr_i/J_i (rotation), where
///
///   k_i  = sum over its bonds of k_n + k_s / l0^2        (axial; shear, F_s = k_s theta_s/r)
///   kr_i = sum over its bonds of max(k_b, k_tw) + k_s/4  (bending or twist; the shear angle
///                                                          turns by half an end's rotation)
///
/// `stiffness[b]` holds bond b's constants (bonds/bdem_bond.hpp, BdemStiffness),
/// bonds.rest_length[b] its l0. For the nominal bonds of docs/model.md §9.6 (beta
/// about 1, l0 = r_i + r_j, nu about 0.3) this is above the paper's estimate
/// 2/omega_est (the scene takes the smaller); it falls with a stiffer bond
/// (nu near -1: G = E/(2(1 + nu)) large; a large beta; a short rest length),
/// which the paper's estimate does not see. term: "bond axial", "bond shear",
/// "bond bending" or "bond twist".
CriticalTimeStep bdem_bonds_time_step(const ParticleStore& particles, const BondList& bonds,
                                      std::span<const BdemStiffness> stiffness);

}  // namespace dem
