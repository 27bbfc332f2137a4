// The adhesive contact laws (docs/model.md §11.7, laws "jkr" and "dmt"):
//  - JKR's contact radius solves delta = a²/R* - sqrt(2 pi W a/E*) on the
//    stable branch, its force is 4E*a³/(3R*) - sqrt(8 pi W E* a³), and the
//    pull-off force is -3/2 pi W R* (W = 2 gamma), checked against a
//    bisection and the closed forms written out here;
//  - quasi-static loading and unloading: no force before zero overlap, the
//    JKR curve once touching, attraction down to -delta_po, the contact lets
//    go there and not before, and forms again only at zero overlap;
//  - the energy it releases when it lets go is the hysteresis loop's area;
//  - the conservative force is minus the gradient of U (pairs and walls);
//  - DMT: Hertz minus 2 pi W R*, no hysteresis; the pull-off of a wall;
//  - the Coulomb limit with LAMMPS's |F_e + 2 F_po|;
//  - a pair pulled apart through the whole engine (kinematic groups, the
//    neighbour list with a zero skin) lets go at -delta_po with the pull-off
//    force, and E_balance closes;
//  - collisions that stick or separate keep E_balance to first order in h
//    (the force jumps when a contact forms and lets go), and W_contact holds
//    the hysteresis;
//  - scene files choose the laws, with clear errors for their keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "contact/adhesive_contact.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"
#include "scene_support.hpp"
#include "support.hpp"

using namespace dem;

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kR = 1e-3, kRho = 2400, kE = 1e8, kNu = 0.3, kGamma = 1.0;
constexpr double kW = 2 * kGamma;                    // work of adhesion
const double kEStar = kE / (2 * (1 - kNu * kNu));    // two spheres of one material
constexpr double kRStar = 0.5 * kR;                  // two equal spheres

ParticleSpec sphere(const Vec3& x, const Vec3& v, const Vec3& w = Vec3::Zero()) {
  return dem::testing::solid_sphere(kR, kRho, x, v, w);
}

AdhesiveContactLaw law_of(Adhesion model, double e = 1.0, double mu = 0.5, double h = 1e-7) {
  return AdhesiveContactLaw(model, kGamma, 1.0, {{kE, kNu, e, mu}}, h);
}

