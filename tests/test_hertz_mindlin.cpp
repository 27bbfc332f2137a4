// Hertz-Mindlin contact with friction, damping and rolling (docs/model.md §11.2)
// and the W_contact ledger (11.3):
//  - a head-on collision's coefficient of restitution does not depend on the
//    impact speed (the delta^(1/4) damping), and e = 1 gives 1;
//  - e = 1, mu_s = 0: the non-conservative part is exactly zero, W_contact = 0;
//  - with damping and friction, E_balance = E_total + W_contact is conserved
//    to second order in h (an oblique collision with spin), with every
//    rolling and twisting model (their springs' energy is booked in
//    W_contact like the tangential spring's, docs/model.md §11.6), and a
//    settling pile with walls closes the ledger too;
//  - the conservative part is the gradient of U_contact;
//  - tangential history survives neighbour rebuilds, re-ordering, thread
//    counts and a checkpoint (a frictional pile on a fixed floor).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "contact/friction_wall_provider.hpp"
#include "contact/hertz_mindlin.hpp"
#include "core/parallel.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "fields/gravity_provider.hpp"
#include "io/checkpoint.hpp"
#include "support.hpp"

using namespace dem;

namespace {

constexpr double kR = 1e-3, kRho = 2400, kE = 1e8, kNu = 0.3;

ParticleSpec sphere(const Vec3& x, const Vec3& v, const Vec3& w = Vec3::Zero()) {
  return dem::testing::solid_sphere(kR, kRho, x, v, w);
}

ContactMaterial material(double e, double mu_s, double mu_r = 0.0) {
  return ContactMaterial{kE, kNu, e, mu_s, mu_r};
}

constexpr HertzMindlinModels kEpsd{.rolling = RollingModel::epsd};

Simulation pair_run(const ContactMaterial& m, double h, const Vec3& vi, const Vec3& vj, const Vec3& wi = Vec3::Zero(),
                    double offset = 0.0, const HertzMindlinModels& models = kEpsd) {
  ParticleStore s;
  s.add(sphere(Vec3(-kR - 1e-6, offset, 0), vi, wi));
  s.add(sphere(Vec3(kR + 1e-6, -offset, 0), vj));
  ForceField f;
  f.add(std::make_unique<HertzMindlinProvider>(HertzMindlinLaw({m}, h, models), 0.2 * kR, "mindlin"));
  return Simulation(std::move(s), std::move(f), IntegratorMap::rrp25, h);
}

/// Contact duration of a Hertz impact at relative speed v (equal spheres).
double contact_time(double v) {
  const ContactPair p = contact_pair(material(1, 0), material(1, 0));
  const double m = 0.5 * kRho * 4.0 / 3.0 * M_PI * kR * kR * kR, r = 0.5 * kR;
  return 2.87 * std::pow(m * m / (r * p.e_star * p.e_star * v), 0.2);
}

double restitution(double e, double speed, double h) {
  Simulation sim = pair_run(material(e, 0.0), h, Vec3(0.5 * speed, 0, 0), Vec3(-0.5 * speed, 0, 0));
  bool touched = false;
  for (int k = 0; k < 10000000; ++k) {
    sim.step();
    const ParticleStore& p = sim.particles();
    const double gap = (p.position[1] - p.position[0]).norm() - 2 * kR;
    if (gap < 0) touched = true;
    if (touched && gap > 0) return (p.velocity[1].x() - p.velocity[0].x()) / speed;
  }
  return NAN;
}

}  // namespace

TEST(HertzMindlin, RestitutionDoesNotDependOnTheImpactSpeed) {
  const double h = contact_time(10.0) / 2000;
  for (const double e : {0.3, 0.5, 0.9}) {
    const double slow = restitution(e, 0.1, h), mid = restitution(e, 1.0, h), fast = restitution(e, 10.0, h);
    std::printf("input e = %.2f: measured %.6f (0.1 m/s), %.6f (1 m/s), %.6f (10 m/s)\n", e, slow, mid, fast);
    EXPECT_NEAR(slow, mid, 1e-3);
    EXPECT_NEAR(fast, mid, 1e-3);
  }
  const double elastic = restitution(1.0, 1.0, contact_time(1.0) / 20000);
  std::printf("input e = 1: measured %.12f\n", elastic);
  EXPECT_NEAR(elastic, 1.0, 1e-9);
}

