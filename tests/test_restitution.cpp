// The meaning of e in Hertz-Mindlin contact (docs/model.md §11.5,
// contact/restitution.hpp):
//  - the scaled collision integrated by hertz_collision: without damping the
//    contact time and largest overlap of Hertz theory; Tsuji's clamped
//    damping gives the restitutions measured in LIGGGHTS with limitForce on
//    (0.253, 0.397, 0.550, 0.902 for e = 0.1, 0.3, 0.5, 0.9);
//  - the exact damping's coefficient solves restitution(c) = e;
//  - in the engine, a pair and a sphere on a wall rebound with e within 1e-3
//    for e from 0.05 to 1 at 0.01, 1 and 100 m/s, and the named older laws
//    rebound as hertz_collision predicts for them;
//  - a sphere on a sphere of a fixed group (of infinite mass) rebounds with
//    e, and a pair table's e replaces the geometric mean of two materials.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "contact/friction_wall_provider.hpp"
#include "contact/hertz_mindlin.hpp"
#include "contact/restitution.hpp"
#include "engine/force_field.hpp"
#include "engine/groups.hpp"
#include "collision_support.hpp"
#include "engine/simulation.hpp"
#include "support.hpp"

using namespace dem;

namespace {

constexpr double kR = 1e-3, kRho = 2400, kE = 1e8, kNu = 0.3;

/// Hertz's contact time of a pair at approach speed v in units of t_0 =
/// delta_0 / v: 2 x_max ∫_0^1 (1 - u^{5/2})^{-1/2} du = 2 x_max (2/5) B(2/5, 1/2),
/// x_max = (5/4)^{2/5}.
double hertz_duration() {
  const double beta = std::tgamma(0.4) * std::tgamma(0.5) / std::tgamma(0.9);
  return 2.0 * std::pow(1.25, 0.4) * 0.4 * beta;
}

/// The engine's restitution of a head-on collision at relative speed v,
/// pair (two equal spheres) or wall (one sphere on a plane).
double measured(NormalDamping damping, double e, double v, bool wall) {
  const ContactMaterial m{kE, kNu, e, 0.0, 0.0};
  const double mass = kRho * 4.0 / 3.0 * M_PI * kR * kR * kR;
  const double m_star = wall ? mass : 0.5 * mass, r_star = wall ? kR : 0.5 * kR;
  const double e_star = contact_pair(m, m).e_star;
  const double delta0 = std::pow(m_star * v * v / (4.0 / 3.0 * e_star * std::sqrt(r_star)), 0.4);
  const double h = hertz_duration() * delta0 / v / 2000;
  const HertzMindlinLaw law({m}, h, {.damping = damping});
  ParticleStore s;
  ForceField f;
  if (wall) {
    s.add(dem::testing::solid_sphere(kR, kRho, Vec3(0, 0, kR), Vec3(0, 0, -v)));
    f.add(std::make_unique<FrictionWallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), Vec3::UnitZ(), 0.0}}, law, 1,
                                                 "mwalls"));
  } else {
    s.add(dem::testing::solid_sphere(kR, kRho, Vec3(-kR, 0, 0), Vec3(0.5 * v, 0, 0)));
    s.add(dem::testing::solid_sphere(kR, kRho, Vec3(kR, 0, 0), Vec3(-0.5 * v, 0, 0)));
    f.add(std::make_unique<HertzMindlinProvider>(law, 0.2 * kR, "mindlin"));
  }
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  for (int k = 0; k < 100000; ++k) {
    sim.step();
    const ParticleStore& p = sim.particles();
    const double gap = wall ? p.position[0].z() - kR : (p.position[1] - p.position[0]).norm() - 2 * kR;
    if (gap > 0) return wall ? p.velocity[0].z() / v : (p.velocity[1].x() - p.velocity[0].x()) / v;
  }
  return NAN;
}

