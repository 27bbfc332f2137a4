// The solid torus of docs/model.md §7: lattice, bonds, constants from the
// moduli, placement, the critical time step, the Morton reordering, momentum
// conservation and bitwise determinism across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <numbers>
#include <set>
#include <vector>

#include "core/parallel.hpp"
#include "engine/reorder.hpp"
#include "engine/simulation.hpp"
#include "scene/solid_torus.hpp"
#include "engine/time_step.hpp"
#include "simd_targets.hpp"

using namespace dem;

namespace {

Simulation make_simulation(Scene scene, double h, IntegratorMap map = IntegratorMap::rrp25) {
  sort_for_locality(scene);
  ForceField field(scene.particles, std::move(scene.bonds), scene.contact, std::move(scene.walls));
  return Simulation(std::move(scene.particles), std::move(field), map, h);
}

SolidTorusParameters small_torus() {
  SolidTorusParameters p;
  p.particle_diameter = 2.5e-3;  // about 2000 particles
  return p;
}

}  // namespace

// docs/model.md §7 gives "about 1.3e5 particles and 7.2e5 bonds" for the
// defaults, about 6 bonds per particle.
TEST(SolidTorus, DefaultSceneHasTheModelsSize) {
  const Scene s = make_solid_torus({});
  const double n = static_cast<double>(s.particles.size());
  const double m = static_cast<double>(s.bonds.size());
  EXPECT_NEAR(n, 1.3e5, 0.05 * 1.3e5);
  EXPECT_NEAR(m, 7.2e5, 0.05 * 7.2e5);
  EXPECT_EQ(solid_torus_site_count({}), s.particles.size());
}

TEST(SolidTorus, LatticeBondsJoinTouchingNeighboursOnly) {
  const SolidTorusParameters p = small_torus();
  const Scene s = make_solid_torus(p);
  const double d = p.particle_diameter;
  std::vector<int> count(s.particles.size(), 0);
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (std::size_t b = 0; b < s.bonds.size(); ++b) {
    const auto i = s.bonds.first[b], j = s.bonds.second[b];
    EXPECT_NEAR((s.particles.position[i] - s.particles.position[j]).norm(), d, 1e-12 * d);
    EXPECT_TRUE(seen.insert({std::min(i, j), std::max(i, j)}).second) << "bond listed twice";
    ++count[i];
    ++count[j];
  }
  EXPECT_EQ(*std::max_element(count.begin(), count.end()), 12);
  // No pair at distance d is left unbonded.
  std::size_t touching = 0;
  for (std::size_t i = 0; i < s.particles.size(); ++i)
    for (std::size_t j = i + 1; j < s.particles.size(); ++j)
      if ((s.particles.position[i] - s.particles.position[j]).norm() < 1.01 * d) ++touching;
  EXPECT_EQ(touching, s.bonds.size());
  // Every particle lies in the tube, in the torus frame (untilt, uncentre).
  const Mat3 ry = Eigen::AngleAxisd(p.tilt_deg * std::numbers::pi / 180, Vec3::UnitY())
                      .toRotationMatrix();
  Vec3 c = Vec3::Zero();
  for (const Vec3& x : s.particles.position) c += x;
  c /= static_cast<double>(s.particles.size());
  for (const Vec3& x : s.particles.position) {
    const Vec3 y = ry.transpose() * (x - c);
    const double rho = std::hypot(y.x(), y.y()) - 0.5 * p.major_diameter;
    EXPECT_LE(std::hypot(rho, y.z()), 0.5 * (p.tube_diameter - d) + 1e-9);
  }
}

