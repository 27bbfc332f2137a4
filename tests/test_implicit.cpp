// The implicit integrator (docs/model.md §12, engine/implicit_step.hpp):
//  - a single stretched BDEM bond: the per-step amplitude ratio of backward
//    Euler, 1/sqrt(1 + omega² Dt²), at omega Dt = 0.1, 1, 10, 100;
//  - the gradient is the derivative of the incremental potential Phi along
//    the retraction (central differences), at random configurations of a
//    bonded cluster with spin: its inertia terms and minus the providers'
//    forces and moments;
//  - the implicit pendulum of 12.6 against its table (2%), slopes near 1,
//    the energy never rising;
//  - a free-flying bonded cluster keeps its linear momentum to the solver
//    tolerance; Newton converges quadratically and the line search works;
//  - the ring torus of docs/model.md §6 (Baker-Gonzalez bonds, Hertz
//    contact): without the wall its linear momentum stays constant to the
//    solver tolerance; with the wall at 10 times the explicit limit, no
//    blow-up and an energy that never rises.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "apps/pendulum.hpp"
#include "bdem_support.hpp"
#include "bonds/bdem_provider.hpp"
#include "core/parallel.hpp"
#include "engine/force_field.hpp"
#include "engine/implicit_step.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint.hpp"
#include "scene/ring_torus.hpp"

using namespace dem;
using namespace dem::bdem_test;

namespace {

/// Particles at `sites`, every pair closer than 1.01 d bonded (BDEM), at rest.
ForceField bonded(const ParticleStore& s) {
  BondList bonds;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = i + 1; j < s.size(); ++j)
      if ((s.position[i] - s.position[j]).norm() < 2.02 * kRadius)
        bonds.add(s, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), BondStiffness{});
  ForceField f;
  const std::vector<BdemMaterial> mats = {material()};
  f.add(std::make_unique<BdemBondProvider>(s, std::move(bonds), mats));
  return f;
}

/// A small FCC cluster (14 spheres of one cubic cell, touching neighbours).
ParticleStore cluster() {
  ParticleStore s;
  const double a = 2 * kRadius * std::sqrt(2.0);
  for (int x = 0; x <= 1; ++x)
    for (int y = 0; y <= 1; ++y)
      for (int z = 0; z <= 1; ++z) s.add(sphere(a * Vec3(x, y, z)));
  for (const Vec3& f : {Vec3(0.5, 0.5, 0), Vec3(0.5, 0.5, 1), Vec3(0.5, 0, 0.5), Vec3(0.5, 1, 0.5), Vec3(0, 0.5, 0.5),
                       Vec3(1, 0.5, 0.5)})
    s.add(sphere(a * f));
  return s;
}

Simulation implicit_run(ParticleStore s, ForceField f, double dt, ImplicitSettings settings = {}) {
  Simulation sim(std::move(s), std::move(f), IntegratorMap::implicit, dt);
  sim.set_implicit_settings(settings);
  return sim;
}

}  // namespace

