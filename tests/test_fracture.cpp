// Bond fracture (docs/model.md §10) with the BDEM bonds of section 9:
//  - a single bond pulled apart (its ends moved at prescribed velocities,
//    so the configuration at each step is known exactly) fails at the first
//    step whose configuration is over strength (10.2), in the mode 10.1
//    says, with every column of its failure record (10.4) checked against
//    values computed here from docs/model.md's formulas;
//  - a crushed bond fails under the default |F_n| criterion and never
//    under tension_only;
//  - failed bonds leave the gather at once and stay out of checkpoints'
//    restarts, fragments are the components of the live-bond graph.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "bdem_support.hpp"
#include "bonds/bdem_provider.hpp"
#include "core/parallel.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint.hpp"

using namespace dem;
using namespace dem::bdem_test;

namespace {

/// Two touching spheres (id 0 at -r, id 1 at +r on x) bonded, both moved
/// at prescribed velocities v0, v1.
Simulation pulled_pair(const BdemMaterial& m, const Vec3& v0, const Vec3& v1, double h,
                       const Quat& attitude = Quat::Identity()) {
  ParticleStore s;
  ParticleSpec left = sphere(Vec3(-kRadius, 0, 0)), right = sphere(Vec3(kRadius, 0, 0));
  left.attitude = attitude;  // the reference attitudes R_i0: only Q = R R0^T counts (docs/model.md §9.1)
  right.attitude = attitude.conjugate();
  s.add(left);
  s.add(right);
  BondList bonds;
  bonds.add(s, 0, 1, BondStiffness{});
  ForceField f;
  const std::vector<BdemMaterial> mats = {m};
  f.add(std::make_unique<BdemBondProvider>(s, std::move(bonds), mats));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  sim.set_groups({moved_group("left", 0, v0), moved_group("right", 1, v1)});
  return sim;
}

/// The positions after k steps as the integrator makes them (x += h v each
/// step, the velocity held), in the same floating-point order.
Vec3 moved(Vec3 x, const Vec3& v, double h, int k) {
  for (int s = 0; s < k; ++s) x += h * v;
  return x;
}

struct Expected {
  double sigma = 0, tau = 0, f_n = 0, f_s = 0, energy = 0;
};

/// docs/model.md §9.2, §9.3 and §10.1 for two ends that do not turn (t = 0, c = d0).
Expected expected_at(const Vec3& x_i, const Vec3& x_j, const BdemMaterial& m) {
  const double l0 = 2 * kRadius, r_b = m.bond_radius_factor * kRadius;
  const double S = M_PI * r_b * r_b, G = m.youngs_modulus / (2 * (1 + m.poisson_ratio));
  const double k_n = m.youngs_modulus * S / l0, k_s = G * S * l0;
  const Vec3 d0(-1, 0, 0);
  const Vec3 d = (x_i - x_j).normalized();
  const double r = (x_i - x_j).norm();
  const double theta = std::atan2(d0.cross(d).norm(), d0.dot(d));
  Expected e;
  e.f_n = k_n * (r - l0);
  e.f_s = k_s * theta / r;
  e.sigma = (m.tension_only ? std::max(e.f_n, 0.0) : std::abs(e.f_n)) / S;
  e.tau = e.f_s / S;
  e.energy = 0.5 * k_n * (r - l0) * (r - l0) + 0.5 * k_s * theta * theta;
  return e;
}

int first_failing_step(const BdemMaterial& m, const Vec3& v0, const Vec3& v1, double h, int limit) {
  for (int k = 0; k <= limit; ++k) {
    const Expected e = expected_at(moved(Vec3(-kRadius, 0, 0), v0, h, k), moved(Vec3(kRadius, 0, 0), v1, h, k), m);
    if (e.sigma > m.tensile_strength || e.tau > m.shear_strength) return k;
  }
  return -1;
}

void expect_near_rel(double got, double want, double rel, const char* what) {
  EXPECT_NEAR(got, want, rel * std::abs(want) + 1e-300) << what;
}

}  // namespace

