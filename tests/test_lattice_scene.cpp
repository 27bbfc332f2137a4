/// \file test_lattice_scene.cpp
/// The lattice contact benchmark scene (scene/lattice_scene.hpp): particle
/// count and layout, the contact force against LAMMPS's granular `hertz`
/// formula, the neighbour list (exactly the face pairs), a whole run against
/// LAMMPS's own output, the initial velocities (temperature, zero momentum,
/// reproducible), bad input.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <stdexcept>
#include <string>

#include "contact/contact_potential.hpp"
#include "engine/force_field.hpp"
#include "scene/lattice_scene.hpp"
#include "core/parallel.hpp"
#include "engine/simulation.hpp"

namespace dem {
namespace {

/// LAMMPS `pair_style granular`, normal model `hertz`:
/// F = k_n sqrt(R_eff delta) delta, R_eff = r_i r_j/(r_i + r_j).
double lammps_hertz_force(double k_n, double r_i, double r_j, double delta) {
  const double r_eff = r_i * r_j / (r_i + r_j);
  return k_n * std::sqrt(r_eff * delta) * delta;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LatticeScene, HasNCubedParticlesOnTheLattice) {
  LatticeParameters p;
  p.per_side = 7;
  const Scene s = make_lattice(p);
  ASSERT_EQ(s.particles.size(), 343u);
  EXPECT_EQ(s.bonds.size(), 0u);
  EXPECT_TRUE(s.walls.empty());
  EXPECT_DOUBLE_EQ(s.contact.skin, 0.1);
  // Particle (i, j, k) at index i + n (j + n k), position 0.98 (i, j, k).
  const std::size_t idx = 3 + 7 * (5 + 7 * 6);
  EXPECT_NEAR((s.particles.position[idx] - Vec3(3 * 0.98, 5 * 0.98, 6 * 0.98)).norm(), 0.0, 1e-14);
  const double m = 1.9099 * std::numbers::pi / 6.0;
  for (std::size_t i = 0; i < s.particles.size(); ++i) {
    ASSERT_DOUBLE_EQ(s.particles.mass[i], m);
    ASSERT_DOUBLE_EQ(s.particles.inertia[i], m / 10.0);
    ASSERT_DOUBLE_EQ(s.particles.radius[i], 0.5);
    ASSERT_EQ(s.particles.angular_velocity[i], Vec3::Zero());
  }
}

TEST(LatticeScene, ContactForceEqualsLammpsHertzAtTwoPercentOverlap) {
  const Scene s = make_lattice(LatticeParameters{});
  EXPECT_NEAR(s.contact.stiffness, 1050.0, 1e-9);  // k_n d^3 / 2
  // Face neighbours (0,0,0) and (1,0,0): overlap delta = 0.02.
  const ContactTerms t = particle_contact(s.particles.position[1], s.particles.position[0],
                                          0.5, 0.5, s.contact.stiffness);
  const double expected = lammps_hertz_force(2100.0, 0.5, 0.5, 0.02);
  EXPECT_NEAR(expected, 2100.0 * 0.02 * std::sqrt(0.25 * 0.02), 1e-15);
  EXPECT_NEAR(t.force_i.x(), expected, 1e-12 * expected);  // repulsive, along +x
  EXPECT_NEAR(t.force_i.y(), 0.0, 1e-15);
  EXPECT_NEAR(t.force_i.z(), 0.0, 1e-15);
  // The conversion holds for unequal radii too, at any overlap.
  for (double delta : {1e-4, 0.01, 0.05}) {
    const double ri = 0.3, rj = 0.7;
    const double k = contact_stiffness_from_lammps_hertz(500.0, ri, rj);
    const Vec3 xi(0.0, 0.0, 0.0), xj(ri + rj - delta, 0.0, 0.0);
    const double f = particle_contact(xi, xj, ri, rj, k).force_i.norm();
    const double ref = lammps_hertz_force(500.0, ri, rj, delta);
    EXPECT_NEAR(f, ref, 1e-12 * ref) << "delta " << delta;
  }
}

TEST(LatticeScene, NeighbourSearchFindsExactlyTheFacePairs) {
  LatticeParameters p;
  p.per_side = 6;
  const std::size_t n = p.per_side;
  Scene s = make_lattice(p);
  ForceField field(s.particles, std::move(s.bonds), s.contact, std::move(s.walls));
  field.compute(s.particles);
  const NeighbourList& list = field.neighbours().list();
  ASSERT_EQ(list.pair_count(), 3 * n * n * (n - 1));
  for (std::size_t k = 0; k < list.pair_count(); ++k) {
    const double dist = (s.particles.position[list.owner[k]] -
                         s.particles.position[list.partner[k]]).norm();
    ASSERT_NEAR(dist, 0.98, 1e-12) << "pair " << list.owner[k] << " " << list.partner[k];
  }
  // The force field re-orders the particles at the build: find them by id.
  const auto slot_of = [&](std::uint32_t id) {
    const auto it = std::find(s.particles.id.begin(), s.particles.id.end(), id);
    EXPECT_NE(it, s.particles.id.end());
    return static_cast<std::size_t>(it - s.particles.id.begin());
  };
  // A corner sphere is pushed out along the diagonal by its three neighbours.
  const double f = lammps_hertz_force(2100.0, 0.5, 0.5, 0.02);
  EXPECT_NEAR((s.particles.force[slot_of(0)] - Vec3(-f, -f, -f)).norm(), 0.0, 1e-12);
  // An interior sphere feels six equal and opposite pushes.
  const std::uint32_t interior = static_cast<std::uint32_t>(2 + n * (3 + n * 2));
  EXPECT_NEAR(s.particles.force[slot_of(interior)].norm(), 0.0, 1e-12);
}

// The same system run by LAMMPS (Debian lammps 29 Sep 2021 - Update 2,
// ../shared/peers/in.lattice.lmp with -var n 10, the `velocity` line
// removed, `neighbor 0.1 nsq`, `thermo_modify format float %.15g`): 11^3
// spheres at rest, whose lattice spacing change_box makes 0.980588117607842
// (read back from a LAMMPS dump). Its TotEng (kinetic energy per atom; its
// granular pair style reports no potential energy) every 100 steps against
// map (25), which is velocity Verlet for frictionless spheres like LAMMPS's
// fix nve/sphere.
TEST(LatticeScene, ReproducesLammpsKineticEnergyHistory) {
  LatticeParameters p;
  p.per_side = 11;
  p.spacing_ratio = 0.980588117607842;
  p.temperature = 0.0;
  Scene s = make_lattice(p);
  ForceField field(s.particles, std::move(s.bonds), s.contact, std::move(s.walls));
  Simulation sim(std::move(s.particles), std::move(field), IntegratorMap::rrp25, 1e-3);
  const double lammps[] = {0.0129662261965924, 0.029140935367769, 0.0452286390585033,
                           0.057871687716356, 0.0601375426084491};
  const double n = static_cast<double>(sim.particles().size());
  for (int block = 0; block < 5; ++block) {
    for (int k = 0; k < 100; ++k) sim.step();
    const double ke = sim.energy_report().kinetic_translation / n;
    EXPECT_NEAR(ke, lammps[block], 1e-10 * lammps[block]) << "step " << 100 * (block + 1);
  }
}

TEST(LatticeScene, VelocitiesHaveTheTemperatureAndNoMomentum) {
  LatticeParameters p;
  p.per_side = 10;
  const Scene a = make_lattice(p);
  const std::size_t count = a.particles.size();
  Vec3 momentum = Vec3::Zero();
  double twice_kinetic = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    momentum += a.particles.mass[i] * a.particles.velocity[i];
    twice_kinetic += a.particles.mass[i] * a.particles.velocity[i].squaredNorm();
  }
  EXPECT_LT(momentum.norm(), 1e-13);
  EXPECT_NEAR(twice_kinetic / (3.0 * count - 3.0), 0.01, 1e-14);
  // Same seed, same velocities; another seed, other velocities.
  const Scene b = make_lattice(p);
  EXPECT_EQ(a.particles.velocity, b.particles.velocity);
  p.seed += 1;
  const Scene c = make_lattice(p);
  EXPECT_NE(a.particles.velocity, c.particles.velocity);
  // One sphere alone stays at rest.
  p.per_side = 1;
  const Scene one = make_lattice(p);
  ASSERT_EQ(one.particles.size(), 1u);
  EXPECT_EQ(one.particles.velocity[0], Vec3::Zero());
}

TEST(LatticeScene, BadParametersThrowNamingTheParameter) {
  const auto expect_throw = [](LatticeParameters p, const std::string& name) {
    try {
      make_lattice(p);
      ADD_FAILURE() << "no exception for " << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), name)) << e.what();
    }
  };
  LatticeParameters p;
  p.per_side = 0;
  expect_throw(p, "per_side");
  p = {};
  p.per_side = 2000;
  expect_throw(p, "per_side");
  p = {};
  p.diameter = 0.0;
  expect_throw(p, "diameter");
  p = {};
  p.diameter = std::nan("");
  expect_throw(p, "diameter");
  p = {};
  p.spacing_ratio = -0.5;
  expect_throw(p, "spacing_ratio");
  p = {};
  p.density = 0.0;
  expect_throw(p, "density");
  p = {};
  p.hertz_kn = -1.0;
  expect_throw(p, "hertz_kn");
  p = {};
  p.skin = -0.1;
  expect_throw(p, "skin");
  p = {};
  p.temperature = INFINITY;
  expect_throw(p, "temperature");
}

}  // namespace
}  // namespace dem

