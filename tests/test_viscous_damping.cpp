// Mass-proportional viscous damping (docs/model.md §11.10,
// fields/viscous_damping_provider.hpp): a free particle's velocity and spin
// decay as exp(-alpha t) exactly at each step (the filter), its position
// to first order in h (the splitting); the kinetic energy removed is booked
// in W_filter so that E_balance stays at E_0 to round-off where the damping
// is the only force; a damped bonded beam under a punch gives the same bits
// for any thread count and across a checkpoint, explicit and implicit; the
// scene key is checked.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "app_support.hpp"
#include "core/parallel.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "fields/viscous_damping_provider.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_builder.hpp"
#include "scene_support.hpp"

using namespace dem;
using dem::testing::replaced;
using dem::testing::simulation_error;
using dem::testing::snapshot;

namespace {

constexpr double kAlpha = 50.0, kMass = 2e-3, kInertia = 3e-8;
const Vec3 kV0(0.3, -0.2, 0.1), kW0(40.0, 0.0, -25.0);

Simulation free_particle(double h) {
  ParticleStore s;
  ParticleSpec p;
  p.diameter = 1e-2;
  p.mass = kMass;
  p.inertia = kInertia;
  p.velocity = kV0;
  p.angular_velocity = kW0;
  s.add(p);
  ForceField f;
  f.add(std::make_unique<ViscousDampingProvider>(kAlpha));
  return Simulation(std::move(s), std::move(f), IntegratorMap::rrp25, h);
}

struct DecayErrors {
  double v = 0.0, w = 0.0, x = 0.0;
};

/// Relative errors of v, Omega and x at T = 2/alpha against the exact decay.
DecayErrors decay_errors(double h) {
  Simulation sim = free_particle(h);
  const double t_end = 2.0 / kAlpha;
  const long steps = std::lround(t_end / h);
  for (long k = 0; k < steps; ++k) sim.step();
  const double decay = std::exp(-kAlpha * t_end);
  const Vec3 x_exact = kV0 * (1.0 - decay) / kAlpha;
  const ParticleStore& p = sim.particles();
  return {(p.velocity[0] - decay * kV0).norm() / (decay * kV0.norm()),
          (p.angular_velocity[0] - decay * kW0).norm() / (decay * kW0.norm()),
          (p.position[0] - x_exact).norm() / x_exact.norm()};
}

std::string bending_text() {
  return dem::testing::read_file_text(std::filesystem::path(DEM_SOURCE_DIR) / "scenes/three_point_bending_low.toml");
}

/// The low-resolution bending beam, damped, its punch at 1 m/s so that a
/// few hundred steps load it.
std::string damped_bending_text() {
  std::string t = replaced(bending_text(), "velocity = [0.0, 0.0, -0.01]", "velocity = [0.0, 0.0, -1.0]");
  return t + "\n[damping]\nviscous = 200.0\n";
}

Simulation simulation_of(const std::string& text) {
  return make_simulation(build_scene(parse_scene_text(text, "damped.toml", ".")));
}

}  // namespace

TEST(ViscousDamping, FreeParticleDecaysAsExpOfMinusAlphaT) {
  const DecayErrors e1 = decay_errors(2e-4), e2 = decay_errors(1e-4), e4 = decay_errors(5e-5);
  std::printf("alpha h = %.3g, %.3g, %.3g: |dv|/v %.3e %.3e %.3e, |dOmega|/Omega %.3e %.3e %.3e, |dx|/x %.3e %.3e %.3e\n",
              kAlpha * 2e-4, kAlpha * 1e-4, kAlpha * 5e-5, e1.v, e2.v, e4.v, e1.w, e2.w, e4.w, e1.x, e2.x, e4.x);
  // The velocities decay exactly by exp(-alpha h) a step: round-off only.
  for (const DecayErrors& e : {e1, e2, e4}) {
    EXPECT_LT(e.v, 1e-12);
    EXPECT_LT(e.w, 1e-12);
  }
  // The position, drifted at the velocity before each step's decay: first
  // order in h (log2 of the error ratio in [0.9, 1.1]).
  for (const auto& [coarse, fine] : {std::pair{e1.x, e2.x}, std::pair{e2.x, e4.x}}) {
    const double order = std::log2(coarse / fine);
    EXPECT_GT(order, 0.9);
    EXPECT_LT(order, 1.1);
  }
  EXPECT_LT(e2.x, 1e-2);  // alpha h = 0.005
}

