#include "bonds/bond_hessian.hpp"

#include <Eigen/Eigenvalues>
#include "bonds/element_hessian.hpp"

namespace dem {

namespace {

/// exact() as it is, projected, or gauss_newton(), as `blocks` asks.
template <class Exact, class GaussNewton>
Mat12 block_of(HessianBlocks blocks, Exact&& exact, GaussNewton&& gauss_newton) {
  if (blocks == HessianBlocks::gauss_newton) return gauss_newton();
  Mat12 h = exact();
  if (blocks == HessianBlocks::projected) project_bond_hessian(h);
  return h;
}

}  // namespace

Mat12 bdem_bond_hessian(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, const Vec3& d0, double l0,
                        const BdemStiffness& k) {
  using namespace element_hessian_detail;
  return element_hessian(x_i, x_j, q_i, q_j, [&](const DualVec& xi, const DualVec& xj, const DualQuat& qi,
                                                  const DualQuat& qj) {
    return bdem_bond_t<Dual>(xi, xj, qi, qj, d0, l0, k);
  });
}

Mat12 bond_hessian(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, double r0, const Vec3& d0,
                   double k_bending, double k_axial, double k_shear) {
  using namespace element_hessian_detail;
  struct Forces {
    DualVec force, moment_i, moment_j;
  };
  return element_hessian(x_i, x_j, q_i, q_j, [&](const DualVec& xi, const DualVec& xj, const DualQuat& qi,
                                                  const DualQuat& qj) {
    const BondTermsT<Dual> t = bond_all_t<Dual>(xi, xj, qi, qj, r0, d0, k_bending, k_axial, k_shear);
    return Forces{t.force_i, t.moment_i, t.moment_j};
  });
}

// Flattened: the dual-number arithmetic inlined into one function (the same
// operations, so the same bits; about 7% off its time).
[[gnu::flatten]] Mat12 bdem_bond_gauss_newton(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, const Vec3& d0,
                             double l0, const BdemStiffness& k) {
  using namespace element_hessian_detail;
  return gauss_newton_hessian(x_i, x_j, q_i, q_j, bdem_strain_weights(k),
                              [&](const DualVec& xi, const DualVec& xj, const DualQuat& qi, const DualQuat& qj) {
                                return bdem_bond_strains_t<Dual>(xi, xj, qi, qj, d0, l0, k);
                              });
}

Mat12 bond_gauss_newton(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, double r0,
                        const Vec3& d0, double k_bending, double k_axial, double k_shear) {
  using namespace element_hessian_detail;
  return gauss_newton_hessian(x_i, x_j, q_i, q_j, bond_strain_weights(k_bending, k_axial, k_shear),
                              [&](const DualVec& xi, const DualVec& xj, const DualQuat& qi, const DualQuat& qj) {
                                return bond_strains_t<Dual>(xi, xj, qi, qj, r0, d0, k_bending, k_axial, k_shear);
                              });
}

Mat12 bdem_bond_block(HessianBlocks blocks, const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j,
                      const Vec3& d0, double l0, const BdemStiffness& k) {
  return block_of(
      blocks, [&] { return bdem_bond_hessian(x_i, x_j, q_i, q_j, d0, l0, k); },
      [&] { return bdem_bond_gauss_newton(x_i, x_j, q_i, q_j, d0, l0, k); });
}

Mat12 bond_block(HessianBlocks blocks, const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, double r0,
                 const Vec3& d0, double k_bending, double k_axial, double k_shear) {
  return block_of(
      blocks, [&] { return bond_hessian(x_i, x_j, q_i, q_j, r0, d0, k_bending, k_axial, k_shear); },
      [&] { return bond_gauss_newton(x_i, x_j, q_i, q_j, r0, d0, k_bending, k_axial, k_shear); });
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
