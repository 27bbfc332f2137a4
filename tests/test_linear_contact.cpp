// The linear spring-dashpot contact (docs/model.md §11.4, law "linear"):
//  - one evaluation against LAMMPS pair gran/hooke/history's algorithm,
//    re-written here from its source (history update, Coulomb rescale);
//  - a head-on collision rebounds with exactly e (pairs, a wall, a sphere
//    of a fixed group), in the contact time pi/omega_d; a pair table's e
//    replaces the geometric mean;
//  - a block slides down an incline at g (sin - mu cos), a sphere rolls at
//    5/7 g sin, and both stick below the Coulomb angle;
//  - E_total + W_contact is conserved to second order in h;
//  - scene files choose it, with clear errors for its keys.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numbers>

#include "contact/linear_spring_dashpot.hpp"
#include "engine/force_field.hpp"
#include "engine/groups.hpp"
#include "engine/simulation.hpp"
#include "fields/gravity_provider.hpp"
#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"
#include "collision_support.hpp"
#include "scene_support.hpp"
#include "support.hpp"

using namespace dem;

namespace {

constexpr double kR = 1e-3, kRho = 2400, kKn = 1e4;

ParticleSpec sphere(const Vec3& x, const Vec3& v, const Vec3& w = Vec3::Zero()) {
  return dem::testing::solid_sphere(kR, kRho, x, v, w);
}

double mass() { return kRho * 4.0 / 3.0 * M_PI * kR * kR * kR; }

/// Contact time pi/omega_d of a pair of reduced mass m_star.
double contact_time(double e, double m_star) {
  const double zeta = LinearSpringDashpotLaw::damping_ratio(e);
  return std::numbers::pi / (std::sqrt(kKn / m_star) * std::sqrt(1 - zeta * zeta));
}

/// Head-on pair collision (wall = false) or a sphere onto a wall: the
/// measured restitution and contact time.
std::pair<double, double> collide(double e, double speed, bool wall) {
  const double h = contact_time(e, wall ? mass() : 0.5 * mass()) / 4000;
  ParticleStore s;
  ForceField f;
  const LinearSpringDashpotLaw law(kKn, 2.0 / 7.0 * kKn, 0.5, {{e, 0.3}}, h);
  if (wall) {
    s.add(sphere(Vec3(0, 0, kR + 1e-6), Vec3(0, 0, -speed)));
    f.add(std::make_unique<LinearContactProvider>(law, 0.2 * kR, "linear"));
    f.add(std::make_unique<LinearWallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), Vec3::UnitZ(), 0.0}}, law, 1,
                                               "lwalls"));
  } else {
    s.add(sphere(Vec3(-kR - 1e-6, 0, 0), Vec3(0.5 * speed, 0, 0)));
    s.add(sphere(Vec3(kR + 1e-6, 0, 0), Vec3(-0.5 * speed, 0, 0)));
    f.add(std::make_unique<LinearContactProvider>(law, 0.2 * kR, "linear"));
  }
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  bool touched = false;
  double t0 = 0.0;
  for (int k = 0; k < 10000000; ++k) {
    sim.step();
    const ParticleStore& p = sim.particles();
    const double gap = wall ? p.position[0].z() - kR : (p.position[1] - p.position[0]).norm() - 2 * kR;
    if (gap < 0 && !touched) {
      touched = true;
      t0 = sim.time();
    }
    if (touched && gap > 0) {
      const double v = wall ? p.velocity[0].z() : p.velocity[1].x() - p.velocity[0].x();
      return {v / speed, sim.time() - t0};
    }
  }
  return {NAN, NAN};
}

}  // namespace

