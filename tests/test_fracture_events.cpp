// Fracture events located in time by the implicit integrator's event
// control (docs/model.md §12.8, engine/fracture_events.hpp):
//  - a single bond pulled at a constant rate (its ends at prescribed
//    velocities, so the stress ratio is a known function of time, found
//    here by bisection on the configuration) fails at a stress ratio in
//    [1, 1 + event_tolerance] and at the time its strength is reached,
//    for implicit steps of 1, 10, 100 and 1,000 times the explicit limit;
//    without the control it fails late, at the end of a step;
//  - the rejected and accepted steps are reported, the step grows back by
//    doubling, and a run with events is the same bits for any thread
//    count and across a checkpoint taken between the events;
//  - judge_trial_step's secant.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "bdem_support.hpp"
#include "bonds/bdem_provider.hpp"
#include "core/parallel.hpp"
#include "engine/force_field.hpp"
#include "engine/fracture_events.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint.hpp"

using namespace dem;
using namespace dem::bdem_test;

namespace {

constexpr double kStrength = 5e6;
const Vec3 kLeftVelocity(-0.0015, 0.0, 0.0), kRightVelocity(0.0015, 0.00075, 0.0);

/// Two touching spheres (ids 0, 1 on x) bonded, ends at prescribed velocities.
ParticleStore pair_store(double t) {
  ParticleStore s;
  s.add(sphere(Vec3(-kRadius, 0, 0) + t * kLeftVelocity));
  s.add(sphere(Vec3(kRadius, 0, 0) + t * kRightVelocity));
  return s;
}

ForceField pair_bond(const ParticleStore& s) {
  BondList bonds;
  bonds.add(s, 0, 1, BondStiffness{});
  ForceField f;
  f.add(std::make_unique<BdemBondProvider>(s, std::move(bonds), std::vector<BdemMaterial>{material(kStrength, kStrength)}));
  return f;
}

/// The bond's stress ratio max(sigma/sigma_c, tau/tau_c) with its ends
/// where they are at time t (the rest configuration at t = 0).
double ratio_at(double t) {
  ParticleStore rest = pair_store(0.0);
  BondList bonds;
  bonds.add(rest, 0, 1, BondStiffness{});
  ParticleStore s = pair_store(t);
  const BdemBondProvider p(rest, std::move(bonds), std::vector<BdemMaterial>{material(kStrength, kStrength)});
  std::vector<double> r;
  p.stress_ratios(s, r);
  return r.at(0);
}

/// The time at which the ratio reaches 1 (it grows monotonically here).
double strength_time() {
  double lo = 0.0, hi = 1e-3;
  while (ratio_at(hi) < 1.0) hi *= 2.0;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    (ratio_at(mid) < 1.0 ? lo : hi) = mid;
  }
  return hi;
}

/// The explicit limit of the bond's material (docs/model.md §9.6).
double explicit_limit() { return bdem_stable_step(kE, kDensity, kRadius, 1.0); }

Simulation implicit_pair(double h, double tolerance) {
  ParticleStore s = pair_store(0.0);
  ForceField f = pair_bond(s);
  Simulation sim(std::move(s), std::move(f), IntegratorMap::implicit, h);
  ImplicitSettings settings;
  settings.event_tolerance = tolerance;
  sim.set_implicit_settings(settings);
  sim.set_groups({moved_group("left", 0, kLeftVelocity), moved_group("right", 1, kRightVelocity)});
  return sim;
}

struct Outcome {
  BondFailure failure;
  std::size_t rejected = 0, accepted = 0;
};

/// Steps until the bond fails (at most `max_steps`).
Outcome run_to_failure(Simulation& sim, int max_steps) {
  Outcome o;
  for (int k = 0; k < max_steps; ++k) {
    sim.step();
    for (const ImplicitStepStats& st : sim.last_implicit_attempts()) (st.accepted ? o.accepted : o.rejected) += 1;
    const std::vector<BondFailure> f = sim.take_failures();
    if (f.empty()) continue;
    EXPECT_EQ(f.size(), 1u);
    o.failure = f[0];
    return o;
  }
  ADD_FAILURE() << "the bond did not fail in " << max_steps << " steps";
  return o;
}

}  // namespace

