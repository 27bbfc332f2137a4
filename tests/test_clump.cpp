// Clumps of spheres integrated by the LGVI beside free spheres
// (engine/clump.hpp, docs/model.md §8): a clump tumbling freely keeps L,
// E and its members' relative positions to round-off; a clump hits a wall
// while a bonded ring flies beside it; and on the ring torus, one-sphere
// clumps (LGVI) and map (25) agree to second order in h.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/clump.hpp"
#include "scene/ring_torus.hpp"
#include "engine/simulation.hpp"

using namespace dem;

namespace {

/// Four unit spheres in an irregular, touching arrangement (a general J).
std::vector<std::uint32_t> add_tetromino(ParticleStore& s, const Vec3& at) {
  std::vector<std::uint32_t> slots;
  for (const Vec3& r : {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, 0, 0), Vec3(2, 1, 0)}) {
    ParticleSpec p;
    p.position = at + r;
    p.mass = 1.0;
    p.inertia = 0.1;
    p.diameter = 1.0;
    slots.push_back(static_cast<std::uint32_t>(s.add(p)));
  }
  return slots;
}

double largest_member_distance_change(const Clump& c, const ParticleStore& s) {
  double worst = 0.0;
  const std::vector<std::uint32_t> slot = slots_of_ids(s, c.members);
  for (std::size_t a = 0; a < c.members.size(); ++a)
    for (std::size_t b = a + 1; b < c.members.size(); ++b) {
      const double now = (s.position[slot[a]] - s.position[slot[b]]).norm();
      const double then = (c.offsets[a] - c.offsets[b]).norm();
      worst = std::max(worst, std::abs(now - then));
    }
  return worst;
}

struct Tumble {
  double energy_error, momentum_error, distance_error;
};

Tumble tumble(double h, double t_end) {
  ParticleStore s;
  const std::vector<std::uint32_t> slots = add_tetromino(s, Vec3(0.3, -0.2, 0.1));
  std::vector<Clump> clumps{make_clump(s, slots, Vec3(0.1, 0.2, -0.3), Vec3(1.0, 2.0, -1.5))};
  ContactSettings contact{100.0, 0.1, false};
  ForceField field(s, BondList{}, contact, {});
  Simulation sim(std::move(s), std::move(field), std::move(clumps), IntegratorMap::rrp25, h);
  const EnergyReport r0 = sim.energy_report();
  Tumble t{0, 0, 0};
  const long steps = std::lround(t_end / h);
  for (long k = 0; k < steps; ++k) {
    sim.step();
    const EnergyReport r = sim.energy_report();
    t.energy_error = std::max(t.energy_error, std::abs(r.total() - r0.total()));
    t.momentum_error = std::max(t.momentum_error, (r.angular_momentum - r0.angular_momentum).norm() +
                                                      (r.linear_momentum - r0.linear_momentum).norm());
    t.distance_error = std::max(t.distance_error, largest_member_distance_change(sim.clumps()[0], sim.particles()));
  }
  return t;
}

}  // namespace

TEST(Clump, MassAndInertiaFromItsMembers) {
  ParticleStore s;
  const std::vector<std::uint32_t> slots = add_tetromino(s, Vec3::Zero());
  const Clump c = make_clump(s, slots, Vec3::Zero(), Vec3::Zero());
  EXPECT_EQ(c.body.mass, 4.0);
  EXPECT_LT((c.body.position - Vec3(1.25, 0.25, 0)).norm(), 1e-15);
  // Parallel-axis sum about the centre of mass, by hand: J_zz = 4 * 0.1 + sum m (x^2 + y^2).
  double jzz = 0.4;
  for (const Vec3& r : c.offsets) jzz += r.x() * r.x() + r.y() * r.y();
  EXPECT_NEAR(c.body.inertia(2, 2), jzz, 1e-14);
  EXPECT_NEAR(c.body.inertia(0, 1), -(c.offsets[0].x() * c.offsets[0].y() + c.offsets[1].x() * c.offsets[1].y() +
                                      c.offsets[2].x() * c.offsets[2].y() + c.offsets[3].x() * c.offsets[3].y()),
              1e-14);
  EXPECT_THROW(make_clump(s, {0, 0}, Vec3::Zero(), Vec3::Zero()), std::invalid_argument);
  EXPECT_THROW(make_clump(s, {9}, Vec3::Zero(), Vec3::Zero()), std::invalid_argument);
}

