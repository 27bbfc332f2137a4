// The W_contact ledger booked per particle (docs/model.md §11.3): the
// ForceField's sum over particles of F^nc_i . u_i + tau^nc_i . w_i, with
// F^nc_i and tau^nc_i gathered beside F_i and tau_i, equals the sum each
// ledger gives by its own records (contact pairs f_nc . (u_i - u_j) +
// tau_i . w_i + tau_j . w_j, walls per particle and wall) to round-off, in
// frictional scenes with rolling, twisting, walls of a material and pair
// tables; and the stepper's one-pass kick_power gives the bits of the
// ledger's sum with u = v0 + v, w = w0 + Omega formed beforehand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"
#include "support.hpp"

using namespace dem;

namespace {

/// The scene after `steps` steps, when its contacts have histories.
Simulation settled(const std::string& scene, int steps) {
  Simulation sim = make_simulation(build_scene(read_scene_file(std::string(DEM_SOURCE_DIR) + "/" + scene)));
  for (int k = 0; k < steps; ++k) sim.step();
  return sim;
}

std::vector<Vec3> random_field(std::size_t n, std::mt19937_64& rng) {
  std::vector<Vec3> v(n);
  for (Vec3& x : v) x = dem::testing::random_vec(rng);
  return v;
}

class LedgerByParticle : public ::testing::TestWithParam<const char*> {};

TEST_P(LedgerByParticle, EqualsTheSumOfEachLedgerOverItsRecords) {
  Simulation sim = settled(GetParam(), 300);
  const ParticleStore& s = sim.particles();
  const ForceField& forces = sim.forces();
  ASSERT_TRUE(forces.ledgers_by_particle());
  std::mt19937_64 rng(7);
  const std::vector<Vec3> u = random_field(s.size(), rng), w = random_field(s.size(), rng);
  ExactSum by_records, scale;
  int ledgers = 0;
  for (const auto& p : forces.providers()) {
    DissipationLedger* ledger = p->capabilities().ledger;
    if (ledger == nullptr) continue;
    ++ledgers;
    const ExactSum part = ledger->nonconservative_power(s, u, w);
    by_records.merge(part);
    scale.add(std::abs(part.value()));
  }
  ASSERT_GE(ledgers, 2);  // the contacts and the walls
  const double by_particle = forces.nonconservative_power(s, u, w).value();
  ASSERT_GT(scale.value(), 0.0);  // there are dissipative contacts to book
  EXPECT_NEAR(by_particle, by_records.value(), 1e-12 * scale.value()) << GetParam();
}

TEST_P(LedgerByParticle, KickPowerIsTheLedgerOfTheSummedVelocities) {
  Simulation sim = settled(GetParam(), 300);
  const ParticleStore& s = sim.particles();
  std::mt19937_64 rng(11);
  const std::vector<Vec3> v0 = random_field(s.size(), rng), w0 = random_field(s.size(), rng);
  std::vector<Vec3> u(s.size()), w(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    u[i] = v0[i] + s.velocity[i];
    w[i] = w0[i] + s.angular_velocity[i];
  }
  const double fused = sim.forces().kick_power(s, v0, w0, {}).value();
  EXPECT_EQ(fused, sim.forces().nonconservative_power(s, u, w).value()) << GetParam();
  EXPECT_NE(fused, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Scenes, LedgerByParticle,
                         ::testing::Values("tests/scenes/friction_box.toml", "tests/scenes/twist_box.toml"),
                         [](const auto& info) { return std::string(info.index == 0 ? "friction_box" : "twist_box"); });

}  // namespace