TEST(HertzMindlin, ConservativePartIsTheGradientOfTheHertzEnergy) {
  ParticleStore s;
  s.add(sphere(Vec3(0, 0, 0), Vec3(0.3, -0.1, 0.2), Vec3(10, 0, 5)));
  s.add(sphere(Vec3(2 * kR - 2e-5, 3e-6, -4e-6), Vec3(-0.2, 0, 0)));
  const HertzMindlinLaw law({material(0.5, 0.4)}, 1e-7);
  HertzMindlinLaw::State st;
  PairOutput out;
  law.evaluate(s, 0, 1, st, out);
  const Vec3 conservative = out.force - out.nc_force;
  for (int a = 0; a < 3; ++a) {
    const double eps = 1e-10;
    ParticleStore p = s, m = s;
    p.position[0][a] += eps;
    m.position[0][a] -= eps;
    const double fd = -(law.energy(p, 0, 1, st) - law.energy(m, 0, 1, st)) / (2 * eps);
    EXPECT_NEAR(conservative[a], fd, 1e-6 * conservative.norm());
  }
}

TEST(HertzMindlin, NoDampingNoFrictionMeansNoContactWork) {
  Simulation sim = pair_run(material(1.0, 0.0), 1e-8, Vec3(0.7, 0.1, 0), Vec3(-0.7, 0, 0.05), Vec3(300, -100, 50), 3e-4);
  for (int k = 0; k < 30000; ++k) sim.step();
  EXPECT_EQ(sim.ledger().contact, 0.0);
}

namespace {

/// The rolling and twisting models of the ledger tests (docs/model.md §11.6),
/// with constants for spheres of radius 1 mm and E = 1e8 Pa.
struct SpinModels {
  const char* name;
  HertzMindlinModels models;
};
const SpinModels kSpinModels[] = {
    {"epsd", kEpsd},
    {"epsd with dashpot", {.rolling = RollingModel::epsd, .rolling_damping = 0.3}},
    {"sds rolling, marshall twisting",
     {.rolling = RollingModel::sds, .rolling_stiffness = 1e3, .rolling_dashpot = 1e-3,
      .twisting = TwistingModel::marshall}},
    {"epsd2, sds twisting",
     {.rolling = RollingModel::epsd2, .twisting = TwistingModel::sds, .twisting_stiffness = 1e-6,
      .twisting_dashpot = 1e-10, .twisting_friction = 1e-4}},
};

}  // namespace

TEST(HertzMindlin, BalanceWithDampingAndFrictionIsSecondOrder) {
  const double t_end = 3.0 * contact_time(1.0);
  for (const SpinModels& m : kSpinModels) {
    std::vector<double> dev;
    double w_contact = 0.0;
    for (const double h : {2e-8, 1e-8, 5e-9}) {
      Simulation sim = pair_run(material(0.5, 0.3, 0.05), h, Vec3(0.7, 0.1, 0), Vec3(-0.7, 0, 0.05),
                                Vec3(300, -100, 50), 3e-4, m.models);
      const double e0 = sim.energy_report().balance();
      double worst = 0.0;
      const auto steps = static_cast<long>(t_end / h);
      for (long k = 0; k < steps; ++k) {
        sim.step();
        worst = std::max(worst, std::abs(sim.energy_report().balance() - e0) / e0);
      }
      EXPECT_GT(sim.ledger().contact, 0.01 * e0) << m.name;  // dissipation happened
      dev.push_back(worst);
      w_contact = sim.ledger().contact / e0;
    }
    const double s1 = std::log2(dev[0] / dev[1]), s2 = std::log2(dev[1] / dev[2]);
    std::printf("%s: W_contact/E_0 = %.6f, max |E_balance - E_0|/E_0: %.3e %.3e %.3e, slopes %.3f %.3f\n", m.name,
                w_contact, dev[0], dev[1], dev[2], s1, s2);
    EXPECT_NEAR(0.5 * (s1 + s2), 2.0, 0.3) << m.name;
  }
}

