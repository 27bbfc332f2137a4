#pragma once
/// \file wall_provider.hpp
/// Rigid plane walls as a one-body force provider: each particle feels every
/// wall, in wall order, through a stateless plane-wall law
/// (contact/plane_wall_law.hpp): section 4's Hertz-type wall (eq. 57 with the
/// mirror image; Wall::stiffness is K^pw, energy; contact/hertz_law.cpp) or
/// iBDEM's penalty (docs/model.md §11.1, eq. 33 corrected: V = ½ k_c
/// [r_i - g]_+², g = (x_i - x_w).n, F_i = k_c [r_i - g]_+ n; Wall::stiffness
/// is k_c, force/length; contact/penalty_law.cpp).

#include <cstdint>
#include <memory>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/plane_wall_law.hpp"
#include "core/force_provider.hpp"

namespace dem {

class WallProvider final : public ForceProvider, public HessianSource, public FrictionFilter {
 public:
  /// Throws std::invalid_argument naming the wall if a point is not finite,
  /// a normal is not a unit vector (to 1e-12), a stiffness is negative or
  /// not finite, or it names a material (Wall::material: these laws have
  /// none).
  explicit WallProvider(std::vector<Wall> walls, const PlaneWallLaw& law = hertz_plane_wall());

  std::string name() const override { return "walls"; }
  /// Hessian blocks (docs/model.md §12.4) and the friction filter at
  /// penalty walls (§11.1).
  ProviderCapabilities capabilities() override { return {.hessian = this, .filter = this}; }
  bool gives_moments() const override { return false; }
  void renumber(std::span<const std::uint32_t>) override {}
  void evaluate(const ParticleStore&) override {}
  void add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<Vec3> force,
                       std::span<Vec3> moment) const override;
  /// U_wall.
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override;
  /// k n nᵀ (penalty) or U''(g) n nᵀ (Hertz) per wall a particle touches.
  void add_body_hessians(const ParticleStore& s, std::size_t begin, std::size_t end,
                         std::span<Mat6> diag) const override;
  /// Section: u64 count, then per wall vec3 point, vec3 normal, f64
  /// stiffness; then u8 law (PlaneWallLaw::code; absent in older files:
  /// Hertz) and the filter's two coefficient arrays (absent: off).
  void save(ByteWriter& w) const override;
  /// Throws StateError for a wall WallProvider would refuse or a law code
  /// that no contact law's registry entry lists.
  static std::unique_ptr<WallProvider> load(ByteReader& r);

  const std::vector<Wall>& walls() const { return walls_; }
  /// The same walls (they have no per-particle state).
  std::unique_ptr<ForceProvider> make_part(const ParticleStore&, const PartMap&) const override {
    return std::make_unique<WallProvider>(*this);
  }
  const PlaneWallLaw& law() const { return *law_; }

  /// iBDEM's friction filter (docs/model.md §11.1) at penalty walls: per-material
  /// mu_s and mu_r (indexed by ParticleStore::material); empty: off.
  void set_filter(std::vector<double> sliding, std::vector<double> rolling) {
    filter_sliding_ = std::move(sliding);
    filter_rolling_ = std::move(rolling);
  }
  bool applies_filter() const override { return law_->has_filter() && !filter_sliding_.empty(); }
  void add_filter_changes(const ParticleStore& s, double h, std::span<Vec3> dv, std::span<Vec3> dw) const override;

 private:
  std::vector<Wall> walls_;
  const PlaneWallLaw* law_;
  std::vector<double> filter_sliding_, filter_rolling_;
};

}  // namespace dem
