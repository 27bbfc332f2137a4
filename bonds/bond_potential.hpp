#pragma once
/// \file bond_potential.hpp
/// Particle-binder-particle potentials, docs/model.md §4 (Baker & Gonzalez
/// 2021, eqs. 44-53, with the shear term in its objective, symmetric form).
///
/// Each evaluator is a stateless function of one bond's geometry. Inputs:
/// centres x_i, x_j (length); relative attitudes Q_i = R_i R_i0^T and
/// Q_j = R_j R_j0^T (unit quaternions); reference length r0 and direction
/// d0 = (x_i0 - x_j0)/r0. Outputs: the force on i (the force on j is its
/// negative), the spatial moments on i and on j (docs/model.md §2), and the
/// energy. Tests call these same functions.

#include <array>

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
/// |theta_ij| in [0, pi] (eqs. 44-46 in the sign convention of docs/model.md §4).
Vec3 bond_rotation_vector(const Quat& q_i, const Quat& q_j);

/// Bending and torsion, eqs. (44)-(47): U = K^m |theta_ij|^2 / 2,
/// tau_i = -K^m theta_ij, tau_j = +K^m theta_ij, no force.
BondTerms bond_bending(const Quat& q_i, const Quat& q_j, double k_bending);

/// Axial, eqs. (51)-(52): U = K^a (r/r0 - 1)^2 / 2,
/// F_i = -(K^a/r0)(r/r0 - 1) d with d = (x_i - x_j)/r.
BondTerms bond_axial(const Vec3& x_i, const Vec3& x_j, double r0, double k_axial);

/// Shear, objective symmetric form of eq. (53) (docs/model.md §4):
/// s_i = 1 - (Q_i d0).d, U = K^s (s_i^2 + s_j^2)/4,
/// tau_i = K^s s_i (Q_i d0 x d)/2, F_i = K^s/(2r) (I - d d^T)(s_i Q_i d0 + s_j Q_j d0).
BondTerms bond_shear(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j,
                     const Vec3& d0, double k_shear);

namespace lanes {
#include "bonds/bond_lanes.inc"

/// The Ops policy of bond_lanes for a scalar S (double or dual numbers):
/// the branch of quaternion_rotation_vector_t, per bond.
template <class S>
struct ScalarOps {
  static S c(double v) { return S(v); }
  static S sqrt(const S& x) {
    using std::sqrt;
    return sqrt(x);
  }
  static S sign(const S& w) { return S(w >= 0.0 ? 1.0 : -1.0); }
  S theta_factor(const S& s2, const S& w2, const S& w) {
    using std::atan2;
    if (s2 < 1e-4 * w2) return bond_lanes_series_factor(s2, w2, w, *this);
    const S s = sqrt(s2);
    return S(2.0) * atan2(s, w) / s;
  }
};
}  // namespace lanes

/// The kernel of bonds/bond_lanes.inc run on one bond, for any scalar S.
template <class S>
inline lanes::BondLaneOutput<S> bond_lane_output(const Eigen::Matrix<S, 3, 1>& x_i,
                                                 const Eigen::Matrix<S, 3, 1>& x_j, const Eigen::Quaternion<S>& q_i,
                                                 const Eigen::Quaternion<S>& q_j, double r0, const Vec3& d0,
                                                 double k_bending, double k_axial, double k_shear) {
  const lanes::BondLaneInput<S> in{{x_i[0], x_i[1], x_i[2]},
                                   {x_j[0], x_j[1], x_j[2]},
                                   {q_i.w(), q_i.x(), q_i.y(), q_i.z()},
                                   {q_j.w(), q_j.x(), q_j.y(), q_j.z()},
                                   {S(d0[0]), S(d0[1]), S(d0[2])},
                                   S(1.0 / r0),
                                   S(k_bending),
                                   S(k_axial),
                                   S(k_shear)};
  lanes::BondLaneOutput<S> out;
  lanes::ScalarOps<S> ops;
  lanes::bond_lanes<true>(in, out, ops);
  return out;
}

/// The three terms below summed for one bond, for any scalar type S (the
/// force loop's kernel in double, bond_all; dual numbers for the Hessian).
/// The arithmetic is bonds/bond_lanes.inc's, which the vectorised force
/// loop (bonds/bond_kernel.hpp) runs lane by lane with the same bits.
template <class S>
inline BondTermsT<S> bond_all_t(const Eigen::Matrix<S, 3, 1>& x_i, const Eigen::Matrix<S, 3, 1>& x_j,
                                const Eigen::Quaternion<S>& q_i, const Eigen::Quaternion<S>& q_j, double r0,
                                const Vec3& d0, double k_bending, double k_axial, double k_shear) {
  const lanes::BondLaneOutput<S> out = bond_lane_output(x_i, x_j, q_i, q_j, r0, d0, k_bending, k_axial, k_shear);
  BondTermsT<S> t;
  for (int c = 0; c < 3; ++c) {
    t.force_i[c] = out.force_i[c];
    t.moment_i[c] = out.moment_i[c];
    t.moment_j[c] = out.moment_j[c];
  }
  t.energy = out.energy;
  return t;
}

/// Sum of the three terms above for one bond (inline: the force loop's kernel).
inline BondTerms bond_all(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j,
                   double r0, const Vec3& d0, double k_bending, double k_axial, double k_shear) {
  return bond_all_t<double>(x_i, x_j, q_i, q_j, r0, d0, k_bending, k_axial, k_shear);
}

/// The bond's six strains e (theta_ij, r/r0 - 1, s_i, s_j: dimensionless)
/// with U = ½ sum_k w_k e_k², w = (K^m x3, K^a, K^s/2 x2): what the
/// Gauss-Newton Hessian blocks sum_k w_k grad e_k grad e_kᵀ are made of
/// (docs/model.md §12.4). Same arguments as bond_all_t; the weights are
/// bond_strain_weights'.
template <class S>
std::array<S, 6> bond_strains_t(const Eigen::Matrix<S, 3, 1>& x_i, const Eigen::Matrix<S, 3, 1>& x_j,
                                const Eigen::Quaternion<S>& q_i, const Eigen::Quaternion<S>& q_j, double r0,
                                const Vec3& d0, double k_bending, double k_axial, double k_shear) {
  const lanes::BondLaneOutput<S> out = bond_lane_output(x_i, x_j, q_i, q_j, r0, d0, k_bending, k_axial, k_shear);
  std::array<S, 6> e;
  for (int c = 0; c < 6; ++c) e[c] = out.strain[c];
  return e;
}

/// The weights of bond_strains_t's strains: (K^m, K^m, K^m, K^a, K^s/2, K^s/2).
inline std::array<double, 6> bond_strain_weights(double k_bending, double k_axial, double k_shear) {
  return {k_bending, k_bending, k_bending, k_axial, 0.5 * k_shear, 0.5 * k_shear};
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
