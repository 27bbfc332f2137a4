// Twisting resistance of Hertz-Mindlin contact (docs/model.md §11.6), the
// LAMMPS pair granular models: a spring-dashpot-slider on the twisting angle
// about the contact normal, with Marshall's (2009) constants
// k = S_t a²/2, gamma = gamma_t a²/2, mu = (2/3) a mu_s or SDS's given ones.
// A sphere resting under gravity on a floor (or on top of a fixed sphere)
// and spun about the vertical: the spin about the normal moves no contact
// point, so only the twisting moment acts on it, and
//  - spun fast, the slider holds the moment at mu |F_n| = mu m g: the spin
//    falls at the constant rate mu m g / I;
//  - spun slowly, the spring makes it oscillate with the period
//    2 pi sqrt(I / k), and the dashpot damps that at the rate gamma / (2 I);
//  - with twisting = "none" nothing resists that spin.
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contact/contact_laws.hpp"
#include "contact/friction_wall_provider.hpp"
#include "contact/hertz_mindlin.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "fields/gravity_provider.hpp"
#include "support.hpp"

using namespace dem;

namespace {

constexpr double kR = 5e-3, kRho = 2500, kE = 1e7, kNu = 0.3, kMuS = 0.5, kG = 9.81;

double mass() { return kRho * 4.0 / 3.0 * M_PI * kR * kR * kR; }
double inertia() { return 0.4 * mass() * kR * kR; }
/// E* and G* of the material with itself (a wall, or a pair of equal spheres; docs/model.md §11.2).
double e_star() { return kE / (2.0 * (1.0 - kNu * kNu)); }
double g_star() { return kE / (4.0 * (2.0 - kNu) * (1.0 + kNu)); }
/// The static overlap m g = (4/3) E* sqrt(R*) delta^{3/2} and the contact radius a = sqrt(R* delta).
double static_overlap(double r_star) {
  return std::pow(mass() * kG / (4.0 / 3.0 * e_star() * std::sqrt(r_star)), 2.0 / 3.0);
}
double contact_radius(double r_star) { return std::sqrt(r_star * static_overlap(r_star)); }

/// Marshall's constants at the static overlap (damping coefficient c, m*).
struct Twist {
  double k, gamma, mu;
};
Twist marshall(double r_star, double c, double m_star) {
  const double a = contact_radius(r_star), s_t = 8.0 * g_star() * a;
  return {0.5 * s_t * a * a, 0.5 * c * std::sqrt(s_t * m_star) * a * a, 2.0 / 3.0 * a * kMuS};
}

/// The sphere spun at w0 about z: at its static overlap on a floor, or
/// (on_sphere) on top of a fixed sphere. omega_z after every step.
std::vector<double> spin_history(const HertzMindlinModels& models, double e, double w0, double h, int steps,
                                 bool on_sphere = false) {
  ParticleStore s;
  const ContactMaterial m{kE, kNu, e, kMuS, 0.0};
  ForceField f;
  if (on_sphere) {
    s.add(dem::testing::solid_sphere(kR, kRho, Vec3::Zero(), Vec3::Zero()));
    s.add(dem::testing::solid_sphere(kR, kRho, Vec3(0, 0, 2 * kR - static_overlap(0.5 * kR)), Vec3::Zero(),
                                     Vec3(0, 0, w0)));
    f.add(std::make_unique<HertzMindlinProvider>(HertzMindlinLaw({m}, h, models), 0.2 * kR, "mindlin"));
  } else {
    s.add(dem::testing::solid_sphere(kR, kRho, Vec3(0, 0, kR - static_overlap(kR)), Vec3::Zero(), Vec3(0, 0, w0)));
    f.add(std::make_unique<FrictionWallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), Vec3::UnitZ(), 0.0}},
                                                 HertzMindlinLaw({m}, h, models), 1, "mwalls"));
  }
  f.add(std::make_unique<GravityProvider>(Vec3(0, 0, -kG)));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  if (on_sphere) sim.set_groups({dem::testing::fixed_group("base", {0})});
  const std::size_t top = on_sphere ? 1 : 0;
  std::vector<double> w;
  for (int k = 0; k < steps; ++k) {
    sim.step();
    const ParticleStore& p = sim.particles();
    for (std::size_t i = 0; i < p.size(); ++i)
      if (p.id[i] == top) w.push_back(p.angular_velocity[i].z());
  }
  return w;
}

