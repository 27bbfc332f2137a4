// The vectorised Hertz-Mindlin pair loop (contact/hertz_mindlin_kernel.hpp):
// on every SIMD target this CPU runs, for every rolling model it covers and
// both kinds of damping, each pair's force, moments and history have the
// bits of HertzMindlinLaw::evaluate, including sliding and capped rolling
// contacts, pairs apart and excluded pairs.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "contact/hertz_mindlin.hpp"
#include "contact/hertz_mindlin_kernel.hpp"
#include "core/simd.hpp"
#include "simd_targets.hpp"
#include "support.hpp"

using namespace dem;
using namespace dem::testing;

namespace {

using State = HertzMindlinLaw::State;

/// Random pairs of three materials (one without rolling friction): about
/// half touching by up to 2% of the sum of radii, random velocities and
/// spins, random histories large enough that many contacts slide or reach
/// the rolling cap.
struct PairSet {
  ParticleStore store;
  NeighbourList list;
  std::vector<std::uint8_t> excluded;
  std::vector<State> state;

  explicit PairSet(std::size_t pairs) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(0.0, 1.0), radius(0.5e-3, 1.5e-3);
    for (std::size_t p = 0; p < pairs; ++p) {
      ParticleSpec a = solid_sphere(radius(rng), 2500.0, random_vec(rng, 0.05), random_vec(rng, 0.3),
                                    random_vec(rng, 300.0));
      ParticleSpec b = solid_sphere(radius(rng), 2500.0 + 5000.0 * u(rng), Vec3::Zero(), random_vec(rng, 0.3),
                                    random_vec(rng, 300.0));
      const double reach = 0.5 * (a.diameter + b.diameter);
      const double gap = u(rng) < 0.5 ? (1.0 - 0.02 * u(rng)) * reach : (1.0 + 0.2 * u(rng)) * reach;
      b.position = a.position + gap * random_vec(rng).normalized();
      a.material = static_cast<std::uint32_t>(p % 3);
      b.material = static_cast<std::uint32_t>((p / 3) % 3);
      store.add(a);
      store.add(b);
      list.owner.push_back(static_cast<std::uint32_t>(2 * p));
      list.partner.push_back(static_cast<std::uint32_t>(2 * p + 1));
      excluded.push_back(u(rng) < 0.05 ? 1 : 0);
      State st;
      st.xi = random_vec(rng, 2e-5);
      st.rolling = random_vec(rng, 2e-5);
      state.push_back(st);
    }
  }
};

std::vector<ContactMaterial> materials() {
  return {{1e8, 0.3, 0.5, 0.4, 0.1}, {2e9, 0.25, 0.8, 0.6, 0.0}, {5e8, 0.2, 0.3, 0.2, 0.05}};
}

/// The state and the four slots of every pair, as bytes (slots start as a
/// sentinel, so that excluded pairs show they were left alone).
std::vector<unsigned char> run(const HertzMindlinLaw& law, const PairSet& set, bool block) {
  const std::size_t m = set.list.pair_count();
  std::vector<State> state = set.state;
  const Vec3 sentinel(1e300, -2.0, 3.0);
  std::vector<Vec3> slots(4 * m, sentinel);
  const KineticSlots s{slots.data(), slots.data() + m, slots.data() + 2 * m, slots.data() + 3 * m};
  if (block) {
    EXPECT_TRUE(law.block_evaluate(set.list, set.store, set.excluded.data(), state.data(), s));
  } else {
    for (std::size_t k = 0; k < m; ++k) {
      if (set.excluded[k]) continue;
      PairOutput out;
      law.evaluate(set.store, set.list.owner[k], set.list.partner[k], state[k], out);
      s.force[k] = out.force;
      s.nc_force[k] = out.nc_force;
      s.moment_i[k] = out.moment_i;
      s.moment_j[k] = out.moment_j;
    }
  }
  std::vector<unsigned char> bytes(state.size() * sizeof(State) + slots.size() * sizeof(Vec3));
  std::memcpy(bytes.data(), state.data(), state.size() * sizeof(State));
  std::memcpy(bytes.data() + state.size() * sizeof(State), slots.data(), slots.size() * sizeof(Vec3));
  return bytes;
}

}  // namespace

TEST(HertzMindlinKernel, EveryTargetGivesTheScalarBits) {
  const PairSet set(3001);  // not a multiple of any lane count: a scalar tail too
  const HertzMindlinModels cases[] = {
      {NormalDamping::exact, RollingModel::none, 0.0},   {NormalDamping::tsuji, RollingModel::epsd, 0.0},
      {NormalDamping::exact, RollingModel::epsd, 0.3},   {NormalDamping::tsuji_clamped, RollingModel::epsd2, 0.0},
      {NormalDamping::exact, RollingModel::cdt, 0.0},
  };
  for (const HertzMindlinModels& models : cases) {
    const HertzMindlinLaw law(materials(), 1e-6, models);
    ASSERT_TRUE(hertz_mindlin_kernel_covers(models));
    const std::vector<unsigned char> reference = run(law, set, false);
    for (const std::string& name : available_simd_targets()) {
      SimdTargetScope scope(name);
      EXPECT_TRUE(run(law, set, true) == reference)
          << "target " << name << ", rolling model " << static_cast<int>(models.rolling);
    }
  }
}

TEST(HertzMindlinKernel, TheTestPairsSlideRollAndSeparate) {
  // The set above exercises every branch: pairs apart, touching, sliding
  // (|F_t| at mu_s |F_n|) and with the rolling moment at its cap.
  const PairSet set(3001);
  const HertzMindlinLaw law(materials(), 1e-6, {NormalDamping::exact, RollingModel::epsd, 0.0});
  std::vector<State> state = set.state;
  std::size_t apart = 0, touching = 0, sliding = 0, capped = 0;
  for (std::size_t k = 0; k < set.list.pair_count(); ++k) {
    PairOutput out;
    const std::uint32_t i = set.list.owner[k], j = set.list.partner[k];
    law.evaluate(set.store, i, j, state[k], out);
    if (out.force.squaredNorm() == 0.0) {
      ++apart;
      continue;
    }
    ++touching;
    const Vec3 n = (set.store.position[i] - set.store.position[j]).normalized();
    const double fn = out.force.dot(n), ft = (out.force - fn * n).norm();
    const ContactPair& p = law.pair(set.store.material[i], set.store.material[j]);
    if (std::abs(ft - p.mu_s * std::abs(fn)) < 1e-9 * std::abs(fn)) ++sliding;
    const double r_star = set.store.radius[i] * set.store.radius[j] / (set.store.radius[i] + set.store.radius[j]);
    if (p.mu_r > 0.0 && std::abs(state[k].rolling.norm() - p.mu_r * r_star * std::abs(fn)) < 1e-9 * std::abs(fn))
      ++capped;
  }
  EXPECT_GT(apart, 1000u);
  EXPECT_GT(touching, 1000u);
  EXPECT_GT(sliding, 200u);
  EXPECT_GT(capped, 200u);
}