/// JKR written out from Johnson, Kendall & Roberts (1971) with the work of
/// adhesion W: the contact radius of the stable branch by bisection.
double jkr_radius(double delta, double r = kRStar) {
  const auto overlap = [&](double a) { return a * a / r - std::sqrt(2 * kPi * kW * a / kEStar); };
  double lo = std::cbrt(kPi * kW * r * r / (8 * kEStar));  // the branch starts where d delta/da = 0
  double hi = 1.0;
  for (int k = 0; k < 300; ++k) {
    const double mid = 0.5 * (lo + hi);
    (overlap(mid) < delta ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}
double jkr_force(double a, double r = kRStar) {
  return 4 * kEStar * a * a * a / (3 * r) - std::sqrt(8 * kPi * kW * kEStar * a * a * a);
}
/// The overlap at which the force is least (a³ = a0³/4, a0³ = 9 pi W R²/(2 E*)).
double jkr_pulloff_overlap(double r = kRStar) {
  const double a = std::cbrt(9 * kPi * kW * r * r / (8 * kEStar));
  return a * a / r - std::sqrt(2 * kPi * kW * a / kEStar);
}

/// Two spheres on the x axis at overlap delta (sphere 1 moves), at rest.
ParticleStore pair_at(double delta) {
  ParticleStore s;
  s.add(sphere(Vec3::Zero(), Vec3::Zero()));
  s.add(sphere(Vec3(2 * kR - delta, 0, 0), Vec3::Zero()));
  return s;
}
void set_overlap(ParticleStore& s, double delta) { s.position[1] = Vec3(2 * kR - delta, 0, 0); }
/// The normal force on sphere 0 (positive: repulsive).
double normal_force(const PairOutput& out) { return -out.force.x(); }

}  // namespace

TEST(Cohesion, JkrRelationsAndPullOffForce) {
  const double f_po = 1.5 * kPi * kW * kRStar, d_po = -jkr_pulloff_overlap();
  EXPECT_NEAR(jkr::pulloff_force(kRStar, kGamma), f_po, 1e-14 * f_po);
  EXPECT_NEAR(jkr::pulloff_distance(kRStar, kEStar, kGamma), d_po, 1e-12 * d_po);
  // The contact radius on the stable branch from -delta_po to 1e4 delta_po.
  for (double x = -1.0; x < 1e4; x = x < 0.5 ? x + 0.05 : 1.5 * x) {
    const double delta = x * d_po;
    const double a = jkr::contact_radius(delta, kRStar, kEStar, kGamma);
    EXPECT_NEAR(a, jkr_radius(delta), 1e-12 * a) << "delta = " << x << " delta_po";
    const double f = jkr::normal_force(a, kRStar, kEStar, kGamma);
    EXPECT_NEAR(f, jkr_force(jkr_radius(delta)), 1e-10 * std::max(std::abs(f), f_po)) << "delta = " << x << " delta_po";
  }
  // The pull-off force: the least force over the branch (sampled densely
  // from -delta_po up), and the force at -delta_po; at zero overlap -8/9 of it.
  double least = 0.0;
  for (int k = 0; k <= 20000; ++k) {
    const double delta = -d_po + 3 * d_po * k / 20000.0;
    least = std::min(least, jkr::normal_force(jkr::contact_radius(delta, kRStar, kEStar, kGamma), kRStar, kEStar, kGamma));
  }
  EXPECT_NEAR(least, -f_po, 1e-3 * f_po);
  const AdhesiveContactLaw law = law_of(Adhesion::jkr);
  ParticleStore s = pair_at(1e-3 * d_po);
  AdhesiveContactLaw::State st;
  PairOutput out;
  law.evaluate(s, 0, 1, st, out);
  ASSERT_EQ(st.touching, 1);
  EXPECT_NEAR(normal_force(out), -8.0 / 9.0 * f_po, 2e-3 * f_po);
  set_overlap(s, -(1 - 1e-9) * d_po);
  law.evaluate(s, 0, 1, st, out);
  ASSERT_EQ(st.touching, 1);
  EXPECT_NEAR(normal_force(out), -f_po, 1e-6 * f_po);
}

TEST(Cohesion, QuasiStaticLoadingAndUnloadingFollowJkrWithHysteresis) {
  const double d_po = -jkr_pulloff_overlap(), f_po = 1.5 * kPi * kW * kRStar;
  const AdhesiveContactLaw law = law_of(Adhesion::jkr);
  ParticleStore s = pair_at(-2 * d_po);
  AdhesiveContactLaw::State st;
  PairOutput out;
  const double step = d_po / 1000;
  // Approach from -2 delta_po: no force until the overlap is positive.
  int k = -2000;
  for (; k <= 0; ++k) {
    const double delta = k * step;
    set_overlap(s, delta);
    law.evaluate(s, 0, 1, st, out);
    ASSERT_EQ(st.touching, 0) << "delta = " << delta / d_po << " delta_po";
    ASSERT_EQ(out.force, Vec3::Zero());
    ASSERT_EQ(law.energy(s, 0, 1, st), 0.0);
  }
  // Loading to 20 delta_po and unloading: the JKR curve, touching.
  std::vector<double> overlaps{0.0}, forces{jkr_force(jkr_radius(0.0))};
  const auto expect_jkr = [&](double d) {
    set_overlap(s, d);
    law.evaluate(s, 0, 1, st, out);
    ASSERT_EQ(st.touching, 1) << "delta = " << d / d_po << " delta_po";
    EXPECT_NEAR(normal_force(out), jkr_force(jkr_radius(d)), 1e-9 * f_po) << "delta = " << d / d_po << " delta_po";
    EXPECT_EQ(out.nc_force, Vec3::Zero()) << "at rest";
    EXPECT_EQ(out.released, 0.0);
  };
  for (; k < 20000; ++k) expect_jkr(k * step);
  for (; k > -1000; --k) {
    expect_jkr(k * step);
    if (k < 0) {
      overlaps.push_back(k * step);
      forces.push_back(normal_force(out));
    }
  }
  // Just above -delta_po it holds, pulling with the pull-off force; at
  // -delta_po it lets go, releasing U(-delta_po).
  expect_jkr(-(1 - 1e-6) * d_po);
  EXPECT_NEAR(normal_force(out), -f_po, 1e-6 * f_po);
  const double u_held = law.energy(s, 0, 1, st);
  set_overlap(s, -d_po * (1 + 1e-9));
  law.evaluate(s, 0, 1, st, out);
  EXPECT_EQ(st.touching, 0);
  EXPECT_EQ(out.force, Vec3::Zero());
  EXPECT_NEAR(out.released, u_held, 1e-4 * u_held);
  // The released energy is the area of the hysteresis loop: the work of the
  // attraction from zero overlap to -delta_po (trapezoids, then the piece
  // from the last sample down to -delta_po).
  overlaps.push_back(-d_po);
  forces.push_back(-f_po);
  double area = 0.0;
  for (std::size_t k = 1; k < overlaps.size(); ++k)
    area += 0.5 * (forces[k] + forces[k - 1]) * (overlaps[k] - overlaps[k - 1]);
  EXPECT_NEAR(out.released, area, 1e-5 * area);
  EXPECT_GT(area, 0.9 * f_po * d_po);
  // Back towards contact: still no force until zero overlap (hysteresis).
  for (k = -1000; k <= 0; ++k) {
    set_overlap(s, k * step);
    law.evaluate(s, 0, 1, st, out);
    ASSERT_EQ(st.touching, 0) << "delta = " << k << " delta_po/1000";
    ASSERT_EQ(out.force, Vec3::Zero());
  }
  expect_jkr(step);
}

TEST(Cohesion, ConservativeForceIsMinusTheEnergyGradient) {
  const double d_po = -jkr_pulloff_overlap();
  for (const Adhesion model : {Adhesion::jkr, Adhesion::dmt}) {
    const AdhesiveContactLaw law = law_of(model);
    // Pairs: the overlap from just above -delta_po (JKR) or zero (DMT) up.
    for (const double x : {-0.99, -0.5, -0.1, 0.01, 0.3, 1.0, 3.0, 30.0, 300.0}) {
      if (model == Adhesion::dmt && x <= 0.0) continue;
      const double delta = x * d_po, eps = 1e-4 * d_po;
      ParticleStore s = pair_at(delta);
      s.position[1] += Vec3(0, 0.3 * kR, -0.2 * kR) * 1e-3;  // off the axis
      AdhesiveContactLaw::State st;
      st.touching = 1;
      PairOutput out;
      law.evaluate(s, 0, 1, st, out);
      ASSERT_EQ(st.touching, 1);
      for (int c = 0; c < 3; ++c) {
        ParticleStore plus = s, minus = s;
        plus.position[0][c] += eps;
        minus.position[0][c] -= eps;
        const double grad = (law.energy(plus, 0, 1, st) - law.energy(minus, 0, 1, st)) / (2 * eps);
        EXPECT_NEAR(out.force[c], -grad, 1e-6 * out.force.norm())
            << (model == Adhesion::jkr ? "JKR" : "DMT") << " delta = " << x << " delta_po, component " << c;
      }
    }
    // A sphere on a wall (R* = r).
    for (const double x : {-0.5, 0.5, 50.0}) {
      if (model == Adhesion::dmt && x <= 0.0) continue;
      const double delta = x * d_po, eps = 1e-4 * d_po;
      const Vec3 point(0.1, -0.2, 0.05), normal = Vec3(1, 2, 3).normalized();
      ParticleStore s;
      s.add(sphere(point + (kR - delta) * normal, Vec3::Zero()));
      AdhesiveContactLaw::State st;
      st.touching = 1;
      PairOutput out;
      law.evaluate_wall(s, 0, Wall{point, normal}, st, out);
      ASSERT_EQ(st.touching, 1);
      for (int c = 0; c < 3; ++c) {
        ParticleStore plus = s, minus = s;
        plus.position[0][c] += eps;
        minus.position[0][c] -= eps;
        const Wall wall{point, normal};
        const double grad = (law.wall_energy(plus, 0, wall, st) - law.wall_energy(minus, 0, wall, st)) / (2 * eps);
        EXPECT_NEAR(out.force[c], -grad, 1e-6 * out.force.norm())
            << (model == Adhesion::jkr ? "JKR" : "DMT") << " wall, delta = " << x << " delta_po, component " << c;
      }
    }
  }
}

TEST(Cohesion, DmtIsHertzMinusTwoPiWRAndHasNoHysteresis) {
  const AdhesiveContactLaw law = law_of(Adhesion::dmt);
  const double f_po = 2 * kPi * kW * kRStar;
  ParticleStore s = pair_at(-1e-7);
  AdhesiveContactLaw::State st;
  PairOutput out;
  law.evaluate(s, 0, 1, st, out);
  EXPECT_EQ(st.touching, 0);
  EXPECT_EQ(out.force, Vec3::Zero());
  // The pull-off force: the force as the overlap tends to zero.
  set_overlap(s, 1e-15);
  law.evaluate(s, 0, 1, st, out);
  EXPECT_EQ(st.touching, 1);
  EXPECT_NEAR(normal_force(out), -f_po, 1e-3 * f_po);
  for (const double delta : {1e-8, 1e-6, 1e-5}) {
    set_overlap(s, delta);
    law.evaluate(s, 0, 1, st, out);
    const double hertz = 4.0 / 3.0 * kEStar * std::sqrt(kRStar) * delta * std::sqrt(delta);
    EXPECT_NEAR(normal_force(out), hertz - f_po, 1e-12 * (hertz + f_po)) << delta;
  }
  // It lets go at zero overlap and its energy is continuous there: nothing released.
  set_overlap(s, 1e-12);
  law.evaluate(s, 0, 1, st, out);
  EXPECT_LT(std::abs(law.energy(s, 0, 1, st)), 1.01 * f_po * 1e-12);
  set_overlap(s, -1e-12);
  law.evaluate(s, 0, 1, st, out);
  EXPECT_EQ(st.touching, 0);
  EXPECT_EQ(out.released, 0.0);
  EXPECT_EQ(out.force, Vec3::Zero());
}

TEST(Cohesion, WallsPullOffWithTheSpheresRadius) {
  // A sphere on a plane: R* = r, E* of its material with itself.
  const AdhesiveContactLaw law = law_of(Adhesion::jkr);
  const double d_po = -jkr_pulloff_overlap(kR), f_po = 1.5 * kPi * kW * kR;
  const Vec3 n = Vec3::UnitZ();
  ParticleStore s;
  s.add(sphere(Vec3(0, 0, kR + 1e-9), Vec3::Zero()));
  AdhesiveContactLaw::State st;
  PairOutput out;
  law.evaluate_wall(s, 0, Wall{Vec3::Zero(), n}, st, out);
  EXPECT_EQ(st.touching, 0);
  s.position[0].z() = kR - 1e-9;
  law.evaluate_wall(s, 0, Wall{Vec3::Zero(), n}, st, out);
  EXPECT_EQ(st.touching, 1);
  s.position[0].z() = kR + (1 - 1e-7) * d_po;
  law.evaluate_wall(s, 0, Wall{Vec3::Zero(), n}, st, out);
  EXPECT_EQ(st.touching, 1);
  EXPECT_NEAR(out.force.z(), -f_po, 1e-6 * f_po);
  EXPECT_NEAR(out.force.z(), jkr_force(jkr_radius(-(1 - 1e-7) * d_po, kR), kR), 1e-9 * f_po);
  const double u = law.wall_energy(s, 0, Wall{Vec3::Zero(), n}, st);
  s.position[0].z() = kR + (1 + 1e-9) * d_po;
  law.evaluate_wall(s, 0, Wall{Vec3::Zero(), n}, st, out);
  EXPECT_EQ(st.touching, 0);
  EXPECT_EQ(out.force, Vec3::Zero());
  EXPECT_NEAR(out.released, u, 1e-4 * u);
  // DMT at a wall: -2 pi W r as the overlap tends to zero.
  const AdhesiveContactLaw dmt = law_of(Adhesion::dmt);
  AdhesiveContactLaw::State sd;
  s.position[0].z() = kR - 1e-15;
  dmt.evaluate_wall(s, 0, Wall{Vec3::Zero(), n}, sd, out);
  EXPECT_NEAR(out.force.z(), -2 * kPi * kW * kR, 1e-3 * 2 * kPi * kW * kR);
}

TEST(Cohesion, CoulombLimitIsLammpsCohesiveCriticalForce) {
  // A contact that slides: |F_t| = mu |F_e + 2 F_po| (LAMMPS's Fncrit for
  // jkr and dmt), the damping included in F_t before the limit.
  for (const Adhesion model : {Adhesion::jkr, Adhesion::dmt}) {
    const double mu = 0.3, e = 0.6, h = 1e-6;
    const AdhesiveContactLaw law = law_of(model, e, mu, h);
    ParticleStore s = pair_at(2e-6);
    s.velocity[0] = Vec3(0.01, 0.5, 0.0);
    AdhesiveContactLaw::State st;
    PairOutput out;
    for (int k = 0; k < 3; ++k) law.evaluate(s, 0, 1, st, out);
    const double delta = 2e-6;
    double f_e = 0.0, f_po = 0.0;
    if (model == Adhesion::jkr) {
      f_e = jkr_force(jkr_radius(delta));
      f_po = 1.5 * kPi * kW * kRStar;  // 3 pi gamma R*
    } else {
      f_po = 2 * kPi * kW * kRStar;
      f_e = 4.0 / 3.0 * kEStar * std::sqrt(kRStar) * delta * std::sqrt(delta) - f_po;
    }
    const Vec3 n = -Vec3::UnitX();
    const Vec3 f_t = out.force - out.force.dot(n) * n;
    EXPECT_NEAR(f_t.norm(), mu * std::abs(f_e + 2 * f_po), 1e-12 * f_po) << static_cast<int>(model);
    EXPECT_LT(f_t.y(), 0.0) << "friction opposes the sliding";
    // The normal part: F_e minus the damping of the approach speed 0.01.
    EXPECT_GT(out.force.dot(n), f_e) << "approaching: the damping pushes apart";
    EXPECT_LT((out.moment_i + kR * n.cross(f_t)).norm(), 1e-12 * kR * f_t.norm());
  }
}

namespace {

/// Two spheres: 0 fixed, 1 pulled along +x at `speed` from the overlap
/// where the JKR force is zero, through the whole engine (registry entry,
/// neighbour list with zero skin, kinematic groups). Returns the largest
/// pull, the overlap at the last step it held and at the step it let go,
/// and the largest |E_balance - E_0|.
struct Pull {
  double max_pull = 0.0, max_pull_10 = 0.0, held = 0.0, released_at = 0.0, drift = 0.0, released = 0.0, hysteresis = 0.0;
  std::size_t rebuilds = 0;
};
Pull pull_apart(double speed, double h) {
  const double c = std::sqrt(4 * kPi * kGamma / kEStar);
  const double a0 = std::cbrt(2.25 * c * c * kRStar * kRStar), delta0 = a0 * a0 / kRStar - c * std::sqrt(a0);
  ParticleStore s;
  s.add(sphere(Vec3::Zero(), Vec3::Zero()));
  s.add(sphere(Vec3(2 * kR - delta0, 0, 0), Vec3::Zero()));
  const ContactLawEntry& entry = *find_contact_law("jkr");
  ContactLawInput in;
  in.particles = &s;
  in.materials = {{"grain", kRho, kE, kNu, 1.0, 0.5, 0.0}};
  in.values.numbers = {{"surface_energy", kGamma}};
  in.r_min = in.r_max = kR;
  in.e_max = kE;
  in.contact_given = true;
  ContactLawProviders p = entry.prepare(in)->make(s, {}, 0.0, h);
  ForceField f;
  f.add(std::move(p.pairs));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  ParticleGroup moving;
  moving.name = "moving";
  moving.motion = ParticleGroup::Motion::velocity;
  moving.velocity = Vec3(speed, 0, 0);
  moving.ids = {1};
  sim.set_groups({dem::testing::fixed_group("fixed", {0}), moving});
  const double e0 = sim.energy_report().balance();
  Pull out;
  double last_overlap = delta0;
  for (int k = 0; k < 10000000; ++k) {
    sim.step();
    const double overlap = 2 * kR - (sim.particles().position[1] - sim.particles().position[0]).norm();
    const double pull = sim.group_reports()[0].force.x();  // on the fixed sphere, towards +x: attraction
    out.drift = std::max(out.drift, std::abs(sim.energy_report().balance() - e0));
    if (pull == 0.0 && overlap < 0.0) {
      out.held = last_overlap;
      out.released_at = overlap;
      out.released = sim.ledger().contact;
      break;
    }
    out.max_pull = std::max(out.max_pull, pull);
    if ((k + 1) % 10 == 0) out.max_pull_10 = std::max(out.max_pull_10, pull);  // every 10th step
    last_overlap = overlap;
  }
  for (int k = 0; k < 100; ++k) {
    sim.step();
    out.drift = std::max(out.drift, std::abs(sim.energy_report().balance() - e0));
  }
  out.rebuilds = dynamic_cast<const NeighbourListOwner*>(sim.forces().find("jkr"))->neighbours().rebuild_count();
  out.hysteresis = jkr::energy(-jkr::pulloff_distance(kRStar, kEStar, kGamma), kRStar, kEStar, kGamma);
  return out;
}

}  // namespace

TEST(Cohesion, PulledApartItLetsGoAtThePullOffDistanceWithThePullOffForce) {
  const double d_po = jkr::pulloff_distance(kRStar, kEStar, kGamma), f_po = 1.5 * kPi * kW * kRStar;
  const double speed = 1e-3, h = 1e-8;  // 1e-11 m a step: 67000 steps over delta_po
  const Pull p = pull_apart(speed, h);
  EXPECT_NEAR(p.max_pull, f_po, 1e-3 * f_po);
  // LAMMPS 29Sep2021 (Debian 12), the same pull (pair_style granular, jkr
  // 1e8 0.0 0.3 1.0 tangential mindlin NULL 1.0 0.5, fix move linear,
  // timestep 1e-8, force sampled every 10 steps): 4.71238897438409e-3 N.
  EXPECT_NEAR(p.max_pull_10, 4.71238897438409e-3, 1e-11 * f_po);
  EXPECT_GT(p.held, -d_po) << "held down to -delta_po";
  EXPECT_LE(p.released_at, -d_po) << "let go at -delta_po";
  EXPECT_LT(p.held - p.released_at, 1.01 * speed * h) << "in the step that crossed it";
  // The list (skin 0 + 1.01 delta_po) is rebuilt each time the pair's
  // centres move apart by the list's reach: three times while it holds.
  EXPECT_GE(p.rebuilds, 4u) << "the list was rebuilt while the contact held";
  // W_contact holds the energy the contact released, the hysteresis loop.
  EXPECT_NEAR(p.released, p.hysteresis, 1e-4 * p.hysteresis);
  // E_balance = U_contact + W_boundary + W_contact closes but for the
  // last step's jump of the force (1/2 F_po v h).
  EXPECT_LT(p.drift, 0.6 * f_po * speed * h + 1e-6 * p.hysteresis) << p.drift / p.hysteresis;
}

namespace {

struct Collision {
  double rebound = 0.0;  ///< relative speed after, over before (0: stuck)
  double contact = 0.0;  ///< W_contact at the end
  double drift = 0.0;    ///< max |E_balance - E_0|
  double e0 = 0.0;       ///< E_0
  bool touching = false;
};

/// A head-on collision of two spheres (wall = false) or of a sphere with a
/// wall, with relative speed v, restitution e, for `time`.
Collision collide(Adhesion model, double v, double e, double h, bool wall, double time) {
  ParticleStore s;
  const double gap = 2e-7;
  if (wall) {
    s.add(sphere(Vec3(0, 0, kR + gap), Vec3(0, 0, -v)));
  } else {
    s.add(sphere(Vec3(-kR - gap, 0, 0), Vec3(0.5 * v, 0, 0)));
    s.add(sphere(Vec3(kR + gap, 0, 0), Vec3(-0.5 * v, 0, 0)));
  }
  const AdhesiveContactLaw law = law_of(model, e, 0.5, h);
  ForceField f;
  f.add(std::make_unique<AdhesiveContactProvider>(law, 0.1 * kR, "jkr"));
  if (wall)
    f.add(std::make_unique<AdhesiveWallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), Vec3::UnitZ(), 0.0}}, law, 1,
                                                 "jkrwalls"));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  Collision out;
  out.e0 = sim.energy_report().balance();
  for (double t = 0.0; t < time; t += h) {
    sim.step();
    out.drift = std::max(out.drift, std::abs(sim.energy_report().balance() - out.e0));
  }
  const ParticleStore& p = sim.particles();
  out.rebound = wall ? p.velocity[0].z() / v : (p.velocity[1].x() - p.velocity[0].x()) / v;
  out.contact = sim.ledger().contact;
  const double sep = wall ? p.position[0].z() - kR : (p.position[1] - p.position[0]).norm() - 2 * kR;
  out.touching = sep < 0.0 || sim.energy_report().contact + sim.energy_report().wall != 0.0;
  return out;
}

}  // namespace

