// The three-dimensional pendulum, docs/model.md §6 (Baker & Gonzalez 2021,
// section 3 and Figure 1), and the error measures of docs/model.md §5.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "apps/pendulum.hpp"
#include "core/rotation.hpp"

namespace {

using dem::IntegratorMap;

const IntegratorMap kMaps[] = {IntegratorMap::rrp23, IntegratorMap::rrp25, IntegratorMap::rrp27};

std::string name(IntegratorMap map) { return "map (" + dem::integrator_map_name(map) + ")"; }

TEST(PendulumModel, InitialStateIsThePapers) {
  const dem::PendulumParameters p;
  // alpha(0) = [0,1,0] 2 tan(3 pi/8): a turn by 3 pi/4 about e2.
  const dem::Mat3 expected =
      Eigen::AngleAxisd(0.75 * std::numbers::pi, dem::Vec3::UnitY()).toRotationMatrix();
  EXPECT_LT((p.attitude0.toRotationMatrix() - expected).norm(), 1e-15);
  EXPECT_NEAR(dem::quaternion_angle(p.attitude0), 0.75 * std::numbers::pi, 1e-15);
  EXPECT_LT((p.angular_velocity0 - dem::Vec3(0.2, 0.0, 0.2)).norm(), 1e-16);
  // (R rho0).Omega = 0 initially, E_0 = 0.04 + sqrt(2)/2.
  EXPECT_NEAR((p.attitude0 * p.rho0).dot(p.angular_velocity0), 0.0, 1e-16);
  EXPECT_NEAR(dem::pendulum_energy(p, p.attitude0, p.angular_velocity0),
              0.04 + std::sqrt(0.5), 1e-15);
}

// docs/model.md §2: tau = -dU/dphi at phi = 0 with R -> exp(S(phi)) R.
TEST(PendulumModel, MomentIsMinusTheSpatialGradientOfThePotential) {
  dem::PendulumParameters p;
  p.mass = 1.7;
  p.gravity = 0.9;
  p.rho0 = dem::Vec3(0.3, -0.2, 1.1);
  const dem::Vec3 rotations[] = {{0.0, 0.0, 0.0}, {0.4, -1.2, 2.1}, {-2.5, 0.3, 0.7}};
  const double eps = 1e-6;
  for (const dem::Vec3& phi0 : rotations) {
    const dem::Mat3 r = dem::rotation_matrix_exp(phi0);
    const dem::Vec3 tau = dem::pendulum_moment(p, dem::Quat(r));
    for (int a = 0; a < 3; ++a) {
      const dem::Vec3 d = eps * dem::Vec3::Unit(a);
      const double up = dem::pendulum_potential(p, dem::Quat(dem::rotation_matrix_exp(d) * r));
      const double um = dem::pendulum_potential(p, dem::Quat(dem::rotation_matrix_exp(-d) * r));
      EXPECT_NEAR(tau[a], -(up - um) / (2.0 * eps), 1e-8) << "component " << a;
    }
  }
}

// Eqs. (41b), (41c): every map keeps (R rho0).Omega and |R rho0| to round-off.
TEST(PendulumRun, ConservesAxisMomentumAndNormToRoundOff) {
  const dem::PendulumParameters p;
  for (IntegratorMap map : kMaps) {
    const auto run = dem::simulate_pendulum(p, map, 0.05, 200);
    ASSERT_EQ(run.size(), 201u);
    EXPECT_NEAR(run.back().time, 10.0, 1e-12);
    double axis_err = 0.0, norm_err = 0.0, swing = 0.0;
    for (const auto& s : run) {
      swing = std::max(swing, s.angular_velocity.norm() - run[0].angular_velocity.norm());
      const dem::Vec3 axis = s.attitude * p.rho0;
      axis_err = std::max(axis_err, std::abs(axis.dot(s.angular_velocity)));
      norm_err = std::max(norm_err, std::abs(axis.norm() - 1.0));
    }
    EXPECT_LE(axis_err, 1e-13) << name(map);
    EXPECT_LE(norm_err, 1e-13) << name(map);
    // The pendulum does swing: the energy moves between its two forms.
    EXPECT_GT(swing, 0.1) << name(map);
  }
}

// Maps (23) and (25) are symmetric: stepping forward, negating Omega and
// stepping back returns to the start.
TEST(PendulumRun, MapsTwentyThreeAndTwentyFiveAreTimeReversible) {
  const dem::PendulumParameters p;
  for (IntegratorMap map : {IntegratorMap::rrp23, IntegratorMap::rrp25}) {
    const auto forward = dem::simulate_pendulum(p, map, 0.05, 200);
    dem::PendulumParameters back = p;
    back.attitude0 = forward.back().attitude;
    back.angular_velocity0 = -forward.back().angular_velocity;
    const auto backward = dem::simulate_pendulum(back, map, 0.05, 200);
    const auto& end = backward.back();
    EXPECT_LT(dem::quaternion_angle(end.attitude.conjugate() * p.attitude0), 1e-12) << name(map);
    EXPECT_LT((end.angular_velocity + p.angular_velocity0).norm(), 1e-12) << name(map);
  }
}

TEST(PendulumRun, MapTwentyThreeReportsAnUnstableStep) {
  // h |w_0| = 3 |(0.2, -1.5/sqrt(2), 0.2)| > 1 at the first step.
  EXPECT_THROW(dem::simulate_pendulum({}, IntegratorMap::rrp23, 3.0, 1), dem::StabilityError);
}

TEST(PendulumRun, RejectsBadArguments) {
  const dem::PendulumParameters p;
  EXPECT_THROW(dem::PendulumRun(p, IntegratorMap::rrp25, 0.0), std::invalid_argument);
  EXPECT_THROW(dem::PendulumRun(p, IntegratorMap::rrp25, -0.1), std::invalid_argument);
  EXPECT_THROW(dem::PendulumRun(p, IntegratorMap::rrp25, NAN), std::invalid_argument);
  dem::PendulumParameters bad = p;
  bad.inertia = 0.0;
  EXPECT_THROW(dem::PendulumRun(bad, IntegratorMap::rrp25, 0.1), std::invalid_argument);
  EXPECT_THROW(dem::simulate_pendulum(p, IntegratorMap::rrp25, 0.1, 10, 3),
               std::invalid_argument);
  const std::vector<double> steps{0.1, 0.05};
  EXPECT_THROW(dem::pendulum_convergence(p, IntegratorMap::rrp25, steps, 0.0),
               std::invalid_argument);
  EXPECT_THROW(dem::pendulum_convergence(p, IntegratorMap::rrp25, steps, 1.03),
               std::invalid_argument);  // not a whole number of steps
  EXPECT_THROW(dem::pendulum_convergence(p, IntegratorMap::rrp25, steps, 1.0, 50),
               std::invalid_argument);  // reference not 100 times finer
  const std::vector<double> odd{0.1, 0.03};
  EXPECT_THROW(dem::pendulum_convergence(p, IntegratorMap::rrp25, odd, 3.0, 100),
               std::invalid_argument);  // 0.1 is not a multiple of 0.0003
}

TEST(PendulumErrors, VanishAgainstItselfAndMeasureAKnownOffset) {
  const dem::PendulumParameters p;
  const auto run = dem::simulate_pendulum(p, IntegratorMap::rrp25, 0.05, 200);
  const auto same = dem::pendulum_errors(p, run, run);
  EXPECT_EQ(same.q_error, 0.0);
  EXPECT_EQ(same.attitude_error, 0.0);

  // A reference turned by a fixed 1e-3 rad about e1 gives that attitude error.
  auto turned = run;
  const dem::Quat d(Eigen::AngleAxisd(1e-3, dem::Vec3::UnitX()));
  for (auto& s : turned) s.attitude = d * s.attitude;
  EXPECT_NEAR(dem::pendulum_errors(p, run, turned).attitude_error, 1e-3, 1e-12);

  // E-error by hand (eq. 38): a constant offset dE gives |dE| / |E_0|.
  auto shifted = run;
  // E_0 is taken from the first sample, so that one keeps E_0.
  for (std::size_t k = 1; k < shifted.size(); ++k) shifted[k].energy = run[0].energy + 0.01;
  const double e = dem::pendulum_errors(p, shifted, run).energy_error;
  // Trapezoid: the offset is absent only on the first half interval.
  const double t = 10.0, h = 0.05;
  EXPECT_NEAR(e, 0.01 * std::sqrt((t - 0.5 * h) / t) / std::abs(run[0].energy), 1e-14);

  auto mismatched = run;
  mismatched[3].time += 1e-3;
  EXPECT_THROW(dem::pendulum_errors(p, run, mismatched), std::invalid_argument);
}

TEST(PendulumErrors, LogLogSlope) {
  const std::vector<double> h{0.1, 0.05, 0.025, 0.0125};
  std::vector<double> e;
  for (double x : h) e.push_back(3.0 * x * x);
  EXPECT_NEAR(dem::loglog_slope(h, e), 2.0, 1e-12);
  e[1] = 0.0;
  EXPECT_TRUE(std::isnan(dem::loglog_slope(h, e)));
}

// The convergence study of docs/model.md §6 / the paper's Figure 1:
// t_N = 10, h = 0.1 ... 0.0125, reference of the same map at 0.0125/100.
class PendulumConvergence : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const dem::PendulumParameters p;
    for (IntegratorMap map : kMaps)
      rows_[map] = dem::pendulum_convergence(p, map, steps_, 10.0, 100);
  }
  static double slope(IntegratorMap map, double dem::PendulumErrors::*member) {
    std::vector<double> err;
    for (const auto& r : rows_[map]) err.push_back(r.errors.*member);
    return dem::loglog_slope(steps_, err);
  }
  static inline const std::vector<double> steps_{0.1, 0.05, 0.025, 0.0125};
  static inline std::map<IntegratorMap, std::vector<dem::PendulumConvergenceRow>> rows_;
};