TEST(Implicit, StretchedBondAmplitudeFallsByTheBackwardEulerFactor) {
  const BdemStiffness k = bdem_stiffness(kE, kNu, kRadius, 2 * kRadius);
  const double m = sphere(Vec3::Zero()).mass;
  const double omega = std::sqrt(2 * k.normal / m);
  for (const double w_dt : {0.1, 1.0, 10.0, 100.0}) {
    ParticleStore s;
    s.add(sphere(Vec3(-kRadius, 0, 0)));
    s.add(sphere(Vec3(kRadius, 0, 0)));
    ForceField f = bonded(s);
    const double stretch0 = 1e-4 * 2 * kRadius;
    s.position[0].x() -= 0.5 * stretch0;
    s.position[1].x() += 0.5 * stretch0;
    ImplicitSettings tight;  // the residual's round-off floor is near omega² Dt² 1e-16
    tight.newton_tolerance = 1e-11;
    const double dt = w_dt / omega;
    Simulation sim = implicit_run(std::move(s), std::move(f), dt, tight);
    // x_{n+1} (1 + w²) = 2 x_n - x_{n-1}: the roots z, z̄ have |z|² = 1/(1 + w²);
    // Q_n = x_{n+1}² - 2 Re(z) x_{n+1} x_n + |z|² x_n² falls by |z|² a step.
    const double w2 = w_dt * w_dt, z2 = 1.0 / (1.0 + w2), re_z = 1.0 / (1.0 + w2);
    std::vector<double> x = {stretch0};
    for (int n = 0; n < 6; ++n) {
      sim.step();
      x.push_back((sim.particles().position[1] - sim.particles().position[0]).norm() - 2 * kRadius);
    }
    // Steps while the amplitude is far above the positions' round-off
    // (|x| >= 1e-5 of the first: at omega Dt = 100 it falls 100 times a step).
    for (int n = 1; n + 1 < static_cast<int>(x.size()) && std::abs(x[n + 1]) >= 1e-5 * stretch0; ++n) {
      const auto q = [&](int j) { return x[j + 1] * x[j + 1] - 2 * re_z * x[j + 1] * x[j] + z2 * x[j] * x[j]; };
      const double ratio = std::sqrt(q(n) / q(n - 1));
      EXPECT_NEAR(ratio / std::sqrt(z2), 1.0, 1e-6) << "omega Dt = " << w_dt << ", step " << n;
    }
    std::printf("omega Dt = %g: amplitude ratio per step %.9f (1/sqrt(1 + omega² Dt²) = %.9f), Newton %zu\n", w_dt,
                std::sqrt((x[3] * x[3] - 2 * re_z * x[3] * x[2] + z2 * x[2] * x[2]) /
                          (x[2] * x[2] - 2 * re_z * x[2] * x[1] + z2 * x[1] * x[1])),
                std::sqrt(z2), sim.last_implicit_step().newton_iterations);
  }
}

// The implicit midpoint rule (docs/model.md §12.9) on the same bond: the
// stretch obeys (1 + w²/4)(x_{n+1} + x_{n-1}) = 2 (1 - w²/4) x_n, w = omega Dt,
// whose roots lie on the unit circle, so Q_n = x_{n+1}² - 2 Re(z) x_{n+1} x_n
// + x_n² stays constant (no damping at any step), and the energy
// ½ m v² + ½ k (r - l0)² of this linear system is conserved.
TEST(Implicit, StretchedBondKeepsItsAmplitudeAndEnergyUnderTheMidpointRule) {
  const BdemStiffness k = bdem_stiffness(kE, kNu, kRadius, 2 * kRadius);
  const double m = sphere(Vec3::Zero()).mass;
  const double omega = std::sqrt(2 * k.normal / m);
  for (const double w_dt : {0.1, 1.0, 10.0, 100.0}) {
    ParticleStore s;
    s.add(sphere(Vec3(-kRadius, 0, 0)));
    s.add(sphere(Vec3(kRadius, 0, 0)));
    ForceField f = bonded(s);
    const double stretch0 = 1e-4 * 2 * kRadius;
    s.position[0].x() -= 0.5 * stretch0;
    s.position[1].x() += 0.5 * stretch0;
    ImplicitSettings tight;
    tight.newton_tolerance = 1e-11;
    tight.scheme = ImplicitScheme::midpoint;
    Simulation sim = implicit_run(std::move(s), std::move(f), w_dt / omega, tight);
    const double e0 = sim.energy_report().total();
    const double quarter = 0.25 * w_dt * w_dt, re_z = (1.0 - quarter) / (1.0 + quarter);
    std::vector<double> x = {stretch0};
    double worst_energy = 0.0;
    for (int n = 0; n < 40; ++n) {
      sim.step();
      x.push_back((sim.particles().position[1] - sim.particles().position[0]).norm() - 2 * kRadius);
      worst_energy = std::max(worst_energy, std::abs(sim.energy_report().total() - e0) / e0);
    }
    const auto q = [&](int j) { return x[j + 1] * x[j + 1] - 2 * re_z * x[j + 1] * x[j] + x[j] * x[j]; };
    double worst_ratio = 0.0;
    for (int n = 1; n + 1 < static_cast<int>(x.size()); ++n)
      worst_ratio = std::max(worst_ratio, std::abs(std::sqrt(q(n) / q(0)) - 1.0));
    std::printf("midpoint, omega Dt = %g: amplitude after 40 steps off by %.2e, energy by %.2e, Newton %zu\n", w_dt,
                worst_ratio, worst_energy, sim.last_implicit_step().newton_iterations);
    EXPECT_LT(worst_ratio, 1e-6) << "omega Dt = " << w_dt;
    EXPECT_LT(worst_energy, 1e-6) << "omega Dt = " << w_dt;
  }
}

