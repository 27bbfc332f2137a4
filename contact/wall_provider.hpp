#pragma once
/// \file wall_provider.hpp
/// Rigid plane walls as a one-body force provider: each particle feels every
/// wall, in wall order, through a stateless plane-wall law
/// (contact/plane_wall_law.hpp): section 4's Hertz-type wall (eq. 57 with the
/// mirror image; Wall::stiffness is K^pw, energy; contact/hertz_law.cpp) or
/// iBDEM's penalty (docs/model.md §11.1, eq. 33 corrected: V = ½ k_c
/// [r_i - g]_+², g = (x_i - x_w).n, F_i = k_c [r_i - g]_+ n; Wall::stiffness
/// is k_c, force/length; contact/penalty_law.cpp).

///
/// The walls may move (contact/wall_motion.hpp, docs/model.md §11.8): as a
/// MovingBoundary it reports each wall's load and advances the moving ones;
/// the motion state goes into checkpoints and MPI parts.

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/plane_wall_law.hpp"
#include "contact/wall_motion.hpp"
#include "core/force_provider.hpp"

namespace dem {

class WallProvider final : public ForceProvider,
                           public HessianSource,
                           public FrictionFilter,
                           public MovingBoundary,
                           public Decomposable,
                           public MovableWalls {
 public:
  /// Throws std::invalid_argument naming the wall if a point is not finite,
  /// a normal is not a unit vector (to 1e-12), a stiffness is negative or
  /// not finite, or it names a material (Wall::material: these laws have
  /// none).
  explicit WallProvider(std::vector<Wall> walls, const PlaneWallLaw& law = hertz_plane_wall());

  std::string name() const override { return "walls"; }
  /// Hessian blocks (docs/model.md §12.4), the friction filter at
  /// penalty walls (§11.1), the walls' loads and motion (§11.8), and the
  /// motion state in MPI parts.
  ProviderCapabilities capabilities() override {
    return {.hessian = this, .filter = this, .decomposable = this, .boundary = this};
  }
  bool gives_moments() const override { return false; }
  void renumber(std::span<const std::uint32_t>) override {}
  /// Forces are added by the gather; where walls move, the loads are
  /// summed here (they are read after the next drift).
  void evaluate(const ParticleStore& s) override;
  void add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<Vec3> force,
                       std::span<Vec3> moment) const override;
  /// U_wall.
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override;
  /// k n nᵀ (penalty) or U''(g) n nᵀ (Hertz) per wall a particle touches.
  void add_body_hessians(const ParticleStore& s, std::size_t begin, std::size_t end,
                         std::span<Mat6> diag) const override;
  /// Section: u64 count, then per wall vec3 point, vec3 normal, f64
  /// stiffness; then u8 law (PlaneWallLaw::code; absent in older files:
  /// Hertz) and the filter's two coefficient arrays (absent: off); then,
  /// where WallMotions::worth_saving(), the motion block
  /// (WallMotions::save; absent: walls at rest with default names).
  void save(ByteWriter& w) const override;
  /// Throws StateError for a wall WallProvider would refuse or a law code
  /// that no contact law's registry entry lists.
  static std::unique_ptr<WallProvider> load(ByteReader& r);

  const std::vector<Wall>& walls() const { return walls_; }
  /// The same walls (they have no per-particle state), in the motion state
  /// map.history carries (pack_history of any rank), if any.
  std::unique_ptr<ForceProvider> make_part(const ParticleStore&, const PartMap& map) const override;
  /// Where walls move: their motion state (the same on every rank).
  void pack_history(const ParticleStore& s, ByteWriter& w) const override;

  /// Sets the walls' motions (one per wall; contact/wall_motion.hpp), from
  /// t = 0 at the walls' present points. Throws std::invalid_argument
  /// naming the wall for a bad motion.
  void set_motions(std::vector<WallMotion> motions) override;
  const WallMotions& motions() const { return motions_; }

  // MovingBoundary (core/force_provider.hpp)
  std::size_t boundary_count() const override { return walls_.size(); }
  void boundary_loads(const ParticleStore& s, std::vector<BoundaryLoad>& out) const override;
  bool moves() const override { return moves_; }
  void advance(double t, double h, std::span<BoundaryLoad> loads) override;
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
  using Sums = std::array<ExactSum, BoundaryLoad::kSums>;
  /// Per wall, the loads of the particles this process owns at their
  /// present positions.
  std::vector<Sums> sum_loads(const ParticleStore& s) const;

  std::vector<Wall> walls_;
  const PlaneWallLaw* law_;
  std::vector<double> filter_sliding_, filter_rolling_;
  WallMotions motions_;
  bool moves_ = false;
  std::vector<Sums> loads_;  ///< where walls move: per wall, from the last evaluate()
};

}  // namespace dem