/// 27 spheres thrown at each other and at a floor under gravity, with every
/// rolling and twisting model: E_total + W_contact stays E_0 to the
/// integrator's error on the Hertz forces while W_contact grows to a good
/// part of E_0 (pairs and walls, sliding and sticking).
TEST(HertzMindlin, SettlingPileClosesTheLedgerWithRollingAndTwisting) {
  for (const SpinModels& m : kSpinModels) {
    std::vector<double> dev;
    for (const double h : {2e-7, 1e-7}) {
      ParticleStore s;
      std::mt19937_64 rng(3);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (int k = 0; k < 27; ++k) {
        const Vec3 x(2.05 * kR * (k % 3), 2.05 * kR * ((k / 3) % 3), 1.05 * kR + 2.05 * kR * (k / 9));
        s.add(sphere(x + 0.02 * kR * Vec3(u(rng), u(rng), u(rng)), 0.5 * Vec3(u(rng), u(rng), u(rng)),
                     500.0 * Vec3(u(rng), u(rng), u(rng))));
      }
      const HertzMindlinLaw law({material(0.5, 0.5, 0.1)}, h, m.models);
      ForceField f;
      f.add(std::make_unique<HertzMindlinProvider>(law, 0.2 * kR, "mindlin"));
      f.add(std::make_unique<FrictionWallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), Vec3::UnitZ(), 0.0}}, law,
                                                   s.size(), "mwalls"));
      f.add(std::make_unique<GravityProvider>(Vec3(0, 0, -9.81)));
      Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
      const double e0 = sim.energy_report().balance();
      double worst = 0.0;
      const auto steps = static_cast<long>(4e-3 / h);
      for (long k = 0; k < steps; ++k) {
        sim.step();
        worst = std::max(worst, std::abs(sim.energy_report().balance() - e0) / e0);
      }
      std::printf("%s, h = %.0e: W_contact/E_0 = %.4f, max |E_balance - E_0|/E_0 = %.3e\n", m.name, h,
                  sim.ledger().contact / e0, worst);
      EXPECT_GT(sim.ledger().contact, 0.2 * e0) << m.name;
      dev.push_back(worst);
    }
    // Second order in h: the ledger books every non-conservative moment.
    EXPECT_LT(dev[0], 3e-6) << m.name;
    EXPECT_NEAR(std::log2(dev[0] / dev[1]), 2.0, 0.3) << m.name;
  }
}

namespace {

/// Spheres dropped in a heap on a fixed floor of spheres, under gravity.
Simulation pile(bool reorder, std::size_t steps_done = 0) {
  ParticleStore s;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) s.add(sphere(Vec3(2 * kR * i, 2 * kR * j, 0), Vec3::Zero()));
  for (int k = 0; k < 60; ++k)
    s.add(sphere(Vec3(7 * kR + 2.5 * kR * (k % 4) + 0.2 * kR * u(rng), 7 * kR + 2.5 * kR * ((k / 4) % 4),
                      2.5 * kR * (1 + k / 16)),
                 Vec3(0.05 * u(rng), 0.05 * u(rng), -0.5)));
  ForceField f;
  f.add(std::make_unique<HertzMindlinProvider>(HertzMindlinLaw({material(0.5, 0.5, 0.1)}, 2e-7, {.rolling = RollingModel::epsd}), 0.2 * kR, "mindlin"));
  f.add(std::make_unique<GravityProvider>(Vec3(0, 0, -9.81)));
  f.set_reorder_on_rebuild(reorder);
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, 2e-7, steps_done);
  std::vector<std::uint32_t> floor(64);
  for (std::uint32_t i = 0; i < 64; ++i) floor[i] = i;
  sim.set_groups({dem::testing::fixed_group("floor", std::move(floor))});
  return sim;
}