TEST_F(PendulumConvergence, EnergyErrorSlopes) {
  EXPECT_NEAR(slope(IntegratorMap::rrp23, &dem::PendulumErrors::energy_error), 2.0, 0.25);
  EXPECT_NEAR(slope(IntegratorMap::rrp25, &dem::PendulumErrors::energy_error), 2.0, 0.25);
  EXPECT_NEAR(slope(IntegratorMap::rrp27, &dem::PendulumErrors::energy_error), 1.0, 0.25);
}

TEST_F(PendulumConvergence, AttitudeErrorSlopes) {
  EXPECT_NEAR(slope(IntegratorMap::rrp23, &dem::PendulumErrors::attitude_error), 2.0, 0.25);
  EXPECT_NEAR(slope(IntegratorMap::rrp25, &dem::PendulumErrors::attitude_error), 2.0, 0.25);
  EXPECT_NEAR(slope(IntegratorMap::rrp27, &dem::PendulumErrors::attitude_error), 1.0, 0.25);
}

// Eq. (37) takes the square root of a difference of squared norms, so a
// second-order trajectory gives slope 1 (the paper's "linear convergence")
// and the first-order map (27) slope 1/2.
TEST_F(PendulumConvergence, QErrorSlopes) {
  EXPECT_NEAR(slope(IntegratorMap::rrp25, &dem::PendulumErrors::q_error), 1.0, 0.1);
  EXPECT_NEAR(slope(IntegratorMap::rrp23, &dem::PendulumErrors::q_error), 1.0, 0.15);
  EXPECT_NEAR(slope(IntegratorMap::rrp27, &dem::PendulumErrors::q_error), 0.5, 0.1);
}

