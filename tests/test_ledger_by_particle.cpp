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
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"
#include "scene_support.hpp"
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
  // Kinematic particles (every third) move at v0, w0 through the kick: u = 2 v0.
  std::vector<char> kinematic(s.size(), 0);
  for (std::size_t i = 0; i < s.size(); i += 3) {
    kinematic[i] = 1;
    u[i] = 2.0 * v0[i];
    w[i] = 2.0 * w0[i];
  }
  EXPECT_EQ(sim.forces().kick_power(s, v0, w0, kinematic).value(),
            sim.forces().nonconservative_power(s, u, w).value())
      << GetParam();
}

/// Two Hertz-Mindlin spheres with damping and sliding friction, one moved
/// obliquely into the other by a `velocity` group, for 6 ms at time step h.
double pushed_sphere_drift(double h, double& scale) {
  const int steps = static_cast<int>(std::lround(6e-3 / h));
  char step[64];
  std::snprintf(step, sizeof step, "%.17g", h);
  const std::string text = std::string(R"(
[run]
integrator = "rrp25"
time_step = )") + step + R"(
steps = )" + std::to_string(steps) + R"(

[[material]]
name = "grain"
density = 2500.0
E = 1e7
nu = 0.3
e = 0.5
mu_s = 0.5

[[particles]]
source = "csv"
file = "pushed.csv"
material = "grain"

[contact]
law = "hertz-mindlin"
damping = "exact"

[[group]]
name = "pusher"
ids = [0, 0]
motion = "velocity"
velocity = [0.2, 0.05, 0.0]
)";
  const std::filesystem::path dir = dem::testing::scratch_folder("ledger_by_particle");
  dem::testing::write_text(dir / "pushed.csv", "x,y,z,diameter\n0.0,0.0,0.0,0.01\n0.01,0.001,0.0,0.01\n");
  Simulation sim = make_simulation(build_scene(parse_scene_text(text, "pushed.toml", dir.string())));
  const double e0 = sim.energy_report().balance();
  double drift = 0.0;
  for (int k = 0; k < steps; ++k) {
    sim.step();
    drift = std::max(drift, std::abs(sim.energy_report().balance() - e0));
  }
  scale = std::abs(sim.ledger().contact) + std::abs(sim.ledger().boundary);
  return drift;
}

TEST(LedgerWithKinematicGroups, APushedSphereWithADampedFrictionalContactClosesToSecondOrder) {
  // W_boundary books the whole force on the pusher at its velocity and
  // W_contact the dissipation at the contact's relative velocity (docs/
  // model.md §16): E_balance's drift falls as h^2. With the pusher left
  // out of W_contact it drifted by 38% of E_0 at any h.
  double scale = 0.0, scale_fine = 0.0;
  const double coarse = pushed_sphere_drift(2e-6, scale);
  const double fine = pushed_sphere_drift(1e-6, scale_fine);
  std::printf("pushed sphere: W_contact + |W_boundary| %.4e J; drift %.3e J at h, %.3e J at h/2 (ratio %.2f)\n",
              scale, coarse, fine, coarse / fine);
  ASSERT_GT(scale, 1e-5);  // the pusher worked and the contact dissipated
  EXPECT_LT(coarse, 1e-3 * scale);
  EXPECT_GT(coarse / fine, 3.0);
  EXPECT_LT(coarse / fine, 5.0);
}

INSTANTIATE_TEST_SUITE_P(Scenes, LedgerByParticle,
                         ::testing::Values("tests/scenes/friction_box.toml", "tests/scenes/twist_box.toml"),
                         [](const auto& info) { return std::string(info.index == 0 ? "friction_box" : "twist_box"); });

}  // namespace