/// The mean period between downward zero crossings of w (linear interpolation).
double period(const std::vector<double>& w, double h) {
  std::vector<double> crossings;
  for (std::size_t k = 1; k < w.size(); ++k)
    if (w[k - 1] > 0.0 && w[k] <= 0.0) crossings.push_back((k - 1) + w[k - 1] / (w[k - 1] - w[k]));
  if (crossings.size() < 2) return NAN;
  return (crossings.back() - crossings.front()) / (crossings.size() - 1) * h;
}

/// The decay rate of the maxima of w (parabolas through three samples), first to last.
double decay_rate(const std::vector<double>& w, double h) {
  std::vector<std::pair<double, double>> peaks;
  for (std::size_t k = 1; k + 1 < w.size(); ++k)
    if (w[k] > w[k - 1] && w[k] >= w[k + 1] && w[k] > 0.0) {
      const double a = 0.5 * (w[k - 1] + w[k + 1]) - w[k], b = 0.5 * (w[k + 1] - w[k - 1]), x = -b / (2 * a);
      peaks.push_back({(k + x) * h, w[k] + b * x + a * x * x});
    }
  if (peaks.size() < 2) return NAN;
  return std::log(peaks.front().second / peaks.back().second) / (peaks.back().first - peaks.front().first);
}

/// The mean spin-down rate from a quarter of the run to its end.
double spin_down_rate(const std::vector<double>& w, double h) {
  const std::size_t k0 = w.size() / 4;
  return (w[k0] - w.back()) / ((w.size() - 1 - k0) * h);
}

constexpr HertzMindlinModels kMarshall{.twisting = TwistingModel::marshall};
/// SDS's constants: k_twist (N m/rad), gamma_twist (N m s/rad), mu_twist (m).
constexpr double kTwistK = 1e-4, kTwistGamma = 1e-8, kTwistMu = 1e-4;
constexpr HertzMindlinModels kSds{.twisting = TwistingModel::sds,
                                  .twisting_stiffness = kTwistK,
                                  .twisting_dashpot = kTwistGamma,
                                  .twisting_friction = kTwistMu};

}  // namespace

TEST(Twisting, NoModelLeavesTheSpinAboutTheNormalAlone) {
  const std::vector<double> w = spin_history({}, 0.5, 5.0, 2e-6, 2000);
  EXPECT_EQ(w.back(), 5.0);
}

TEST(Twisting, SlidingStopsTheSpinAtMuMgOverI) {
  const double w0 = 5.0, h = 2e-6;
  const Twist t = marshall(kR, 0.0, mass());
  const double rates[] = {t.mu * mass() * kG / inertia(), kTwistMu * mass() * kG / inertia()};
  const char* names[] = {"marshall", "sds"};
  const HertzMindlinModels models[] = {kMarshall, kSds};
  for (int m = 0; m < 2; ++m) {
    const std::vector<double> w = spin_history(models[m], 0.5, w0, h, static_cast<int>(0.5 * w0 / rates[m] / h));
    const double measured = spin_down_rate(w, h);
    std::printf("%s: spin-down rate %.5f rad/s², mu_twist m g / I = %.5f rad/s² (mu_twist = %.4g m; %.1e)\n",
                names[m], measured, rates[m], m == 0 ? t.mu : kTwistMu, measured / rates[m] - 1);
    EXPECT_NEAR(measured, rates[m], 1e-4 * rates[m]) << names[m];
  }
  // Marshall's slider: (2/3) a mu_s with a = sqrt(r delta) at the static overlap.
  EXPECT_NEAR(t.mu, 2.0 / 3.0 * std::sqrt(kR * static_overlap(kR)) * kMuS, 1e-15);
}

TEST(Twisting, SpringOscillatesWithItsPeriod) {
  const double h = 2e-6, w0 = 0.1;
  // e = 1: no dashpot in Marshall's model (gamma_t = 0).
  const Twist t = marshall(kR, 0.0, mass());
  const double ks[] = {t.k, kTwistK};
  const char* names[] = {"marshall", "sds"};
  const HertzMindlinModels sds_undamped{.twisting = TwistingModel::sds,
                                        .twisting_stiffness = kTwistK,
                                        .twisting_friction = kTwistMu};
  const HertzMindlinModels models[] = {kMarshall, sds_undamped};
  for (int m = 0; m < 2; ++m) {
    const double expected = 2.0 * M_PI * std::sqrt(inertia() / ks[m]);
    // Elastic throughout: the largest moment sqrt(k I) w0 stays below the slider.
    EXPECT_LT(std::sqrt(ks[m] * inertia()) * w0, 0.5 * (m == 0 ? t.mu : kTwistMu) * mass() * kG) << names[m];
    const std::vector<double> w = spin_history(models[m], 1.0, w0, h, static_cast<int>(2.2 * expected / h));
    const double measured = period(w, h);
    std::printf("%s: twisting period %.6f ms, 2 pi sqrt(I/k_twist) = %.6f ms (k_twist = %.4g N m; %.1e)\n", names[m],
                1e3 * measured, 1e3 * expected, ks[m], measured / expected - 1);
    EXPECT_NEAR(measured, expected, 1e-5 * expected) << names[m];
  }
}