TEST(LinearContact, OneEvaluationIsLammpsGranHookeHistory) {
  // LAMMPS src/GRANULAR/pair_gran_hooke_history.cpp, compute(), with
  // gamma_n = c_n/m*, gamma_t = c_t/m* (its damping per unit reduced mass),
  // written out for one pair over two steps; the second step slides.
  const double e = 0.4, mu = 0.3, kt = 3e3, dt_ratio = 0.5, h = 1e-6;
  const LinearSpringDashpotLaw law(kKn, kt, dt_ratio, {{e, mu}}, h);
  ParticleStore s;
  s.add(sphere(Vec3(0, 0, 0), Vec3(0.3, 0.2, -0.1), Vec3(50, -20, 80)));
  s.add(sphere(Vec3(1.99 * kR, 0.05 * kR, -0.02 * kR), Vec3(-0.2, -0.4, 0.1), Vec3(-30, 60, 10)));
  LinearSpringDashpotLaw::State st;
  Vec3 shear = Vec3::Zero();  // LAMMPS's history
  for (int step = 0; step < 2; ++step) {
    if (step == 1) s.velocity[0] += Vec3(0, 3.0, 0);  // make it slide
    PairOutput out;
    law.evaluate(s, 0, 1, st, out);
    // LAMMPS, line by line.
    const Vec3 del = s.position[0] - s.position[1];
    const double rsq = del.squaredNorm(), r = std::sqrt(rsq), rinv = 1 / r, rsqinv = 1 / rsq;
    const double radi = kR, radj = kR, radsum = radi + radj;
    const Vec3 vr = s.velocity[0] - s.velocity[1];
    const double vnnr = vr.dot(del);
    const Vec3 vn = del * vnnr * rsqinv, vt = vr - vn;
    const Vec3 wr = (radi * s.angular_velocity[0] + radj * s.angular_velocity[1]) * rinv;
    const double meff = mass() * mass() / (2 * mass());
    const double zeta = -std::log(e) / std::sqrt(std::log(e) * std::log(e) + M_PI * M_PI);
    const double gamman = 2 * zeta * std::sqrt(kKn * meff) / meff, gammat = dt_ratio * gamman;
    const double damp = meff * gamman * vnnr * rsqinv;
    const double ccel = kKn * (radsum - r) * rinv - damp;
    const Vec3 vtr(vt.x() - (del.z() * wr.y() - del.y() * wr.z()), vt.y() - (del.x() * wr.z() - del.z() * wr.x()),
                   vt.z() - (del.y() * wr.x() - del.x() * wr.y()));
    shear += vtr * h;
    const double rsht = shear.dot(del) * rsqinv;
    shear -= rsht * del;
    Vec3 fs = -(kt * shear + meff * gammat * vtr);
    const double fsn = fs.norm(), fn = mu * std::abs(ccel * r);
    if (fsn > fn) {
      shear = (fn / fsn) * (shear + meff * gammat * vtr / kt) - meff * gammat * vtr / kt;
      fs *= fn / fsn;
      if (step == 1) SUCCEED() << "slides";
    } else {
      EXPECT_EQ(step, 0) << "the second step should slide";
    }
    const Vec3 f = del * ccel + fs;
    const Vec3 tor = rinv * Vec3(del.y() * fs.z() - del.z() * fs.y(), del.z() * fs.x() - del.x() * fs.z(),
                                 del.x() * fs.y() - del.y() * fs.x());
    EXPECT_LT((out.force - f).norm(), 1e-12 * f.norm()) << "step " << step;
    EXPECT_LT((out.moment_i + radi * tor).norm(), 1e-12 * (radi * tor).norm()) << "step " << step;
    EXPECT_LT((out.moment_j + radj * tor).norm(), 1e-12 * (radj * tor).norm()) << "step " << step;
    EXPECT_LT((st.xi - shear).norm(), 1e-12 * shear.norm()) << "step " << step;
  }
}

TEST(LinearContact, RestitutionIsExactlyTheInputAtAnySpeed) {
  for (const double e : {0.1, 0.3, 0.5, 0.9, 1.0})
    for (const double speed : {0.1, 3.0})
      for (const bool wall : {false, true}) {
        const auto [measured, duration] = collide(e, speed, wall);
        EXPECT_NEAR(measured, e, 2e-3) << "e " << e << ", speed " << speed << (wall ? ", wall" : ", pair");
        EXPECT_NEAR(duration, contact_time(e, wall ? mass() : 0.5 * mass()), 2e-3 * duration);
      }
}

namespace {

/// Sphere 0 of material a at `speed` head on into sphere 1 of material b,
/// free or held by a fixed group: the restitution and the contact time.
std::pair<double, double> pair_rebound(const LinearSpringDashpotLaw& law, double speed, std::uint32_t a,
                                       std::uint32_t b, bool fixed) {
  ParticleSpec p0 = sphere(Vec3(-kR - 1e-6, 0, 0), Vec3(fixed ? speed : 0.5 * speed, 0, 0));
  ParticleSpec p1 = sphere(Vec3(kR + 1e-6, 0, 0), Vec3(fixed ? 0.0 : -0.5 * speed, 0, 0));
  p0.material = a;
  p1.material = b;
  const dem::testing::HeadOn r = dem::testing::head_on(
      p0, p1, std::make_unique<LinearContactProvider>(law, 0.2 * kR, "linear"), law.time_step(), speed, fixed);
  return {r.restitution, r.duration};
}

}  // namespace

