// The two-level preconditioner of the implicit integrator's conjugate
// gradients (engine/two_level_preconditioner.hpp, docs/model.md §12.5 c):
// block Jacobi plus a coarse correction on the rigid motions of aggregates.
// On the Hessian of the low-resolution bending beam at an implicit step of
// 4 ms (164 times the explicit limit):
//   - its coarse correction is the Galerkin projection onto the rigid
//     motions of the aggregates: for r = H P y (P built here, independently
//     of the preconditioner), apply(r) = D^-1 r + P y;
//   - CG converges to the block-Jacobi solution in at most a third of the
//     iterations, with the same bits for 1 and 2 threads;
// and with [run] preconditioner = "two-level" the implicit steps of the beam
// follow the block-Jacobi steps within the Newton tolerance in fewer CG
// iterations, with the same bits for 1 and 2 threads and across a
// checkpoint (with hessian_update = "when-slow", the shipped scene's). Also:
// BlockHessian::multiply equals the sum of the element blocks laid out
// densely here, the element blocks asked for in ranges of records equal
// those of one call, and "when-slow" follows Newton with fewer assemblies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include <Eigen/Dense>

#include "app_support.hpp"
#include "core/parallel.hpp"
#include "engine/block_hessian.hpp"
#include "engine/two_level_preconditioner.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_builder.hpp"
#include "bending_support.hpp"
#include "scene_support.hpp"

using namespace dem;

using namespace dem::testing;
using Problem = BendingProblem;

// BlockHessian::assemble asks for the element Hessians in chunks of
// records (HessianSource::element_hessians from `first`): every provider's
// blocks in ranges of 7 records, the last one shorter, are the same bits as
// in one call over all its records. (The beam's contact pairs are all
// apart, their blocks zero: the values compared are the bonds'.)
TEST(BlockHessian, ElementHessiansInRangesAreTheWholeCall) {
  Problem p = bending_problem();
  const ParticleStore& s = p.sim.particles();
  const ForceField& forces = p.sim.forces();
  std::size_t providers = 0, nonzero = 0;
  for (std::size_t k = 0; k < forces.providers().size(); ++k) {
    const HessianSource* hs = forces.capabilities(k).hessian;
    const std::size_t m = forces.providers()[k]->pair_results().first.size();
    if (hs == nullptr || m == 0) continue;
    ++providers;
    for (const HessianBlocks form : {HessianBlocks::gauss_newton, HessianBlocks::exact}) {
      std::vector<Mat12> whole(m), ranges(m);
      hs->element_hessians(s, 0, whole, form);
      for (std::size_t first = 0; first < m; first += 7)
        hs->element_hessians(s, first, std::span<Mat12>(ranges.data() + first, std::min<std::size_t>(7, m - first)),
                             form);
      for (std::size_t r = 0; r < m; ++r) {
        ASSERT_EQ(std::memcmp(whole[r].data(), ranges[r].data(), sizeof(Mat12)), 0)
            << forces.providers()[k]->name() << ", record " << r;
        if (!whole[r].isZero(0.0)) ++nonzero;
      }
    }
  }
  EXPECT_EQ(providers, 2u);  // the BDEM bonds and the penalty contacts
  EXPECT_GT(nonzero, 7u);    // blocks past the first range
}

TEST(BlockHessian, MultiplyIsTheSumOfTheElementBlocks) {
  Problem p = bending_problem();
  const ParticleStore& s = p.sim.particles();
  const ForceField& forces = p.sim.forces();
  const std::size_t n = s.size();
  // H laid out densely: inertia, every provider's element blocks scattered
  // to their two ends, one-body blocks; fixed particles' rows and columns
  // the identity.
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(6 * n, 6 * n);
  for (std::size_t i = 0; i < n; ++i) dense.block<6, 6>(6 * i, 6 * i) += p.inertia[i];
  std::size_t records = 0;
  for (std::size_t k = 0; k < forces.providers().size(); ++k) {
    const HessianSource* hs = forces.capabilities(k).hessian;
    ASSERT_NE(hs, nullptr);
    const std::span<const std::uint32_t> first = forces.providers()[k]->pair_results().first;
    if (!first.empty()) {
      const std::span<const std::uint32_t> second = hs->record_second_ends();
      std::vector<Mat12> e(first.size());
      hs->element_hessians(s, 0, e, HessianBlocks::gauss_newton);
      for (std::size_t r = 0; r < first.size(); ++r) {
        const std::size_t ends[2] = {first[r], second[r]};
        for (int a = 0; a < 2; ++a)
          for (int c = 0; c < 2; ++c) dense.block<6, 6>(6 * ends[a], 6 * ends[c]) += e[r].block<6, 6>(6 * a, 6 * c);
      }
      records += first.size();
    }
    std::vector<Mat6> body(n, Mat6::Zero());
    hs->add_body_hessians(s, 0, n, body);
    for (std::size_t i = 0; i < n; ++i) dense.block<6, 6>(6 * i, 6 * i) += body[i];
  }
  ASSERT_GT(records, n);  // bonds and contacts
  for (std::size_t i = 0; i < n; ++i)
    if (p.fixed[i]) {
      dense.middleRows(6 * i, 6).setZero();
      dense.middleCols(6 * i, 6).setZero();
      dense.block<6, 6>(6 * i, 6 * i).setIdentity();
    }
  Eigen::VectorXd x(6 * n);
  for (std::size_t i = 0; i < n; ++i) x.segment<6>(6 * i) = p.b[i];
  const Eigen::VectorXd expected = dense * x;
  std::vector<Vec6> y(n);
  p.h.multiply(p.b, y);
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, (y[i] - expected.segment<6>(6 * i)).cwiseAbs().maxCoeff());
  EXPECT_LT(worst, 1e-12 * expected.cwiseAbs().maxCoeff());
  // multiply_row is multiply's row, bit for bit.
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(p.h.multiply_row(i, p.b) == y[i]) << "row " << i;
}