TEST(Implicit, GradientIsTheDerivativeOfTheIncrementalPotential) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ParticleStore s = cluster();
  ForceField f = bonded(s);
  const double dt = 2e-7;
  // A deformed, turned and moving configuration.
  for (std::size_t i = 0; i < s.size(); ++i) {
    s.position[i] += 0.03 * kRadius * Vec3(u(rng), u(rng), u(rng));
    s.attitude[i] = Quat(Eigen::AngleAxisd(0.3 * u(rng), Vec3(u(rng), u(rng), u(rng)).normalized())) * s.attitude[i];
    s.velocity[i] = Vec3(u(rng), u(rng), u(rng));
    s.angular_velocity[i] = 2000.0 * Vec3(u(rng), u(rng), u(rng));
  }
  ImplicitStepper stepper;
  stepper.predict(s, dt);
  // Evaluate at a point away from the prediction.
  for (std::size_t i = 0; i < s.size(); ++i) s.position[i] += 0.01 * kRadius * Vec3(u(rng), u(rng), u(rng));
  f.compute(s);
  const std::vector<Vec6> g(stepper.gradient(s, dt, {}).begin(), stepper.gradient(s, dt, {}).end());
  double worst = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (int a = 0; a < 6; ++a) {
      const double eps = a < 3 ? 1e-6 * kRadius : 1e-6;
      ParticleStore p = s, m = s;
      if (a < 3) {
        p.position[i][a] += eps;
        m.position[i][a] -= eps;
      } else {
        const Vec3 axis = Vec3::Unit(a - 3);
        p.attitude[i] = Quat(Eigen::AngleAxisd(eps, axis)) * s.attitude[i];
        m.attitude[i] = Quat(Eigen::AngleAxisd(-eps, axis)) * s.attitude[i];
      }
      f.compute(p);
      const double phi_p = stepper.incremental_potential(p, f, dt);
      f.compute(m);
      const double phi_m = stepper.incremental_potential(m, f, dt);
      const double fd = (phi_p - phi_m) / (2 * eps);
      worst = std::max(worst, std::abs(fd - g[i][a]) * (a < 3 ? kRadius : 1.0));
      scale = std::max(scale, std::abs(g[i][a]) * (a < 3 ? kRadius : 1.0));
    }
  std::printf("gradient against differences of Phi: largest error %.3e of %.3e\n", worst, scale);
  EXPECT_LT(worst, 1e-6 * scale);
}