TEST(Cohesion, ElasticJkrCollisionLosesExactlyTheHysteresis) {
  // e = 1: no damping; the only loss is the energy released when the
  // contact lets go, so the rebound speed is sqrt(1 - U(-delta_po)/E_kin).
  const double v = 0.1, m_star = 0.5 * kRho * 4.0 / 3.0 * kPi * kR * kR * kR;
  const double hysteresis = jkr::energy(-jkr::pulloff_distance(kRStar, kEStar, kGamma), kRStar, kEStar, kGamma);
  const double kinetic = 0.5 * m_star * v * v;
  const Collision c = collide(Adhesion::jkr, v, 1.0, 1e-8, false, 3e-4);
  EXPECT_FALSE(c.touching);
  // Up to the step's error where the force jumps, 1/2 F v h (about 1.5e-3
  // of the hysteresis here).
  EXPECT_NEAR(c.contact, hysteresis, 3e-3 * hysteresis);
  EXPECT_NEAR(c.rebound, std::sqrt(1 - hysteresis / kinetic), 1e-4);
  // LAMMPS 29Sep2021 (Debian 12), the same collision (pair_style granular,
  // jkr 1e8 0.0 0.3 1.0 tangential mindlin NULL 1.0 0.5 damping
  // viscoelastic, fix nve/sphere, timestep 1e-8): relative speed after
  // 0.0937253875565 m/s, printed to 12 digits.
  EXPECT_NEAR(c.rebound * v, 0.0937253875565, 1e-12);
  EXPECT_LT(c.drift, 3e-3 * hysteresis);
  // DMT: no hysteresis, so an elastic collision rebounds at the same speed.
  const Collision d = collide(Adhesion::dmt, v, 1.0, 1e-8, false, 3e-4);
  EXPECT_EQ(d.contact, 0.0);
  EXPECT_NEAR(d.rebound, 1.0, 3e-4);
}

