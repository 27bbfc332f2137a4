#include "bonds/bond_potential.hpp"

#include <cmath>

#include "core/rotation.hpp"

namespace dem {

Vec3 bond_rotation_vector(const Quat& q_i, const Quat& q_j) {
  return quaternion_rotation_vector(q_i * q_j.conjugate());
}

BondTerms bond_bending(const Quat& q_i, const Quat& q_j, double k_bending) {
  // U = K |theta|^2/2. Perturbing R_i -> exp(S(phi)) R_i left-multiplies
  // exp(S(theta)) by exp(S(phi)); theta is an eigenvector of the inverse left
  // Jacobian with eigenvalue 1, so dU/dphi = K theta exactly (not only for
  // small angles), and likewise dU/dphi_j = -K theta.
  const Vec3 theta = bond_rotation_vector(q_i, q_j);
  BondTerms t;
  t.moment_i = -k_bending * theta;
  t.moment_j = k_bending * theta;
  t.energy = 0.5 * k_bending * theta.squaredNorm();
  return t;
}

BondTerms bond_axial(const Vec3& x_i, const Vec3& x_j, double r0, double k_axial) {
  const Vec3 delta = x_i - x_j;
  const double r = delta.norm();
  const Vec3 d = delta / r;
  const double strain = r / r0 - 1.0;
  BondTerms t;
  t.force_i = (-k_axial / r0 * strain) * d;
  t.energy = 0.5 * k_axial * strain * strain;
  return t;
}

BondTerms bond_shear(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j,
                     const Vec3& d0, double k_shear) {
  const Vec3 delta = x_i - x_j;
  const double r = delta.norm();
  const Vec3 d = delta / r;
  const Vec3 e_i = q_i * d0;  // Q_i d0
  const Vec3 e_j = q_j * d0;  // Q_j d0
  const double s_i = 1.0 - e_i.dot(d);
  const double s_j = 1.0 - e_j.dot(d);
  const Vec3 a = s_i * e_i + s_j * e_j;
  BondTerms t;
  t.force_i = (0.5 * k_shear / r) * (a - d.dot(a) * d);
  t.moment_i = (0.5 * k_shear * s_i) * e_i.cross(d);
  t.moment_j = (0.5 * k_shear * s_j) * e_j.cross(d);
  t.energy = 0.25 * k_shear * (s_i * s_i + s_j * s_j);
  return t;
}

}  // namespace dem
