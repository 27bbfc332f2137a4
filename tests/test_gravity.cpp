// Uniform gravity (engine/scene.hpp, ForceField): force m g against the
// potential U_gravity = -sum m g.x by central differences, free fall exact
// in momentum for every map and in energy for the second-order maps, and a
// ring torus falling onto a floor keeping its total energy.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "scene/ring_torus.hpp"
#include "engine/simulation.hpp"

using namespace dem;

namespace {

ParticleStore three_particles() {
  ParticleStore s;
  const double masses[3] = {1.0, 2.5, 0.3};
  for (int k = 0; k < 3; ++k) {
    ParticleSpec p;
    p.position = Vec3(0.3 * k, -1.0 + k, 2.0 * k * k);
    p.velocity = Vec3(0.1, -0.2 * k, 0.7);
    p.mass = masses[k];
    p.diameter = 0.1;
    s.add(p);
  }
  return s;
}

const Vec3 kGravity(0.5, -1.5, -9.81);

}  // namespace

TEST(Gravity, ForceIsMinusTheGradientOfItsPotential) {
  ParticleStore s = three_particles();
  ForceField field(s, BondList{}, ContactSettings{}, {}, kGravity);
  field.compute(s);
  const double eps = 1e-5;
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (int a = 0; a < 3; ++a) {
      ParticleStore plus = s, minus = s;
      plus.position[i][a] += eps;
      minus.position[i][a] -= eps;
      field.compute(plus);
      field.compute(minus);
      const double fd = -(field.potential_energies(plus).gravity -
                          field.potential_energies(minus).gravity) / (2 * eps);
      EXPECT_NEAR(s.force[i][a], fd, 1e-8 * (1.0 + std::abs(fd))) << "particle " << i << " axis " << a;
    }
    EXPECT_EQ(s.force[i], s.mass[i] * kGravity);
  }
  EXPECT_NE(field.potential_energies(s).gravity, 0.0);
}

TEST(Gravity, FreeFallKeepsMomentumLawAndEnergy) {
  for (IntegratorMap map : {IntegratorMap::rrp23, IntegratorMap::rrp25, IntegratorMap::rrp27}) {
    ParticleStore s = three_particles();
    double total_mass = 0.0;
    for (double m : s.mass) total_mass += m;
    ForceField field(s, BondList{}, ContactSettings{}, {}, kGravity);
    const double h = 1e-3;
    Simulation sim(std::move(s), std::move(field), map, h);
    const EnergyReport r0 = sim.energy_report();
    for (int k = 0; k < 2000; ++k) sim.step();
    const EnergyReport r = sim.energy_report();
    // dP/dt = M g exactly.
    const Vec3 expected = r0.linear_momentum + total_mass * kGravity * sim.time();
    EXPECT_LT((r.linear_momentum - expected).norm(), 1e-12 * expected.norm())
        << integrator_map_name(map);
    // The second-order maps are exact for a constant force.
    if (map != IntegratorMap::rrp27) {
      EXPECT_NEAR(r.total(), r0.total(), 1e-10 * std::abs(r0.kinetic_translation))
          << integrator_map_name(map);
    }
  }
}

TEST(Gravity, RingFallingOntoAFloorKeepsItsEnergy) {
  RingTorusParameters p;
  p.speed = 0.0;
  p.gap = 0.2;
  Scene scene = make_ring_torus(p);
  // The wall x = 0 becomes a floor: gravity points along -x.
  ForceField field(scene.particles, std::move(scene.bonds), scene.contact, std::move(scene.walls),
                   Vec3(-1.0, 0.0, 0.0));
  Simulation sim(std::move(scene.particles), std::move(field), IntegratorMap::rrp25, 1e-3);
  const EnergyReport r0 = sim.energy_report();
  double worst = 0.0, wall = 0.0;
  for (int k = 0; k < 3000; ++k) {
    sim.step();
    const EnergyReport r = sim.energy_report();
    worst = std::max(worst, std::abs(r.total() - r0.total()));
    wall = std::max(wall, r.wall);
  }
  EXPECT_GT(wall, 0.0) << "the ring must reach the floor";
  EXPECT_LT(worst, 5e-3 * std::abs(r0.total()));
}

TEST(Gravity, RejectsNonFiniteGravity) {
  ParticleStore s = three_particles();
  EXPECT_THROW(ForceField(s, BondList{}, ContactSettings{}, {}, Vec3(0, NAN, 0)),
               std::invalid_argument);
}
