#pragma once
/// \file simulation.hpp
/// A particle system advanced in time by one of the RRP maps (MODEL.md
/// section 3) under a ForceField: one force evaluation per step.

#include <cstddef>

#include "engine/diagnostics.hpp"
#include "engine/force_field.hpp"
#include "engine/integrator.hpp"
#include "engine/particle_store.hpp"

namespace dem {

class Simulation {
 public:
  /// time_step: h (time), finite and > 0, else std::invalid_argument.
  /// Computes the forces at the initial configuration (F_0, tau_0).
  Simulation(ParticleStore particles, ForceField forces, IntegratorMap map, double time_step);

  /// Continues a run that has already made `steps_done` steps (a restart):
  /// the clock starts at t = steps_done h. Forces are computed as above.
  Simulation(ParticleStore particles, ForceField forces, IntegratorMap map, double time_step,
             std::size_t steps_done);

  /// Advances one step of size h. Throws StabilityError (map 23) or
  /// std::runtime_error if a position became non-finite.
  void step();

  /// Energies and momenta at the current state (MODEL.md section 5).
  EnergyReport energy_report() const;

  double time() const { return time_; }
  std::size_t step_count() const { return steps_; }
  double time_step() const { return h_; }
  IntegratorMap map() const { return map_; }
  const ParticleStore& particles() const { return particles_; }
  ParticleStore& particles() { return particles_; }
  const ForceField& forces() const { return forces_; }

 private:
  ParticleStore particles_;
  ForceField forces_;
  IntegratorMap map_;
  double h_;
  double time_ = 0.0;
  std::size_t steps_ = 0;
};

}  // namespace dem
