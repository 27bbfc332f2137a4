#pragma once
/// \file bond_hessian.hpp
/// Second derivatives of one bond's energy, BDEM (docs/model.md §9.3) or
/// Baker-Gonzalez (section 4), for the implicit integrator (docs/model.md §12.4),
/// and the per-element projection to positive semi-definite.
///
/// Coordinates: the 12 numbers (delta x_i, phi_i, delta x_j, phi_j), each
/// end moved by x <- x + delta x and turned by R <- exp(S(phi)) R (phi a
/// spatial rotation vector). H_e is the Hessian of V in these coordinates at
/// 0. It is computed from the bond kernel itself (bdem_bond_t of
/// bonds/bdem_bond.hpp, bond_all_t of bonds/bond_potential.hpp) run on
/// forward-mode dual numbers over the 12 inputs (Eigen's AutoDiffScalar,
/// bonds/element_hessian.hpp): the Jacobian J of the generalised force
/// (F_i, tau_i, F_j, tau_j) gives H_e = -J, except in each end's own rotation
/// block, where -d tau_i / d phi_i = H_e + ½ S(tau_i) (docs/model.md §12.4: the
/// derivative of the moment of a turned end also turns the moment).

#include <Eigen/Core>

#include "bonds/bdem_bond.hpp"
#include "bonds/bond_potential.hpp"
#include "core/hessian_blocks.hpp"
#include "core/types.hpp"

namespace dem {

/// H_e of one bond at (x_i, q_i, x_j, q_j) (as bdem_bond()), symmetrised
/// (½(H + Hᵀ); the two halves agree to round-off). Units: force/length in
/// the translation blocks, force in the mixed ones, force length in the
/// rotation blocks.
Mat12 bdem_bond_hessian(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, const Vec3& d0, double l0,
                        const BdemStiffness& k);

/// H_e of one Baker-Gonzalez bond (docs/model.md §4; bond_all_t of
/// bonds/bond_potential.hpp), symmetrised, in the same coordinates.
Mat12 bond_hessian(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, double r0, const Vec3& d0,
                   double k_bending, double k_axial, double k_shear);

/// The Gauss-Newton blocks of one BDEM bond (docs/model.md §12.4):
/// sum_k w_k grad e_k grad e_kᵀ over the eight strains of
/// bdem_bond_strains_t, whose weighted squares make V. Positive
/// semi-definite by construction (no eigen-decomposition); equal to H_e
/// where every strain is zero and differing from it by the terms
/// w_k e_k Hess e_k elsewhere (the same minimiser, another convergence).
Mat12 bdem_bond_gauss_newton(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, const Vec3& d0,
                             double l0, const BdemStiffness& k);

/// The same for one Baker-Gonzalez bond, over the six strains of
/// bond_strains_t (bonds/bond_potential.hpp).
Mat12 bond_gauss_newton(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, double r0,
                        const Vec3& d0, double k_bending, double k_axial, double k_shear);

/// One BDEM bond's block in the form `blocks` (what the bond provider
/// gives the implicit integrator): bdem_bond_hessian, projected by
/// project_bond_hessian, or bdem_bond_gauss_newton.
Mat12 bdem_bond_block(HessianBlocks blocks, const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j,
                      const Vec3& d0, double l0, const BdemStiffness& k);

/// The same for one Baker-Gonzalez bond: bond_hessian, projected, or
/// bond_gauss_newton.
Mat12 bond_block(HessianBlocks blocks, const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, double r0,
                 const Vec3& d0, double k_bending, double k_axial, double k_shear);

/// Sets the negative eigenvalues of the symmetric matrix h to zero
/// (Eigen's SelfAdjointEigenSolver; docs/model.md §12.4, the per-element
/// projection of iBDEM Algorithm 3 line 10).
void project_positive_semidefinite(Mat12& h);

/// The same for the Hessian of an energy that does not change when both
/// ends translate together (a bond's, a pair contact's): that common
/// translation is in its null space, so only a 9x9 block is decomposed.
/// Leaves h as it is when it is already positive semi-definite.
void project_bond_hessian(Mat12& h);

}  // namespace dem