TEST(Twisting, DashpotDampsAtGammaOver2I) {
  const double h = 2e-6, w0 = 0.1, e = 0.5;
  const ContactMaterial mat{kE, kNu, e, kMuS, 0.0};
  const Twist t = marshall(kR, contact_pair(mat, mat).damping, mass());  // c of e (docs/model.md §11.5), m* = m at a wall
  const double gammas[] = {t.gamma, kTwistGamma}, ks[] = {t.k, kTwistK};
  const char* names[] = {"marshall", "sds"};
  const HertzMindlinModels models[] = {kMarshall, kSds};
  for (int m = 0; m < 2; ++m) {
    const double rate = gammas[m] / (2.0 * inertia()), t_period = 2.0 * M_PI * std::sqrt(inertia() / ks[m]);
    const std::vector<double> w = spin_history(models[m], e, w0, h, static_cast<int>(3.2 * t_period / h));
    const double measured = decay_rate(w, h);
    std::printf("%s: twisting decay rate %.5f 1/s, gamma_twist/(2I) = %.5f 1/s (%.1e)\n", names[m], measured, rate,
                measured / rate - 1);
    EXPECT_NEAR(measured, rate, 2e-3 * rate) << names[m];
  }
}

TEST(Twisting, PairOnAFixedSphereSlidesAtMuMgOverI) {
  // R* = r/2, a = sqrt(R* delta) at the pair's static overlap.
  const double w0 = 5.0, h = 2e-6;
  const Twist t = marshall(0.5 * kR, 0.0, 0.5 * mass());
  const double rates[] = {t.mu * mass() * kG / inertia(), kTwistMu * mass() * kG / inertia()};
  const char* names[] = {"marshall", "sds"};
  const HertzMindlinModels models[] = {kMarshall, kSds};
  for (int m = 0; m < 2; ++m) {
    const std::vector<double> w = spin_history(models[m], 0.5, w0, h, static_cast<int>(0.5 * w0 / rates[m] / h), true);
    const double measured = spin_down_rate(w, h);
    std::printf("pair, %s: spin-down rate %.5f rad/s², mu_twist m g / I = %.5f rad/s² (%.1e)\n", names[m], measured,
                rates[m], measured / rates[m] - 1);
    EXPECT_NEAR(measured, rates[m], 1e-4 * rates[m]) << names[m];
  }
}

TEST(Twisting, PairOscillatesWithTheSpringsPeriod) {
  const double h = 2e-6, w0 = 0.05;
  const Twist t = marshall(0.5 * kR, 0.0, 0.5 * mass());
  const double expected = 2.0 * M_PI * std::sqrt(inertia() / t.k);
  const std::vector<double> w = spin_history(kMarshall, 1.0, w0, h, static_cast<int>(2.2 * expected / h), true);
  const double measured = period(w, h);
  std::printf("pair, marshall: twisting period %.6f ms, 2 pi sqrt(I/k_twist) = %.6f ms (%.1e)\n", 1e3 * measured,
              1e3 * expected, measured / expected - 1);
  EXPECT_NEAR(measured, expected, 1e-5 * expected);
}