namespace {

/// The pendulum of docs/model.md §6 as a one-body provider on particle 0:
/// U = -m g e3.(R rho0), tau = m g (R rho0) x e3, and its rotation Hessian.
class PendulumField final : public ForceProvider, public HessianSource {
 public:
  explicit PendulumField(PendulumParameters p) : p_(p) {}
  std::string name() const override { return "pendulum"; }
  void renumber(std::span<const std::uint32_t>) override {}
  void evaluate(const ParticleStore&) override {}
  void add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<Vec3>,
                       std::span<Vec3> moment) const override {
    for (std::size_t i = begin; i < end; ++i) moment[i] += pendulum_moment(p_, s.attitude[i]);
  }
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override {
    r.add("U_pendulum", pendulum_potential(p_, s.attitude[0]));
  }
  ProviderCapabilities capabilities() override { return {.hessian = this}; }
  void add_body_hessians(const ParticleStore& s, std::size_t begin, std::size_t end,
                         std::span<Mat6> diag) const override {
    // U(exp(S(phi)) R) to second order: -m g e3.(a + phi x a + ½ phi x (phi x a)), a = R rho0.
    for (std::size_t i = begin; i < end; ++i) {
      const Vec3 a = s.attitude[i] * p_.rho0, e3 = Vec3::UnitZ();
      const double mg = p_.mass * p_.gravity;
      Eigen::Matrix3d h = -0.5 * mg * (e3 * a.transpose() + a * e3.transpose()) + mg * e3.dot(a) * Mat3::Identity();
      const Eigen::SelfAdjointEigenSolver<Mat3> eig(h);
      h = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() * eig.eigenvectors().transpose();
      diag[i].block<3, 3>(3, 3) += h;
    }
  }
  void save(ByteWriter&) const override {}

 private:
  PendulumParameters p_;
};

PendulumSample sample_of(const Simulation& sim) {
  const EnergyReport r = sim.energy_report();
  return PendulumSample{sim.time(), r.total(), sim.particles().attitude[0], sim.particles().angular_velocity[0]};
}

}  // namespace

TEST(Implicit, PendulumMatchesTheTableOfSection12_6AndLosesEnergy) {
  const PendulumParameters params;
  // Reference: map (25) at h = 0.1/1024 (about 1e-4, and a divisor of every
  // Dt of the table) to t_N = 10.
  const double t_end = 10.0, h_ref = 0.1 / 1024;
  const std::vector<PendulumSample> reference =
      simulate_pendulum(params, IntegratorMap::rrp25, h_ref, static_cast<std::size_t>(std::llround(t_end / h_ref)));
  struct Row {
    double dt, e_error, attitude, ratio;
  };
  const Row table[] = {{0.1, 0.910, 2.72, -0.455},     {0.05, 0.521, 1.92, 0.151},
                       {0.025, 0.278, 1.08, 0.557},    {0.0125, 0.143, 0.548, 0.772},
                       {0.00625, 0.0726, 0.272, 0.884}, {0.003125, 0.0366, 0.135, 0.942}};
  std::vector<double> dts, e_errors, attitudes;
  for (const Row& row : table) {
    ParticleStore s;
    ParticleSpec p;
    p.attitude = params.attitude0;
    p.angular_velocity = params.angular_velocity0;
    p.mass = params.mass;
    p.inertia = params.inertia;
    s.add(p);
    ForceField f;
    f.add(std::make_unique<PendulumField>(params));
    Simulation sim = implicit_run(std::move(s), std::move(f), row.dt);
    PendulumErrorAccumulator acc(params);
    const std::size_t steps = static_cast<std::size_t>(std::llround(t_end / row.dt));
    const std::size_t stride = static_cast<std::size_t>(std::llround(row.dt / h_ref));
    acc.add(sample_of(sim), reference[0]);
    const double e0 = sample_of(sim).energy;
    double e_prev = e0;
    bool rose = false;
    for (std::size_t k = 1; k <= steps; ++k) {
      sim.step();
      const PendulumSample x = sample_of(sim);
      rose = rose || x.energy > e_prev + 1e-12 * std::abs(e0);
      e_prev = x.energy;
      acc.add(x, reference[k * stride]);
    }
    const PendulumErrors err = acc.result();
    std::printf("Dt = %-9g E-error %.4f (table %.4f), attitude error %.4f (%.4f), E(t_N)/E_0 %.4f (%.4f)\n", row.dt,
                err.energy_error, row.e_error, err.attitude_error, row.attitude, e_prev / e0, row.ratio);
    EXPECT_NEAR(err.energy_error, row.e_error, 0.02 * row.e_error) << row.dt;
    EXPECT_NEAR(err.attitude_error, row.attitude, 0.02 * row.attitude) << row.dt;
    EXPECT_NEAR(e_prev / e0, row.ratio, 0.02 * std::abs(row.ratio)) << row.dt;
    EXPECT_FALSE(rose) << "the energy of the implicit pendulum rose at Dt = " << row.dt;
    dts.push_back(row.dt);
    e_errors.push_back(err.energy_error);
    attitudes.push_back(err.attitude_error);
  }
  const double e_slope = loglog_slope(std::span(dts).last(3), std::span(e_errors).last(3));
  const double a_slope = loglog_slope(std::span(dts).last(3), std::span(attitudes).last(3));
  std::printf("slopes over the last three: E-error %.3f, attitude %.3f\n", e_slope, a_slope);
  EXPECT_NEAR(e_slope, 1.0, 0.05);
  EXPECT_NEAR(a_slope, 1.0, 0.05);
}

