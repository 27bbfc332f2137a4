// The conformance suite of bond laws: every law of the registry
// (bonds/bond_laws.hpp) runs through the same checks by one row of kLaws:
//  - forces are minus the gradient of the bond energy in the positions, and
//    moments minus its gradient in spatial rotations of each particle;
//  - Hessian blocks (translation) are the derivative of the forces;
//  - forces sum to zero and moments balance the angular momentum exactly
//    (bonds are objective pair interactions, docs/model.md §2);
//  - objectivity: a rigidly rotated deformed cluster gives the rotated
//    forces and moments;
//  - the same bits at 1, 2 and 3 threads and on every SIMD target;
//  - a checkpoint continues bit for bit; MPI parts give the whole's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bonds/bond_laws.hpp"
#include "core/parallel.hpp"
#include "core/simd.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "fields/gravity_provider.hpp"
#include "io/checkpoint.hpp"
#include "part_support.hpp"
#include "simd_targets.hpp"

namespace dem {
namespace {

constexpr double kR = 1e-3, kRho = 2400, kE = 1e8, kH = 1e-7;

const std::vector<std::string> kLaws = {"baker-gonzalez", "bdem"};

ParticleSpec sphere(const Vec3& x) {
  ParticleSpec p;
  p.position = x;
  p.diameter = 2 * kR;
  p.mass = kRho * 4.0 / 3.0 * M_PI * kR * kR * kR;
  p.inertia = 0.4 * p.mass * kR * kR;
  return p;
}

/// A 3 x 3 x 2 block of touching spheres bonded to their lattice
/// neighbours, then deformed: positions moved by up to 3% of a radius,
/// attitudes turned by up to 0.05 rad, velocities and spins at random.
struct Cluster {
  ParticleStore particles;
  BondList bonds;
};

Cluster cluster(bool moving = true, std::uint64_t seed = 7) {
  Cluster c;
  for (int k = 0; k < 18; ++k) c.particles.add(sphere(Vec3(2 * kR * (k % 3), 2 * kR * ((k / 3) % 3), 2 * kR * (k / 9))));
  for (std::uint32_t i = 0; i < 18; ++i)
    for (std::uint32_t j = i + 1; j < 18; ++j)
      if ((c.particles.position[i] - c.particles.position[j]).norm() < 2.01 * kR)
        c.bonds.add(c.particles, i, j, BondStiffness{0.05, 0.1, 0.08});
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ParticleStore& p = c.particles;
  for (std::size_t i = 0; i < p.size(); ++i) {
    p.position[i] += 0.03 * kR * Vec3(u(rng), u(rng), u(rng));
    p.attitude[i] = Quat(Eigen::AngleAxisd(0.05 * u(rng), Vec3(u(rng), u(rng), u(rng)).normalized())) * p.attitude[i];
    if (moving) {
      p.velocity[i] = 0.05 * Vec3(u(rng), u(rng), u(rng));
      p.angular_velocity[i] = 50.0 * Vec3(u(rng), u(rng), u(rng));
    }
  }
  return c;
}

Simulation simulation_of(const std::string& keyword, const Cluster& c) {
  BondLawInput in;
  in.materials = {{"binder", kRho, kE, 0.3, 0.8}};
  in.r_max = kR;
  const std::unique_ptr<PreparedBondLaw> law = find_bond_law(keyword)->prepare(in);
  ForceField f;
  f.add(law->make(c.particles, c.bonds));
  f.add(std::make_unique<GravityProvider>(Vec3::Zero()));
  return Simulation(c.particles, std::move(f), IntegratorMap::rrp25, kH);
}

double bond_energy(const Simulation& sim) {
  const EnergyReport r = sim.energy_report();
  return r.total() - r.kinetic_translation - r.kinetic_rotation - r.gravity;
}

std::vector<Vec3> by_id(const std::vector<Vec3>& v, const ParticleStore& p) {
  std::vector<Vec3> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[p.id[i]] = v[i];
  return out;
}

class BondConformance : public ::testing::TestWithParam<std::string> {};

TEST(BondConformanceRows, EveryRegisteredLawHasARow) {
  for (const BondLawEntry& e : bond_laws())
    EXPECT_NE(std::find(kLaws.begin(), kLaws.end(), e.keyword), kLaws.end())
        << "bond law \"" << e.keyword << "\" is not in the conformance suite (add it to kLaws)";
}

TEST_P(BondConformance, ForcesAndMomentsAreTheEnergyGradient) {
  const std::string& law = GetParam();
  const Cluster c = cluster(false);
  const Simulation sim = simulation_of(law, c);
  const double eps = 1e-8 * kR, turn = 1e-8;
  for (const std::size_t i : {std::size_t{0}, std::size_t{4}, std::size_t{13}}) {
    const Vec3 f = sim.particles().force[i], tau = sim.particles().moment[i];
    ASSERT_GT(f.norm(), 0.0);
    for (int k = 0; k < 3; ++k) {
      Cluster plus = c, minus = c;
      plus.particles.position[i][k] += eps;
      minus.particles.position[i][k] -= eps;
      const double grad = (bond_energy(simulation_of(law, plus)) - bond_energy(simulation_of(law, minus))) / (2 * eps);
      EXPECT_NEAR(f[k], -grad, 1e-5 * f.norm()) << law << ": force, particle " << i << ", component " << k;
      plus = c;
      minus = c;
      plus.particles.attitude[i] = Quat(Eigen::AngleAxisd(turn, Vec3::Unit(k))) * c.particles.attitude[i];
      minus.particles.attitude[i] = Quat(Eigen::AngleAxisd(-turn, Vec3::Unit(k))) * c.particles.attitude[i];
      const double rot = (bond_energy(simulation_of(law, plus)) - bond_energy(simulation_of(law, minus))) / (2 * turn);
      EXPECT_NEAR(tau[k], -rot, 1e-5 * tau.norm() + 1e-9 * f.norm() * kR) << law << ": moment, particle " << i
                                                                        << ", component " << k;
    }
  }
}

TEST_P(BondConformance, HessianBlocksAreTheForceDerivative) {
  const std::string& law = GetParam();
  if (!find_bond_law(law)->hessian) GTEST_SKIP() << "no Hessian blocks";
  const Cluster c = cluster(false);
  const Simulation sim = simulation_of(law, c);
  const ForceProvider& p = *sim.forces().providers()[0];
  const HessianSource* hs = sim.forces().capabilities(0).hessian;
  ASSERT_TRUE(hs != nullptr);
  std::vector<Mat12> blocks(hs->record_second_ends().size());
  hs->element_hessians(sim.particles(), 0, blocks, HessianBlocks::exact);
  // Bond 0's translation blocks of its first end: d2U/dx_i dx_i and d2U/dx_i dx_j.
  const std::uint32_t i = p.pair_results().first[0], j = hs->record_second_ends()[0];
  const double eps = 1e-8 * kR;
  // The force on i from bond 0 alone: the cluster with only that bond.
  Cluster one = c;
  one.bonds = BondList();
  {
    ParticleStore ref;
    for (std::size_t k = 0; k < c.particles.size(); ++k) ref.add(sphere(c.particles.reference_position[k]));
    one.bonds.add(ref, c.bonds.first[0], c.bonds.second[0], c.bonds.stiffness(0));
  }
  for (int k = 0; k < 3; ++k)
    for (const std::uint32_t end : {i, j}) {
      Cluster plus = one, minus = one;
      plus.particles.position[end][k] += eps;
      minus.particles.position[end][k] -= eps;
      const Vec3 df = (simulation_of(law, plus).particles().force[i] - simulation_of(law, minus).particles().force[i]) /
                      (2 * eps);
      const Vec3 expected = -blocks[0].block<3, 3>(0, end == i ? 0 : 6).col(k);
      EXPECT_LT((df - expected).norm(), 1e-4 * expected.norm() + 1e-6 * blocks[0].norm())
          << law << ": column " << k << (end == i ? " of d/dx_i" : " of d/dx_j");
    }
}

TEST_P(BondConformance, ForcesAndMomentsBalanceExactly) {
  const std::string& law = GetParam();
  Simulation sim = simulation_of(law, cluster());
  for (int step = 0; step < 500; ++step) {
    sim.step();
    const ParticleStore& p = sim.particles();
    Vec3 sum = Vec3::Zero(), torque = Vec3::Zero();
    double scale = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      sum += p.force[i];
      torque += p.position[i].cross(p.force[i]) + p.moment[i];
      scale += p.force[i].norm();
    }
    ASSERT_GT(scale, 0.0);
    EXPECT_LE(sum.norm(), 1e-12 * scale) << law << " step " << step;
    EXPECT_LE(torque.norm(), 1e-12 * scale * 10 * kR) << law << " step " << step;
  }
}

TEST_P(BondConformance, ObjectiveUnderARigidRotation) {
  const std::string& law = GetParam();
  const Mat3 rot = Eigen::AngleAxisd(0.9, Vec3(-1, 2, 0.5).normalized()).toRotationMatrix();
  const Cluster a = cluster(false);
  Cluster b = a;
  for (std::size_t i = 0; i < b.particles.size(); ++i) {
    b.particles.position[i] = rot * b.particles.position[i];
    b.particles.attitude[i] = Quat(rot) * b.particles.attitude[i];
  }
  const Simulation sa = simulation_of(law, a), sb = simulation_of(law, b);
  for (std::size_t i = 0; i < a.particles.size(); ++i) {
    const Vec3 f = sa.particles().force[i], tau = sa.particles().moment[i];
    EXPECT_LT((rot * f - sb.particles().force[i]).norm(), 1e-10 * f.norm() + 1e-12) << law << " particle " << i;
    EXPECT_LT((rot * tau - sb.particles().moment[i]).norm(), 1e-10 * tau.norm() + 1e-12 * f.norm() * kR)
        << law << " particle " << i;
  }
  EXPECT_NEAR(bond_energy(sa), bond_energy(sb), 1e-12 * bond_energy(sa));
}

TEST_P(BondConformance, SameBitsForAnyThreadCountAndSimdTarget) {
  const std::string& law = GetParam();
  std::vector<Vec3> first;
  for (const std::string& target : available_simd_targets())
    for (const std::size_t threads : {1, 2, 3}) {
      testing::SimdTargetScope scope(target);
      ThreadLimit limit(threads);
      Simulation sim = simulation_of(law, cluster());
      for (int k = 0; k < 400; ++k) sim.step();
      const std::vector<Vec3> x = by_id(sim.particles().position, sim.particles());
      if (first.empty()) first = x;
      EXPECT_EQ(x, first) << law << ": " << target << ", " << threads << " threads";
    }
}

TEST_P(BondConformance, CheckpointContinuesBitForBit) {
  const std::string& law = GetParam();
  Simulation sim = simulation_of(law, cluster());
  for (int k = 0; k < 300; ++k) sim.step();
  Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(sim))));
  for (int k = 0; k < 300; ++k) {
    sim.step();
    resumed.step();
  }
  EXPECT_EQ(by_id(resumed.particles().position, resumed.particles()), by_id(sim.particles().position, sim.particles()));
  EXPECT_EQ(by_id(resumed.particles().angular_velocity, resumed.particles()),
            by_id(sim.particles().angular_velocity, sim.particles()));
}

TEST_P(BondConformance, MpiPartsGiveTheWholeForces) {
  const std::string& law = GetParam();
  Simulation sim = simulation_of(law, cluster());
  for (int k = 0; k < 200; ++k) sim.step();
  for (const std::size_t ranks : {2, 3}) expect_parts_match(sim, ranks);
}

INSTANTIATE_TEST_SUITE_P(Laws, BondConformance, ::testing::ValuesIn(kLaws),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace dem
