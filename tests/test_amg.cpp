// hypre's BoomerAMG as the preconditioner of the implicit integrator's
// conjugate gradients (engine/amg_preconditioner.hpp): on the Hessian of
// the low-resolution bending beam at an implicit step of 4 ms (164 times
// the explicit limit) it converges to the same tolerance as block Jacobi,
// to the same solution within that tolerance, in fewer iterations, and
// with the same bits for 1 and 2 threads. The CSR form of the Hessian
// (BlockHessian::to_csr) multiplies as BlockHessian::multiply does. With
// [run] preconditioner = "amg" the implicit steps of the beam follow the
// block-Jacobi steps within the Newton tolerance in fewer CG iterations, and
// give the same bits for 1 and 2 threads and across a checkpoint. Skipped
// where the build has no hypre.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <vector>

#include "app_support.hpp"
#include "core/parallel.hpp"
#include "engine/amg_preconditioner.hpp"
#include "engine/block_hessian.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_builder.hpp"
#include "bending_support.hpp"
#include "scene_support.hpp"

using namespace dem;

using namespace dem::testing;
using Problem = BendingProblem;

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
  dem::testing::expect_same_solution_for_one_and_two_threads([](const Problem& p) {
    auto amg = std::make_unique<AmgPreconditioner>();
    amg->setup(p.h);
    return amg;
  });
}

TEST(Amg, ImplicitStepsFollowBlockJacobiInFewerCgIterations) {
  if (!amg_available()) GTEST_SKIP() << "this build has no hypre";
  const int steps = 60;  // 0.24 mm of punch travel
  Simulation bj = bending_simulation(bending_text());
  Simulation amg = bending_simulation(bending_text("amg"));
  ASSERT_EQ(amg.implicit_settings().preconditioner, CgPreconditioner::amg);
  const RunCounts c_bj = run_steps(bj, steps), c_amg = run_steps(amg, steps);
  const double worst = dem::testing::largest_position_difference(bj, amg);
  const EnergyReport e_bj = bj.energy_report(), e_amg = amg.energy_report();
  const double elastic = e_bj.bending + e_bj.axial + e_bj.shear + e_bj.contact;
  std::printf("%d steps: block Jacobi %zu Newton, %zu CG; AMG %zu Newton, %zu CG; largest position difference "
              "%.3e radii; elastic energy %.6e J (AMG %.6e J)\n",
              steps, c_bj.newton, c_bj.cg, c_amg.newton, c_amg.cg, worst, elastic,
              e_amg.bending + e_amg.axial + e_amg.shear + e_amg.contact);
  EXPECT_GT(elastic, 0.0);  // the beam is loaded
  EXPECT_GT(c_bj.newton, 0u);
  // Both solve each step to the Newton tolerance (1e-6 of a radius per
  // step); their states differ by that, accumulated over the steps.
  EXPECT_LT(worst, steps * 1e-6);
  EXPECT_LT(2 * c_amg.cg, c_bj.cg);
}

TEST(Amg, ImplicitRunIsTheSameForOneAndTwoThreadsAndAcrossACheckpoint) {
  if (!amg_available()) GTEST_SKIP() << "this build has no hypre";
  dem::testing::expect_same_run_for_threads_and_checkpoint(bending_text("amg"), [](const Simulation& resumed) {
    EXPECT_EQ(resumed.implicit_settings().preconditioner, CgPreconditioner::amg);
  });
}
