#pragma once
/// \file bond_potential.hpp
/// Particle-binder-particle potentials, MODEL.md section 4 (Baker & Gonzalez
/// 2021, eqs. 44-53, with the shear term in its objective, symmetric form).
///
/// Each evaluator is a stateless function of one bond's geometry. Inputs:
/// centres x_i, x_j (length); relative attitudes Q_i = R_i R_i0^T and
/// Q_j = R_j R_j0^T (unit quaternions); reference length r0 and direction
/// d0 = (x_i0 - x_j0)/r0. Outputs: the force on i (the force on j is its
/// negative), the spatial moments on i and on j (MODEL.md section 2), and the
/// energy. Tests call these same functions.

#include "core/rotation.hpp"
#include "core/types.hpp"

namespace dem {

/// Force, moments and energy of one bond term, for any scalar type S:
/// double in the force loop (BondTerms), dual numbers for the implicit
/// integrator's Hessian (bonds/bond_hessian.hpp).
template <class S>
struct BondTermsT {
  Eigen::Matrix<S, 3, 1> force_i = Eigen::Matrix<S, 3, 1>::Zero();   ///< F_i (force); F_j = -F_i
  Eigen::Matrix<S, 3, 1> moment_i = Eigen::Matrix<S, 3, 1>::Zero();  ///< spatial moment on i (force length)
  Eigen::Matrix<S, 3, 1> moment_j = Eigen::Matrix<S, 3, 1>::Zero();  ///< spatial moment on j (force length)
  S energy = 0.0;                                                    ///< U (energy)
  BondTermsT& operator+=(const BondTermsT& o) {
    force_i += o.force_i;
    moment_i += o.moment_i;
    moment_j += o.moment_j;
    energy += o.energy;
    return *this;
  }
};
using BondTerms = BondTermsT<double>;

/// Relative rotation vector theta_ij with Q_i Q_j^T = exp(S(theta_ij)),
/// |theta_ij| in [0, pi] (eqs. 44-46 in MODEL.md's sign convention).
Vec3 bond_rotation_vector(const Quat& q_i, const Quat& q_j);

/// Bending and torsion, eqs. (44)-(47): U = K^m |theta_ij|^2 / 2,
/// tau_i = -K^m theta_ij, tau_j = +K^m theta_ij, no force.
BondTerms bond_bending(const Quat& q_i, const Quat& q_j, double k_bending);

/// Axial, eqs. (51)-(52): U = K^a (r/r0 - 1)^2 / 2,
/// F_i = -(K^a/r0)(r/r0 - 1) d with d = (x_i - x_j)/r.
BondTerms bond_axial(const Vec3& x_i, const Vec3& x_j, double r0, double k_axial);

/// Shear, objective symmetric form of eq. (53) (MODEL.md section 4):
/// s_i = 1 - (Q_i d0).d, U = K^s (s_i^2 + s_j^2)/4,
/// tau_i = K^s s_i (Q_i d0 x d)/2, F_i = K^s/(2r) (I - d d^T)(s_i Q_i d0 + s_j Q_j d0).
BondTerms bond_shear(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j,
                     const Vec3& d0, double k_shear);

/// The three terms below summed for one bond, for any scalar type S (the
/// force loop's kernel in double, bond_all; dual numbers for the Hessian).
template <class S>
inline BondTermsT<S> bond_all_t(const Eigen::Matrix<S, 3, 1>& x_i, const Eigen::Matrix<S, 3, 1>& x_j,
                                const Eigen::Quaternion<S>& q_i, const Eigen::Quaternion<S>& q_j, double r0,
                                const Vec3& d0_in, double k_bending, double k_axial, double k_shear) {
  using V3 = Eigen::Matrix<S, 3, 1>;
  using std::sqrt;
  // The three terms of bond_bending, bond_axial and bond_shear, sharing the
  // bond vector and its length (the force loop's kernel).
  const V3 d0 = d0_in.template cast<S>();
  const V3 theta = quaternion_rotation_vector_t<S>(q_i * q_j.conjugate());  // bond_rotation_vector, inline
  const V3 delta = x_i - x_j;
  const S r = sqrt(delta.squaredNorm());
  const S inv_r = 1.0 / r;
  const double inv_r0 = 1.0 / r0;  // two divisions instead of six
  const V3 d = delta * inv_r;
  const S strain = r * inv_r0 - 1.0;
  const V3 e_i = q_i._transformVector(d0);
  const V3 e_j = q_j._transformVector(d0);
  const S s_i = 1.0 - e_i.dot(d);
  const S s_j = 1.0 - e_j.dot(d);
  const V3 a = s_i * e_i + s_j * e_j;
  BondTermsT<S> t;
  t.force_i = (-k_axial * inv_r0 * strain) * d + (0.5 * k_shear * inv_r) * (a - d.dot(a) * d);
  t.moment_i = -k_bending * theta + (0.5 * k_shear * s_i) * e_i.cross(d);
  t.moment_j = k_bending * theta + (0.5 * k_shear * s_j) * e_j.cross(d);
  t.energy = 0.5 * k_bending * theta.squaredNorm() + 0.5 * k_axial * strain * strain +
             0.25 * k_shear * (s_i * s_i + s_j * s_j);
  return t;
}

/// Sum of the three terms above for one bond (inline: the force loop's kernel).
inline BondTerms bond_all(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j,
                   double r0, const Vec3& d0, double k_bending, double k_axial, double k_shear) {
  return bond_all_t<double>(x_i, x_j, q_i, q_j, r0, d0, k_bending, k_axial, k_shear);
}

/// Bond energies split by term, for diagnostics.
struct BondEnergies {
  double bending = 0.0, axial = 0.0, shear = 0.0;
  BondEnergies& operator+=(const BondEnergies& o) {
    bending += o.bending;
    axial += o.axial;
    shear += o.shear;
    return *this;
  }
};

}  // namespace dem