TEST(SolidTorus, ConstantsFromTheModuli) {
  SolidTorusParameters p;
  const SolidTorusConstants c = solid_torus_constants(p);
  // d = 1e-3 m, rho = 2000: m = 2000 pi 1e-9 / 6.
  EXPECT_NEAR(c.mass, 1.0471975511965976e-06, 1e-20);
  EXPECT_NEAR(c.inertia, c.mass * 1e-6 / 10, 1e-25);
  // r_b = 2.5e-4 m: A = pi 6.25e-8, K^a = E_b A r0 = 1e9 A 1e-3 = 0.19634954 J.
  EXPECT_NEAR(c.k_axial, 0.19634954084936207, 1e-15);
  EXPECT_EQ(c.k_shear, c.k_axial);
  // I = pi r_b^4 / 4, K^m = E_b I / r0.
  EXPECT_NEAR(c.k_bending, 1e9 * std::numbers::pi * std::pow(2.5e-4, 4) / 4 / 1e-3, 1e-15);
  // E* = E_p / (2 (1 - nu^2)), R* = r/2 = 2.5e-4, K^pp = 4/3 E* sqrt(R*) (1e-3)^{5/2}.
  const double e_star = 1e10 / (2 * 0.91);
  EXPECT_NEAR(c.k_contact, 4.0 / 3 * e_star * std::sqrt(2.5e-4) * std::pow(1e-3, 2.5), 1e-12);
  // Hertz force at a 1e-5 m overlap between two spheres: F = 4/3 E* sqrt(R*) delta^{3/2}.
  const double delta = 1e-5;
  const double f_model = c.k_contact / 1e-3 * std::pow(delta / 1e-3, 1.5);
  EXPECT_NEAR(f_model, 4.0 / 3 * e_star * std::sqrt(2.5e-4) * std::pow(delta, 1.5), 1e-12);
  EXPECT_NEAR(c.k_wall, 4.0 / 3 * (1e10 / 0.91) * std::pow(5e-4, 3), 1e-12);
}

TEST(SolidTorus, PlacedAtTheGapMovingAtTheSpeed) {
  SolidTorusParameters p = small_torus();
  p.spin = Vec3(0, 0, 50.0);
  const Scene s = make_solid_torus(p);
  double min_surface = 1e9;
  Vec3 c = Vec3::Zero();
  for (const Vec3& x : s.particles.position) c += x;
  c /= static_cast<double>(s.particles.size());
  for (std::size_t i = 0; i < s.particles.size(); ++i)
    min_surface = std::min(min_surface, s.particles.position[i].x() - s.particles.radius[i]);
  EXPECT_NEAR(min_surface, p.gap, 1e-15);
  ASSERT_EQ(s.walls.size(), 1u);
  EXPECT_EQ(s.walls[0].normal, Vec3::UnitX());
  Vec3 mean_v = Vec3::Zero();
  for (const Vec3& v : s.particles.velocity) mean_v += v;
  mean_v /= static_cast<double>(s.particles.size());
  // The lattice is symmetric about the torus centre, so the spin adds no mean velocity.
  EXPECT_LT((mean_v - Vec3(-p.speed, 0, 0)).norm(), 1e-9);
  EXPECT_EQ(s.particles.angular_velocity[0], p.spin);
}

TEST(SolidTorus, DiameterForATargetCount) {
  const SolidTorusParameters p;
  for (std::size_t target : {3000u, 20000u}) {
    SolidTorusParameters q = p;
    q.particle_diameter = solid_torus_diameter_for(p, target);
    const double n = static_cast<double>(solid_torus_site_count(q));
    EXPECT_NEAR(n, static_cast<double>(target), 0.01 * target) << target;
  }
}

TEST(SolidTorus, RejectsNonPhysicalParameters) {
  const auto bad = [](auto change) {
    SolidTorusParameters p;
    change(p);
    return p;
  };
  EXPECT_THROW(make_solid_torus(bad([](auto& p) { p.particle_diameter = -1e-3; })),
               std::invalid_argument);
  EXPECT_THROW(make_solid_torus(bad([](auto& p) { p.particle_diameter = 0.03; })),
               std::invalid_argument);
  EXPECT_THROW(make_solid_torus(bad([](auto& p) { p.particle_poisson = 0.5; })),
               std::invalid_argument);
  EXPECT_THROW(make_solid_torus(bad([](auto& p) { p.density = 0.0; })), std::invalid_argument);
  EXPECT_THROW(make_solid_torus(bad([](auto& p) { p.tube_diameter = 0.2; })),
               std::invalid_argument);
  EXPECT_THROW(make_solid_torus(bad([](auto& p) { p.gap = NAN; })), std::invalid_argument);
  EXPECT_THROW(solid_torus_diameter_for(SolidTorusParameters{}, 0), std::invalid_argument);
}

