// Particle store validation, bond list validation and the integrator's
// stability check (docs/model.md §3: map (23) needs h |w| < 1).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "bonds/bond_list.hpp"
#include "engine/force_field.hpp"
#include "engine/integrator.hpp"
#include "core/particle_store.hpp"
#include "engine/simulation.hpp"

using namespace dem;

namespace {
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ParticleStore, RejectsNonPhysicalParticles) {
  ParticleStore s;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {0.0, -1.0, nan}) {
    ParticleSpec d;
    d.diameter = bad;
    EXPECT_NE(error_of([&] { s.add(d); }).find("diameter"), std::string::npos);
    ParticleSpec m;
    m.mass = bad;
    EXPECT_NE(error_of([&] { s.add(m); }).find("mass"), std::string::npos);
    ParticleSpec j;
    j.inertia = bad;
    EXPECT_NE(error_of([&] { s.add(j); }).find("moment of inertia"), std::string::npos);
  }
  ParticleSpec x;
  x.position = Vec3(nan, 0, 0);
  EXPECT_NE(error_of([&] { s.add(x); }).find("position"), std::string::npos);
  EXPECT_EQ(s.size(), 0u);
  s.add(ParticleSpec{});
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.radius[0], 0.5);
}

TEST(BondList, RejectsBadBonds) {
  ParticleStore s;
  s.add(ParticleSpec{});
  ParticleSpec other;
  other.position = Vec3(1, 0, 0);
  s.add(other);
  BondList b;
  EXPECT_NE(error_of([&] { b.add(s, 0, 0, {}); }).find("itself"), std::string::npos);
  EXPECT_NE(error_of([&] { b.add(s, 0, 7, {}); }).find("out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { b.add(s, 0, 1, {-1.0, 1.0, 1.0}); }).find("K^m"), std::string::npos);
  EXPECT_EQ(b.size(), 0u);
  b.add(s, 0, 1, {1.0, 2.0, 3.0});
  EXPECT_EQ(b.rest_length[0], 1.0);
  EXPECT_EQ(b.rest_direction[0], Vec3(-1, 0, 0));
}

TEST(Simulation, RejectsNonPositiveTimeStep) {
  for (double h : {0.0, -1e-3, std::numeric_limits<double>::infinity()}) {
    ParticleStore s;
    s.add(ParticleSpec{});
    EXPECT_NE(error_of([&] {
                Simulation(s, ForceField(s, BondList{}, ContactSettings{}, {}),
                           IntegratorMap::rrp25, h);
              }).find("time step"),
              std::string::npos);
  }
}

TEST(Integrator, ParsesMapNames) {
  EXPECT_EQ(parse_integrator_map("23"), IntegratorMap::rrp23);
  EXPECT_EQ(parse_integrator_map("25"), IntegratorMap::rrp25);
  EXPECT_EQ(parse_integrator_map("27"), IntegratorMap::rrp27);
  EXPECT_THROW(parse_integrator_map("26"), std::invalid_argument);
}

TEST(Integrator, Map23PastItsConditionNamesParticleAndStableStep) {
  ParticleStore s;
  for (int i = 0; i < 5; ++i) {
    ParticleSpec p;
    p.angular_velocity = Vec3(0, 0, i == 3 ? 50.0 : 1.0);
    s.add(p);
  }
  const double h = 0.03;  // h |w| = 1.5 for particle 3
  try {
    advance_configuration(s, IntegratorMap::rrp23, h);
    FAIL() << "expected a StabilityError";
  } catch (const StabilityError& e) {
    EXPECT_EQ(e.particle, 3u);
    EXPECT_NEAR(e.largest_stable_step, 1.0 / 50.0, 1e-12);
    EXPECT_NE(std::string(e.what()).find("particle 3"), std::string::npos);
  }
  for (std::size_t i = 0; i < s.size(); ++i) EXPECT_TRUE(s.attitude[i].coeffs().allFinite());
}

TEST(Integrator, LargestStableStepAccountsForTheMoment) {
  const Vec3 omega(0, 0, 2.0), tau(0, 0, 4.0);
  const double h = largest_stable_step_rrp23(omega, tau, 1.0, 1.0);
  // h |2 + 2 h| = 1  ->  h = (-1 + sqrt(3))/2
  EXPECT_NEAR(h, 0.5 * (std::sqrt(3.0) - 1.0), 1e-12);
}

TEST(ParticleStore, AppendKeepsEveryArrayAndNumbersTheNewIds) {
  ParticleStore a, b;
  for (int k = 0; k < 3; ++k) {
    ParticleSpec p;
    p.position = Vec3(k, 0, 0);
    p.mass = 1.0 + k;
    a.add(p);
    p.position = Vec3(0, k, 0);
    p.velocity = Vec3(0, 0, k);
    p.diameter = 2.0;
    b.add(p);
  }
  b.force[1] = Vec3(1, 2, 3);
  a.append(b);
  ASSERT_EQ(a.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(a.id[k], k);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(a.position[3 + k], b.position[k]);
    EXPECT_EQ(a.velocity[3 + k], b.velocity[k]);
    EXPECT_EQ(a.reference_position[3 + k], b.reference_position[k]);
    EXPECT_EQ(a.radius[3 + k], 1.0);
    EXPECT_EQ(a.mass[3 + k], b.mass[k]);
  }
  EXPECT_EQ(a.force[4], Vec3(1, 2, 3));
  EXPECT_EQ(a.attitude.size(), 6u);
  EXPECT_EQ(a.reference_attitude.size(), 6u);
  EXPECT_EQ(a.moment.size(), 6u);
  EXPECT_EQ(a.inertia.size(), 6u);
  EXPECT_EQ(a.angular_velocity.size(), 6u);
}