TEST(Cohesion, LedgerClosesWhetherTheSpheresStickOrSeparate) {
  // E_balance's error is the steps' where the conservative force jumps:
  // at most 1/2 |jump| v h where a contact forms (8/9 F_po) and where it
  // lets go (F_po), first order in h, besides the integrator's second-order
  // error elsewhere. Bound: F_po v h.
  for (const bool wall : {false, true}) {
    const char* what = wall ? "wall" : "pair";
    const double f_po = jkr::pulloff_force(wall ? kR : kRStar, kGamma);
    // Slow and damped: they stick (both ends at rest in contact).
    const double h = 2e-8, slow = 0.02, fast = 0.3;
    const Collision stick = collide(Adhesion::jkr, slow, 0.5, h, wall, 2e-3);
    EXPECT_TRUE(stick.touching) << what;
    EXPECT_LT(std::abs(stick.rebound), 1e-3) << what;
    EXPECT_GT(stick.contact, stick.e0) << what << ": E_kin and the adhesion's energy were dissipated";
    EXPECT_LT(stick.drift, f_po * slow * h) << what;
    // Faster: they separate; the damping and the release are both booked.
    const Collision apart = collide(Adhesion::jkr, fast, 0.5, h, wall, 5e-4);
    EXPECT_FALSE(apart.touching) << what;
    EXPECT_GT(apart.rebound, 0.1) << what;
    EXPECT_LT(apart.drift, f_po * fast * h) << what;
    EXPECT_LT(apart.drift, 1e-4 * apart.e0) << what;
  }
  // The bound holds at each step size: the drift falls with h.
  const double v = 0.1, f_po = jkr::pulloff_force(kRStar, kGamma);
  for (const double h : {8e-8, 2e-8, 5e-9})
    EXPECT_LT(collide(Adhesion::jkr, v, 0.7, h, false, 3e-4).drift, f_po * v * h) << "h = " << h;
}