std::vector<Vec3> by_id(const std::vector<Vec3>& v, const ParticleStore& p) {
  std::vector<Vec3> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[p.id[i]] = v[i];
  return out;
}

}  // namespace

TEST(HertzMindlin, HistorySurvivesRebuildsReorderingThreadsAndCheckpoints) {
  const int steps = 12000;
  Simulation plain = pile(false);
  for (int k = 0; k < steps; ++k) plain.step();
  ASSERT_GT(plain.forces().neighbours().rebuild_count(), 2u);
  const auto& hm = dynamic_cast<const HertzMindlinProvider&>(*plain.forces().find("mindlin"));
  std::size_t sliding = 0;
  for (const auto& st : hm.state()) sliding += st.xi.norm() > 0 ? 1 : 0;
  ASSERT_GT(sliding, 2u) << "the pile should have contacts with tangential history";
  // Re-ordered runs: the same for 1, 2, 3 threads and across a checkpoint,
  // bit for bit; against the run that never re-orders, the same to
  // round-off (each particle's forces are summed in slot order, which the
  // re-ordering changes), which a lost or misplaced history would not be.
  std::vector<Vec3> first;
  for (std::size_t threads : {1, 2, 3}) {
    ThreadLimit limit(threads);
    Simulation sorted = pile(true);
    for (int k = 0; k < steps / 2 + 1; ++k) sorted.step();
    Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(sorted))));
    for (int k = steps / 2 + 1; k < steps; ++k) {
      sorted.step();
      resumed.step();
    }
    ASSERT_GT(sorted.reorder_count(), 0u);
    const std::vector<Vec3> x = by_id(sorted.particles().position, sorted.particles());
    if (first.empty()) first = x;
    EXPECT_EQ(x, first) << threads << " threads";
    EXPECT_EQ(by_id(resumed.particles().position, resumed.particles()), x) << threads << " threads, resumed";
    EXPECT_EQ(resumed.ledger().contact, sorted.ledger().contact);
    const std::vector<Vec3> y = by_id(plain.particles().position, plain.particles());
    const std::vector<Vec3> wx = by_id(sorted.particles().angular_velocity, sorted.particles());
    const std::vector<Vec3> wy = by_id(plain.particles().angular_velocity, plain.particles());
    double dx = 0.0, dw = 0.0, w_scale = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      dx = std::max(dx, (x[i] - y[i]).norm());
      dw = std::max(dw, (wx[i] - wy[i]).norm());
      w_scale = std::max(w_scale, wy[i].norm());
    }
    EXPECT_LT(dx, 1e-12 * kR);
    EXPECT_LT(dw, 1e-8 * w_scale);
    EXPECT_NEAR(sorted.ledger().contact, plain.ledger().contact, 1e-9 * plain.ledger().contact);
  }
}

namespace {

/// A sphere resting on an incline (a Hertz-Mindlin wall) of angle theta
/// under gravity; returns its acceleration down the slope, measured from
/// the velocity between t = 15 ms and 35 ms (the contact has settled).
double incline_acceleration(double theta, double mu_s, bool spin_locked) {
  const double g = 9.81, h = 1e-6;
  const Vec3 n(-std::sin(theta), 0.0, std::cos(theta));  // the slope falls towards -x
  ParticleStore s;
  ParticleSpec p = sphere(kR * n, Vec3::Zero());
  if (spin_locked) p.inertia *= 1e9;  // rotation effectively prevented: a block
  s.add(p);
  ContactMaterial m{1e7, kNu, 0.5, mu_s, 0.0};
  const HertzMindlinLaw law({m}, h);
  ForceField f;
  f.add(std::make_unique<FrictionWallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), n, 0.0}}, law, 1, "mwalls"));
  f.add(std::make_unique<GravityProvider>(Vec3(0, 0, -g)));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  const Vec3 down(-std::cos(theta), 0.0, -std::sin(theta));  // down the slope
  double v1 = 0.0;
  for (int k = 1; k <= 35000; ++k) {
    sim.step();
    if (k == 15000) v1 = sim.particles().velocity[0].dot(down);
  }
  return (sim.particles().velocity[0].dot(down) - v1) / 0.020;
}

}  // namespace

