#pragma once
/// \file gravity_provider.hpp
/// Uniform gravity as a one-body force provider: force m_i g on every
/// particle, potential U_gravity = -sum m_i g.x_i (energy column U_gravity).
/// A zero g adds nothing (not even zeros).

#include <memory>

#include "core/force_provider.hpp"

namespace dem {

class GravityProvider final : public ForceProvider, public HessianSource {
 public:
  /// g: acceleration (length/time^2); throws std::invalid_argument if not finite.
  explicit GravityProvider(const Vec3& g);

  std::string name() const override { return "gravity"; }
  /// Linear in the positions: a Hessian source that adds nothing.
  ProviderCapabilities capabilities() override { return {.hessian = this}; }
  bool gives_moments() const override { return false; }
  void renumber(std::span<const std::uint32_t>) override {}
  void evaluate(const ParticleStore&) override {}
  void add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<Vec3> force,
                       std::span<Vec3> moment) const override;
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override;
  /// Section: vec3 g.
  void save(ByteWriter& w) const override { w.vec3(g_); }
  std::unique_ptr<ForceProvider> make_part(const ParticleStore&, const PartMap&) const override {
    return std::make_unique<GravityProvider>(g_);
  }
  /// Throws StateError if g is not finite.
  static std::unique_ptr<GravityProvider> load(ByteReader& r);

  const Vec3& gravity() const { return g_; }

 private:
  Vec3 g_;
};

}  // namespace dem
