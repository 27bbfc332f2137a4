#pragma once
/// \file friction_wall_provider.hpp
/// Plane walls with the Hertz-Mindlin law of MODEL.md 11.2 (a wall is a
/// particle of infinite radius and mass, at rest, of the touching
/// particle's material) as a one-body force provider, named "mwalls".
///
/// Per particle and wall it keeps the tangential and rolling history
/// (HertzMindlinLaw::State), which follows the particles when they are
/// re-ordered and goes into checkpoints. evaluate() advances the history
/// and writes each particle's wall force, its non-conservative part and its
/// moment (walls in order) into per-particle slots; the gather adds them.
/// A checkpoint keeps these slots, so that a restart does not advance the
/// history a second time at the checkpoint's configuration.

#include <memory>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/hertz_mindlin.hpp"
#include "core/force_provider.hpp"

namespace dem {

class FrictionWallProvider final : public ForceProvider {
 public:
  /// walls: points and unit normals (the stiffness is not used);
  /// particle_count: the store's size. Throws std::invalid_argument for a
  /// point that is not finite or a normal that is not a unit vector.
  FrictionWallProvider(std::vector<Wall> walls, HertzMindlinLaw law, std::size_t particle_count);

  std::string name() const override { return "mwalls"; }
  void renumber(std::span<const std::uint32_t> new_slot) override;
  void set_time_step(double h) override { law_.set_time_step(h); }
  void evaluate(const ParticleStore& s) override;
  void add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<Vec3> force,
                       std::span<Vec3> moment) const override;
  /// U_wall: the Hertz energy of each particle-wall contact.
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override;
  bool dissipative() const override { return true; }
  ExactSum nonconservative_power(const ParticleStore& s, std::span<const Vec3> u,
                               std::span<const Vec3> w) const override;
  /// Section: the law, the walls, then per particle and wall the state, and
  /// per particle the force, non-conservative force and moment slots.
  void save(ByteWriter& w) const override;
  static std::unique_ptr<FrictionWallProvider> load(ByteReader& r, const ParticleStore& s);
  /// The same walls and law; each particle of the part takes its history
  /// and result slots from map.history (engine/partition.hpp).
  std::unique_ptr<ForceProvider> make_part(const ParticleStore& part, const PartMap& map) const override;
  /// Per particle this process owns: id, its history with each wall, its slots.
  void pack_history(const ParticleStore& s, ByteWriter& w) const override;

  const std::vector<Wall>& walls() const { return walls_; }
  const std::vector<HertzMindlinLaw::State>& state() const { return state_; }

 private:
  std::vector<Wall> walls_;
  HertzMindlinLaw law_;
  std::vector<HertzMindlinLaw::State> state_;  ///< particle-major: [slot * walls + wall]
  std::vector<Vec3> force_, nc_force_, moment_;  ///< per particle slot
  bool skip_evaluate_ = false;  ///< restored slots stand for the next evaluate()
};

}  // namespace dem