// The midpoint rule (docs/model.md §12.9) on the pendulum: second order in
// the attitude, and an energy error that is O(Dt²) and does not grow (no
// damping: E(t_N)/E_0 stays near 1, where backward Euler's falls to 0.94
// even at the smallest step of 12.6's table).
TEST(Implicit, MidpointPendulumConvergesWithOrderTwoAndKeepsItsEnergy) {
  const PendulumParameters params;
  const double t_end = 10.0, h_ref = 0.1 / 1024;
  const std::vector<PendulumSample> reference =
      simulate_pendulum(params, IntegratorMap::rrp25, h_ref, static_cast<std::size_t>(std::llround(t_end / h_ref)));
  std::vector<double> dts, e_errors, attitudes;
  for (const double dt : {0.05, 0.025, 0.0125, 0.00625}) {
    ParticleStore s;
    ParticleSpec p;
    p.attitude = params.attitude0;
    p.angular_velocity = params.angular_velocity0;
    p.mass = params.mass;
    p.inertia = params.inertia;
    s.add(p);
    ForceField f;
    f.add(std::make_unique<PendulumField>(params));
    ImplicitSettings settings;
    settings.scheme = ImplicitScheme::midpoint;
    settings.newton_tolerance = 1e-11;
    Simulation sim = implicit_run(std::move(s), std::move(f), dt, settings);
    PendulumErrorAccumulator acc(params);
    const std::size_t steps = static_cast<std::size_t>(std::llround(t_end / dt));
    const std::size_t stride = static_cast<std::size_t>(std::llround(dt / h_ref));
    acc.add(sample_of(sim), reference[0]);
    const double e0 = sample_of(sim).energy;
    double e_end = e0;
    for (std::size_t k = 1; k <= steps; ++k) {
      sim.step();
      const PendulumSample x = sample_of(sim);
      e_end = x.energy;
      acc.add(x, reference[k * stride]);
    }
    const PendulumErrors err = acc.result();
    std::printf("midpoint Dt = %-8g E-error %.3e, attitude error %.3e, E(t_N)/E_0 %.6f\n", dt, err.energy_error,
                err.attitude_error, e_end / e0);
    EXPECT_NEAR(e_end / e0, 1.0, 1e-4) << dt;
    dts.push_back(dt);
    e_errors.push_back(err.energy_error);
    attitudes.push_back(err.attitude_error);
  }
  const double e_slope = loglog_slope(dts, e_errors);
  const double a_slope = loglog_slope(dts, attitudes);
  std::printf("midpoint slopes: E-error %.3f, attitude %.3f\n", e_slope, a_slope);
  EXPECT_NEAR(e_slope, 2.0, 0.15);
  EXPECT_NEAR(a_slope, 2.0, 0.15);
}

