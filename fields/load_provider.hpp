#pragma once
/// \file load_provider.hpp
/// Constant external loads on particles (a [[group]]'s `force`,
/// engine/groups.hpp) as a one-body force provider: particle i feels f_i,
/// with potential U_load = -sum f_i.(x_i - x_i0) (energy column "U_load",
/// part of E_total), so that E_total stays conserved under the load.

#include <cstdint>
#include <memory>
#include <vector>

#include "core/force_provider.hpp"

namespace dem {

class LoadProvider final : public ForceProvider, public HessianSource {
 public:
  /// ids[k] feels force[k] (force units). Throws std::invalid_argument if
  /// the sizes differ, an id is not a particle of `particles`, an id is
  /// given twice or a force is not finite.
  LoadProvider(const ParticleStore& particles, std::vector<std::uint32_t> ids, std::vector<Vec3> force);

  std::string name() const override { return "loads"; }
  /// Linear in the positions: a Hessian source that adds nothing.
  ProviderCapabilities capabilities() override { return {.hessian = this}; }
  bool gives_moments() const override { return false; }
  void renumber(std::span<const std::uint32_t> new_slot) override;
  void evaluate(const ParticleStore&) override {}
  void add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<Vec3> force,
                       std::span<Vec3> moment) const override;
  /// U_load.
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override;
  /// Section: u64 count, then per load u32 id, vec3 force.
  void save(ByteWriter& w) const override;
  /// Throws StateError for what the constructor refuses.
  static std::unique_ptr<LoadProvider> load(ByteReader& r, const ParticleStore& particles);
  /// The loads on the part's particles (all loads kept for save()).
  std::unique_ptr<ForceProvider> make_part(const ParticleStore& part, const PartMap& map) const override;

 private:
  LoadProvider() = default;
  std::vector<std::uint32_t> ids_;
  std::vector<Vec3> force_;      ///< per load
  std::vector<Vec3> per_slot_;   ///< per particle slot (zero where no load)
};

}  // namespace dem