/// Sphere 0 of material a at speed v head on into sphere 1 of material b,
/// which is free (moving at -v/2, sphere 0 at v/2) or held by a fixed group
/// (at rest, sphere 0 at v): the restitution, minus the relative velocity
/// after over the one before, with the law's step.
double pair_rebound(const HertzMindlinLaw& law, double v, std::uint32_t a, std::uint32_t b, bool fixed) {
  ParticleSpec p0 = dem::testing::solid_sphere(kR, kRho, Vec3(-kR, 0, 0), Vec3(fixed ? v : 0.5 * v, 0, 0));
  ParticleSpec p1 = dem::testing::solid_sphere(kR, kRho, Vec3(kR, 0, 0), Vec3(fixed ? 0.0 : -0.5 * v, 0, 0));
  p0.material = a;
  p1.material = b;
  return dem::testing::head_on(p0, p1, std::make_unique<HertzMindlinProvider>(law, 0.2 * kR, "mindlin"),
                               law.time_step(), v, fixed)
      .restitution;
}

/// A step of 1/2000 of the contact of two spheres of kE, kNu at speed v,
/// with m* = the mass (fixed partner) or half of it.
double pair_step(double v, bool fixed) {
  const double mass = kRho * 4.0 / 3.0 * M_PI * kR * kR * kR;
  const double m_star = fixed ? mass : 0.5 * mass, r_star = 0.5 * kR;
  const ContactMaterial m{kE, kNu, 1.0, 0.0, 0.0};
  const double e_star = contact_pair(m, m).e_star;
  const double delta0 = std::pow(m_star * v * v / (4.0 / 3.0 * e_star * std::sqrt(r_star)), 0.4);
  return hertz_duration() * delta0 / v / 2000;
}

}  // namespace

TEST(Restitution, UndampedCollisionIsHertzs) {
  const HertzCollision c = hertz_collision(0.0, true);
  std::printf("elastic: e = %.15f, duration %.12f (Hertz %.12f), largest overlap %.12f (Hertz %.12f)\n",
              c.restitution, c.duration, hertz_duration(), c.max_overlap, std::pow(1.25, 0.4));
  EXPECT_NEAR(c.restitution, 1.0, 1e-9);
  EXPECT_NEAR(c.duration, hertz_duration(), 1e-8 * hertz_duration());
  EXPECT_NEAR(c.max_overlap, std::pow(1.25, 0.4), 1e-9);
}

TEST(Restitution, ClampedTsujiDampingGivesLiggghtsLimitForceValues) {
  // Measured with LIGGGHTS 3.8 (hertz, limitForce on) at 0.1-10 m/s.
  const double input[] = {0.1, 0.3, 0.5, 0.9}, liggghts[] = {0.253, 0.3971, 0.550, 0.902};
  for (int k = 0; k < 4; ++k) {
    const double e = hertz_collision(tsuji_damping(input[k]), true).restitution;
    std::printf("tsuji-clamped e = %.2f: restitution %.6f (LIGGGHTS %.4f)\n", input[k], e, liggghts[k]);
    EXPECT_NEAR(e, liggghts[k], k == 1 ? 1e-4 : 1e-3);
  }
}

TEST(Restitution, ExactDampingSolvesForE) {
  for (const double e : {0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 0.999}) {
    const double c = damping_coefficient(NormalDamping::exact, e);
    EXPECT_NEAR(hertz_collision(c, true).restitution, e, 1e-10) << e;
    EXPECT_GT(c, tsuji_damping(e)) << "the clamp takes dissipation away, so more damping is needed";
  }
  EXPECT_EQ(damping_coefficient(NormalDamping::exact, 1.0), 0.0);
  EXPECT_EQ(damping_coefficient(NormalDamping::tsuji_clamped, 0.3), tsuji_damping(0.3));
  EXPECT_THROW(damping_coefficient(NormalDamping::exact, 0.0), std::invalid_argument);
  EXPECT_THROW(damping_coefficient(NormalDamping::exact, 1.5), std::invalid_argument);
  EXPECT_THROW(hertz_collision(-1.0, true), std::invalid_argument);
}

