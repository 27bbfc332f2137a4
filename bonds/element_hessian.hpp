#pragma once
/// \file element_hessian.hpp
/// The Hessian of a two-particle element's energy in the implicit
/// integrator's coordinates (docs/model.md §12.4) from the element's own force
/// kernel, run on forward-mode dual numbers over the 12 inputs
/// (delta x_i, phi_i, delta x_j, phi_j), R <- exp(S(phi)) R (Eigen's
/// AutoDiffScalar). Included only by the .cpp files that instantiate it.
///
/// The Jacobian J of the generalised force (F_i, tau_i, F_j = -F_i, tau_j)
/// gives H_e = -J, except in each end's own rotation block, where
/// -d tau_i / d phi_i = H_e + ½ S(tau_i); the result is symmetrised.

#include <array>
#include <cstddef>

#include <unsupported/Eigen/AutoDiff>

#include "core/types.hpp"

namespace dem::element_hessian_detail {

using Derivatives = Eigen::Matrix<double, 12, 1>;
using Dual = Eigen::AutoDiffScalar<Derivatives>;
using DualVec = Eigen::Matrix<Dual, 3, 1>;
using DualQuat = Eigen::Quaternion<Dual>;

/// x + delta x, with delta x_a seeded as input `first + a`.
inline DualVec seeded_position(const Vec3& x, int first) {
  DualVec out;
  for (int a = 0; a < 3; ++a) out[a] = Dual(x[a], Derivatives::Unit(first + a));
  return out;
}

/// exp(S(phi)) q to first order in phi: q + ½ (phi, 0) q, with phi_a seeded
/// as input `first + a`; (phi, 0) q = (s phi + phi x v, -phi.v) for q = (v, s).
inline DualQuat seeded_attitude(const Quat& q, int first) {
  const Vec3 v = q.vec();
  const double s = q.w();
  Derivatives dw = Derivatives::Zero();
  Eigen::Matrix<double, 3, 12> dv = Eigen::Matrix<double, 3, 12>::Zero();
  for (int a = 0; a < 3; ++a) {
    const Vec3 e = Vec3::Unit(a);
    dv.col(first + a) = 0.5 * (s * e + e.cross(v));
    dw[first + a] = -0.5 * e.dot(v);
  }
  return DualQuat(Dual(s, dw), Dual(v.x(), dv.row(0).transpose()), Dual(v.y(), dv.row(1).transpose()),
                  Dual(v.z(), dv.row(2).transpose()));
}

inline Mat3 skew(const Vec3& a) {
  Mat3 m;
  m << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return m;
}

/// H_e from kernel(x_i, x_j, q_i, q_j) -> something with force_i (or
/// force), moment_i and moment_j, all DualVec.
template <class Kernel>
Mat12 element_hessian(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, Kernel&& kernel) {
  const auto r = kernel(seeded_position(x_i, 0), seeded_position(x_j, 6), seeded_attitude(q_i, 3),
                        seeded_attitude(q_j, 9));
  Mat12 jac;
  Vec3 tau_i, tau_j;
  for (int a = 0; a < 3; ++a) {
    jac.row(a) = r.force[a].derivatives().transpose();
    jac.row(3 + a) = r.moment_i[a].derivatives().transpose();
    jac.row(6 + a) = -r.force[a].derivatives().transpose();
    jac.row(9 + a) = r.moment_j[a].derivatives().transpose();
    tau_i[a] = r.moment_i[a].value();
    tau_j[a] = r.moment_j[a].value();
  }
  Mat12 h = -jac;
  h.block<3, 3>(3, 3) -= 0.5 * skew(tau_i);
  h.block<3, 3>(9, 9) -= 0.5 * skew(tau_j);
  return 0.5 * (h + h.transpose());
}

/// The Gauss-Newton blocks sum_k w_k grad e_k grad e_kᵀ of an energy
/// V = ½ sum_k w_k e_k² (docs/model.md §12.4), from strains(x_i, x_j, q_i,
/// q_j) -> an array of N strains e_k as dual numbers over the same 12
/// inputs; positive semi-definite for w_k >= 0, symmetric by construction.
template <std::size_t N, class Strains>
Mat12 gauss_newton_hessian(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j,
                           const std::array<double, N>& w, Strains&& strains) {
  const std::array<Dual, N> e = strains(seeded_position(x_i, 0), seeded_position(x_j, 6), seeded_attitude(q_i, 3),
                                        seeded_attitude(q_j, 9));
  Mat12 h = Mat12::Zero();
  for (std::size_t k = 0; k < N; ++k) h.noalias() += w[k] * (e[k].derivatives() * e[k].derivatives().transpose());
  return h;
}

}  // namespace dem::element_hessian_detail