namespace {

/// The 14-sphere cluster, deformed, spinning and flying (no walls, no
/// gravity: internal forces only).
Simulation flying_cluster(double dt_factor, double spin, ImplicitSettings settings = {}) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ParticleStore s = cluster();
  ForceField f = bonded(s);
  for (std::size_t i = 0; i < s.size(); ++i) {
    s.position[i] += 0.02 * kRadius * Vec3(u(rng), u(rng), u(rng));
    s.velocity[i] = Vec3(3.0, -1.0, 0.5) + 0.5 * Vec3(u(rng), u(rng), u(rng));
    s.angular_velocity[i] = spin * Vec3(u(rng), u(rng), u(rng));
  }
  const double explicit_limit = bdem_stable_step(kE, kDensity, kRadius, 1.0);
  return implicit_run(std::move(s), std::move(f), dt_factor * explicit_limit, settings);
}

Vec3 momentum(const Simulation& sim) { return sim.energy_report().linear_momentum; }

}  // namespace

TEST(Implicit, FreeClusterKeepsItsLinearMomentumToTheSolverTolerance) {
  Simulation sim = flying_cluster(10.0, 300.0);
  const Vec3 p0 = momentum(sim);
  const ParticleStore& s = sim.particles();
  double bound = 0.0;
  for (int k = 0; k < 40; ++k) {
    sim.step();
    // |Dt sum g_x| <= N e m r / Dt per step, e < newton_tolerance.
    bound += s.size() * sim.implicit_settings().newton_tolerance * s.mass[0] * s.radius[0] / sim.time_step();
  }
  std::printf("|P - P_0| = %.3e after 40 steps (bound %.3e, |P_0| = %.3e)\n", (momentum(sim) - p0).norm(), bound,
              p0.norm());
  EXPECT_LE((momentum(sim) - p0).norm(), bound + 1e-14 * p0.norm());
}

// The midpoint rule's step is twice its half step's velocity change, so its
// bound is four times backward Euler's at the same Dt: |Dt sum g_x| of the
// half step Dt/2 is at most N e m r/(Dt/2), doubled by the extrapolation.
TEST(Implicit, MidpointFreeClusterKeepsItsLinearMomentumToTheSolverTolerance) {
  ImplicitSettings settings;
  settings.scheme = ImplicitScheme::midpoint;
  Simulation sim = flying_cluster(10.0, 300.0, settings);
  const Vec3 p0 = momentum(sim);
  const ParticleStore& s = sim.particles();
  double bound = 0.0;
  for (int k = 0; k < 40; ++k) {
    sim.step();
    bound += 4.0 * s.size() * sim.implicit_settings().newton_tolerance * s.mass[0] * s.radius[0] / sim.time_step();
  }
  std::printf("midpoint: |P - P_0| = %.3e after 40 steps (bound %.3e, |P_0| = %.3e)\n", (momentum(sim) - p0).norm(),
              bound, p0.norm());
  EXPECT_LE((momentum(sim) - p0).norm(), bound + 1e-14 * p0.norm());
}

TEST(Implicit, NewtonConvergesQuadraticallyWithTheExactHessian) {
  // The exact Hessian (no projection) and exact linear solves (CG to
  // 1e-13): the residual's exponent log e_{k+1} / log e_k near the solution.
  ImplicitSettings exact;
  exact.cg_tolerance_max = 1e-13;
  exact.newton_tolerance = 1e-10;  // above the residual's round-off floor, (omega Dt)² 1e-16
  exact.hessian_blocks = HessianBlocks::exact;
  Simulation sim = flying_cluster(10.0, 300.0, exact);
  double worst_exponent = 1e300;
  std::size_t pairs = 0;
  for (int k = 0; k < 10; ++k) {
    sim.step();
    const std::vector<double>& e = sim.last_implicit_step().residuals;
    for (std::size_t j = 0; j + 1 < e.size(); ++j)
      if (e[j] < 0.1 && e[j + 1] > 1e-8) {
        worst_exponent = std::min(worst_exponent, std::log(e[j + 1]) / std::log(e[j]));
        ++pairs;
      }
  }
  std::printf("smallest exponent near the solution %.3f over %zu iteration pairs\n", worst_exponent, pairs);
  EXPECT_GT(pairs, 0u);
  EXPECT_GE(worst_exponent, 1.8);
}

