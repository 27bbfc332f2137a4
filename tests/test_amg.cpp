// hypre's BoomerAMG as the preconditioner of the implicit integrator's
// conjugate gradients (engine/amg_preconditioner.hpp): on the Hessian of
// the low-resolution bending beam at an implicit step of 4 ms (164 times
// the explicit limit) it converges to the same tolerance as block Jacobi,
// to the same solution within that tolerance, in fewer iterations, and
// with the same bits for 1 and 2 threads. The CSR form of the Hessian
// (BlockHessian::to_csr) multiplies as BlockHessian::multiply does. Skipped
// where the build has no hypre.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "app_support.hpp"
#include "core/parallel.hpp"
#include "engine/amg_preconditioner.hpp"
#include "engine/block_hessian.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;

namespace {

constexpr double kDt = 4e-3;

struct Problem {
  Simulation sim;
  BlockHessian h;
  std::vector<Vec6> b, w;
};

Problem bending_problem() {
  const std::string text =
      dem::testing::read_file_text(std::filesystem::path(DEM_SOURCE_DIR) / "scenes/three_point_bending_low_quasi_static.toml");
  Problem p{make_simulation(build_scene(parse_scene_text(text, "bending.toml", "."))), {}, {}, {}};
  for (int k = 0; k < 50; ++k) p.sim.step();  // loaded: 0.2 mm of punch travel
  const ParticleStore& s = p.sim.particles();
  const std::size_t n = s.size();
  std::vector<Mat6> inertia(n, Mat6::Zero());
  std::vector<char> fixed(n, 0);
  p.b.resize(n);
  p.w.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double mt = s.mass[i] / (kDt * kDt), mr = s.inertia[i] / (kDt * kDt);
    inertia[i].diagonal() << mt, mt, mt, mr, mr, mr;
    fixed[i] = s.is_kinematic(i) ? 1 : 0;
    p.w[i] << 1 / mt, 1 / mt, 1 / mt, 1 / mr, 1 / mr, 1 / mr;
    for (int a = 0; a < 6; ++a) p.b[i][a] = fixed[i] ? 0.0 : std::sin(1.0 + 7.0 * i + a) * (a < 3 ? 1e-3 : 1e-6);
  }
  p.h.assemble(s, p.sim.forces(), inertia, fixed, HessianBlocks::gauss_newton);
  return p;
}

double weighted_distance(const std::vector<Vec6>& a, const std::vector<Vec6>& b, const std::vector<Vec6>& w) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]).cwiseProduct(a[i] - b[i]).dot(w[i].cwiseInverse());
    den += b[i].cwiseProduct(b[i]).dot(w[i].cwiseInverse());
  }
  return std::sqrt(num / den);
}

}  // namespace

TEST(Amg, CsrFormMultipliesAsTheBlocks) {
  Problem p = bending_problem();
  std::vector<std::int64_t> offsets, columns;
  std::vector<double> values;
  p.h.to_csr(offsets, columns, values);
  const std::size_t n = p.h.size();
  ASSERT_EQ(offsets.size(), 6 * n + 1);
  std::vector<Vec6> y(n);
  p.h.multiply(p.b, y);
  double worst = 0.0, scale = 0.0;
  for (std::size_t r = 0; r < 6 * n; ++r) {
    double sum = 0.0;
    for (auto k = offsets[r]; k < offsets[r + 1]; ++k) {
      if (k > offsets[r]) {
        ASSERT_LT(columns[k - 1], columns[k]) << "row " << r;
      }
      sum += values[k] * p.b[columns[k] / 6][columns[k] % 6];
    }
    worst = std::max(worst, std::abs(sum - y[r / 6][r % 6]));
    scale = std::max(scale, std::abs(y[r / 6][r % 6]));
  }
  EXPECT_LT(worst, 1e-12 * scale);
}

TEST(Amg, ConvergesToTheBlockJacobiSolutionInFewerIterations) {
  if (!amg_available()) GTEST_SKIP() << "this build has no hypre";
  Problem p = bending_problem();
  const std::size_t n = p.h.size();
  const double tolerance = 1e-8;
  std::vector<Vec6> d_bj(n), d_amg(n);
  const CgResult bj = solve_pcg(p.h, p.b, d_bj, p.w, tolerance, 20000);
  AmgPreconditioner amg;
  amg.setup(p.h);
  const CgResult am = solve_pcg(p.h, p.b, d_amg, p.w, tolerance, 20000, {}, {}, &amg);
  std::printf("block Jacobi: %zu iterations (residual %.3e); AMG: %zu iterations (residual %.3e); |d_amg - d_bj| / |d_bj| = %.3e\n",
              bj.iterations, bj.relative_residual, am.iterations, am.relative_residual,
              weighted_distance(d_amg, d_bj, p.w));
  ASSERT_TRUE(bj.converged);
  ASSERT_TRUE(am.converged);
  EXPECT_LT(am.iterations, bj.iterations);
  EXPECT_LT(weighted_distance(d_amg, d_bj, p.w), 1e-5);
}

TEST(Amg, SameBitsForOneAndTwoThreads) {
  if (!amg_available()) GTEST_SKIP() << "this build has no hypre";
  std::vector<std::vector<Vec6>> runs;
  for (const std::size_t threads : {1, 2}) {
    ThreadLimit limit(threads);
    Problem p = bending_problem();
    std::vector<Vec6> d(p.h.size());
    AmgPreconditioner amg;
    amg.setup(p.h);
    (void)solve_pcg(p.h, p.b, d, p.w, 1e-8, 20000, {}, {}, &amg);
    runs.push_back(d);
  }
  EXPECT_TRUE(runs[0] == runs[1]);
}