TEST(LinearContact, ASphereOnAFixedSphereReboundsWithE) {
  // The fixed sphere is of infinite mass: m* = m (effective_mass,
  // core/particle_store.hpp), c_n = 2 zeta sqrt(k_n m), the contact time
  // pi/omega_d of m. With m* = m/2 the damping ratio would be zeta/sqrt(2):
  // a rebound of 0.616 for e = 0.5.
  for (const double e : {0.1, 0.5, 0.9}) {
    const LinearSpringDashpotLaw law(kKn, 2.0 / 7.0 * kKn, 0.5, {{e, 0.3}}, contact_time(e, mass()) / 4000);
    const auto [measured, duration] = pair_rebound(law, 1.0, 0, 0, true);
    const double zeta = LinearSpringDashpotLaw::damping_ratio(e) / std::sqrt(2.0);
    const double halved = std::exp(-std::numbers::pi * zeta / std::sqrt(1 - zeta * zeta));
    std::printf("linear, e = %.1f: on a fixed sphere %.6f (with m* = m/2 it would be %.4f)\n", e, measured, halved);
    EXPECT_GT(std::abs(halved - e), 0.02);
    EXPECT_NEAR(measured, e, 2e-3);
    EXPECT_NEAR(duration, contact_time(e, mass()), 2e-3 * duration);
  }
}

TEST(LinearContact, APairTablesEReplacesTheGeometricMean) {
  const double h = contact_time(0.6, 0.5 * mass()) / 4000;
  const std::vector<LinearMaterial> materials = {{0.9, 0.3}, {0.4, 0.3}};
  EXPECT_NEAR(pair_rebound(LinearSpringDashpotLaw(kKn, 2.0 / 7.0 * kKn, 0.5, materials, h), 1.0, 0, 1, false).first,
              0.6, 2e-3);
  const LinearSpringDashpotLaw table(kKn, 2.0 / 7.0 * kKn, 0.5, materials, h, {{0, 1, 0.7, {}, {}}});
  EXPECT_NEAR(pair_rebound(table, 1.0, 0, 1, false).first, 0.7, 2e-3);
  EXPECT_NEAR(pair_rebound(table, 1.0, 0, 0, false).first, 0.9, 2e-3);
}

namespace {

/// Acceleration down an incline of angle theta (a wall of the linear law).
double incline_acceleration(double theta, double mu, bool spin_locked) {
  const double g = 9.81, h = 1e-6;
  const Vec3 n(-std::sin(theta), 0.0, std::cos(theta));
  ParticleStore s;
  ParticleSpec p = sphere((kR - mass() * g * std::cos(theta) / kKn) * n, Vec3::Zero());
  if (spin_locked) p.inertia *= 1e9;
  s.add(p);
  const LinearSpringDashpotLaw law(kKn, 2.0 / 7.0 * kKn, 0.5, {{0.5, mu}}, h);
  ForceField f;
  f.add(std::make_unique<LinearWallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), n, 0.0}}, law, 1, "lwalls"));
  f.add(std::make_unique<GravityProvider>(Vec3(0, 0, -g)));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  const Vec3 down(-std::cos(theta), 0.0, -std::sin(theta));
  double v1 = 0.0;
  for (int k = 1; k <= 35000; ++k) {
    sim.step();
    if (k == 15000) v1 = sim.particles().velocity[0].dot(down);
  }
  return (sim.particles().velocity[0].dot(down) - v1) / 0.020;
}

}  // namespace

TEST(LinearContact, InclineSlidesRollsOrSticksAsCoulombSays) {
  const double g = 9.81, mu = 0.4;
  const double steep = std::atan(mu) + 0.15, gentle = std::atan(mu) - 0.15;
  EXPECT_NEAR(incline_acceleration(steep, mu, true), g * (std::sin(steep) - mu * std::cos(steep)), 2e-3 * g);
  EXPECT_NEAR(incline_acceleration(gentle, mu, true), 0.0, 2e-3 * g);
  // A free sphere rolls without slipping (tan theta < 3.5 mu) at 5/7 g sin.
  EXPECT_NEAR(incline_acceleration(steep, mu, false), 5.0 / 7.0 * g * std::sin(steep), 5e-3 * g);
}