// Two bonded particles: h_crit = min(sqrt(m/((K^a + 9/8 K^s)/r0^2 + k_c)),
// sqrt(J/(K^m + 9/16 K^s))) (engine/time_step.hpp).
TEST(TimeStep, CriticalStepOfOneBond) {
  ParticleStore s;
  ParticleSpec a;
  a.mass = 2.0;
  a.inertia = 0.05;
  a.diameter = 1.0;
  s.add(a);
  a.position = Vec3(1.0, 0, 0);
  s.add(a);
  BondList bonds;
  bonds.add(s, 0, 1, BondStiffness{3.0, 200.0, 200.0});
  const ContactSettings contact{1000.0, 0.0};
  const double kc = 1.5 * 1000.0 / 1.0 * 0.1;  // 1.5 K/s^2 sqrt(0.01), s = 1
  EXPECT_DOUBLE_EQ(contact_stiffness_at_one_percent(1000.0, 0.5, 0.5), kc);
  const double expected =
      std::min(std::sqrt(2.0 / (200.0 + 9.0 / 8.0 * 200.0 + kc)), std::sqrt(0.05 / (3.0 + 9.0 / 16.0 * 200.0)));
  EXPECT_DOUBLE_EQ(critical_time_step(s, bonds, contact), expected);
  // The derivative of the contact force at 1% overlap, by finite differences.
  const double delta = 0.01, eps = 1e-7;
  const auto force = [](double dl) { return 1000.0 * std::pow(dl, 1.5); };
  EXPECT_NEAR((force(delta + eps) - force(delta - eps)) / (2 * eps), kc, 1e-4 * kc);
}

TEST(Reorder, MortonOrderKeepsEveryParticleAndItsBonds) {
  Scene s = make_solid_torus(small_torus());
  const Scene before = s;
  sort_for_locality(s);
  ASSERT_EQ(s.particles.size(), before.particles.size());
  std::vector<bool> seen(s.particles.size(), false);
  for (std::size_t k = 0; k < s.particles.size(); ++k) {
    const std::uint32_t id = s.particles.id[k];
    ASSERT_FALSE(seen[id]);
    seen[id] = true;
    EXPECT_EQ(s.particles.position[k], before.particles.position[id]);
    EXPECT_EQ(s.particles.velocity[k], before.particles.velocity[id]);
  }
  // Bonds: lower slot first, sorted, the same pairs of ids with the same r0.
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs_before, pairs_after;
  for (std::size_t b = 0; b < before.bonds.size(); ++b)
    pairs_before.insert({std::min(before.bonds.first[b], before.bonds.second[b]),
                         std::max(before.bonds.first[b], before.bonds.second[b])});
  for (std::size_t b = 0; b < s.bonds.size(); ++b) {
    const auto i = s.bonds.first[b], j = s.bonds.second[b];
    EXPECT_LT(i, j);
    if (b > 0) {
      EXPECT_LE(s.bonds.first[b - 1], i);
    }
    const Vec3 d = s.particles.reference_position[i] - s.particles.reference_position[j];
    EXPECT_LT((d / d.norm() - s.bonds.rest_direction[b]).norm(), 1e-15);
    const auto a = s.particles.id[i], c = s.particles.id[j];
    pairs_after.insert({std::min(a, c), std::max(a, c)});
  }
  EXPECT_EQ(pairs_before, pairs_after);
  // Neighbouring slots are close in space: the mean distance between
  // consecutive slots drops well below that of the lattice order's.
  const auto mean_step = [](const std::vector<Vec3>& x) {
    double sum = 0;
    for (std::size_t k = 1; k < x.size(); ++k) sum += (x[k] - x[k - 1]).norm();
    return sum / static_cast<double>(x.size() - 1);
  };
  EXPECT_LT(mean_step(s.particles.position), 0.5 * mean_step(before.particles.position));
}

// Reordering changes only the order of the sums: forces agree to round-off.
TEST(Reorder, ForcesAreTheSameAfterReordering) {
  SolidTorusParameters p = small_torus();
  p.spin = Vec3(30.0, -20.0, 10.0);
  Scene a = make_solid_torus(p);
  // Turn the particles a little so every bond term is loaded.
  for (std::size_t i = 0; i < a.particles.size(); ++i) {
    a.particles.attitude[i] = Quat(Eigen::AngleAxisd(0.01 * std::sin(1.0 * i),
                                                     Vec3(std::cos(2.0 * i), 1, 0).normalized()));
    a.particles.position[i] += 1e-5 * Vec3(std::sin(3.0 * i), std::cos(5.0 * i), 0.3);
  }
  a.contact.reorder_on_rebuild = false;  // a keeps its creation order
  Scene b = a;
  sort_for_locality(b);
  ForceField fa(a.particles, a.bonds, a.contact, a.walls);
  ForceField fb(b.particles, b.bonds, b.contact, b.walls);
  fa.compute(a.particles);
  fb.compute(b.particles);
  double fmax = 0, tmax = 0;
  for (const Vec3& f : a.particles.force) fmax = std::max(fmax, f.norm());
  for (const Vec3& t : a.particles.moment) tmax = std::max(tmax, t.norm());
  ASSERT_GT(fmax, 0.0);
  ASSERT_GT(tmax, 0.0);
  for (std::size_t k = 0; k < b.particles.size(); ++k) {
    const std::uint32_t id = b.particles.id[k];
    EXPECT_LT((b.particles.force[k] - a.particles.force[id]).norm(), 1e-12 * fmax);
    EXPECT_LT((b.particles.moment[k] - a.particles.moment[id]).norm(), 1e-12 * tmax);
  }
  const EnergyReport ea = fa.potential_energies(a.particles);
  const EnergyReport eb = fb.potential_energies(b.particles);
  EXPECT_NEAR(ea.total(), eb.total(), 1e-12 * std::abs(ea.total()));
}