TEST(Fracture, PulledBondFailsInTensionAtThePredictedStep) {
  const BdemMaterial m = material(5e6, 5e6);
  const double h = 1e-7;
  const Vec3 v0(-0.5, 0, 0), v1(0.5, 0, 0);
  const int k_star = first_failing_step(m, v0, v1, h, 1000);
  ASSERT_GT(k_star, 10);
  Simulation sim = pulled_pair(m, v0, v1, h);
  for (int k = 1; k < k_star; ++k) {
    sim.step();
    ASSERT_TRUE(sim.take_failures().empty()) << "failed early, at step " << k;
    ASSERT_NE(sim.particles().force[0].norm(), 0.0);
  }
  sim.step();
  const std::vector<BondFailure> f = sim.take_failures();
  ASSERT_EQ(f.size(), 1u);
  const Vec3 xi = moved(Vec3(-kRadius, 0, 0), v0, h, k_star), xj = moved(Vec3(kRadius, 0, 0), v1, h, k_star);
  const Expected e = expected_at(xi, xj, m);
  EXPECT_EQ(f[0].step, static_cast<std::uint64_t>(k_star));
  EXPECT_EQ(f[0].time, k_star * h);
  EXPECT_EQ(f[0].bond, 0u);
  EXPECT_EQ(f[0].id_i, 0u);
  EXPECT_EQ(f[0].id_j, 1u);
  EXPECT_TRUE(f[0].tensile);
  expect_near_rel(f[0].sigma, e.sigma, 1e-9, "sigma");
  EXPECT_NEAR(f[0].tau, 0.0, 1e-9 * e.sigma);
  expect_near_rel(f[0].sigma_ratio, e.sigma / m.tensile_strength, 1e-9, "sigma_ratio");
  EXPECT_GT(f[0].sigma_ratio, 1.0);
  EXPECT_NEAR(f[0].tau_ratio, 0.0, 1e-9);
  expect_near_rel(f[0].axial_force, e.f_n, 1e-9, "F_n");
  EXPECT_GT(f[0].axial_force, 0.0);
  EXPECT_NEAR(f[0].shear_force, 0.0, 1e-9 * e.f_n);
  EXPECT_NEAR(f[0].bending_moment, 0.0, 1e-12);
  EXPECT_NEAR(f[0].twist_moment, 0.0, 1e-12);
  EXPECT_NEAR((f[0].midpoint - 0.5 * (xi + xj)).norm(), 0.0, 1e-15);
  // In tension there is no contact: W = V_b.
  expect_near_rel(f[0].energy, e.energy, 1e-9, "energy");
  EXPECT_EQ(sim.ledger().fracture, f[0].energy);
  // The failed bond left the gather at once: no force at the end of the step.
  EXPECT_EQ(sim.particles().force[0], Vec3::Zero());
  EXPECT_EQ(sim.particles().force[1], Vec3::Zero());
  const EnergyReport r = sim.energy_report();
  EXPECT_EQ(r.broken_bonds, 1u);
  EXPECT_EQ(r.fragments, 2u);
  EXPECT_EQ(r.axial + r.shear + r.bending, 0.0);
  for (int k = 0; k < 5; ++k) sim.step();
  EXPECT_TRUE(sim.take_failures().empty());
}

TEST(Fracture, ReferenceAttitudesOtherThanTheIdentityChangeNothing) {
  const BdemMaterial m = material(5e6, 5e6);
  const double h = 1e-7;
  const Vec3 v0(0, 0.1, 0), v1(0.3, 0.5, -0.2);
  const int k_star = first_failing_step(m, v0, v1, h, 5000);
  ASSERT_GT(k_star, 10);
  Simulation sim = pulled_pair(m, v0, v1, h, Quat(Eigen::AngleAxisd(2.0, Vec3(1, 2, 3).normalized())));
  for (int k = 1; k < k_star; ++k) sim.step();
  EXPECT_TRUE(sim.take_failures().empty());
  sim.step();
  const std::vector<BondFailure> f = sim.take_failures();
  ASSERT_EQ(f.size(), 1u);
  const Expected e = expected_at(moved(Vec3(-kRadius, 0, 0), v0, h, k_star), moved(Vec3(kRadius, 0, 0), v1, h, k_star), m);
  expect_near_rel(f[0].energy, e.energy, 1e-9, "energy");
}

TEST(Fracture, ShearedBondFailsInShearAtThePredictedStep) {
  const BdemMaterial m = material(5e6, 5e6);
  const double h = 1e-7;
  const Vec3 v0(0, 0, 0), v1(0, 0.5, 0);
  const int k_star = first_failing_step(m, v0, v1, h, 5000);
  ASSERT_GT(k_star, 10);
  Simulation sim = pulled_pair(m, v0, v1, h);
  for (int k = 1; k < k_star; ++k) {
    sim.step();
    ASSERT_TRUE(sim.take_failures().empty()) << "failed early, at step " << k;
  }
  sim.step();
  const std::vector<BondFailure> f = sim.take_failures();
  ASSERT_EQ(f.size(), 1u);
  const Vec3 xi = moved(Vec3(-kRadius, 0, 0), v0, h, k_star), xj = moved(Vec3(kRadius, 0, 0), v1, h, k_star);
  const Expected e = expected_at(xi, xj, m);
  EXPECT_EQ(f[0].step, static_cast<std::uint64_t>(k_star));
  EXPECT_FALSE(f[0].tensile);
  expect_near_rel(f[0].tau, e.tau, 1e-9, "tau");
  expect_near_rel(f[0].sigma, e.sigma, 1e-6, "sigma");
  EXPECT_GT(f[0].tau_ratio, 1.0);
  EXPECT_LT(f[0].sigma_ratio, f[0].tau_ratio);
  expect_near_rel(f[0].shear_force, e.f_s, 1e-9, "F_s");
  expect_near_rel(f[0].energy, e.energy, 1e-9, "energy");
}

