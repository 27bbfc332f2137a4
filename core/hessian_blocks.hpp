#pragma once
/// \file hessian_blocks.hpp
/// The forms of the element Hessian blocks of the implicit integrator
/// (docs/model.md §12.4): what HessianSource::element_hessians
/// (core/force_provider.hpp) and the bond Hessians (bonds/bond_hessian.hpp)
/// are asked for.

namespace dem {

/// Which element Hessian blocks the implicit integrator assembles
/// (docs/model.md §12.4; scene key [run] hessian_blocks).
enum class HessianBlocks {
  exact,         ///< H_e itself: quadratic Newton convergence, H may be indefinite (for tests)
  projected,     ///< H_e with its negative eigenvalues set to zero (iBDEM Algorithm 3 line 10)
  gauss_newton,  ///< sum_k w_k grad e_k grad e_kᵀ over the element's strains: semi-definite, no eigen-decomposition
};

}  // namespace dem
