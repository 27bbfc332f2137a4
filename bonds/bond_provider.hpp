#pragma once
/// \file bond_provider.hpp
/// The Baker-Gonzalez binder bonds (docs/model.md §4) as a force provider
/// (core/force_provider.hpp).
///
/// Records: the bonds of a BondList. evaluate() computes, in parallel over
/// bonds and vectorised (bonds/bond_kernel.hpp), the force and spatial moment on each bond's first end into the
/// bond's 48-byte slot; the second end's moment follows from the balance of
/// angular momentum (PairResults::moment_second empty). Each particle's bonds
/// are visited in ascending bond index (Incidence::entries), which is what
/// makes the sum independent of the thread count.
///
/// Re-ordering renames the bond ends, puts the lower slot first (flipping
/// the rest direction) and sorts the bonds by (first, second), so that each
/// particle's bonds are contiguous in memory.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "bonds/bond_graph.hpp"
#include "bonds/bond_images.hpp"
#include "bonds/bond_incidence.hpp"
#include "bonds/bond_list.hpp"
#include "core/force_provider.hpp"

namespace dem {

class BondProvider final : public ForceProvider, public HessianSource, public Decomposable, public BondGraph {
 public:
  /// Throws std::invalid_argument if a bond refers to a particle outside
  /// `particles`. The particles' reference attitudes are read once (if all
  /// are the identity, Q = R is used without the product).
  BondProvider(const ParticleStore& particles, BondList bonds);

  std::string name() const override { return "bonds"; }
  /// Hessian blocks (docs/model.md §12.4), the bond graph (bonds that never
  /// fail) and the release of its work arrays.
  ProviderCapabilities capabilities() override {
    return {.hessian = this, .decomposable = this, .bond_graph = this};
  }
  /// Bonds give moments; a scene without bonds never gets any (bonds are
  /// only ever added at set-up).
  bool gives_moments() const override { return has_bonds_; }
  /// The bonds with both ends in the part (engine/partition.hpp).
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
  /// U_bend, U_axial, U_shear.
  void add_potential_energies(const ParticleStore& particles, EnergyReport& report) const override;
  /// docs/model.md §12.4: each bond's block in the form asked (bond_block,
  /// bonds/bond_hessian.hpp).
  std::span<const std::uint32_t> record_second_ends() const override { return bonds_.second; }
  void element_hessians(const ParticleStore& particles, std::size_t first, std::span<Mat12> out,
                        HessianBlocks blocks) const override;
  std::vector<ArrayBytes> memory_use() const override;
  void release_work() override {
    incidence_ = BondIncidence{};
    std::vector<Vec3>().swap(bond_force_);
    std::vector<Vec3>().swap(bond_moment_);
  }
  /// Section: the BondList fields (core/field_io.hpp) and the stiffness types.
  void save(ByteWriter& out) const override;
  /// The provider saved by save(); throws StateError for anything
  /// inconsistent (ends out of range or equal, rest lengths, directions,
  /// types, stiffnesses).
  static std::unique_ptr<BondProvider> load(ByteReader& in, const ParticleStore& particles);

  const BondList& bonds() const override { return bonds_; }

 private:

  BondList bonds_;
  BondIncidence incidence_;  ///< bonds of each particle, ascending
  std::vector<Vec3> bond_force_;   ///< per bond: force on the first end
  std::vector<Vec3> bond_moment_;  ///< per bond: moment on the first end
  PeriodicCell cell_;              ///< no periodic axis unless set_cell()
  BondImages images_;              ///< per bond: its image shift and offset (empty: no periodic axis)
  bool identity_reference_ = false;  ///< every reference attitude is the identity
  bool has_bonds_ = false;           ///< the whole system has bonds (a part keeps it)
};

/// Renames the bond ends by the permutation (new slot of old slot s is
/// new_slot[s]), puts the lower slot first (flipping the rest direction) and
/// sorts the bonds by (first, second). Returns the order applied: the bond
/// now at k was bond order[k] before (for arrays kept beside the list).
std::vector<std::uint32_t> renumber_and_sort_bonds(BondList& bonds, std::span<const std::uint32_t> new_slot);

/// The bonds of `bonds` whose two ends are in a part (part_slot[s]: slot in
/// the part of particle s, or PartMap::kNotInPart), renamed to the part's
/// slots and sorted as renumber_and_sort_bonds() does; `kept` receives the
/// index in `bonds` of each.
BondList part_bonds(const BondList& bonds, std::span<const std::uint32_t> part_slot, std::vector<std::uint32_t>& kept);

}  // namespace dem