TEST(ViscousDamping, WorkIsBookedSoThatTheBalanceCloses) {
  Simulation sim = free_particle(1e-4);
  const EnergyReport r0 = sim.energy_report();
  const double e0 = r0.balance();
  ASSERT_GT(e0, 0.0);
  for (int k = 0; k < 1000; ++k) sim.step();  // five decay times of the kinetic energy (rate 2 alpha)
  const EnergyReport r = sim.energy_report();
  EXPECT_LT(r.kinetic_translation + r.kinetic_rotation, 1e-3 * e0);
  EXPECT_NEAR(r.filter_work, e0, 1e-3 * e0);  // nearly all of it went to W_filter
  EXPECT_EQ(r.contact_work, 0.0);
  // The filter books the kinetic energy it removes: round-off only.
  EXPECT_NEAR(r.balance(), e0, 1e-13 * e0);
}

/// A damped beam: 1, 2, 3 threads and a run resumed from a checkpoint give
/// the same bits; it vibrates less than the undamped one.
void expect_same_bits(const std::string& text, int steps, int cut) {
  dem::testing::StateSnapshot first;
  double damped_kinetic = 0.0;
  for (const std::size_t threads : {1, 2, 3}) {
    ThreadLimit limit(threads);
    Simulation sim = simulation_of(text);
    for (int k = 0; k < cut; ++k) sim.step();
    Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(sim))));
    for (int k = cut; k < steps; ++k) {
      sim.step();
      resumed.step();
    }
    const dem::testing::StateSnapshot s = snapshot(sim);
    if (threads == 1) {
      first = s;
      damped_kinetic = sim.energy_report().kinetic_translation;
    }
    EXPECT_TRUE(s == first) << threads << " threads";
    EXPECT_TRUE(snapshot(resumed) == s) << threads << " threads, resumed at step " << cut;
  }
  // The damping did work, and the undamped beam vibrates more.
  Simulation plain = simulation_of(replaced(text, "[damping]\nviscous = 200.0", ""));
  for (int k = 0; k < steps; ++k) plain.step();
  EXPECT_GT(first.ledger.filter, 0.0);
  EXPECT_EQ(plain.ledger().filter, 0.0);
  EXPECT_GT(plain.energy_report().kinetic_translation, damped_kinetic);
}

TEST(ViscousDamping, DampedBeamIsTheSameForAnyThreadCountAndAcrossACheckpoint) {
  expect_same_bits(damped_bending_text(), 600, 301);
}

TEST(ViscousDamping, ImplicitDampedBeamIsTheSameForAnyThreadCountAndAcrossACheckpoint) {
  // The punch at 0.01 m/s, steps of 1 ms (41 times the explicit limit).
  std::string text = replaced(bending_text(), "integrator = \"rrp25\"", "integrator = \"implicit\"");
  text = replaced(text, "time_step = \"auto\"", "time_step = 1e-3") + "\n[damping]\nviscous = 200.0\n";
  expect_same_bits(text, 12, 7);
}

TEST(ViscousDamping, SceneKeyIsChecked) {
  const std::string text = damped_bending_text();
  EXPECT_EQ(simulation_error(text), "");
  const Simulation sim = simulation_of(text);
  const auto* d = dynamic_cast<const ViscousDampingProvider*>(sim.forces().find("damping"));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->rate(), 200.0);
  const auto refused = [&](const std::string& from, const std::string& to, const std::string& words) {
    const std::string m = simulation_error(replaced(text, from, to));
    EXPECT_NE(m.find(words), std::string::npos) << m;
  };
  refused("viscous = 200.0", "viscous = -1.0", "viscous");
  refused("viscous = 200.0", "viscous = 0.0", "viscous");
  refused("viscous = 200.0", "rate = 200.0", "viscous");
  refused("viscous = 200.0", "viscous = inf", "viscous");
}