namespace {

const char* kScene = R"(
[run]
time_step = 1e-7
steps = 2000
[output]
energy_every = 100
[[material]]
name = "grain"
density = 2400
E = 1e8
e = 0.5
mu_s = 0.3
[[particles]]
source = "box_lattice"
material = "grain"
per_side = 2
diameter = 0.002
spacing_ratio = 1.01
temperature = 1e-10
origin = [0.0, 0.0, 0.0009999]
[contact]
law = "jkr"
surface_energy = 0.5
[[wall]]
point = [0, 0, 0]
normal = [0, 0, 1]
[gravity]
acceleration = [0, 0, -9.81]
)";

using dem::testing::replaced;
/// The SceneError message for `text`, or "" if it makes a Simulation.
std::string error_of(const std::string& text) { return dem::testing::simulation_error(text); }

}  // namespace

TEST(Cohesion, ScenesChooseJkrOrDmtAndTheirKeysAreChecked) {
  for (const std::string law : {"jkr", "dmt"}) {
    const std::string text = replaced(kScene, "law = \"jkr\"", "law = \"" + law + "\"");
    ASSERT_EQ(error_of(text), "") << law;
    Simulation sim = make_simulation(build_scene(parse_scene_text(text, "s.toml", ".")));
    ASSERT_NE(sim.forces().find(law), nullptr);
    ASSERT_NE(sim.forces().find(law + "walls"), nullptr);
    // E_balance against the energy in play (the adhesion's, much larger
    // than the fall's here).
    const double e0 = sim.energy_report().balance();
    double scale = 0.0, drift = 0.0;
    for (int k = 0; k < 2000; ++k) {
      sim.step();
      const EnergyReport r = sim.energy_report();
      scale = std::max(scale, std::abs(r.contact) + std::abs(r.wall) + r.contact_work);
      drift = std::max(drift, std::abs(r.balance() - e0));
    }
    EXPECT_NE(sim.energy_report().wall, 0.0) << law << ": the block should stand on the floor";
    EXPECT_LT(drift, 1e-3 * scale) << law << ": " << drift / scale;
  }
  const auto has = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  std::string m = error_of(replaced(kScene, "surface_energy = 0.5", ""));
  EXPECT_TRUE(has(m, "[contact] surface_energy: is required: gamma (energy/area, LAMMPS's cohesion)")) << m;
  m = error_of(replaced(kScene, "surface_energy = 0.5", "surface_energy = -1"));
  EXPECT_TRUE(has(m, "surface_energy: expected a finite number >= 0")) << m;
  m = error_of(replaced(kScene, "surface_energy = 0.5", "surface_energy = 0.5\nstiffness = 1e5"));
  EXPECT_TRUE(has(m, "does not apply to law \"jkr\" (its stiffness comes from E and nu")) << m;
  m = error_of(replaced(kScene, "law = \"jkr\"", "law = \"linear\"\nstiffness = 1e5"));
  EXPECT_TRUE(has(m, "surface_energy: only applies to law \"jkr\" or \"dmt\"")) << m;
  // A step over the Rayleigh time step is refused, naming it.
  m = error_of(replaced(kScene, "time_step = 1e-7", "time_step = 1e-4"));
  EXPECT_TRUE(has(m, "Rayleigh time step")) << m;
}