TEST(Restitution, PairsAndWallsReboundWithEAtEverySpeed) {
  double worst = 0.0;
  for (const bool wall : {false, true})
    for (const double e : {0.05, 0.1, 0.3, 0.5, 0.9, 1.0})
      for (const double v : {0.01, 1.0, 100.0}) {
        const double got = measured(NormalDamping::exact, e, v, wall);
        worst = std::max(worst, std::abs(got - e));
        EXPECT_NEAR(got, e, 1e-3) << (wall ? "wall" : "pair") << ", e = " << e << ", v = " << v;
      }
  std::printf("exact damping: largest |measured - e| %.3e over pairs and walls, 0.01-100 m/s\n", worst);
}

TEST(Restitution, TheNamedOlderLawsReboundAsPredicted) {
  for (const NormalDamping d : {NormalDamping::tsuji_clamped, NormalDamping::tsuji})
    for (const double e : {0.1, 0.3, 0.9})
      for (const bool wall : {false, true}) {
        const double predicted = hertz_collision(tsuji_damping(e), clamps_force(d)).restitution;
        const double got = measured(d, e, 1.0, wall);
        std::printf("%s e = %.1f %s: measured %.6f, predicted %.6f\n", std::string(normal_damping_name(d)).c_str(), e,
                    wall ? "wall" : "pair", got, predicted);
        EXPECT_NEAR(got, predicted, 1e-3);
      }
  EXPECT_NEAR(measured(NormalDamping::tsuji_clamped, 0.3, 1.0, false), 0.3971, 1e-3);
}

TEST(Restitution, ASphereOnAFixedSphereReboundsWithE) {
  // The fixed sphere is kinematic, of infinite mass: m* = m of the moving one
  // (effective_mass, core/particle_store.hpp). With m* = m/2 the damping
  // would be sqrt(2) too weak: the rebound of c/sqrt(2), 0.600 for e = 0.5.
  for (const double e : {0.1, 0.5, 0.9})
    for (const double v : {0.01, 1.0}) {
      const HertzMindlinLaw law({ContactMaterial{kE, kNu, e, 0.0, 0.0}}, pair_step(v, true));
      const double got = pair_rebound(law, v, 0, 0, true);
      const double c = damping_coefficient(NormalDamping::exact, e);
      const double halved = hertz_collision(c / std::sqrt(2.0), true).restitution;
      std::printf("e = %.1f, v = %g: on a fixed sphere %.6f (with m* = m/2 it would be %.4f)\n", e, v, got, halved);
      EXPECT_NEAR(got, e, 1e-3);
      EXPECT_GT(std::abs(halved - e), 0.02);
    }
}

TEST(Restitution, APairTablesEReplacesTheGeometricMean) {
  // Materials of e 0.9 and 0.4: mixed sqrt(0.36) = 0.6; the table's 0.7.
  const ContactMaterial a{kE, kNu, 0.9, 0.0, 0.0}, b{kE, kNu, 0.4, 0.0, 0.0};
  for (const double v : {0.01, 1.0}) {
    const double h = pair_step(v, false);
    const double mixed = pair_rebound(HertzMindlinLaw({a, b}, h), v, 0, 1, false);
    const double table = pair_rebound(HertzMindlinLaw({a, b}, h, {}, {{1, 0, 0.7, {}, {}}}), v, 0, 1, false);
    const double self = pair_rebound(HertzMindlinLaw({a, b}, h, {}, {{1, 0, 0.7, {}, {}}}), v, 1, 1, false);
    std::printf("v = %g: restitution %.6f mixed, %.6f with the table's e = 0.7, %.6f of b on b\n", v, mixed, table, self);
    EXPECT_NEAR(mixed, 0.6, 1e-3);
    EXPECT_NEAR(table, 0.7, 1e-3);
    EXPECT_NEAR(self, 0.4, 1e-3) << "the table changes only its pair";
  }
}
