#pragma once
/// \file cell_provider.hpp
/// The periodic cell of a scene (core/periodic_cell.hpp, docs/model.md §20)
/// as a force provider without forces: it holds the cell, hands it to the
/// other providers through the force field (CellHolder), deforms it at a
/// constant velocity gradient, and saves it in its checkpoint section
/// ("cell"), so that a restart continues in the same cell.
///
/// A deforming cell's edges move at the constant rate Hdot = L H0 (L the
/// velocity gradient, 1/time; H0 the edges at t = 0), H(t) = H0 + t L H0,
/// computed from t alone so that every step and every restart gives the
/// same bits. For simple shear (L with one off-diagonal entry, L^2 = 0) the
/// velocity gradient of the cell stays L; for an extension L = diag(e, 0, 0)
/// the edge grows at the constant speed e L0 (LAMMPS's fix deform erate).

#include <memory>

#include "core/force_provider.hpp"
#include "core/periodic_cell.hpp"

namespace dem {

class CellProvider final : public ForceProvider, public CellHolder, public HessianSource {
 public:
  /// The cell at t = 0 (its edge_rate is ignored) and its velocity
  /// gradient L (1/time; zero: a fixed cell). Throws std::invalid_argument
  /// for a cell without a periodic axis, non-finite values or edges that
  /// span no volume.
  CellProvider(const PeriodicCell& start, const Mat3& velocity_gradient);

  std::string name() const override { return "cell"; }
  /// Neither forces nor energy: a Hessian source that adds nothing (a
  /// fixed cell leaves the implicit integrator's Hessian as it is).
  ProviderCapabilities capabilities() override { return {.hessian = this, .cell = this}; }
  bool gives_moments() const override { return false; }
  void renumber(std::span<const std::uint32_t>) override {}
  void evaluate(const ParticleStore&) override {}
  void add_potential_energies(const ParticleStore&, EnergyReport&) const override {}
  /// The same cell (its start, velocity gradient and time) on every part of
  /// a decomposed run: it has no records, and every rank deforms it alike.
  std::unique_ptr<ForceProvider> make_part(const ParticleStore& part, const PartMap& map) const override;
  /// Section: vec3 origin, mat3 H0, u8 periodic flags (bit a: axis a),
  /// mat3 L.
  void save(ByteWriter& w) const override;
  /// Throws StateError for what the constructor refuses.
  static std::unique_ptr<CellProvider> load(ByteReader& r);

  const PeriodicCell& cell() const override { return cell_; }
  bool set_time(double t) override;
  const PeriodicCell& start() const { return start_; }
  const Mat3& velocity_gradient() const { return gradient_; }
  /// True if the cell deforms (L is not zero).
  bool deforms() const { return !gradient_.isZero(0.0); }

 private:
  PeriodicCell start_;  ///< H0, origin, periodic axes
  Mat3 gradient_;       ///< L (1/time)
  PeriodicCell cell_;   ///< at the time of the last set_time()
  double time_ = 0.0;
};

}  // namespace dem
