// Rolling resistance of Hertz-Mindlin contact by its published models
// (docs/model.md §11.6): a sphere resting under gravity on a frictionless
// floor (mu_s = 0, so no tangential force couples its spin to its
// translation) and given a small spin about a horizontal axis.
//  - EPSD and EPSD2: the rolling spring makes it rock about its centre with
//    the period 2 pi sqrt(I / k_r), I = 0.4 m r², k_r = 2.25 k_n mu_r² R*²
//    (EPSD) or S_t R*² (EPSD2), k_n and S_t at the static overlap;
//  - EPSD's dashpot C_r = 2 eta_r sqrt(1.4 m r² k_r) damps the rocking at the
//    rate C_r / (2 I) of that linear oscillator;
//  - CDT: the constant torque mu_r R* k_n delta stops the spin at the
//    constant rate mu_r r k_n delta / I;
//  - SDS (LAMMPS rolling sds): the spring k_roll on the rolling displacement
//    R* theta gives the moment k_roll R*² theta, so the period
//    2 pi sqrt(I / (k_roll r²)) = 2 pi sqrt(0.4 m / k_roll) at a wall
//    (R* = r); its dashpot gamma_roll damps at gamma_roll r² / (2 I).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "contact/friction_wall_provider.hpp"
#include "contact/hertz_mindlin.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "fields/gravity_provider.hpp"
#include "support.hpp"

using namespace dem;

namespace {

constexpr double kR = 5e-3, kRho = 2500, kE = 1e7, kNu = 0.3, kMuR = 0.1, kG = 9.81, kH = 2e-7;

double mass() { return kRho * 4.0 / 3.0 * M_PI * kR * kR * kR; }
double inertia() { return 0.4 * mass() * kR * kR; }
/// E* and G* of the particle's material with itself (a wall, docs/model.md §11.2).
double e_star() { return kE / (2.0 * (1.0 - kNu * kNu)); }
double g_star() { return kE / (4.0 * (2.0 - kNu) * (1.0 + kNu)); }
/// The static overlap m g = (4/3) E* sqrt(r) delta^{3/2}.
double static_overlap() { return std::pow(mass() * kG / (4.0 / 3.0 * e_star() * std::sqrt(kR)), 2.0 / 3.0); }
double contact_radius() { return std::sqrt(kR * static_overlap()); }
double k_n() { return 4.0 / 3.0 * e_star() * contact_radius(); }
double s_t() { return 8.0 * g_star() * contact_radius(); }

/// The sphere at its static overlap, spinning at w0 about x; omega_x at
/// every step for `steps` steps.
std::vector<double> spin_history(const HertzMindlinModels& models, double w0, int steps) {
  ParticleStore s;
  s.add(dem::testing::solid_sphere(kR, kRho, Vec3(0, 0, kR - static_overlap()), Vec3::Zero(), Vec3(w0, 0, 0)));
  const ContactMaterial m{kE, kNu, 0.5, 0.0, kMuR};
  ForceField f;
  f.add(std::make_unique<FrictionWallProvider>(std::vector<Wall>{Wall{Vec3::Zero(), Vec3::UnitZ(), 0.0}},
                                               HertzMindlinLaw({m}, kH, models), 1, "mwalls"));
  f.add(std::make_unique<GravityProvider>(Vec3(0, 0, -kG)));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, kH);
  std::vector<double> w;
  for (int k = 0; k < steps; ++k) {
    sim.step();
    w.push_back(sim.particles().angular_velocity[0].x());
  }
  return w;
}

/// The mean period between downward zero crossings of w (linear interpolation).
double period(const std::vector<double>& w) {
  std::vector<double> crossings;
  for (std::size_t k = 1; k < w.size(); ++k)
    if (w[k - 1] > 0.0 && w[k] <= 0.0) crossings.push_back((k - 1) + w[k - 1] / (w[k - 1] - w[k]));
  if (crossings.size() < 2) return NAN;
  return (crossings.back() - crossings.front()) / (crossings.size() - 1) * kH;
}

/// The times (interpolated to a parabola through three samples) and values of the maxima of w.
std::vector<std::pair<double, double>> peaks(const std::vector<double>& w) {
  std::vector<std::pair<double, double>> out;
  for (std::size_t k = 1; k + 1 < w.size(); ++k)
    if (w[k] > w[k - 1] && w[k] >= w[k + 1] && w[k] > 0.0) {
      const double a = 0.5 * (w[k - 1] + w[k + 1]) - w[k], b = 0.5 * (w[k + 1] - w[k - 1]);
      const double x = -b / (2 * a);
      out.push_back({(k + 1 + x) * kH, w[k] + b * x + a * x * x});  // sample k is time (k + 1) h
    }
  return out;
}

double rocking_period(RollingModel model) {
  const double kr = model == RollingModel::epsd ? 2.25 * k_n() * kMuR * kMuR * kR * kR : s_t() * kR * kR;
  return 2.0 * M_PI * std::sqrt(inertia() / kr);
}

}  // namespace

TEST(Rolling, EpsdAndEpsd2RockWithTheirSpringsPeriod) {
  for (const RollingModel model : {RollingModel::epsd, RollingModel::epsd2}) {
    const double expected = rocking_period(model);
    const std::vector<double> w = spin_history({.rolling = model}, 0.1, static_cast<int>(3.2 * expected / kH));
    const double measured = period(w);
    std::printf("%s: rocking period %.6f ms, 2 pi sqrt(I/k_r) = %.6f ms\n",
                model == RollingModel::epsd ? "epsd" : "epsd2", 1e3 * measured, 1e3 * expected);
    EXPECT_NEAR(measured, expected, 2e-3 * expected);
  }
  // EPSD2's spring is S_t R*² / (2.25 k_n mu_r² R*²) = 55 times EPSD's here.
  EXPECT_NEAR(s_t() / (2.25 * k_n() * kMuR * kMuR), 54.9, 0.1);
}

