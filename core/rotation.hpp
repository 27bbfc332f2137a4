#pragma once
/// \file rotation.hpp
/// Rotation algebra in rescaled Rodrigues parameters (RRP), docs/model.md §1
/// (Baker & Gonzalez 2021, eqs. 3-5), and its link to unit quaternions.
///
/// An RRP vector alpha of a rotation by angle theta about unit axis n is
/// alpha = 2 tan(theta/2) n (dimensionless). The chart is singular at
/// theta = pi, so the engine keeps each particle's absolute attitude as a
/// unit quaternion and composes it with the (small) per-step RRP increment;
/// see compose_spatial().

#include <cmath>

#include "core/types.hpp"

namespace dem {

/// Skew matrix S(a), with S(a) b = a x b.
Mat3 skew(const Vec3& a);

/// R(alpha) = I + 4/(4 + |alpha|^2) [S(alpha) + S(alpha)^2 / 2], eq. (4).
Mat3 rrp_matrix(const Vec3& alpha);

/// a1 (+) a2 = 4/(4 - a1.a2) [a1 + a2 - a1 x a2 / 2], eq. (5), with
/// R(a1 (+) a2) = R(a2) R(a1): a1 is applied first. Undefined (division by
/// zero) when the composed rotation is by pi, i.e. a1.a2 = 4.
Vec3 rrp_compose(const Vec3& a1, const Vec3& a2);

/// Inverse rotation: R(-alpha) = R(alpha)^T.
inline Vec3 rrp_inverse(const Vec3& alpha) { return -alpha; }

/// Rotation angle theta = 2 atan(|alpha|/2), in [0, pi).
double rrp_angle(const Vec3& alpha);

/// Rotation vector theta n (axis times angle) of an RRP vector.
Vec3 rrp_rotation_vector(const Vec3& alpha);

/// Unit quaternion of R(alpha): (2, alpha)/sqrt(4 + |alpha|^2). No trigonometry.
Quat rrp_quaternion(const Vec3& alpha);

/// RRP vector of a unit quaternion, 2 v / w with the sign chosen so that
/// w >= 0. Singular (infinite) for a rotation by pi (w = 0).
Vec3 quaternion_rrp(const Quat& q);

/// Rotation vector theta n of a unit quaternion, theta in [0, pi] (the sign
/// of q is chosen so that w >= 0). Smooth through theta = 0.
Vec3 quaternion_rotation_vector(const Quat& q);

/// Rotation angle in [0, pi] of a unit quaternion.
double quaternion_angle(const Quat& q);

/// exp(S(phi)): the rotation by |phi| about phi/|phi| (Rodrigues' formula).
Mat3 rotation_matrix_exp(const Vec3& phi);

/// Spatial composition of an attitude with an RRP increment:
/// returns q(delta_alpha) * q, i.e. R_new = R(delta_alpha) R, renormalised.
/// This is alpha_{k+1} = alpha_k (+) delta_alpha (docs/model.md §1) for an
/// attitude that stays valid for any number of turns.
inline Quat compose_spatial(const Quat& q, const Vec3& delta_alpha) {
  Quat r = rrp_quaternion(delta_alpha) * q;
  r.normalize();
  return r;
}

/// quaternion_rotation_vector for any scalar type S (double, or dual numbers
/// for the implicit integrator's Hessians); the same operations.
template <class S>
inline Eigen::Matrix<S, 3, 1> quaternion_rotation_vector_t(const Eigen::Quaternion<S>& q) {
  using std::atan2;
  using std::sqrt;
  const double sign = q.w() >= 0.0 ? 1.0 : -1.0;
  const Eigen::Matrix<S, 3, 1> v = sign * q.vec();
  const S w = sign * q.w();
  // theta = 2 atan2(s, w) v/s with s = |v|. For angles below about 1.1
  // degrees (x = s/w < 0.01), atan(x)/x = sum_k (-1)^k x^{2k}/(2k+1) to
  // five terms is exact to round-off (the first term left out is below
  // 1e-21) and needs neither the square root nor atan2: bonds in a solid
  // mostly turn by small angles, and this is the force loop's kernel.
  const S s2 = v.squaredNorm();
  const S w2 = w * w;
  if (s2 < 1e-4 * w2) {
    const S x2 = s2 / w2;
    const S series = 1.0 - x2 * (1.0 / 3 - x2 * (1.0 / 5 - x2 * (1.0 / 7 - x2 * (1.0 / 9))));
    return v * (2.0 / w * series);
  }
  const S s = sqrt(s2);
  return v * (2.0 * atan2(s, w) / s);
}

// Inline: the bond kernel calls it once per bond and step.
inline Vec3 quaternion_rotation_vector(const Quat& q) { return quaternion_rotation_vector_t<double>(q); }

}  // namespace dem