TEST_F(PendulumConvergence, MapTwentyFiveEnergyErrorMatchesTheModel) {
  const auto& rows = rows_[IntegratorMap::rrp25];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].h, 0.05);
  EXPECT_NEAR(rows[1].errors.energy_error, 1.3e-4, 0.2 * 1.3e-4);
}

TEST_F(PendulumConvergence, ConservationHoldsAtEveryStep) {
  for (IntegratorMap map : kMaps)
    for (const auto& r : rows_[map]) {
      EXPECT_LE(r.errors.axis_momentum_error, 1e-13) << name(map) << " h = " << r.h;
      EXPECT_LE(r.errors.norm_error, 1e-13) << name(map) << " h = " << r.h;
    }
}

// The app, when it has been built next to this test.
class PendulumApp : public ::testing::Test {
 protected:
  void SetUp() override {
    app_ = std::filesystem::path(DEM_BINARY_DIR) / "apps" / "dem_pendulum";
    if (!std::filesystem::exists(app_)) GTEST_SKIP() << "dem_pendulum not built at " << app_;
    dir_ = std::filesystem::temp_directory_path() /
           ("test_pendulum_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  int run(const std::string& args) {
    const std::string cmd = app_.string() + " " + args + " > /dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  std::filesystem::path app_, dir_;
};

TEST_F(PendulumApp, WritesTheTable) {
  const auto out = dir_ / "nested" / "out";
  ASSERT_EQ(run("--output-dir " + out.string()), 0);
  std::ifstream in(out / "pendulum_convergence.csv");
  ASSERT_TRUE(in);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "integrator,h,E_error,q_error,attitude_error,axis_momentum_error,norm_error");
  std::vector<std::string> rows;
  while (std::getline(in, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(rows[0].substr(0, 26), "23,1.0000000000000001e-01,");
  EXPECT_EQ(rows[5].substr(0, 26), "25,5.0000000000000003e-02,");
  EXPECT_EQ(rows[11].substr(0, 3), "27,");
  EXPECT_FALSE(std::filesystem::exists(out / "pendulum_convergence.csv.tmp"));
}

TEST_F(PendulumApp, RejectsBadOptions) {
  std::filesystem::create_directories(dir_);
  EXPECT_NE(run("--output-dir " + dir_.string() + " --t-end 0"), 0);
  EXPECT_NE(run("--output-dir " + dir_.string() + " --t-end -1"), 0);
  EXPECT_NE(run("--output-dir " + dir_.string() + " --t-end 1.03"), 0);
  EXPECT_NE(run("--output-dir " + dir_.string() + " --steps 0.1 -0.05"), 0);
  EXPECT_NE(run("--output-dir " + dir_.string() + " --refinement 10"), 0);
  // A reference run of 8e11 steps is refused at once rather than run.
  EXPECT_NE(run("--output-dir " + dir_.string() + " --refinement 1000000000"), 0);
  EXPECT_NE(run("--output-dir " + dir_.string() + " --threads -1"), 0);
  EXPECT_NE(run("--output-dir " + dir_.string() + " --no-such-option"), 0);
  // An output folder that cannot be created: its parent is a file.
  std::ofstream(dir_ / "file") << "x";
  EXPECT_EQ(run("--output-dir " + (dir_ / "file" / "sub").string()), 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "pendulum_convergence.csv"));
}

}  // namespace
