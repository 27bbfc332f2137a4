#pragma once
/// \file amg_preconditioner.hpp
/// Algebraic multigrid (hypre's BoomerAMG) as the preconditioner of the
/// implicit integrator's conjugate gradients (docs/model.md §12.5 c):
/// z = one V-cycle of BoomerAMG on H applied to r, from z = 0. H is the
/// BlockHessian assembled into compressed rows (BlockHessian::to_csr), 6
/// unknowns per particle, coarsened as a system of 6 functions.
///
/// Same bits: Debian's hypre runs each process single-threaded (it is built
/// without OpenMP) and the matrix is assembled in slot order with sorted
/// columns, so z does not depend on the TBB thread count. Only for an
/// undivided system: hypre's parallel coarsening depends on the partition.
///
/// Built only where CMake finds hypre (DEM_WITH_HYPRE; `amg_available()`
/// says). hypre is linked with MPI: a process that has not initialised MPI
/// initialises it (an Open MPI singleton) at the first AMG set-up and
/// finalises it at exit.

#include <memory>
#include <span>

#include "engine/block_hessian.hpp"

namespace dem {

/// True if this build has hypre.
bool amg_available();

/// Why AMG is refused on a part of an MPI run (ImplicitStep's error, and
/// `dem run`'s under mpirun before the run starts).
inline constexpr const char* kAmgOneProcessOnly =
    "preconditioner = \"amg\" runs in one process only (hypre's coarsening depends on the MPI parts, so the bits "
    "would change with the rank count); use \"block-jacobi\" under mpirun";

class AmgPreconditioner final : public Preconditioner {
 public:
  /// Throws std::runtime_error if the build has no hypre.
  AmgPreconditioner();
  ~AmgPreconditioner() override;
  AmgPreconditioner(const AmgPreconditioner&) = delete;
  AmgPreconditioner& operator=(const AmgPreconditioner&) = delete;

  /// BoomerAMG's hierarchy of `h` (its current blocks), replacing any
  /// earlier one.
  void setup(const BlockHessian& h);
  /// z = one V-cycle on r (one entry per particle).
  void apply(std::span<const Vec6> r, std::span<Vec6> z) const override;

 private:
  struct Hypre;
  std::unique_ptr<Hypre> hypre_;
};

}  // namespace dem