TEST(FractureEvents, PulledBondFailsAtItsStrengthForStepsUpTo1000TimesTheExplicitLimit) {
  const double t_star = strength_time(), dt_e = explicit_limit(), tol = kDefaultEventTolerance;
  // The pull reaches the strength after about 3,300 explicit steps.
  ASSERT_GT(t_star, 3000 * dt_e);
  ASSERT_LT(t_star, 4000 * dt_e);
  // The ratio's rate near t*: a ratio of 1 + tol is reached tol/rate later.
  const double rate = (ratio_at(1.001 * t_star) - ratio_at(0.999 * t_star)) / (0.002 * t_star);
  for (const double multiple : {1.0, 10.0, 100.0, 1000.0}) {
    Simulation sim = implicit_pair(multiple * dt_e, tol);
    const Outcome o = run_to_failure(sim, static_cast<int>(t_star / (multiple * dt_e)) + 3);
    const BondFailure& f = o.failure;
    const double ratio = std::max(f.sigma_ratio, f.tau_ratio);
    EXPECT_GE(ratio, 1.0) << multiple;
    EXPECT_LE(ratio, 1.0 + tol) << multiple;
    EXPECT_NEAR(ratio_at(f.time), ratio, 1e-9) << multiple << ": the failure's time and configuration agree";
    EXPECT_GE(f.time, t_star * (1.0 - 1e-12)) << multiple;
    EXPECT_LE(f.time, t_star + tol / rate) << multiple;
    // Steps over the strength time were tried and rejected (short steps may land within the tolerance).
    if (multiple >= 100.0) {
      EXPECT_GT(o.rejected, 0u) << multiple;
    }
    std::printf("step %5.0f x explicit: failure at t/t* - 1 = %.2e, ratio - 1 = %.2e, %zu accepted and %zu rejected steps\n",
                multiple, f.time / t_star - 1.0, ratio - 1.0, o.accepted, o.rejected);
  }
}

TEST(FractureEvents, WithoutTheControlTheBondFailsAtTheEndOfItsStep) {
  const double t_star = strength_time(), h = 100 * explicit_limit();
  Simulation sim = implicit_pair(h, 0.0);
  const Outcome o = run_to_failure(sim, static_cast<int>(t_star / h) + 3);
  EXPECT_EQ(o.rejected, 0u);
  EXPECT_EQ(o.failure.time, static_cast<double>(o.failure.step) * h);
  EXPECT_GT(std::max(o.failure.sigma_ratio, o.failure.tau_ratio), 1.0 + kDefaultEventTolerance)
      << "a step of 100 explicit limits overshoots the strength (else the test above proves nothing)";
}

