#include "engine/clump.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dem {

Clump clump_at_rest(const ParticleStore& s, const std::vector<std::uint32_t>& slots) {
  if (slots.empty()) throw std::invalid_argument("a clump needs at least one member");
  Clump c;
  double mass = 0.0;
  Vec3 centre = Vec3::Zero();
  for (std::size_t k = 0; k < slots.size(); ++k) {
    const std::uint32_t q = slots[k];
    if (q >= s.size()) throw std::invalid_argument("clump member " + std::to_string(q) + " is not a particle");
    for (std::size_t l = 0; l < k; ++l)
      if (slots[l] == q) throw std::invalid_argument("clump member " + std::to_string(q) + " is listed twice");
    mass += s.mass[q];
    centre += s.mass[q] * s.position[q];
  }
  centre /= mass;
  Mat3 j = Mat3::Zero();
  for (std::uint32_t q : slots) {
    const Vec3 r = s.position[q] - centre;
    j += s.inertia[q] * Mat3::Identity() + s.mass[q] * (r.squaredNorm() * Mat3::Identity() - r * r.transpose());
    c.members.push_back(q);
    c.offsets.push_back(r);
    c.member_attitudes.push_back(s.attitude[q]);
  }
  validate_inertia(j);
  c.body.mass = mass;
  c.body.inertia = j;
  c.body.position = centre;
  return c;
}

Clump make_clump(ParticleStore& s, const std::vector<std::uint32_t>& slots, const Vec3& velocity,
                 const Vec3& angular_velocity) {
  Clump c = clump_at_rest(s, slots);
  c.body.velocity = velocity;
  c.body.momentum = c.body.inertia * angular_velocity;  // R = I: body frame = inertial frame
  for (std::size_t k = 0; k < slots.size(); ++k) {
    s.velocity[slots[k]] = velocity + angular_velocity.cross(c.offsets[k]);
    s.angular_velocity[slots[k]] = angular_velocity;
  }
  return c;
}

ClumpSimulation::ClumpSimulation(ParticleStore particles, ForceField forces, std::vector<Clump> clumps,
                                 IntegratorMap map, double time_step)
    : particles_(std::move(particles)),
      forces_(std::move(forces)),
      clumps_(std::move(clumps)),
      map_(map),
      h_(time_step) {
  if (!(std::isfinite(h_) && h_ > 0.0)) throw std::invalid_argument("time step must be finite and > 0");
  if (forces_.contact().reorder_on_rebuild)
    throw std::invalid_argument("clumps refer to their members by slot: set reorder_on_rebuild = false");
  in_clump_.assign(particles_.size(), 0);
  for (const Clump& c : clumps_) {
    validate_inertia(c.body.inertia);
    for (std::uint32_t q : c.members) {
      if (q >= particles_.size()) throw std::invalid_argument("clump member outside the particle store");
      if (in_clump_[q]) throw std::invalid_argument("particle " + std::to_string(q) + " is in two clumps");
      in_clump_[q] = 1;
    }
  }
  half_.resize(clumps_.size());
  place_members();
  forces_.compute(particles_);
  reduce_forces();
}

void ClumpSimulation::reduce_forces() {
  for (Clump& c : clumps_) {
    const Mat3 rt = c.body.attitude.transpose();
    Vec3 f = Vec3::Zero(), m = Vec3::Zero();
    for (std::size_t k = 0; k < c.members.size(); ++k) {
      const std::uint32_t q = c.members[k];
      const Vec3 fb = rt * particles_.force[q];
      f += particles_.force[q];
      m += c.offsets[k].cross(fb) + rt * particles_.moment[q];
    }
    c.body.force = f;
    c.body.moment = m;
  }
}

void ClumpSimulation::place_members() {
  for (const Clump& c : clumps_) {
    const RigidBody& b = c.body;
    const Quat r = Quat(b.attitude).normalized();
    const Vec3 omega = b.attitude * b.inertia.ldlt().solve(b.momentum);
    for (std::size_t k = 0; k < c.members.size(); ++k) {
      const std::uint32_t q = c.members[k];
      const Vec3 arm = b.attitude * c.offsets[k];
      particles_.position[q] = b.position + arm;
      particles_.attitude[q] = r * c.member_attitudes[k];
      particles_.velocity[q] = b.velocity + omega.cross(arm);
      particles_.angular_velocity[q] = omega;
    }
  }
}

void ClumpSimulation::step() {
  // First half: clumps by the LGVI, free spheres by their map (the members'
  // own update is overwritten by their placement).
  for (std::size_t i = 0; i < clumps_.size(); ++i) half_[i] = lgvi_advance(clumps_[i].body, h_);
  advance_configuration(particles_, map_, h_);
  place_members();
  forces_.compute(particles_);
  complete_step(particles_, map_, h_);
  reduce_forces();
  for (std::size_t i = 0; i < clumps_.size(); ++i) lgvi_complete(clumps_[i].body, half_[i], h_);
  place_members();
  ++steps_;
}

EnergyReport ClumpSimulation::energy_report() const {
  EnergyReport r = forces_.potential_energies(particles_);
  const EnergyReport k = kinetic_energies_and_momenta(particles_, in_clump_);
  r.time = time();
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