// Checkpoints: the twisting angle's 8 bytes are written only with a twisting
// model, and the law's options block is the former 10-byte one unless SDS
// rolling or a twisting model needs the longer one, so checkpoints of the
// former models keep their bytes (and former files load).
TEST(TwistingCheckpoint, StateAndOptionBytesGrowOnlyWithTheNewModels) {
  const ContactMaterial mat{kE, kNu, 0.5, kMuS, 0.1};
  HertzMindlinLaw::State st;
  st.xi = Vec3(1, 2, 3);
  st.rolling = Vec3(4, 5, 6);
  st.twist = 0.25;
  const HertzMindlinModels all[] = {{},
                                    {.rolling = RollingModel::epsd, .rolling_damping = 0.2},
                                    {.rolling = RollingModel::sds, .rolling_stiffness = 100, .rolling_dashpot = 0.01},
                                    kMarshall,
                                    kSds};
  for (const HertzMindlinModels& m : all) {
    const bool twisting = m.twisting != TwistingModel::none;
    const bool longer = twisting || m.rolling == RollingModel::sds;
    const HertzMindlinLaw law({mat}, 1e-6, m);
    std::vector<std::byte> b;
    ByteWriter w(b);
    law.save_state(w, st);
    EXPECT_EQ(b.size(), twisting ? 56u : 48u);
    EXPECT_EQ(b.size(), law.saved_state_bytes());
    ByteReader r(b);
    const HertzMindlinLaw::State back = law.load_state(r);
    EXPECT_EQ(back.xi, st.xi);
    EXPECT_EQ(back.rolling, st.rolling);
    EXPECT_EQ(back.twist, twisting ? 0.25 : 0.0);
    // Materials (count, 5 values), h, flags, options length, options.
    std::vector<std::byte> lb;
    ByteWriter lw(lb);
    law.save(lw);
    EXPECT_EQ(lb.size(), 8u + 40u + 8u + 1u + 4u + (longer ? 51u : 10u));
    ByteReader lr(lb);
    const HertzMindlinModels loaded = HertzMindlinLaw::load(lr).models();
    EXPECT_EQ(lr.remaining(), 0u);
    EXPECT_EQ(loaded.damping, m.damping);
    EXPECT_EQ(loaded.rolling, m.rolling);
    EXPECT_EQ(loaded.rolling_damping, m.rolling_damping);
    EXPECT_EQ(loaded.rolling_stiffness, m.rolling_stiffness);
    EXPECT_EQ(loaded.rolling_dashpot, m.rolling_dashpot);
    EXPECT_EQ(loaded.twisting, m.twisting);
    EXPECT_EQ(loaded.twisting_stiffness, m.twisting_stiffness);
    EXPECT_EQ(loaded.twisting_dashpot, m.twisting_dashpot);
    EXPECT_EQ(loaded.twisting_friction, m.twisting_friction);
  }
  // The short block cannot name SDS rolling (its constants are in the long one).
  std::vector<std::byte> lb;
  ByteWriter lw(lb);
  HertzMindlinLaw({mat}, 1e-6, {}).save(lw);
  lb[8 + 40 + 8 + 1 + 4 + 1] = std::byte{static_cast<std::uint8_t>(RollingModel::sds)};
  ByteReader lr(lb);
  try {
    (void)HertzMindlinLaw::load(lr);
    ADD_FAILURE() << "SDS rolling in the short options block was accepted";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("SDS rolling without its constants"), std::string::npos) << e.what();
  }
}

// The scene keys: each model's keys are refused with the other models,
// and SDS needs its stiffnesses (the messages name the key).
TEST(TwistingKeys, KeysOfAnotherModelAreRefused) {
  const ContactLawEntry* law = find_contact_law("hertz-mindlin");
  ASSERT_NE(law, nullptr);
  const auto error_of = [&](std::map<std::string, std::string> words, std::map<std::string, double> numbers) {
    ContactLawInput in;
    in.materials = {{"grain", kRho, kE, kNu, 0.5, kMuS, 0.1}};
    in.values.words = std::move(words);
    in.values.numbers = std::move(numbers);
    try {
      (void)law->prepare(in);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of({{"rolling", "sds"}, {"twisting", "marshall"}}, {{"rolling_stiffness", 100}}), "");
  EXPECT_EQ(error_of({{"twisting", "sds"}}, {{"twisting_stiffness", 1e-4}, {"twisting_friction", 1e-4}}), "");
  const std::pair<std::map<std::string, std::string>, std::map<std::string, double>> refused[] = {
      {{{"rolling", "sds"}}, {{"rolling_stiffness", 100}, {"rolling_damping", 0.1}}},
      {{{"rolling", "epsd"}}, {{"rolling_stiffness", 100}}},
      {{{"rolling", "epsd"}}, {{"rolling_dashpot", 0.1}}},
      {{{"rolling", "sds"}}, {}},
      {{{"twisting", "marshall"}}, {{"twisting_stiffness", 1e-4}}},
      {{}, {{"twisting_friction", 1e-4}}},
      {{{"twisting", "marshall"}}, {{"twisting_dashpot", 1e-8}}},
      {{{"twisting", "sds"}}, {{"twisting_friction", 1e-4}}},
      {{{"twisting", "sds"}}, {{"twisting_stiffness", 1e-4}}},
  };
  const char* keys[] = {"rolling_damping",    "rolling_stiffness", "rolling_dashpot",
                        "rolling_stiffness",  "twisting_stiffness", "twisting_friction",
                        "twisting_dashpot",   "twisting_stiffness", "twisting_friction"};
  for (std::size_t k = 0; k < std::size(refused); ++k) {
    const std::string m = error_of(refused[k].first, refused[k].second);
    EXPECT_NE(m.find(std::string("[contact] ") + keys[k]), std::string::npos) << k << ": " << m;
  }
}