TEST(FractureEvents, StepGrowsBackByDoublingAfterAnEventAndRestartsWhereItWas) {
  const double t_star = strength_time(), h = 1000 * explicit_limit();
  Simulation sim = implicit_pair(h, kDefaultEventTolerance);
  const Outcome o = run_to_failure(sim, static_cast<int>(t_star / h) + 3);
  ASSERT_GT(o.rejected, 0u);
  // In the step of the failure: the accepted step after the shortened one
  // is twice as long, or what is left of h.
  const std::vector<ImplicitStepStats>& tried = sim.last_implicit_attempts();
  std::size_t event = 0;
  while (event < tried.size() && !(event > 0 && tried[event].accepted && !tried[event - 1].accepted)) ++event;
  ASSERT_LT(event + 1, tried.size()) << "the step of the failure should go on after it";
  double left = h;
  for (std::size_t k = 0; k <= event; ++k) left -= tried[k].accepted ? tried[k].time_step : 0.0;
  EXPECT_NEAR(tried[event + 1].time_step, std::min(2.0 * tried[event].time_step, left), 1e-12 * h);
  // A checkpoint here continues with the same step sizes (positions moved
  // by x += Dt v at each step are the same bits only if they are).
  ASSERT_LT(sim.implicit_clock().next_step, h);
  const CheckpointState c = decode_checkpoint(encode_checkpoint(capture_simulation(sim)));
  EXPECT_EQ(c.implicit_clock.next_step, sim.implicit_clock().next_step);
  EXPECT_EQ(c.implicit_clock.last_step, sim.implicit_clock().last_step);
  EXPECT_EQ(c.implicit.event_tolerance, kDefaultEventTolerance);
  Simulation copy = simulation_from(c);
  // The next steps grow until they are h, with nothing left to fail.
  for (int k = 0; k < 12; ++k) {
    sim.step();
    copy.step();
    ASSERT_EQ(sim.last_implicit_attempts().size(), copy.last_implicit_attempts().size());
    for (const ImplicitStepStats& st : sim.last_implicit_attempts()) EXPECT_TRUE(st.accepted);
  }
  EXPECT_EQ(sim.implicit_clock().next_step, h);
  EXPECT_EQ(sim.last_implicit_attempts().size(), 1u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(sim.particles().position[i], copy.particles().position[i]);
  EXPECT_EQ(sim.time(), copy.time());
}

namespace {

/// A chain of `n` bonded spheres along x, ends pulled apart, free middle,
/// implicit at 200 times the explicit limit.
Simulation implicit_chain(int n) {
  Simulation sim = pulled_chain(n, kStrength, IntegratorMap::implicit, 200 * explicit_limit(), Vec3(-0.02, 0.003, 0),
                                Vec3(0.02, 0, 0.001));
  ImplicitSettings settings;
  settings.newton_tolerance = 1e-6;  // (1e-8 is below this chain's round-off floor at such steps)
  sim.set_implicit_settings(settings);
  return sim;
}

}  // namespace

TEST(FractureEvents, ChainBreaksWithinTheToleranceTheSameBitsForAnyThreadCountAndAcrossACheckpoint) {
  struct Run {
    std::vector<BondFailure> failures;
    std::vector<Vec3> position;
    std::size_t rejected = 0;
  };
  const auto run = [](Simulation& sim, int steps, Run& r) {
    for (int k = 0; k < steps; ++k) {
      sim.step();
      for (const ImplicitStepStats& st : sim.last_implicit_attempts()) r.rejected += st.accepted ? 0 : 1;
      for (const BondFailure& f : sim.take_failures()) r.failures.push_back(f);
    }
    r.position = sim.particles().position;
  };
  std::vector<Run> runs;
  for (const std::size_t threads : {1, 2}) {
    ThreadLimit limit(threads);
    Simulation sim = implicit_chain(24);
    Run r;
    run(sim, 80, r);
    runs.push_back(r);
  }
  ASSERT_FALSE(runs[0].failures.empty()) << "the chain should break";
  std::printf("chain: %zu failures, the first at step %llu; %zu rejected steps\n", runs[0].failures.size(),
              static_cast<unsigned long long>(runs[0].failures[0].step), runs[0].rejected);
  EXPECT_GT(runs[0].rejected, 0u);
  for (const BondFailure& f : runs[0].failures) {
    EXPECT_GE(std::max(f.sigma_ratio, f.tau_ratio), 1.0);
    EXPECT_LE(std::max(f.sigma_ratio, f.tau_ratio), 1.0 + kDefaultEventTolerance);
  }
  ASSERT_EQ(runs[1].failures.size(), runs[0].failures.size());
  for (std::size_t k = 0; k < runs[0].failures.size(); ++k) {
    EXPECT_EQ(runs[1].failures[k].bond, runs[0].failures[k].bond);
    EXPECT_EQ(runs[1].failures[k].time, runs[0].failures[k].time);
  }
  for (std::size_t i = 0; i < runs[0].position.size(); ++i) EXPECT_EQ(runs[1].position[i], runs[0].position[i]);

  // A checkpoint before the failures, continued through them.
  Simulation sim = implicit_chain(24);
  for (int k = 0; k < 5; ++k) sim.step();
  ASSERT_TRUE(sim.take_failures().empty());
  Simulation copy = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(sim))));
  Run a, b;
  run(sim, 75, a);
  run(copy, 75, b);
  ASSERT_FALSE(a.failures.empty());
  ASSERT_EQ(a.failures.size(), b.failures.size());
  for (std::size_t k = 0; k < a.failures.size(); ++k) EXPECT_EQ(a.failures[k].time, b.failures[k].time);
  for (std::size_t i = 0; i < a.position.size(); ++i) EXPECT_EQ(a.position[i], b.position[i]);
}

TEST(FractureEvents, TrialStepJudgedBySecantOfTheRecordsThatPassed) {
  SerialCollective& c = serial_collective();
  const double tol = 1e-3;
  // Nothing past 1 + tol: accepted, whatever the ratios below.
  const std::vector<double> start = {0.2, 0.9, 0.0}, below = {0.5, 1.0009, 0.0};
  EventVerdict v = judge_trial_step(start, below, 2.0, tol, c);
  EXPECT_TRUE(v.accept);
  EXPECT_EQ(v.largest_ratio, 1.0009);
  // Record 0 reaches 1 + tol/2 at (1.0005 - 0.2)/(1.8 - 0.2) of the step, record 1 at (1.0005 - 0.9)/(1.3 - 0.9).
  const std::vector<double> end = {1.8, 1.3, 0.0};
  v = judge_trial_step(start, end, 2.0, tol, c);
  EXPECT_FALSE(v.accept);
  EXPECT_EQ(v.largest_ratio, 1.8);
  EXPECT_DOUBLE_EQ(v.retry_step, 2.0 * (1.0005 - 0.9) / (1.3 - 0.9));
  // The retry stays within [dt/1000, dt).
  v = judge_trial_step(std::vector<double>{1.0004999}, std::vector<double>{5.0}, 1.0, tol, c);
  EXPECT_EQ(v.retry_step, 1e-3);
  EXPECT_THROW(judge_trial_step(start, std::vector<double>{1.0}, 1.0, tol, c), std::invalid_argument);
  EXPECT_EQ(grown_step(0.3, 1.0), 0.6);
  EXPECT_EQ(grown_step(0.6, 1.0), 1.0);
}
