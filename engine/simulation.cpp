#include "engine/simulation.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dem {

Simulation::Simulation(ParticleStore particles, ForceField forces, IntegratorMap map,
                       double time_step)
    : particles_(std::move(particles)), forces_(std::move(forces)), map_(map), h_(time_step) {
  if (!(std::isfinite(h_) && h_ > 0.0))
    throw std::invalid_argument("time step must be a finite positive number, got " +
                                std::to_string(h_));
  forces_.compute(particles_);
}

Simulation::Simulation(ParticleStore particles, ForceField forces, IntegratorMap map,
                       double time_step, std::size_t steps_done)
    : Simulation(std::move(particles), std::move(forces), map, time_step) {
  steps_ = steps_done;
  time_ = static_cast<double>(steps_) * h_;
}

void Simulation::step() {
  advance_configuration(particles_, map_, h_);
  forces_.compute(particles_);
  complete_step(particles_, map_, h_);
  ++steps_;
  // t = k h rather than a running sum, so that long runs keep exact times.
  time_ = static_cast<double>(steps_) * h_;
}

EnergyReport Simulation::energy_report() const {
  EnergyReport r = forces_.potential_energies(particles_);
  const EnergyReport k = kinetic_energies_and_momenta(particles_);
  r.time = time_;
  r.kinetic_translation = k.kinetic_translation;
  r.kinetic_rotation = k.kinetic_rotation;
  r.linear_momentum = k.linear_momentum;
  r.angular_momentum = k.angular_momentum;
  return r;
}

}  // namespace dem
