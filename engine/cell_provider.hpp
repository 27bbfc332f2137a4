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
///
/// A stress-controlled cell (CellServo, docs/model.md §20.6) instead sets,
/// at the start of every step, the diagonal entries L_aa of its servo axes
/// from the measured stress, L_aa = clamp(g (s*_a - sigma_aa), +-rate_max),
/// and moves its edges at the constant rate L H_n through that step:
/// H(t) = H_n + (t - t_n) L H_n. The edges then depend on the history, so
/// the section carries H_n, t_n and the rate.

#include <array>
#include <memory>

#include "core/force_provider.hpp"
#include "core/periodic_cell.hpp"

namespace dem {

/// The periodic-cell servo's settings (docs/model.md §20.6).
struct CellServo {
  std::array<bool, 3> axes{false, false, false};  ///< the axes whose normal stress is controlled
  Vec3 target = Vec3::Zero();  ///< s*_a (pressure, tension positive) on those axes
  double gain = 0.0;           ///< g (1/(pressure time)), > 0
  double max_strain_rate = 0.0;  ///< rate_max (1/time), > 0
  bool any() const { return axes[0] || axes[1] || axes[2]; }
};

class CellProvider final : public ForceProvider, public CellHolder, public HessianSource, public Decomposable {
 public:
  /// The cell at t = 0 (its edge_rate is ignored) and its velocity
  /// gradient L (1/time; zero: a fixed cell). Throws std::invalid_argument
  /// for a cell without a periodic axis, non-finite values or edges that
  /// span no volume.
  CellProvider(const PeriodicCell& start, const Mat3& velocity_gradient);
  /// A stress-controlled cell: as above, and the servo's axes (each
  /// periodic, with L_aa = 0 given), targets, gain and rate cap (finite,
  /// gain and cap positive); otherwise std::invalid_argument.
  CellProvider(const PeriodicCell& start, const Mat3& velocity_gradient, const CellServo& servo);

  std::string name() const override { return "cell"; }
  /// Neither forces nor energy: a Hessian source that adds nothing (a
  /// fixed cell leaves the implicit integrator's Hessian as it is).
  ProviderCapabilities capabilities() override { return {.hessian = this, .decomposable = this, .cell = this}; }
  bool gives_moments() const override { return false; }
  void renumber(std::span<const std::uint32_t>) override {}
  void evaluate(const ParticleStore&) override {}
  void add_potential_energies(const ParticleStore&, EnergyReport&) const override {}
  /// The same cell (its start, velocity gradient and time) on every part of
  /// a decomposed run: it has no records, and every rank deforms it alike.
  /// A servo's cell depends on its history: the part takes it from
  /// map.history (pack_history of the state the parts are made from; the
  /// first rank's copy), else from this provider.
  std::unique_ptr<ForceProvider> make_part(const ParticleStore& part, const PartMap& map) const override;
  /// A servo's state, the same on every rank: f64 t_n, mat3 H_n, mat3 the
  /// edges' rate, f64 the time of the cell. Nothing without a servo.
  void pack_history(const ParticleStore& particles, ByteWriter& out) const override;
  /// Section: vec3 origin, mat3 H0, u8 periodic flags (bit a: axis a),
  /// mat3 L; u8 servo axes flags, and with some: vec3 targets, f64 gain,
  /// f64 rate cap, f64 t_n, mat3 H_n, mat3 the edges' rate.
  void save(ByteWriter& w) const override;
  /// Throws StateError for what the constructor refuses.
  static std::unique_ptr<CellProvider> load(ByteReader& r);

  const PeriodicCell& cell() const override { return cell_; }
  bool set_time(double t) override;
  bool controls_stress() const override { return servo_.any(); }
  bool control(const Mat3& stress, double t) override;
  const PeriodicCell& start() const { return start_; }
  const Mat3& velocity_gradient() const { return gradient_; }
  const CellServo& servo() const { return servo_; }
  /// True if the cell deforms (L is not zero, or a servo drives it).
  bool deforms() const { return !gradient_.isZero(0.0) || servo_.any(); }

 private:
  /// A checkpoint's servo state: edges H_n at t_n and their rate.
  void restore_servo_state(double anchor_time, const Mat3& anchor_edges, const Mat3& rate);

  PeriodicCell start_;  ///< H0, origin, periodic axes
  Mat3 gradient_;       ///< L (1/time), the prescribed part
  CellServo servo_;
  PeriodicCell cell_;   ///< at the time of the last set_time()
  double time_ = 0.0;
  double anchor_time_ = 0.0;    ///< t_n: the edges move at cell_.edge_rate from H_n at t_n
  Mat3 anchor_edges_;           ///< H_n
};

}  // namespace dem
