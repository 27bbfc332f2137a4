#pragma once
/// \file viscous_damping_provider.hpp
/// Mass-proportional viscous damping (docs/model.md §11.10): every free
/// particle feels
///   F_i = -alpha m_i v_i,   tau_i = -alpha J_i Omega_i,
/// with alpha the damping rate (1/time), m_i, J_i its mass and moment of
/// inertia, v_i, Omega_i its velocity and spatial angular velocity. Alone,
/// this force decays a velocity as exp(-alpha t); it is applied exactly so,
/// as a velocity filter after each step (operator splitting):
///   v_i <- exp(-alpha h) v_i,   Omega_i <- exp(-alpha h) Omega_i,
/// through the FrictionFilter interface, so that the stepper books the
/// kinetic energy it removes in W_filter and E_balance closes. In the limit
/// h -> 0 this is LAMMPS's `fix viscous` and `fix viscous/sphere` with
/// gamma = alpha m_i (LAMMPS takes one gamma per type) and the
/// mass-proportional part of Rayleigh damping: a vibration mode of angular
/// frequency omega decays as exp(-alpha t/2) in amplitude (damping ratio
/// alpha/(2 omega)). Kinematic particles (fixed and velocity groups) are
/// not filtered. The state after a step is all it reads, so restarts and MPI
/// layouts give the same bits as the undivided run. Scene key [damping]
/// viscous.

#include <memory>

#include "core/force_provider.hpp"

namespace dem {

class ViscousDampingProvider final : public ForceProvider, public FrictionFilter, public HessianSource {
 public:
  /// alpha: damping rate (1/time); throws std::invalid_argument unless
  /// finite and > 0.
  explicit ViscousDampingProvider(double alpha);

  std::string name() const override { return "damping"; }
  /// No force, so a Hessian source that adds nothing: the implicit
  /// integrator applies the filter after each accepted step.
  ProviderCapabilities capabilities() override { return {.hessian = this, .filter = this}; }
  /// No force: the damping acts through the filter.
  bool gives_moments() const override { return false; }
  void renumber(std::span<const std::uint32_t>) override {}
  void evaluate(const ParticleStore&) override {}
  void add_potential_energies(const ParticleStore&, EnergyReport&) const override {}
  bool applies_filter() const override { return true; }
  /// Adds (exp(-alpha h) - 1) v_i to dv[i] and (exp(-alpha h) - 1) Omega_i
  /// to dw[i] for every slot.
  void add_filter_changes(const ParticleStore& s, double h, std::span<Vec3> dv, std::span<Vec3> dw) const override;
  /// Section: f64 alpha.
  void save(ByteWriter& w) const override { w.f64(alpha_); }
  std::unique_ptr<ForceProvider> make_part(const ParticleStore&, const PartMap&) const override {
    return std::make_unique<ViscousDampingProvider>(alpha_);
  }
  /// Throws StateError unless alpha is finite and > 0.
  static std::unique_ptr<ViscousDampingProvider> load(ByteReader& r);

  double rate() const { return alpha_; }

 private:
  double alpha_;
};

}  // namespace dem