namespace dem {

// Scenes without bonds keep one force per contact pair: the forces equal a
// brute-force sum over every pair, and runs are bitwise the same on 1, 2
// and 3 threads.
TEST(LatticeScene, PairForcesMatchABruteForceSumAndAnyThreadCount) {
  LatticeParameters p;
  p.per_side = 7;
  p.temperature = 0.2;
  std::vector<std::vector<Vec3>> runs;
  for (std::size_t threads : {1u, 2u, 3u}) {
    ThreadLimit limit(threads);
    Scene s = make_lattice(p);
    const ContactSettings contact = s.contact;
    ForceField field(s.particles, std::move(s.bonds), s.contact, std::move(s.walls));
    Simulation sim(std::move(s.particles), std::move(field), IntegratorMap::rrp25, 1e-3);
    for (int k = 0; k < 300; ++k) sim.step();
    const ParticleStore& ps = sim.particles();
    std::vector<Vec3> brute(ps.size(), Vec3::Zero());
    for (std::size_t i = 0; i < ps.size(); ++i)
      for (std::size_t j = i + 1; j < ps.size(); ++j) {
        const Vec3 f = contact_force(ps.position[i], ps.position[j], ps.radius[i], ps.radius[j], contact.stiffness);
        brute[i] += f;
        brute[j] -= f;
      }
    double fmax = 0.0;
    for (const Vec3& f : brute) fmax = std::max(fmax, f.norm());
    ASSERT_GT(fmax, 0.0);
    for (std::size_t i = 0; i < ps.size(); ++i) EXPECT_LT((ps.force[i] - brute[i]).norm(), 1e-12 * fmax) << i;
    std::vector<Vec3> state(ps.position);
    state.insert(state.end(), ps.velocity.begin(), ps.velocity.end());
    state.insert(state.end(), ps.force.begin(), ps.force.end());
    runs.push_back(state);
  }
  const auto same = [](const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
    return std::memcmp(a.data(), b.data(), a.size() * sizeof(Vec3)) == 0;
  };
  EXPECT_TRUE(same(runs[0], runs[1]));
  EXPECT_TRUE(same(runs[0], runs[2]));
}

}  // namespace dem