// Without the wall every interaction is internal: P and L stay constant to
// round-off while the bonds and contacts work.
TEST(SolidTorus, FreeFlightConservesMomentaToRoundOff) {
  SolidTorusParameters p = small_torus();
  p.wall = false;
  p.spin = Vec3(200.0, -100.0, 300.0);
  Scene scene = make_solid_torus(p);
  for (std::size_t i = 0; i < scene.particles.size(); ++i)
    scene.particles.angular_velocity[i] += Vec3(std::sin(1.0 * i), std::cos(3.0 * i), 0.5) * 500.0;
  const double h = 0.1 * critical_time_step(scene.particles, scene.bonds, scene.contact);
  Simulation sim = make_simulation(std::move(scene), h);
  const EnergyReport r0 = sim.energy_report();
  double max_u = 0;
  for (int k = 0; k < 300; ++k) {
    sim.step();
    if (k % 50 == 49) {
      const EnergyReport r = sim.energy_report();
      max_u = std::max(max_u, r.bending + r.axial + r.shear);
      EXPECT_LT((r.linear_momentum - r0.linear_momentum).norm(), 1e-12 * r0.linear_momentum.norm());
      EXPECT_LT((r.angular_momentum - r0.angular_momentum).norm(),
                1e-12 * r0.angular_momentum.norm());
      EXPECT_LT(std::abs(r.total() - r0.total()), 1e-3 * r0.total());
    }
  }
  EXPECT_GT(max_u, 1e-6 * r0.total());
}

namespace {
std::vector<unsigned char> state_bytes(const Simulation& sim) {
  const ParticleStore& s = sim.particles();
  std::vector<unsigned char> out;
  const auto append = [&](const auto& v) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    out.insert(out.end(), p, p + v.size() * sizeof(v[0]));
  };
  append(s.position);
  append(s.velocity);
  append(s.attitude);
  append(s.angular_velocity);
  append(s.force);
  append(s.moment);
  const EnergyReport r = sim.energy_report();
  const double e[] = {r.kinetic_translation, r.kinetic_rotation, r.bending, r.axial,
                      r.shear, r.contact, r.wall};
  const auto* p = reinterpret_cast<const unsigned char*>(e);
  out.insert(out.end(), p, p + sizeof e);
  return out;
}
}  // namespace

// The impact, started at the wall, with 1, 2 and 3 threads: bitwise the same.
TEST(SolidTorus, BitwiseIdenticalForOneTwoAndThreeThreads) {
  SolidTorusParameters p = small_torus();
  p.gap = 0.0;
  p.speed = 50.0;
  p.spin = Vec3(0, 100.0, 0);
  std::vector<std::vector<unsigned char>> runs;
  std::size_t rebuilds = 0;
  for (std::size_t threads : {1u, 2u, 3u}) {
    ThreadLimit limit(threads);
    Scene scene = make_solid_torus(p);
    const double h = 0.1 * critical_time_step(scene.particles, scene.bonds, scene.contact);
    Simulation sim = make_simulation(std::move(scene), h);
    for (int k = 0; k < 400; ++k) sim.step();
    const EnergyReport r = sim.energy_report();
    EXPECT_GT(r.wall, 0.0) << "the torus must be at the wall";
    EXPECT_GT(r.contact, 0.0);
    rebuilds = sim.forces().neighbours().rebuild_count();
    runs.push_back(state_bytes(sim));
  }
  EXPECT_GT(rebuilds, 1u) << "the neighbour list must be rebuilt during the run";
  EXPECT_TRUE(runs[0] == runs[1]);
  EXPECT_TRUE(runs[0] == runs[2]);
}