TEST(Implicit, LineSearchHalvesWhereTheFullStepRaisesPhi) {
  // Fast spin at 300 times the explicit limit: some full Newton steps raise
  // Phi and are halved; every step still converges.
  Simulation sim = flying_cluster(300.0, 3000.0);
  std::size_t halvings = 0, iterations = 0;
  for (int k = 0; k < 10; ++k) {
    sim.step();
    halvings += sim.last_implicit_step().halvings;
    iterations += sim.last_implicit_step().newton_iterations;
    EXPECT_LT(sim.last_implicit_step().residual, sim.implicit_settings().newton_tolerance);
  }
  std::printf("10 steps: %zu Newton iterations, %zu line-search halvings\n", iterations, halvings);
  EXPECT_GT(halvings, 0u);
}

namespace {

Simulation implicit_ring(const RingTorusParameters& p, double dt) {
  Scene scene = make_ring_torus(p);
  ForceField field(scene.particles, std::move(scene.bonds), scene.contact, std::move(scene.walls));
  return implicit_run(std::move(scene.particles), std::move(field), dt);
}

}  // namespace

TEST(Implicit, RingTorusWithoutTheWallKeepsItsLinearMomentum) {
  RingTorusParameters p;
  p.wall = false;
  p.tilt_deg = 30.0;
  p.spin = Vec3(0.3, -0.2, 0.5);
  const double dt = 1e-2;
  Simulation sim = implicit_ring(p, dt);
  for (std::size_t i = 0; i < sim.particles().size(); ++i)
    sim.particles().angular_velocity[i] += Vec3(std::sin(i), std::cos(3.0 * i), 0.5 * std::sin(7.0 * i));
  const Vec3 p0 = momentum(sim);
  double bound = 0.0, max_u = 0.0;
  for (int k = 0; k < 300; ++k) {
    sim.step();
    const ParticleStore& s = sim.particles();
    bound += s.size() * sim.implicit_settings().newton_tolerance * s.mass[0] * s.radius[0] / dt;
    const EnergyReport r = sim.energy_report();
    max_u = std::max(max_u, r.bending + r.shear + r.axial);
  }
  std::printf("ring without wall, Dt = %g: |P - P_0| = %.3e (bound %.3e, |P_0| = %.3e)\n", dt,
              (momentum(sim) - p0).norm(), bound, p0.norm());
  EXPECT_LE((momentum(sim) - p0).norm(), bound + 1e-14 * p0.norm());
  EXPECT_GT(max_u, 1e-3) << "the bonds must be loaded for the test to mean anything";
}

TEST(Implicit, RingTorusAtTheWallAtTenTimesTheExplicitLimitLosesEnergyAndNeverBlowsUp) {
  // The explicit limit of the ring with its wall (engine/time_step.hpp,
  // `dem check scenes/ring_torus.toml`): about 2.4e-3, set by the wall.
  RingTorusParameters p;
  const double dt = 0.024;
  Simulation sim = implicit_ring(p, dt);
  const double e0 = sim.energy_report().total();
  double e_prev = e0, touched = 0.0;
  for (int k = 0; k < 1500; ++k) {  // t = 36
    sim.step();
    const EnergyReport r = sim.energy_report();
    ASSERT_TRUE(std::isfinite(r.total()));
    EXPECT_LE(r.total(), e_prev + 1e-12 * e0) << "step " << k;
    e_prev = r.total();
    touched = std::max(touched, r.wall);
  }
  std::printf("ring at the wall, Dt = %g to t = 36: E/E_0 = %.4f, largest U_wall %.3e\n", dt, e_prev / e0, touched);
  EXPECT_GT(touched, 0.0) << "the ring must reach the wall";
  EXPECT_LT(e_prev, e0);
}
