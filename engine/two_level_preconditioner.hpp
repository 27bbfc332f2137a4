#pragma once
/// \file two_level_preconditioner.hpp
/// A two-level preconditioner of the implicit integrator's conjugate
/// gradients (docs/model.md §12.5 c, [run] preconditioner = "two-level"):
/// block Jacobi plus a coarse correction on the rigid-body motions of
/// aggregates of particles,
///
///     z = D^-1 r + P (Pᵀ H P)^-1 Pᵀ r,
///
/// the additive two-level Schwarz method with the tentative prolongator of
/// smoothed-aggregation multigrid (Vaněk, Mandel & Brezina 1996): P maps
/// each aggregate's translation U and rotation Theta (6 coarse unknowns) to
/// its particles' (delta x_i, phi_i) = (U + Theta x (x_i - c_a), Theta),
/// c_a the aggregate's mean position. Rigid motions of a bonded cluster
/// cost no energy, so they are the slow modes of block Jacobi that the
/// coarse space takes out; the coarse matrix Pᵀ H P (6 unknowns an
/// aggregate, sparse: a block for each pair of aggregates that a coupling
/// joins) is assembled in a fixed order and factorised by sparse Cholesky
/// (Eigen's SimplicialLLT with its minimum-degree ordering).
///
/// Aggregates: the particles that are not fixed, in slot order (the store
/// is Morton-ordered, so consecutive slots lie together), cut into runs of
/// `aggregate_size(n)` particles.
///
/// Same bits for any thread count (every sum in a fixed order). Only for an
/// undivided system: the aggregates are runs of slots, which differ between
/// MPI parts.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCholesky>

#include "core/types.hpp"
#include "engine/block_hessian.hpp"

namespace dem {

/// Why "two-level" is refused on a part of an MPI run.
inline constexpr const char* kTwoLevelOneProcessOnly =
    "preconditioner = \"two-level\" runs in one process only (its aggregates are runs of a process's particles, "
    "which differ between MPI parts, so the bits would change with the rank count); use \"block-jacobi\" under "
    "mpirun";

class TwoLevelPreconditioner final : public Preconditioner {
 public:
  /// Particles an aggregate below kMostAggregates x kAggregateSize free
  /// particles (the last aggregate may hold fewer).
  static constexpr std::size_t kAggregateSize = 16;
  /// The most aggregates: 6 x 2048 coarse unknowns. Eigen's simplicial
  /// Cholesky of the coarse matrix costs 0.9 s at 2048 aggregates on the
  /// large plate (220,523 particles), 7.3 s at 4096 and over 20 minutes at
  /// 13,783 (runs of 16); docs/model.md §12.5 c.
  static constexpr std::size_t kMostAggregates = 2048;
  /// Particles an aggregate for `free_particles` particles that are not
  /// fixed: max(kAggregateSize, ceil(free_particles / kMostAggregates)).
  static std::size_t aggregate_size(std::size_t free_particles);

  /// The aggregates and coarse matrix of `h` at the positions `position`
  /// (one per particle, the configuration h was assembled at). Throws
  /// std::runtime_error if the coarse matrix is not positive definite.
  void setup(const BlockHessian& h, std::span<const Vec3> position);
  /// z = D^-1 r + P (Pᵀ H P)^-1 Pᵀ r (one entry per particle), with D the
  /// diagonal blocks of the BlockHessian given to setup() as they are now
  /// (it is read, not copied: it must outlive the calls). After setup().
  void apply(std::span<const Vec6> r, std::span<Vec6> z) const override;

  /// The aggregates of the last setup().
  std::size_t aggregates() const { return first_.empty() ? 0 : first_.size() - 1; }

 private:
  /// (delta x_i, phi_i) = T_i (U, Theta) of particle i of its aggregate.
  Mat6 rigid_map(std::size_t i) const;

  const BlockHessian* h_ = nullptr;
  std::vector<std::uint32_t> members_;  ///< the particles of the aggregates, aggregate by aggregate
  std::vector<std::uint32_t> first_;    ///< aggregate a: members_[first_[a], first_[a + 1])
  std::vector<std::int32_t> aggregate_of_;  ///< per particle; -1: fixed
  std::vector<Vec3> offset_;            ///< x_i - c_a per particle
  Eigen::SimplicialLLT<Eigen::SparseMatrix<double>> coarse_;
  mutable Eigen::VectorXd coarse_rhs_;
};

}  // namespace dem
