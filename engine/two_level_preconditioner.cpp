#include "engine/two_level_preconditioner.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/parallel.hpp"

namespace dem {

Mat6 TwoLevelPreconditioner::rigid_map(std::size_t i) const {
  // delta x = U + Theta x d = U - S(d) Theta, phi = Theta (S(d) v = d x v).
  const Vec3& d = offset_[i];
  Mat6 t = Mat6::Identity();
  t(0, 4) = d.z();
  t(0, 5) = -d.y();
  t(1, 3) = -d.z();
  t(1, 5) = d.x();
  t(2, 3) = d.y();
  t(2, 4) = -d.x();
  return t;
}

std::size_t TwoLevelPreconditioner::aggregate_size(std::size_t free_particles) {
  return std::max(kAggregateSize, (free_particles + kMostAggregates - 1) / kMostAggregates);
}

void TwoLevelPreconditioner::setup(const BlockHessian& h, std::span<const Vec3> position) {
  h_ = &h;
  const std::size_t n = h.size();
  members_.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (!h.fixed(i)) members_.push_back(static_cast<std::uint32_t>(i));
  const std::size_t size = aggregate_size(members_.size());
  const std::size_t count = (members_.size() + size - 1) / size;
  first_.assign(count + 1, 0);
  for (std::size_t a = 0; a <= count; ++a) first_[a] = static_cast<std::uint32_t>(std::min(a * size, members_.size()));
  aggregate_of_.assign(n, -1);
  offset_.assign(n, Vec3::Zero());
  parallel_for_ranges(count, [&](std::size_t begin, std::size_t end) {
    for (std::size_t a = begin; a < end; ++a) {
      Vec3 centre = Vec3::Zero();
      for (std::uint32_t m = first_[a]; m < first_[a + 1]; ++m) centre += position[members_[m]];
      centre /= static_cast<double>(first_[a + 1] - first_[a]);
      for (std::uint32_t m = first_[a]; m < first_[a + 1]; ++m) {
        aggregate_of_[members_[m]] = static_cast<std::int32_t>(a);
        offset_[members_[m]] = position[members_[m]] - centre;
      }
    }
  });
  // Pᵀ H P, block row by block row: aggregate a's members in order, each
  // member's diagonal block and then its row's couplings in order, into the
  // blocks of the aggregates they reach (ascending).
  std::vector<std::vector<std::pair<std::uint32_t, Mat6>>> block_rows(count);
  parallel_for_ranges(count, [&](std::size_t begin, std::size_t end) {
    std::vector<std::uint32_t> reached;
    for (std::size_t a = begin; a < end; ++a) {
      reached.assign(1, static_cast<std::uint32_t>(a));
      for (std::uint32_t m = first_[a]; m < first_[a + 1]; ++m)
        for (const BlockHessian::Coupling& c : h.row(members_[m]))
          reached.push_back(static_cast<std::uint32_t>(aggregate_of_[c.other]));
      std::sort(reached.begin(), reached.end());
      reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
      auto& row = block_rows[a];
      row.resize(reached.size());
      for (std::size_t k = 0; k < reached.size(); ++k) row[k] = {reached[k], Mat6::Zero()};
      const auto block = [&](std::uint32_t b) -> Mat6& {
        return std::lower_bound(row.begin(), row.end(), b, [](const auto& e, std::uint32_t x) { return e.first < x; })
            ->second;
      };
      for (std::uint32_t m = first_[a]; m < first_[a + 1]; ++m) {
        const std::uint32_t i = members_[m];
        const Mat6 ti_t = rigid_map(i).transpose();
        block(static_cast<std::uint32_t>(a)) += ti_t * h.diagonal()[i] * rigid_map(i);
        for (const BlockHessian::Coupling& c : h.row(i)) {
          Mat6& into = block(static_cast<std::uint32_t>(aggregate_of_[c.other]));
          if (c.transposed) into += ti_t * c.block->transpose() * rigid_map(c.other);
          else into += ti_t * *c.block * rigid_map(c.other);
        }
      }
    }
  });
  // Its lower triangle in compressed columns (column a's rows: block rows
  // b >= a of block column a, i.e. the transposes of row a's blocks).
  const auto rows = static_cast<Eigen::Index>(6 * count);
  std::vector<Eigen::Triplet<double>> entries;
  for (std::size_t a = 0; a < count; ++a)
    for (const auto& [b, m] : block_rows[a]) {
      if (b < a) continue;
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c)
          if (6 * b + r >= 6 * a + c)
            entries.emplace_back(static_cast<Eigen::Index>(6 * b + r), static_cast<Eigen::Index>(6 * a + c), m(c, r));
    }
  Eigen::SparseMatrix<double> coarse(rows, rows);
  coarse.setFromTriplets(entries.begin(), entries.end());
  coarse_.compute(coarse);
  coarse_rhs_.resize(rows);
}

void TwoLevelPreconditioner::apply(std::span<const Vec6> r, std::span<Vec6> z) const {
  const BlockHessian& h = *h_;
  const std::size_t count = aggregates();
  // Pᵀ r, aggregate by aggregate in member order: T_iᵀ r_i = (r_x, r_phi +
  // d_i x r_x), rigid_map's transpose written out.
  parallel_for_ranges(count, [&](std::size_t begin, std::size_t end) {
    for (std::size_t a = begin; a < end; ++a) {
      Vec3 force = Vec3::Zero(), moment = Vec3::Zero();
      for (std::uint32_t m = first_[a]; m < first_[a + 1]; ++m) {
        const std::uint32_t i = members_[m];
        force += r[i].head<3>();
        moment += r[i].tail<3>() + offset_[i].cross(r[i].head<3>());
      }
      coarse_rhs_.segment<3>(static_cast<Eigen::Index>(6 * a)) = force;
      coarse_rhs_.segment<3>(static_cast<Eigen::Index>(6 * a + 3)) = moment;
    }
  });
  const Eigen::VectorXd y = coarse_.solve(coarse_rhs_);
  // z_i = D_i^-1 r_i + T_i y_a, T_i y = (U + Theta x d_i, Theta).
  parallel_for_ranges(h.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      z[i] = h.inverse_diagonal()[i] * r[i];
      if (aggregate_of_[i] < 0) continue;
      const auto a = static_cast<Eigen::Index>(6 * aggregate_of_[i]);
      const Vec3 theta = y.segment<3>(a + 3);
      z[i].head<3>() += y.segment<3>(a) + theta.cross(offset_[i]);
      z[i].tail<3>() += theta;
    }
  });
}

}  // namespace dem