// The same impact with the kernels forced onto each SIMD target this CPU
// runs (core/simd.hpp), on 2 threads, and on the scalar loop on 1 thread:
// bitwise the same state, so a machine without AVX-512 writes the same files.
TEST(SolidTorus, BitwiseIdenticalForEverySimdTarget) {
  SolidTorusParameters p = small_torus();
  p.gap = 0.0;
  p.speed = 50.0;
  p.spin = Vec3(0, 100.0, 0);
  const auto run = [&](const std::string& target, std::size_t threads) {
    dem::testing::SimdTargetScope scope(target);
    ThreadLimit limit(threads);
    Scene scene = make_solid_torus(p);
    const double h = 0.1 * critical_time_step(scene.particles, scene.bonds, scene.contact);
    Simulation sim = make_simulation(std::move(scene), h);
    for (int k = 0; k < 300; ++k) sim.step();
    EXPECT_GT(sim.energy_report().wall, 0.0) << "the torus must be at the wall";
    EXPECT_GT(sim.energy_report().bending, 0.0) << "the bonds must bend";
    return state_bytes(sim);
  };
  const std::vector<unsigned char> reference = run("scalar", 1);
  for (const std::string& target : available_simd_targets())
    EXPECT_TRUE(run(target, 2) == reference) << "target " << target;
}

// Re-ordering at neighbour-list rebuilds moves particles between slots and
// changes only the order of sums: the same run without it agrees particle by
// particle (matched by id) to round-off, and the bonds stay sorted by first end.
TEST(Reorder, AtRebuildsChangesOnlyTheSlots) {
  SolidTorusParameters p = small_torus();
  p.gap = 0.0;
  p.speed = 50.0;
  p.spin = Vec3(0, 3000.0, 0);
  std::vector<Simulation> runs;
  for (bool reorder : {false, true}) {
    Scene scene = make_solid_torus(p);
    scene.contact.reorder_on_rebuild = reorder;
    const double h = 0.1 * critical_time_step(scene.particles, scene.bonds, scene.contact);
    runs.push_back(make_simulation(std::move(scene), h));
    for (int k = 0; k < 400; ++k) runs.back().step();
  }
  const ParticleStore& plain = runs[0].particles();
  const ParticleStore& sorted = runs[1].particles();
  ASSERT_GT(runs[1].forces().neighbours().rebuild_count(), 1u);
  std::vector<std::size_t> slot_of(plain.size());
  std::size_t moved = 0;
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    slot_of[sorted.id[k]] = k;
    moved += sorted.id[k] != plain.id[k];
  }
  EXPECT_GT(moved, 0u) << "no particle changed its slot";
  double dx = 0, dv = 0, vmax = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    const std::size_t k = slot_of[plain.id[i]];
    dx = std::max(dx, (plain.position[i] - sorted.position[k]).norm());
    dv = std::max(dv, (plain.velocity[i] - sorted.velocity[k]).norm());
    vmax = std::max(vmax, plain.velocity[i].norm());
  }
  EXPECT_LT(dx, 1e-12 * p.major_diameter) << "positions";
  EXPECT_LT(dv, 1e-9 * vmax) << "velocities";
  const BondList& bonds = runs[1].forces().bonds();
  EXPECT_TRUE(std::is_sorted(bonds.first.begin(), bonds.first.end()));
  for (std::size_t b = 0; b < bonds.size(); ++b) ASSERT_LT(bonds.first[b], bonds.second[b]);
}

// The rebuild test's scan runs inside the integrator's drift pass: a
// particle thrown to infinity is still reported, by its lowest slot.
TEST(SolidTorus, NonFinitePositionFromTheDriftPassNamesTheLowestSlot) {
  Scene scene = make_solid_torus(small_torus());
  const double h = 0.1 * critical_time_step(scene.particles, scene.bonds, scene.contact);
  Simulation sim = make_simulation(std::move(scene), h);
  for (int k = 0; k < 3; ++k) sim.step();
  ASSERT_GT(sim.particles().size(), 600u);
  ParticleStore& s = sim.particles();
  s.velocity[577] = Vec3(std::numeric_limits<double>::infinity(), 0, 0);
  s.velocity[312] = Vec3(0, std::numeric_limits<double>::quiet_NaN(), 0);
  try {
    sim.step();
    FAIL() << "a non-finite position must stop the step";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("particle 312 is not finite"), std::string::npos) << e.what();
  }
}
