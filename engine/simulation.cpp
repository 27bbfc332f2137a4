#include "engine/simulation.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "engine/reorder.hpp"

namespace dem {

Simulation::Simulation(ParticleStore particles, ForceField forces, IntegratorMap map, double time_step)
    : Simulation(std::move(particles), std::move(forces), {}, map, time_step, 0) {}

Simulation::Simulation(ParticleStore particles, ForceField forces, IntegratorMap map, double time_step,
                       std::size_t steps_done)
    : Simulation(std::move(particles), std::move(forces), {}, map, time_step, steps_done) {}

Simulation::Simulation(ParticleStore particles, ForceField forces, std::vector<Clump> clumps, IntegratorMap map,
                       double time_step, std::size_t steps_done)
    : particles_(std::move(particles)),
      forces_(std::move(forces)),
      clumps_(std::move(clumps)),
      map_(map),
      h_(time_step),
      steps_(steps_done) {
  if (!(std::isfinite(h_) && h_ > 0.0))
    throw std::invalid_argument("time step must be a finite positive number, got " + format_g(h_));
  time_ = static_cast<double>(steps_) * h_;
  start();
}

void Simulation::start() {
  for (const Clump& c : clumps_) validate_inertia(c.body.inertia);
  half_.resize(clumps_.size());
  index_clumps();
  place_members();
  rebuild_phase();
  forces_.evaluate(particles_);
  reduce_forces();
  collect_events();
}

void Simulation::index_clumps() {
  if (clumps_.empty()) return;
  const std::size_t n = particles_.size();
  std::vector<std::uint32_t> slot_of_id(n, 0xffffffffu);
  for (std::size_t i = 0; i < n; ++i)
    if (particles_.id[i] < n) slot_of_id[particles_.id[i]] = static_cast<std::uint32_t>(i);
  in_clump_.assign(n, 0);
  member_slot_.clear();
  for (const Clump& c : clumps_)
    for (const std::uint32_t id : c.members) {
      if (id >= n || slot_of_id[id] == 0xffffffffu)
        throw std::invalid_argument("clump member id " + std::to_string(id) + " is not a particle");
      const std::uint32_t q = slot_of_id[id];
      if (in_clump_[q]) throw std::invalid_argument("particle " + std::to_string(id) + " is in two clumps");
      in_clump_[q] = 1;
      member_slot_.push_back(q);
    }
}

void Simulation::reorder() {
  const std::vector<std::uint32_t> order = morton_order(particles_.position);
  bool sorted = true;
  for (std::size_t k = 0; k < order.size() && sorted; ++k) sorted = order[k] == k;
  if (sorted) return;
  permute_particles(particles_, order);
  forces_.renumber(inverse_permutation(order));
  index_clumps();
  ++reorders_;
}

void Simulation::rebuild_phase() {
  if (!forces_.rebuild_due(particles_)) return;
  if (forces_.reorder_on_rebuild()) reorder();
  forces_.rebuild(particles_);
}

void Simulation::reduce_forces() {
  std::size_t m = 0;
  for (Clump& c : clumps_) {
    const Mat3 rt = c.body.attitude.transpose();
    Vec3 f = Vec3::Zero(), moment = Vec3::Zero();
    for (std::size_t k = 0; k < c.members.size(); ++k) {
      const std::uint32_t q = member_slot_[m++];
      const Vec3 fb = rt * particles_.force[q];
      f += particles_.force[q];
      moment += c.offsets[k].cross(fb) + rt * particles_.moment[q];
    }
    c.body.force = f;
    c.body.moment = moment;
  }
}

void Simulation::place_members() {
  std::size_t m = 0;
  for (const Clump& c : clumps_) {
    const RigidBody& b = c.body;
    const Quat r = Quat(b.attitude).normalized();
    const Vec3 omega = b.attitude * b.inertia.ldlt().solve(b.momentum);
    for (std::size_t k = 0; k < c.members.size(); ++k) {
      const std::uint32_t q = member_slot_[m++];
      const Vec3 arm = b.attitude * c.offsets[k];
      particles_.position[q] = b.position + arm;
      particles_.attitude[q] = r * c.member_attitudes[k];
      particles_.velocity[q] = b.velocity + omega.cross(arm);
      particles_.angular_velocity[q] = omega;
    }
  }
}

void Simulation::step() {
  for (std::size_t i = 0; i < clumps_.size(); ++i) half_[i] = lgvi_advance(clumps_[i].body, h_);
  advance_configuration(particles_, map_, h_);
  place_members();
  rebuild_phase();
  forces_.evaluate(particles_);
  complete_step(particles_, map_, h_);
  reduce_forces();
  for (std::size_t i = 0; i < clumps_.size(); ++i) lgvi_complete(clumps_[i].body, half_[i], h_);
  place_members();
  ++steps_;
  // t = k h rather than a running sum, so that long runs keep exact times.
  time_ = static_cast<double>(steps_) * h_;
  collect_events();
}

void Simulation::collect_events() {
  const std::size_t before = events_.size();
  forces_.take_events(events_);
  for (std::size_t e = before; e < events_.size(); ++e) events_[e].step = steps_;
}

std::vector<InteractionEvent> Simulation::take_events() {
  std::vector<InteractionEvent> out;
  out.swap(events_);
  return out;
}

EnergyReport Simulation::energy_report() const {
  EnergyReport r = forces_.potential_energies(particles_);
  const EnergyReport k = kinetic_energies_and_momenta(particles_, in_clump_);
  r.time = time_;
  r.kinetic_translation = k.kinetic_translation;
  r.kinetic_rotation = k.kinetic_rotation;
  r.linear_momentum = k.linear_momentum;
  r.angular_momentum = k.angular_momentum;
  for (const Clump& c : clumps_) {
    const RigidBody& b = c.body;
    r.kinetic_translation += 0.5 * b.mass * b.velocity.squaredNorm();
    r.kinetic_rotation += rotational_kinetic_energy(b);
    r.linear_momentum += b.mass * b.velocity;
    r.angular_momentum += angular_momentum(b);
  }
  return r;
}

}  // namespace dem