TEST(TwoLevel, AggregatesGrowSoThatThereAreAtMost2048) {
  using T = TwoLevelPreconditioner;
  EXPECT_EQ(T::aggregate_size(1), T::kAggregateSize);
  EXPECT_EQ(T::aggregate_size(T::kAggregateSize * T::kMostAggregates), T::kAggregateSize);
  EXPECT_EQ(T::aggregate_size(T::kAggregateSize * T::kMostAggregates + 1), T::kAggregateSize + 1);
  EXPECT_EQ(T::aggregate_size(220523), 108u);  // the large plate: 2042 aggregates
  for (std::size_t n = 1; n < 2000000; n = n * 3 + 7) {
    const std::size_t size = T::aggregate_size(n);
    const std::size_t count = (n + size - 1) / size;
    EXPECT_LE(count, T::kMostAggregates) << n;
    // The smallest size that keeps the count in bounds (or 16).
    if (size > T::kAggregateSize) {
      EXPECT_GT((n + size - 2) / (size - 1), T::kMostAggregates) << n;
    }
  }
}

TEST(TwoLevel, CoarseCorrectionIsTheGalerkinProjectionOntoRigidMotionsOfTheAggregates) {
  Problem p = bending_problem();
  const ParticleStore& s = p.sim.particles();
  const std::size_t n = s.size();
  TwoLevelPreconditioner pre;
  pre.setup(p.h, s.position);
  // The aggregates: runs of kAggregateSize particles that are not fixed, in
  // slot order; y: a rigid motion (U, Theta) of each, P y their particles'.
  std::vector<std::vector<std::size_t>> aggregates;
  const std::size_t size =
      TwoLevelPreconditioner::aggregate_size(static_cast<std::size_t>(std::count(p.fixed.begin(), p.fixed.end(), 0)));
  ASSERT_EQ(size, TwoLevelPreconditioner::kAggregateSize);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.fixed[i]) continue;
    if (aggregates.empty() || aggregates.back().size() == size)
      aggregates.emplace_back();
    aggregates.back().push_back(i);
  }
  ASSERT_EQ(pre.aggregates(), aggregates.size());
  ASSERT_GT(aggregates.size(), 10u);
  std::vector<Vec6> py(n, Vec6::Zero());
  for (std::size_t a = 0; a < aggregates.size(); ++a) {
    Vec3 c = Vec3::Zero();
    for (std::size_t i : aggregates[a]) c += s.position[i];
    c /= static_cast<double>(aggregates[a].size());
    const Vec3 u(std::sin(1.0 + a), std::cos(2.0 * a), std::sin(3.0 * a + 0.5));
    const Vec3 theta = 10.0 * Vec3(std::cos(1.0 + a), std::sin(a + 0.3), std::cos(0.7 * a));
    for (std::size_t i : aggregates[a]) {
      py[i].head<3>() = 1e-6 * (u + theta.cross(s.position[i] - c));
      py[i].tail<3>() = 1e-6 * theta;
    }
  }
  std::vector<Vec6> r(n), z(n);
  p.h.multiply(py, r);
  pre.apply(r, z);
  double worst = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (p.fixed[i]) continue;
    const Vec6 coarse = z[i] - p.h.inverse_diagonal()[i] * r[i];
    worst = std::max(worst, (coarse - py[i]).cwiseAbs().maxCoeff());
    scale = std::max(scale, py[i].cwiseAbs().maxCoeff());
  }
  std::printf("%zu aggregates; largest |coarse correction - P y| / |P y| = %.3e\n", aggregates.size(), worst / scale);
  EXPECT_LT(worst, 1e-8 * scale);
}

