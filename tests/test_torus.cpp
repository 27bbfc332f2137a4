// The ring torus (docs/model.md §6): conservation laws, energy behaviour
// through the impact, determinism across thread counts, blow-up detection.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "scene/ring_torus.hpp"
#include "engine/simulation.hpp"
#include "io/energy_table.hpp"

using namespace dem;

namespace {

Simulation make_simulation(const RingTorusParameters& p, IntegratorMap map, double h) {
  Scene scene = make_ring_torus(p);
  ForceField field(scene.particles, std::move(scene.bonds), scene.contact, std::move(scene.walls));
  return Simulation(std::move(scene.particles), std::move(field), map, h);
}

}  // namespace

// Without the wall every interaction is internal and objective, so the
// maps conserve P and L exactly up to round-off (docs/model.md §6).
TEST(RingTorus, FreeFlightConservesMomentaToRoundOff) {
  for (IntegratorMap map : {IntegratorMap::rrp23, IntegratorMap::rrp25, IntegratorMap::rrp27}) {
    RingTorusParameters p;
    p.wall = false;
    p.tilt_deg = 30.0;
    p.spin = Vec3(0.3, -0.2, 0.5);
    // Perturb the bonds so that every potential is active: a heavier spin
    // about an in-plane axis plus the initial velocity field.
    Simulation sim = make_simulation(p, map, 1e-3);
    // Give each particle its own extra spin so bonds bend, twist and shear.
    for (std::size_t i = 0; i < sim.particles().size(); ++i)
      sim.particles().angular_velocity[i] += Vec3(std::sin(i), std::cos(3.0 * i), 0.5 * std::sin(7.0 * i));
    const EnergyReport r0 = sim.energy_report();
    double max_u = 0.0;
    for (int k = 0; k < 2000; ++k) {
      sim.step();
      if (k % 100 == 99) {
        const EnergyReport r = sim.energy_report();
        max_u = std::max(max_u, r.bending + r.shear + r.axial);
        EXPECT_LT((r.linear_momentum - r0.linear_momentum).norm(),
                  1e-12 * r0.linear_momentum.norm()) << integrator_map_name(map) << " step " << k;
        EXPECT_LT((r.angular_momentum - r0.angular_momentum).norm(),
                  1e-12 * r0.angular_momentum.norm()) << integrator_map_name(map) << " step " << k;
      }
    }
    EXPECT_GT(max_u, 1e-3) << "the bonds must be loaded for the test to mean anything";
  }
}

// With the wall: map (25) at h = 1e-3 to t = 35 keeps E_total within 5e-3
// of its start (docs/model.md expects about 2e-3), while energy flows from
// translation into rotation and all five potentials.
TEST(RingTorus, ImpactKeepsEnergyBoundedAndActivatesEveryPotential) {
  RingTorusParameters p;
  Simulation sim = make_simulation(p, IntegratorMap::rrp25, 1e-3);
  const EnergyReport r0 = sim.energy_report();
  const double e0 = r0.total();
  EXPECT_NEAR(e0, 40.0, 1e-9);  // 80 particles, m = 1, |v| = 1
  double max_dev = 0.0, max_rot = 0.0;
  EnergyReport peak;
  for (int k = 1; k <= 35000; ++k) {
    sim.step();
    if (k % 10 == 0) {
      const EnergyReport r = sim.energy_report();
      max_dev = std::max(max_dev, std::abs(r.total() - e0) / e0);
      max_rot = std::max(max_rot, r.kinetic_rotation);
      peak.bending = std::max(peak.bending, r.bending);
      peak.axial = std::max(peak.axial, r.axial);
      peak.shear = std::max(peak.shear, r.shear);
      peak.contact = std::max(peak.contact, r.contact);
      peak.wall = std::max(peak.wall, r.wall);
    }
  }
  std::printf("ring torus, map (25), h = 1e-3, t = 35: max |E - E0|/E0 = %.3e\n", max_dev);
  EXPECT_LT(max_dev, 5e-3);
  EXPECT_GT(max_dev, 1e-6);  // a symplectic map is not exactly energy conserving
  EXPECT_GT(max_rot, 1e-2);
  EXPECT_GT(peak.bending, 1e-4);
  EXPECT_GT(peak.axial, 1e-4);
  EXPECT_GT(peak.shear, 1e-4);
  EXPECT_GT(peak.contact, 1e-6);
  EXPECT_GT(peak.wall, 1e-2);
}

// The same run on 1, 2 and 3 threads gives byte-identical energy rows and
// states. The ring is large enough (6,000 particles) that every parallel
// loop and every block reduction is split.
TEST(RingTorus, BitwiseIdenticalForAnyThreadCount) {
  RingTorusParameters p;
  p.particles = 6000;
  p.torus_diameter = 200.0;  // D_p ~ 0.105
  p.gap = 0.0;  // the leftmost particle touches the wall at t = 0
  p.spin = Vec3(0.01, 0.02, 0.03);
  std::vector<std::vector<std::string>> rows(3);
  std::vector<std::vector<Vec3>> positions(3);
  for (std::size_t threads : {1u, 2u, 3u}) {
    ThreadLimit limit(threads);
    Simulation sim = make_simulation(p, IntegratorMap::rrp25, 1e-4);
    for (int k = 1; k <= 300; ++k) {
      sim.step();
      if (k % 20 == 0) rows[threads - 1].push_back(energy_table_row(sim.energy_report()));
    }
    EXPECT_GT(sim.energy_report().wall, 0.0) << "the wall must be hit";
    positions[threads - 1] = sim.particles().position;
  }
  EXPECT_EQ(rows[0], rows[1]);
  EXPECT_EQ(rows[0], rows[2]);
  EXPECT_TRUE(positions[0] == positions[1]);
  EXPECT_TRUE(positions[0] == positions[2]);
}

// docs/model.md §6: the wall contact is not resolved at h = 4e-3; the run
// must blow up and the energy check must see it.
TEST(RingTorus, TooLargeStepBlowsUpAndIsDetectable) {
  RingTorusParameters p;
  Simulation sim = make_simulation(p, IntegratorMap::rrp25, 4e-3);
  const double e0 = sim.energy_report().total();
  bool detected = false;
  try {
    for (int k = 0; k < 5000 && !detected; ++k) {
      sim.step();
      const double e = sim.energy_report().total();
      detected = !std::isfinite(e) || e > 10.0 * e0;
    }
  } catch (const std::runtime_error&) {
    detected = true;  // non-finite positions are reported by the neighbour search
  }
  EXPECT_TRUE(detected);
}
