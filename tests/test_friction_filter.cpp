// iBDEM's friction filter (docs/model.md §11.1) at penalty contacts and walls:
// a sphere sliding on a penalty wall slows by mu_s |F_n| dt / m each step
// (eq. 34), never reverses, and the kinetic energy removed is W_filter,
// so E_balance stays at E_0; the pair filter is the same for any thread
// count.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "contact/contact_provider.hpp"
#include "contact/wall_provider.hpp"
#include "core/parallel.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "fields/gravity_provider.hpp"

using namespace dem;

namespace {
constexpr double kR = 1e-3, kM = 1e-5, kK = 1e4, kMu = 0.3, kG = 9.81;

Simulation sliding(double h) {
  ParticleStore s;
  ParticleSpec p;
  p.diameter = 2 * kR;
  p.mass = kM;
  p.inertia = 0.4 * kM * kR * kR;
  // Resting at the static overlap m g / k_c, sliding along x.
  p.position = Vec3(0, 0, kR - kM * kG / kK);
  p.velocity = Vec3(0.05, 0, 0);
  s.add(p);
  ForceField f;
  PenaltyContactLaw law{kK, {kMu}, {0.0}};
  f.add(std::make_unique<PenaltyContactProvider>(law, 0.1 * kR, "penalty"));
  auto walls = std::make_unique<WallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), Vec3::UnitZ(), kK}}, penalty_plane_wall());
  walls->set_filter({kMu}, {0.0});
  f.add(std::move(walls));
  f.add(std::make_unique<GravityProvider>(Vec3(0, 0, -kG)));
  return Simulation(std::move(s), std::move(f), IntegratorMap::rrp25, h);
}
}  // namespace

TEST(FrictionFilter, SlidingSphereStopsAtCoulombsRateAndTheLedgerCloses) {
  const double h = 1e-5;
  Simulation sim = sliding(h);
  const double e0 = sim.energy_report().balance();
  // Eq. (34) at the static load: dv = mu g dt per step until it stops.
  const double stop_time = 0.05 / (kMu * kG);
  double last_v = 0.05, worst = 0.0;
  const int steps = static_cast<int>(1.5 * stop_time / h);
  for (int k = 0; k < steps; ++k) {
    sim.step();
    const double v = sim.particles().velocity[0].x();
    ASSERT_GE(v, 0.0) << "the filter reversed the motion at step " << k;
    ASSERT_LE(v, last_v + 1e-12);
    last_v = v;
    if (k == static_cast<int>(0.5 * stop_time / h)) {
      EXPECT_NEAR(v, 0.05 - kMu * kG * (k + 1) * h, 2e-3 * 0.05);
    }
    worst = std::max(worst, std::abs(sim.energy_report().balance() - e0) / e0);
  }
  EXPECT_EQ(sim.particles().velocity[0].x(), 0.0);
  EXPECT_GT(sim.ledger().filter, 0.9 * 0.5 * kM * 0.05 * 0.05);
  EXPECT_LT(worst, 1e-3);
}

TEST(FrictionFilter, PairChangesAreTheSameForAnyThreadCount) {
  std::vector<std::vector<Vec3>> runs;
  for (std::size_t threads : {1, 2, 3}) {
    ThreadLimit limit(threads);
    ParticleStore s;
    for (int i = 0; i < 200; ++i) {
      ParticleSpec p;
      p.diameter = 2 * kR;
      p.mass = kM;
      p.inertia = 0.4 * kM * kR * kR;
      p.position = Vec3(1.9 * kR * (i % 10), 1.9 * kR * ((i / 10) % 10), 1.9 * kR * (i / 100));
      p.velocity = Vec3(std::sin(i), std::cos(3.0 * i), std::fmod(0.1 * i, 0.7));
      p.angular_velocity = Vec3(10 * std::cos(i), 0, 5);
      s.add(p);
    }
    ForceField f;
    f.add(std::make_unique<PenaltyContactProvider>(PenaltyContactLaw{kK, {kMu}, {0.05}}, 0.1 * kR, "penalty"));
    Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, 1e-6);
    for (int k = 0; k < 50; ++k) sim.step();
    EXPECT_GT(sim.ledger().filter, 0.0);
    runs.push_back(sim.particles().velocity);
  }
  EXPECT_EQ(runs[1], runs[0]);
  EXPECT_EQ(runs[2], runs[0]);
}