TEST(LinearContact, BalanceWithDampingAndFrictionIsSecondOrder) {
  // An oblique, spinning collision: |E_total + W_contact - E_0| falls as h^2.
  const auto drift = [](double h) {
    ParticleStore s;
    s.add(sphere(Vec3(-kR - 1e-6, 0.3 * kR, 0), Vec3(0.5, 0.1, 0), Vec3(0, 0, 300)));
    s.add(sphere(Vec3(kR + 1e-6, -0.3 * kR, 0), Vec3(-0.5, 0, 0.2)));
    ForceField f;
    f.add(std::make_unique<LinearContactProvider>(
        LinearSpringDashpotLaw(kKn, 2.0 / 7.0 * kKn, 0.5, {{0.6, 0.3}}, h), 0.2 * kR, "linear"));
    Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
    const double e0 = sim.energy_report().balance();
    double worst = 0.0;
    for (double t = 0; t < 4e-4; t += h) {
      sim.step();
      worst = std::max(worst, std::abs(sim.energy_report().balance() - e0));
    }
    EXPECT_GT(sim.ledger().contact, 0.0);
    return worst;
  };
  // The dashpot force jumps at touch-down (c_n v_n at delta = 0, unlike
  // Hertz damping), so each halving's gain depends on where that event falls
  // in a step (3.2, 11.9 and 2.3 here); over three halvings (h/8) the drift
  // falls as h^2 does (64) give or take that scatter.
  const double a = drift(4e-7), d = drift(5e-8);
  EXPECT_GT(a / d, 40.0) << a << " at h = 4e-7, " << d << " at h/8";
  EXPECT_LT(d, 1e-6 * 0.5 * 2 * 1e-5 * 0.25);  // against E_kin of about 2.5e-6 J
}

namespace {

const char* kScene = R"(
[run]
time_step = 1e-7
steps = 400
[output]
energy_every = 100
[[material]]
name = "glass"
density = 2500
E = 7e10
e = 0.8
mu_s = 0.3
[[particles]]
source = "box_lattice"
material = "glass"
per_side = 3
diameter = 0.002
spacing_ratio = 0.999
temperature = 1e-7
origin = [0.0, 0.0, 0.000999]
[contact]
law = "linear"
stiffness = 1e5
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

TEST(LinearContact, ScenesChooseItAndItsKeysAreChecked) {
  ASSERT_EQ(error_of(kScene), "");
  Simulation sim = make_simulation(build_scene(parse_scene_text(kScene, "s.toml", ".")));
  ASSERT_NE(sim.forces().find("linear"), nullptr);
  ASSERT_NE(sim.forces().find("lwalls"), nullptr);
  for (int k = 0; k < 400; ++k) sim.step();
  EXPECT_GT(sim.ledger().contact, 0.0) << "the block should hit the floor";
  const auto has = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  std::string m = error_of(replaced(kScene, "stiffness = 1e5", ""));
  EXPECT_TRUE(has(m, "[contact] stiffness: is required: k_n (force/length)")) << m;
  m = error_of(replaced(kScene, "stiffness = 1e5", "stiffness = \"auto\""));
  EXPECT_TRUE(has(m, "\"auto\" does not apply to law \"linear\"")) << m;
  m = error_of(replaced(kScene, "stiffness = 1e5", "stiffness = -1"));
  EXPECT_TRUE(has(m, "stiffness: expected a finite number > 0")) << m;
  m = error_of(replaced(kScene, "normal = [0, 0, 1]", "normal = [0, 0, 1]\nstiffness = 3"));
  EXPECT_TRUE(has(m, "[[wall]] stiffness does not apply with [contact] law = \"linear\"")) << m;
  m = error_of(replaced(kScene, "stiffness = 1e5", "stiffness = 1e5\nrolling = true"));
  EXPECT_TRUE(has(m, "rolling: only applies to law \"hertz-mindlin\"")) << m;
  m = error_of(replaced(replaced(kScene, "law = \"linear\"", "law = \"hertz-mindlin\""), "stiffness = 1e5",
                        "tangential_stiffness = 1e4"));
  EXPECT_TRUE(has(m, "tangential_stiffness: only applies to law \"linear\"")) << m;
  // A step over the law's limit sqrt(m_min/(k_n + 3.5 k_t)) is refused, naming it.
  m = error_of(replaced(kScene, "time_step = 1e-7", "time_step = 1e-4"));
  EXPECT_TRUE(has(m, "linear contact k_n + 3.5 k_t")) << m;
}