TEST(HertzMindlin, SphereOnAnInclineSticksOrSlidesOrRollsAsCoulombSays) {
  const double g = 9.81, mu = 0.4, critical = std::atan(mu);
  // A block (no rotation): sticks below atan(mu_s), slides above with
  // a = g (sin - mu cos).
  const double below = critical - 0.05, above = critical + 0.1;
  const double a_stick = incline_acceleration(below, mu, true);
  const double a_slide = incline_acceleration(above, mu, true);
  const double expected_slide = g * (std::sin(above) - mu * std::cos(above));
  std::printf("block: a = %.3e at %.3f rad (sticks), %.5f at %.3f rad (slides; Coulomb %.5f)\n", a_stick, below,
              a_slide, above, expected_slide);
  EXPECT_LT(std::abs(a_stick), 1e-3 * g);
  EXPECT_NEAR(a_slide, expected_slide, 1e-3 * expected_slide);
  // A free sphere rolls without slipping below tan = 3.5 mu_s: a = 5/7 g sin.
  const double roll = 0.5;
  const double a_roll = incline_acceleration(roll, mu, false);
  std::printf("sphere: a = %.5f at %.3f rad (rolling: 5/7 g sin = %.5f)\n", a_roll, roll, 5.0 / 7.0 * g * std::sin(roll));
  EXPECT_NEAR(a_roll, 5.0 / 7.0 * g * std::sin(roll), 1e-3 * g);
}

// A frictional law gives moments whether or not any pair is listed: after
// an oblique impact with zero skin the list empties as the spheres part,
// and from then on the moments are zero and the spins stay as they are
// (no kick from the last contact's stale moments).
TEST(HertzMindlin, SpinsStayOnceTheLastFrictionalContactIsGone) {
  const double h = 2e-8;
  ParticleStore s;
  s.add(sphere(Vec3(-kR - 1e-6, 0.3 * kR, 0), Vec3(0.7, 0, 0), Vec3::Zero()));
  s.add(sphere(Vec3(kR + 1e-6, -0.3 * kR, 0), Vec3(-0.7, 0, 0)));
  ForceField f;
  f.add(std::make_unique<HertzMindlinProvider>(HertzMindlinLaw({material(0.5, 0.4)}, h, {.rolling = RollingModel::epsd}), 0.0, "mindlin"));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  const std::size_t steps = static_cast<std::size_t>(4.0 * contact_time(1.4) / h);
  double spin_during = 0.0;
  for (std::size_t k = 0; k < steps; ++k) {
    sim.step();
    spin_during = std::max(spin_during, sim.particles().angular_velocity[0].norm());
  }
  ASSERT_GT(spin_during, 0.0) << "the oblique impact must spin the spheres";
  ASSERT_EQ(sim.forces().neighbours().list().pair_count(), 0u) << "the spheres must have parted";
  const Vec3 w0 = sim.particles().angular_velocity[0], w1 = sim.particles().angular_velocity[1];
  for (int k = 0; k < 20; ++k) sim.step();
  EXPECT_EQ(sim.particles().moment[0], Vec3::Zero());
  EXPECT_EQ(sim.particles().moment[1], Vec3::Zero());
  EXPECT_EQ(sim.particles().angular_velocity[0], w0);
  EXPECT_EQ(sim.particles().angular_velocity[1], w1);
}
