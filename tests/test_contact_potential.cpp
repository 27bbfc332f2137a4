// Particle-particle and wall contact, docs/model.md §4 (eqs. 56-57).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "contact/contact_potential.hpp"
#include "support.hpp"

using namespace dem;
using namespace dem::testing;

namespace {

Vec3 fd_gradient(const std::function<double(const Vec3&)>& u, const Vec3& x, double eps = 1e-7) {
  Vec3 g;
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = eps * Vec3::Unit(k);
    g[k] = (u(x + e) - u(x - e)) / (2 * eps);
  }
  return g;
}

}  // namespace

TEST(ParticleContact, ForceIsMinusGradientOfEnergy) {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> rad(0.2, 1.0), frac(0.3, 0.999);
  for (int n = 0; n < 100; ++n) {
    const double ri = rad(rng), rj = rad(rng), k = 2100.0;
    const Vec3 xj = random_vec(rng, 3.0);
    const Vec3 xi = xj + frac(rng) * (ri + rj) * random_vec(rng).normalized();
    const ContactTerms t = particle_contact(xi, xj, ri, rj, k);
    const Vec3 gi = fd_gradient([&](const Vec3& x) { return particle_contact(x, xj, ri, rj, k).energy; }, xi);
    const Vec3 gj = fd_gradient([&](const Vec3& x) { return particle_contact(xi, x, ri, rj, k).energy; }, xj);
    EXPECT_LT((t.force_i + gi).norm(), 1e-5 * (1 + t.force_i.norm()));
    EXPECT_LT((-t.force_i + gj).norm(), 1e-5 * (1 + t.force_i.norm()));
    // Central force: no torque about the origin in total.
    EXPECT_LT((xi.cross(t.force_i) + xj.cross(-t.force_i)).norm(), 1e-11 * (1 + t.force_i.norm() * 10));
    // Objectivity and swap symmetry.
    const Quat g = random_rotation(rng);
    const ContactTerms tr = particle_contact(g * xi, g * xj, ri, rj, k);
    EXPECT_NEAR(tr.energy, t.energy, 1e-12 * (1 + t.energy));
    EXPECT_LT((tr.force_i - g * t.force_i).norm(), 1e-10 * (1 + t.force_i.norm()));
    const ContactTerms ts = particle_contact(xj, xi, rj, ri, k);
    EXPECT_EQ(ts.energy, t.energy);
    EXPECT_LT((ts.force_i + t.force_i).norm(), 1e-13 * (1 + t.force_i.norm()));
  }
}

TEST(ParticleContact, MatchesEquation57AndVanishesApart) {
  const double ri = 0.4, rj = 0.6, k = 100.0;
  const Vec3 xi(0.9, 0, 0), xj(0, 0, 0);  // overlap 1 - 0.9 = 0.1
  const ContactTerms t = particle_contact(xi, xj, ri, rj, k);
  EXPECT_NEAR(t.force_i.x(), k / 1.0 * std::pow(0.1, 1.5), 1e-14);
  EXPECT_NEAR(t.energy, 0.4 * k * std::pow(0.1, 2.5), 1e-15);
  const ContactTerms apart = particle_contact(Vec3(1.0000001, 0, 0), xj, ri, rj, k);
  EXPECT_EQ(apart.energy, 0.0);
  EXPECT_EQ(apart.force_i.norm(), 0.0);
}

// The finite-difference check fails on eq. (56) as printed (prefactor 5/2).
TEST(ParticleContact, PrintedEquation56FailsFiniteDifferences) {
  const double ri = 0.5, rj = 0.5, k = 2100.0;
  const Vec3 xi(0.9, 0.1, 0), xj(0, 0, 0);
  auto printed = [&](const Vec3& x) {
    const double o = 1.0 - (x - xj).norm() / (ri + rj);
    return o > 0 ? 2.5 * k * std::pow(o, 2.5) : 0.0;
  };
  const Vec3 g = fd_gradient(printed, xi);
  const ContactTerms t = particle_contact(xi, xj, ri, rj, k);
  EXPECT_GT((t.force_i + g).norm(), 0.5 * t.force_i.norm());
}

TEST(WallContact, ForceIsMinusGradientOfEnergy) {
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<double> rad(0.2, 1.0), gap(-0.3, 0.999);
  for (int n = 0; n < 100; ++n) {
    Wall w;
    w.point = random_vec(rng, 2.0);
    w.normal = random_vec(rng).normalized();
    w.stiffness = 500.0;
    const double r = rad(rng);
    const Vec3 tangent = w.normal.cross(random_vec(rng)).normalized();
    const Vec3 x = w.point + gap(rng) * r * w.normal + 2.0 * tangent;
    const ContactTerms t = wall_contact(x, r, w);
    const Vec3 g = fd_gradient([&](const Vec3& y) { return wall_contact(y, r, w).energy; }, x);
    EXPECT_LT((t.force_i + g).norm(), 1e-5 * (1 + t.force_i.norm()));
    EXPECT_LT(t.force_i.cross(w.normal).norm(), 1e-12 * (1 + t.force_i.norm()));
  }
}

TEST(WallContact, EqualsMirrorImageContact) {
  // A particle at gap g from the wall meets its mirror image at distance 2g:
  // [1 - 2g/(2r)] = [1 - g/r], so the wall law is the pair law with K^pw.
  const double r = 0.5, g = 0.45, k = 300.0;
  Wall w;
  w.stiffness = k;
  const ContactTerms tw = wall_contact(Vec3(g, 0.3, -0.2), r, w);
  const ContactTerms tp = particle_contact(Vec3(g, 0, 0), Vec3(-g, 0, 0), r, r, k * 2.0);
  EXPECT_NEAR(tw.force_i.x(), tp.force_i.x(), 1e-13);
  EXPECT_NEAR(tw.energy, 0.5 * tp.energy, 1e-15);
}
