#include "core/rotation.hpp"

#include <cmath>

namespace dem {

Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0.0, -a.z(), a.y(),  //
      a.z(), 0.0, -a.x(),   //
      -a.y(), a.x(), 0.0;
  return s;
}

Mat3 rrp_matrix(const Vec3& alpha) {
  const Mat3 s = skew(alpha);
  return Mat3::Identity() + (4.0 / (4.0 + alpha.squaredNorm())) * (s + 0.5 * s * s);
}

Vec3 rrp_compose(const Vec3& a1, const Vec3& a2) {
  return (4.0 / (4.0 - a1.dot(a2))) * (a1 + a2 - 0.5 * a1.cross(a2));
}

double rrp_angle(const Vec3& alpha) { return 2.0 * std::atan(0.5 * alpha.norm()); }

Vec3 rrp_rotation_vector(const Vec3& alpha) {
  const double a = alpha.norm();
  if (a < 1e-8) return alpha * (1.0 - a * a / 12.0);  // 2 atan(a/2)/a = 1 - a^2/12 + ...
  return alpha * (2.0 * std::atan(0.5 * a) / a);
}

Quat rrp_quaternion(const Vec3& alpha) {
  const double s = 1.0 / std::sqrt(4.0 + alpha.squaredNorm());
  return Quat(2.0 * s, alpha.x() * s, alpha.y() * s, alpha.z() * s);
}

Vec3 quaternion_rrp(const Quat& q) {
  const double w = q.w() >= 0.0 ? q.w() : -q.w();
  const double sign = q.w() >= 0.0 ? 1.0 : -1.0;
  return (2.0 * sign / w) * q.vec();
}

double quaternion_angle(const Quat& q) {
  return 2.0 * std::atan2(q.vec().norm(), std::abs(q.w()));
}

Mat3 rotation_matrix_exp(const Vec3& phi) {
  const double t = phi.norm();
  if (t < 1e-12) return Mat3::Identity() + skew(phi);
  return Eigen::AngleAxisd(t, phi / t).toRotationMatrix();
}

}  // namespace dem
