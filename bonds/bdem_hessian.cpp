#include "bonds/bdem_hessian.hpp"

#include <Eigen/Eigenvalues>
#include <unsupported/Eigen/AutoDiff>

namespace dem {

namespace {

using Derivatives = Eigen::Matrix<double, 12, 1>;
using Dual = Eigen::AutoDiffScalar<Derivatives>;
using DualVec = Eigen::Matrix<Dual, 3, 1>;
using DualQuat = Eigen::Quaternion<Dual>;

/// x + delta x, with delta x_a seeded as input `first + a`.
DualVec seeded_position(const Vec3& x, int first) {
  DualVec out;
  for (int a = 0; a < 3; ++a) out[a] = Dual(x[a], Derivatives::Unit(first + a));
  return out;
}

/// exp(S(phi)) q to first order in phi: q + ½ (phi, 0) q, with phi_a seeded
/// as input `first + a`. (phi, 0) q = (s phi + phi x v, -phi.v) for
/// q = (v, s).
DualQuat seeded_attitude(const Quat& q, int first) {
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

Mat3 skew(const Vec3& a) {
  Mat3 m;
  m << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return m;
}

}  // namespace

Mat12 bdem_bond_hessian(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, const Vec3& d0, double l0,
                        const BdemStiffness& k) {
  const BdemBondResultT<Dual> r = bdem_bond_t<Dual>(seeded_position(x_i, 0), seeded_position(x_j, 6),
                                                    seeded_attitude(q_i, 3), seeded_attitude(q_j, 9), d0, l0, k);
  // Rows of the generalised force (F_i, tau_i, F_j = -F_i, tau_j).
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

void project_positive_semidefinite(Mat12& h) {
  const Eigen::SelfAdjointEigenSolver<Mat12> eig(h);
  const Eigen::Matrix<double, 12, 1> lambda = eig.eigenvalues().cwiseMax(0.0);
  h = eig.eigenvectors() * lambda.asDiagonal() * eig.eigenvectors().transpose();
}

void project_bond_hessian(Mat12& h) {
  // In the orthonormal basis (s, phi_i, phi_j, t) with s = (dx_i - dx_j)/sqrt2
  // and t = (dx_i + dx_j)/sqrt2, the common translation t is in the null
  // space of every bond energy's Hessian (V does not change when both ends
  // move together): only the 9x9 block of (s, phi_i, phi_j) is decomposed.
  using Mat9 = Eigen::Matrix<double, 9, 9>;
  const double r = std::sqrt(0.5);
  Eigen::Matrix<double, 12, 9> q = Eigen::Matrix<double, 12, 9>::Zero();
  q.block<3, 3>(0, 0) = r * Mat3::Identity();
  q.block<3, 3>(6, 0) = -r * Mat3::Identity();
  q.block<3, 3>(3, 3) = Mat3::Identity();
  q.block<3, 3>(9, 6) = Mat3::Identity();
  const Mat9 reduced = q.transpose() * h * q;
  const Eigen::SelfAdjointEigenSolver<Mat9> eig(reduced);
  if (eig.eigenvalues().minCoeff() >= 0.0) return;
  const Eigen::Matrix<double, 12, 9> v = q * eig.eigenvectors();
  h = v * eig.eigenvalues().cwiseMax(0.0).asDiagonal() * v.transpose();
}

}  // namespace dem