TEST(Rolling, EpsdDashpotDampsAtItsRate) {
  const double eta = 0.05, kr = 2.25 * k_n() * kMuR * kMuR * kR * kR;
  const double c_r = 2.0 * eta * std::sqrt(1.4 * mass() * kR * kR * kr);
  const double rate = c_r / (2.0 * inertia());  // amplitude ~ exp(-rate t)
  const double t = 2.0 * rocking_period(RollingModel::epsd);
  const std::vector<double> w = spin_history({.rolling = RollingModel::epsd, .rolling_damping = eta}, 0.1,
                                             static_cast<int>(t / kH) + 1);
  // Peaks of |omega| (omega(0) = 0.1 is a peak): their ratio over time t.
  double last_peak = 0.0;
  std::size_t last_k = 0;
  for (std::size_t k = 1; k + 1 < w.size(); ++k)
    if (w[k] > w[k - 1] && w[k] >= w[k + 1]) last_peak = w[k], last_k = k;
  ASSERT_GT(last_k, 0u);
  const double measured = -std::log(last_peak / 0.1) / (last_k * kH);
  std::printf("epsd eta_r = %.2f: decay rate %.4f 1/s, C_r/(2I) = %.4f 1/s\n", eta, measured, rate);
  EXPECT_NEAR(measured, rate, 0.01 * rate);
  // Without the dashpot the rocking keeps its amplitude (to the integrator's error).
  const std::vector<double> undamped = spin_history({.rolling = RollingModel::epsd}, 0.1, static_cast<int>(t / kH));
  double top = 0.0;
  for (std::size_t k = undamped.size() / 2; k < undamped.size(); ++k) top = std::max(top, undamped[k]);
  EXPECT_NEAR(top, 0.1, 1e-4);
}

TEST(Rolling, CdtStopsTheSpinAtAConstantRate) {
  const double torque = kMuR * kR * k_n() * static_overlap();  // mu_r R* k_n delta, R* = r at a wall
  const double rate = torque / inertia(), w0 = 5.0;
  const std::vector<double> w = spin_history({.rolling = RollingModel::cdt}, w0, static_cast<int>(0.5 * w0 / rate / kH));
  const double t = w.size() * kH, measured = (w0 - w.back()) / t;
  std::printf("cdt: spin-down rate %.4f rad/s², mu_r r k_n delta / I = %.4f rad/s²\n", measured, rate);
  EXPECT_NEAR(measured, rate, 2e-3 * rate);
}

namespace {

constexpr double kRollStiffness = 100.0;  // k_roll (N/m): period 14.4 ms

double sds_rocking_period() { return 2.0 * M_PI * std::sqrt(0.4 * mass() / kRollStiffness); }

}  // namespace

TEST(Rolling, SdsRocksWithTheSpringsPeriod) {
  const double expected = sds_rocking_period();
  const std::vector<double> w = spin_history({.rolling = RollingModel::sds, .rolling_stiffness = kRollStiffness}, 0.1,
                                             static_cast<int>(3.2 * expected / kH));
  const double measured = period(w);
  std::printf("sds: rocking period %.6f ms, 2 pi sqrt(0.4 m/k_roll) = %.6f ms (%.1e)\n", 1e3 * measured,
              1e3 * expected, measured / expected - 1);
  EXPECT_NEAR(measured, expected, 1e-5 * expected);
  // Elastic throughout: the spring force k_roll r theta stays below mu_r m g.
  const double theta = 0.1 * expected / (2 * M_PI);
  EXPECT_LT(kRollStiffness * kR * theta, 0.2 * kMuR * mass() * kG);
}

TEST(Rolling, SdsDashpotDampsAtItsRate) {
  const double gamma = 0.01;  // N s/m
  const double rate = gamma * kR * kR / (2.0 * inertia());
  const std::vector<double> w =
      spin_history({.rolling = RollingModel::sds, .rolling_stiffness = kRollStiffness, .rolling_dashpot = gamma}, 0.1,
                   static_cast<int>(3.2 * sds_rocking_period() / kH));
  const std::vector<std::pair<double, double>> p = peaks(w);
  ASSERT_GE(p.size(), 3u);
  const double measured = std::log(p.front().second / p.back().second) / (p.back().first - p.front().first);
  std::printf("sds gamma_roll = %.3g N s/m: decay rate %.5f 1/s, gamma r^2/(2I) = %.5f 1/s (%.1e)\n", gamma, measured,
              rate, measured / rate - 1);
  EXPECT_NEAR(measured, rate, 1e-3 * rate);
}

TEST(Rolling, SdsSlidesAtTheCap) {
  // Spun fast, the spring reaches mu_r |F_n| at once: the constant moment
  // mu_r r m g (R* = r at a wall) stops the spin at mu_r r m g / I.
  const double rate = kMuR * kR * mass() * kG / inertia(), w0 = 5.0;
  const std::vector<double> w = spin_history({.rolling = RollingModel::sds, .rolling_stiffness = kRollStiffness}, w0,
                                             static_cast<int>(0.5 * w0 / rate / kH));
  const std::size_t k0 = w.size() / 4;  // after the spring has loaded
  const double measured = (w[k0] - w.back()) / ((w.size() - 1 - k0) * kH);
  std::printf("sds sliding: spin-down rate %.4f rad/s², mu_r r m g / I = %.4f rad/s² (%.1e)\n", measured, rate,
              measured / rate - 1);
  EXPECT_NEAR(measured, rate, 1e-3 * rate);
}