TEST(TwoLevel, ConvergesToTheBlockJacobiSolutionInAThirdOfTheIterations) {
  Problem p = bending_problem();
  const std::size_t n = p.h.size();
  const double tolerance = 1e-8;
  std::vector<Vec6> d_bj(n), d_tl(n);
  const CgResult bj = solve_pcg(p.h, p.b, d_bj, p.w, tolerance, 20000);
  TwoLevelPreconditioner pre;
  pre.setup(p.h, p.sim.particles().position);
  const CgResult tl = solve_pcg(p.h, p.b, d_tl, p.w, tolerance, 20000, {}, {}, &pre);
  std::printf("block Jacobi: %zu iterations (residual %.3e); two-level: %zu iterations (residual %.3e); "
              "|d_tl - d_bj| / |d_bj| = %.3e\n",
              bj.iterations, bj.relative_residual, tl.iterations, tl.relative_residual,
              weighted_distance(d_tl, d_bj, p.w));
  ASSERT_TRUE(bj.converged);
  ASSERT_TRUE(tl.converged);
  EXPECT_LE(3 * tl.iterations, bj.iterations);
  EXPECT_LT(weighted_distance(d_tl, d_bj, p.w), 1e-5);
}

TEST(TwoLevel, SameBitsForOneAndTwoThreads) {
  dem::testing::expect_same_solution_for_one_and_two_threads([](const Problem& p) {
    auto pre = std::make_unique<TwoLevelPreconditioner>();
    pre->setup(p.h, p.sim.particles().position);
    return pre;
  });
}

TEST(TwoLevel, ImplicitStepsFollowBlockJacobiInFewerCgIterations) {
  const int steps = 60;  // 0.24 mm of punch travel
  Simulation bj = bending_simulation(bending_text());
  Simulation tl = bending_simulation(bending_text("two-level"));
  ASSERT_EQ(tl.implicit_settings().preconditioner, CgPreconditioner::two_level);
  const RunCounts c_bj = run_steps(bj, steps), c_tl = run_steps(tl, steps);
  const double worst = dem::testing::largest_position_difference(bj, tl);
  const EnergyReport e_bj = bj.energy_report();
  const double elastic = e_bj.bending + e_bj.axial + e_bj.shear + e_bj.contact;
  std::printf("%d steps: block Jacobi %zu Newton, %zu CG; two-level %zu Newton, %zu CG; largest position "
              "difference %.3e radii\n",
              steps, c_bj.newton, c_bj.cg, c_tl.newton, c_tl.cg, worst);
  EXPECT_GT(elastic, 0.0);  // the beam is loaded
  EXPECT_GT(c_bj.newton, 0u);
  EXPECT_LT(worst, steps * 1e-6);  // both to the Newton tolerance (1e-6 radii a step)
  EXPECT_LT(2 * c_tl.cg, c_bj.cg);
}

TEST(TwoLevel, ImplicitRunIsTheSameForOneAndTwoThreadsAndAcrossACheckpoint) {
  dem::testing::expect_same_run_for_threads_and_checkpoint(
      bending_text("two-level", "when-slow"), [](const Simulation& resumed) {
        EXPECT_EQ(resumed.implicit_settings().preconditioner, CgPreconditioner::two_level);
        EXPECT_EQ(resumed.implicit_settings().hessian_update, HessianUpdate::when_slow);
      });
}

// hessian_update = "when-slow" (docs/model.md §12.5 b): the steps follow
// Newton's (a Hessian at every iteration) within the Newton tolerance, with
// fewer assemblies than Newton iterations.
TEST(HessianUpdate, WhenSlowFollowsNewtonWithFewerAssemblies) {
  const int steps = 60;
  Simulation newton = bending_simulation(bending_text("two-level"));
  Simulation modified = bending_simulation(bending_text("two-level", "when-slow"));
  ASSERT_EQ(modified.implicit_settings().hessian_update, HessianUpdate::when_slow);
  const RunCounts c_n = run_steps(newton, steps), c_m = run_steps(modified, steps);
  const double worst = dem::testing::largest_position_difference(newton, modified);
  std::printf("%d steps: Newton %zu iterations, %zu assemblies; when-slow %zu iterations, %zu assemblies; largest "
              "position difference %.3e radii\n",
              steps, c_n.newton, c_n.assemblies, c_m.newton, c_m.assemblies, worst);
  EXPECT_EQ(c_n.assemblies, c_n.newton);
  EXPECT_LT(c_m.assemblies, c_m.newton);
  EXPECT_GE(c_m.assemblies, static_cast<std::size_t>(steps) / 2);  // at least one a step that iterates
  EXPECT_LT(worst, steps * 1e-6);
}