TEST(Fracture, CrushedBondFailsUnderAbsoluteAxialForceButNotTensionOnly) {
  const double h = 1e-7;
  const Vec3 v0(0.5, 0, 0), v1(-0.5, 0, 0);  // towards each other
  const BdemMaterial crush = material(5e6, 5e6, false);
  const int k_star = first_failing_step(crush, v0, v1, h, 1000);
  ASSERT_GT(k_star, 10);
  Simulation a = pulled_pair(crush, v0, v1, h);
  for (int k = 0; k < k_star; ++k) a.step();
  const std::vector<BondFailure> f = a.take_failures();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].step, static_cast<std::uint64_t>(k_star));
  EXPECT_TRUE(f[0].tensile);  // iBDEM's |F_n|: a crushed bond fails "in tension"
  EXPECT_LT(f[0].axial_force, 0.0);

  const BdemMaterial tension_only = material(5e6, 5e6, true);
  EXPECT_EQ(first_failing_step(tension_only, v0, v1, h, 1000), -1);
  Simulation b = pulled_pair(tension_only, v0, v1, h);
  for (int k = 0; k < 2 * k_star; ++k) b.step();
  EXPECT_TRUE(b.take_failures().empty());
  EXPECT_EQ(b.energy_report().broken_bonds, 0u);
}

namespace {

/// A chain of `n` bonded spheres along x, ends pulled apart, free middle.
Simulation chain(int n, double sigma_c, double h, std::size_t steps_done = 0) {
  return pulled_chain(n, sigma_c, IntegratorMap::rrp25, h, Vec3(-2.0, 0.3, 0), Vec3(2.0, 0, 0.1), steps_done);
}

}  // namespace

TEST(Fracture, FragmentsAndRestartAcrossFailuresAreBitwise) {
  const double h = 2e-8;
  Simulation sim = chain(12, 5e6, h);
  std::vector<BondFailure> all;
  for (int k = 0; k < 3000 && all.empty(); ++k) {
    sim.step();
    for (const BondFailure& f : sim.take_failures()) all.push_back(f);
  }
  ASSERT_FALSE(all.empty()) << "the chain should break";
  EXPECT_EQ(sim.energy_report().fragments, 1u + sim.energy_report().broken_bonds);
  // Checkpoint at an odd step after the first failure, continue both.
  if (sim.step_count() % 2 == 0) sim.step();
  for (const BondFailure& f : sim.take_failures()) all.push_back(f);
  const CheckpointState c = decode_checkpoint(encode_checkpoint(capture_simulation(sim)));
  Simulation copy = simulation_from(c);
  std::vector<BondFailure> fa, fb;
  for (int k = 0; k < 1500; ++k) {
    sim.step();
    copy.step();
    for (const BondFailure& f : sim.take_failures()) fa.push_back(f);
    for (const BondFailure& f : copy.take_failures()) fb.push_back(f);
  }
  ASSERT_EQ(fa.size(), fb.size());
  for (std::size_t k = 0; k < fa.size(); ++k) {
    EXPECT_EQ(fa[k].bond, fb[k].bond);
    EXPECT_EQ(fa[k].step, fb[k].step);
    EXPECT_EQ(fa[k].energy, fb[k].energy);
  }
  for (std::size_t i = 0; i < sim.particles().size(); ++i) {
    EXPECT_EQ(sim.particles().position[i], copy.particles().position[i]);
    EXPECT_EQ(sim.particles().velocity[i], copy.particles().velocity[i]);
  }
  EXPECT_EQ(sim.ledger().fracture, copy.ledger().fracture);
  EXPECT_EQ(sim.ledger().boundary, copy.ledger().boundary);
  EXPECT_EQ(sim.energy_report().broken_bonds, copy.energy_report().broken_bonds);
}

TEST(Fracture, FailuresAreTheSameForAnyThreadCount) {
  std::vector<std::vector<BondFailure>> runs;
  for (std::size_t threads : {1, 2, 3}) {
    ThreadLimit limit(threads);
    Simulation sim = chain(40, 5e6, 2e-8);
    std::vector<BondFailure> f;
    for (int k = 0; k < 4000; ++k) {
      sim.step();
      for (const BondFailure& x : sim.take_failures()) f.push_back(x);
    }
    runs.push_back(f);
  }
  ASSERT_FALSE(runs[0].empty());
  for (std::size_t r = 1; r < runs.size(); ++r) {
    ASSERT_EQ(runs[r].size(), runs[0].size());
    for (std::size_t k = 0; k < runs[0].size(); ++k) {
      EXPECT_EQ(runs[r][k].bond, runs[0][k].bond);
      EXPECT_EQ(runs[r][k].step, runs[0][k].step);
      EXPECT_EQ(runs[r][k].sigma, runs[0][k].sigma);
    }
  }
}
