// The plate edge drop of docs/model.md §13.3 (scenes/plate_drop.toml) and smaller
// plates of the same make:
//  - the lattice, counts, placement and E_0 of 13.3;
//  - the energy ledger of 10.3: E_total + W_fracture is conserved to second
//    order in h on a small plate that breaks (slope 2 +- 0.2), while booking
//    W = V_b alone (forgetting the contact energy of bonds that fail in
//    compression) drifts by far more and does not converge;
//  - bitwise identical at 1, 2 and 3 threads and across a restart at an odd
//    step, failures and broken bonds included.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "bonds/bdem_bond.hpp"
#include "core/parallel.hpp"
#include "io/checkpoint.hpp"
#include "plate_scene.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;
using namespace dem::plate_test;

namespace {

struct LedgerRun {
  double max_balance = 0.0;  ///< max |E_total + W_fracture - E_0| / E_0
  double max_bond_only = 0.0;  ///< the same with W = V_b booked alone
  std::size_t failures = 0;
};

LedgerRun run_ledger(int cells, double h, double end_time) {
  Simulation sim = simulation_of(plate_scene(cells, h, end_time));
  const double e0 = sim.energy_report().total();
  const auto steps = static_cast<std::size_t>(std::llround(end_time / h));
  LedgerRun out;
  double bond_only = 0.0;
  for (std::size_t k = 0; k < steps; ++k) {
    sim.step();
    for (const BondFailure& f : sim.take_failures()) {
      bond_only += f.bond_energy;
      ++out.failures;
    }
    const EnergyReport r = sim.energy_report();
    out.max_balance = std::max(out.max_balance, std::abs(r.total() + r.fracture_work - e0) / e0);
    out.max_bond_only = std::max(out.max_bond_only, std::abs(r.total() + bond_only - e0) / e0);
  }
  return out;
}

}  // namespace

TEST(PlateDrop, LatticeCountsPlacementAndInitialEnergyOfSection13_3) {
  BuiltScene b = build_scene(read_scene_file(DEM_SOURCE_DIR "/scenes/plate_drop.toml"));
  const ParticleStore& p = b.scene.particles;
  ASSERT_EQ(p.size(), 8123u);
  EXPECT_EQ(b.scene.bonds.size(), 41216u);
  EXPECT_EQ(b.time_step, 2.5e-7);
  EXPECT_EQ(b.steps, 1600u);
  double lowest = INFINITY, kinetic = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    lowest = std::min(lowest, p.position[i].z());
    kinetic += 0.5 * p.mass[i] * p.velocity[i].squaredNorm();
  }
  EXPECT_NEAR(lowest, 1.1e-3, 1e-15);
  EXPECT_NEAR(p.mass[0], 1.005310e-5, 1e-11);
  EXPECT_NEAR(p.inertia[0], 4.021239e-12, 1e-18);
  EXPECT_NEAR(kinetic, 1.020766, 1e-6);
  // The untilted lattice: five layers of 1625 and 1624 alternately, ids in
  // lexicographic (x, y, z) order.
  FccBlockParameters flat;
  flat.spacing = 2e-3;
  flat.cells = {28, 28, 2};
  const Scene f = make_fcc_block(flat);
  ASSERT_EQ(f.particles.size(), 8123u);
  EXPECT_EQ(fcc_block_count(flat), 8123u);
  std::map<long, std::size_t> layers;
  for (const Vec3& x : f.particles.position) ++layers[std::lround(x.z() / (std::sqrt(2.0) * 1e-3))];
  ASSERT_EQ(layers.size(), 5u);
  std::vector<std::size_t> counts;
  for (const auto& [z, c] : layers) counts.push_back(c);
  EXPECT_EQ(counts, (std::vector<std::size_t>{1625, 1624, 1625, 1624, 1625}));
  for (std::size_t i = 1; i < f.particles.size(); ++i) {
    const Vec3 &a = f.particles.position[i - 1], &c = f.particles.position[i];
    EXPECT_TRUE(a.x() < c.x() || (a.x() == c.x() && (a.y() < c.y() || (a.y() == c.y() && a.z() < c.z())))) << i;
  }
  // The BDEM stiffnesses of 13.3 come with it.
  const BdemStiffness k = bdem_stiffness(1e9, 0.3, 1e-3, 2e-3);
  EXPECT_NEAR(k.normal, 1.570796e6, 1.0);
  EXPECT_NEAR(k.shear, 2.416610, 1e-6);
}

TEST(PlateDrop, FractureLedgerIsSecondOrderAndNeedsTheContactCorrection) {
  const double h = 2.5e-7, end = 1.2e-4;
  std::vector<LedgerRun> runs;
  for (int k = 0; k < 3; ++k) runs.push_back(run_ledger(10, h / (1 << k), end));
  for (const LedgerRun& r : runs) {
    std::printf("plate 10x10x2: failures %zu, max |E_total + W_fracture - E_0|/E_0 %.3e, with W = V_b alone %.3e\n",
                r.failures, r.max_balance, r.max_bond_only);
    ASSERT_GT(r.failures, 20u) << "the small plate should break";
  }
  const double slope1 = std::log2(runs[0].max_balance / runs[1].max_balance);
  const double slope2 = std::log2(runs[1].max_balance / runs[2].max_balance);
  std::printf("slopes %.3f %.3f\n", slope1, slope2);
  EXPECT_NEAR(0.5 * (slope1 + slope2), 2.0, 0.2);
  // W = V_b alone: an error that does not fall with h and is far larger.
  EXPECT_GT(runs[2].max_bond_only, 10.0 * runs[2].max_balance);
  EXPECT_GT(runs[2].max_bond_only, 0.5 * runs[0].max_bond_only);
}

TEST(PlateDrop, BitwiseForAnyThreadCountAndAcrossARestartAtAnOddStep) {
  const std::vector<PlateRun> results =
      runs_at_three_thread_counts_and_a_restart(plate_scene(28, 2.5e-7, 4e-4), 300, 171);
  ASSERT_EQ(results.size(), 4u);
  ASSERT_GT(results[0].failures.size(), 100u);
  expect_same_ends(results);
}