TEST(Clump, TumblingFreelyKeepsMomentaShapeAndEnergy) {
  const Tumble a = tumble(2e-3, 5.0), b = tumble(1e-3, 5.0);
  EXPECT_LT(a.momentum_error, 1e-12);
  EXPECT_LT(a.distance_error, 1e-13);
  // The discrete free rigid body of the LGVI (a Moser-Veselov map) keeps
  // the kinetic energy exactly, so E holds to round-off (E is about 7 here),
  // better than the order of the method.
  EXPECT_LT(a.energy_error, 1e-12);
  EXPECT_LT(b.energy_error, 1e-12);
}

TEST(Clump, HitsAWallBesideABondedRing) {
  RingTorusParameters p;
  p.gap = 0.5;
  Scene scene = make_ring_torus(p);
  // A clump well away from the ring (y = 6), moving at the wall x = 0.
  const std::vector<std::uint32_t> slots = add_tetromino(scene.particles, Vec3(1.0, 6.0, 0.0));
  for (std::uint32_t q : slots) {
    scene.particles.mass[q] = 0.5;
    scene.particles.radius[q] = 0.5;
  }
  std::vector<Clump> clumps{make_clump(scene.particles, slots, Vec3(-1.0, 0.0, 0.0), Vec3(0.0, 0.0, 0.7))};
  scene.contact.reorder_on_rebuild = false;
  ForceField field(scene.particles, std::move(scene.bonds), scene.contact, std::move(scene.walls));
  Simulation sim(std::move(scene.particles), std::move(field), std::move(clumps), IntegratorMap::rrp25, 1e-3);
  const EnergyReport r0 = sim.energy_report();
  double worst = 0.0, wall = 0.0;
  for (int k = 0; k < 4000; ++k) {
    sim.step();
    const EnergyReport r = sim.energy_report();
    worst = std::max(worst, std::abs(r.total() - r0.total()) / r0.total());
    wall = std::max(wall, r.wall);
  }
  EXPECT_GT(wall, 0.0);
  EXPECT_GT(sim.clumps()[0].body.velocity.x(), 0.3) << "the clump must bounce off the wall";
  EXPECT_LT(worst, 5e-3);
  EXPECT_LT(largest_member_distance_change(sim.clumps()[0], sim.particles()), 1e-12);
  EXPECT_GT(sim.energy_report().bending + sim.energy_report().axial, 0.0) << "the ring's bonds must work";
}

TEST(Clump, OneSphereClumpsAgreeWithMap25ToSecondOrder) {
  RingTorusParameters p;
  p.wall = false;
  p.spin = Vec3(0.3, -0.2, 0.5);
  const auto difference = [&](double h) {
    Scene a = make_ring_torus(p);
    a.contact.reorder_on_rebuild = false;
    for (std::size_t i = 0; i < a.particles.size(); ++i)
      a.particles.angular_velocity[i] += Vec3(std::sin(1.0 * i), std::cos(3.0 * i), 0.5);
    Scene b = a;
    ForceField fa(a.particles, std::move(a.bonds), a.contact, {});
    Simulation rrp(std::move(a.particles), std::move(fa), IntegratorMap::rrp25, h);
    std::vector<Clump> clumps;
    for (std::uint32_t i = 0; i < b.particles.size(); ++i)
      clumps.push_back(make_clump(b.particles, {i}, b.particles.velocity[i], b.particles.angular_velocity[i]));
    ForceField fb(b.particles, std::move(b.bonds), b.contact, {});
    Simulation lgvi(std::move(b.particles), std::move(fb), std::move(clumps), IntegratorMap::rrp25, h);
    const long steps = std::lround(1.0 / h);
    for (long k = 0; k < steps; ++k) {
      rrp.step();
      lgvi.step();
    }
    double d = 0.0;
    for (std::size_t i = 0; i < rrp.particles().size(); ++i)
      d = std::max(d, (rrp.particles().position[i] - lgvi.particles().position[i]).norm() +
                          (rrp.particles().angular_velocity[i] - lgvi.particles().angular_velocity[i]).norm());
    return d;
  };
  const double d1 = difference(4e-3), d2 = difference(2e-3);
  EXPECT_GT(d2, 0.0);
  EXPECT_NEAR(std::log2(d1 / d2), 2.0, 0.3) << d1 << " " << d2;
}
