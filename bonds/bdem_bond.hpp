#pragma once
/// \file bdem_bond.hpp
/// The BDEM bond law of iBDEM section 3.2 as corrected in MODEL.md section 9,
/// and the bond stresses of section 10.1: one bond's energy, force, spatial
/// moments and stresses from the positions and attitudes of its two ends.
///
/// Kinematics (9.1), per evaluation, never stored:
///
///     q_j <- -q_j if q_i.q_j < 0                   (same hemisphere)
///     P = q_i q_j^-1 = (v_P, s_P), s_P >= 0         (Q_i Q_j^T = exp(S(Theta)))
///     t = 2 v_P,  h = v_P / (1 + s_P)
///     q_c = (q_i + q_j)/|q_i + q_j|,  c = R(q_c) d0
///     d = (x_i - x_j)/r,  b = c x d,  theta_s = atan2(|b|, c.d)
///
/// Energy (9.3): V = ½ k_n (r - l0)² + ½ k_s theta_s² + ½ [k_tw (t.c)² +
/// k_b (|t|² - (t.c)²)]. Forces and moments (9.4), g(x) = x / sin x:
///
///     m     = k_tw (t.c) c + k_b (t - (t.c) c)
///     F_i   = -k_n (r - l0) d + (k_s g(theta_s)/r) (c - (c.d) d),  F_j = -F_i
///     tau_i = ½ k_s g (b + h x b) - [m - (m.t) t / (4 (1 + s_P))]
///     tau_j = ½ k_s g (b - h x b) + [m - (m.t) t / (4 (1 + s_P))]
///
/// Quaternions are Eigen's (coefficients x, y, z, w; w the scalar; the
/// product is the Hamilton product of MODEL.md Part II). Units: SI in the
/// engine's BDEM scenes (m, N, N m, Pa), any consistent set otherwise.

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/types.hpp"

namespace dem {

/// Section 9.2: the four spring constants of a BDEM bond and its section.
struct BdemStiffness {
  double normal = 0.0;       ///< k_n = E S / l0 (force/length)
  double shear = 0.0;        ///< k_s = G S l0 = k_t l0² (force length; corrected eq. 9)
  double bending = 0.0;      ///< k_b = E I / l0 (force length)
  double twist = 0.0;        ///< k_tw = G J_p / l0 (force length)
  double bond_radius = 0.0;  ///< r_b (length)
  double area = 0.0;         ///< S = pi r_b² (length²)
  double inertia = 0.0;      ///< I = pi r_b⁴ / 4 (length⁴)
  double polar = 0.0;        ///< J_p = pi r_b⁴ / 2 (length⁴)
  // Stress factors of eqs. (12)-(13), set by bdem_stiffness() or
  // set_stress_factors(): the stress loop multiplies instead of dividing.
  double inv_area = 0.0;      ///< 1/S (1/length²)
  double bend_factor = 0.0;   ///< r_b/I (1/length³)
  double twist_factor = 0.0;  ///< r_b/J_p (1/length³)
};

/// Sets the stress factors of k from its bond radius, area, I and J_p.
inline void set_stress_factors(BdemStiffness& k) {
  k.inv_area = 1.0 / k.area;
  k.bend_factor = k.bond_radius / k.inertia;
  k.twist_factor = k.bond_radius / k.polar;
}

/// Stiffnesses of 9.2 from E (pressure), nu, the bond radius r_b and the
/// rest length l0 (lengths); G = E/(2(1 + nu)). Throws
/// std::invalid_argument for E <= 0, nu outside (-1, 0.5], r_b <= 0,
/// l0 <= 0 or anything not finite.
BdemStiffness bdem_stiffness(double youngs_modulus, double poisson_ratio, double bond_radius, double rest_length);

/// Everything one evaluation of one bond gives (9.3, 9.4, 10.1). S is
/// double in the engine; the Hessian (bonds/bond_hessian.hpp) runs the same
/// kernel on forward-mode dual numbers.
template <class S>
struct BdemBondResultT {
  using V3 = Eigen::Matrix<S, 3, 1>;
  V3 force = V3::Zero();     ///< F_i on the first end; F_j = -F_i (force)
  V3 moment_i = V3::Zero();  ///< spatial moment tau_i (force length)
  V3 moment_j = V3::Zero();  ///< spatial moment tau_j (force length)
  S stretch_energy = 0.0;     ///< V_stretch (energy)
  S shear_energy = 0.0;       ///< V_shear
  S bend_twist_energy = 0.0;  ///< V_bt
  S axial_force = 0.0;     ///< F_n = k_n (r - l0), tension positive (force)
  S shear_force = 0.0;     ///< F_s = k_s theta_s / r (force)
  S twist_moment = 0.0;    ///< M_t = |k_tw (t.c)| (force length)
  S bending_moment = 0.0;  ///< M_b = k_b |t - (t.c) c| (force length)
  /// F_s² and M_b², for the strength test without square roots
  /// (bdem_over_strength).
  S shear_force2 = 0.0, bending_moment2 = 0.0;
  /// s_P = cos(theta_ij / 2) after the alignment: the relative rotation
  /// theta_ij is past 2pi/3 exactly when s_P < 0.5.
  S cos_half_relative = 1.0;
};
using BdemBondResult = BdemBondResultT<double>;

namespace bdem_detail {
/// The angle theta = atan2(|b|, c.d) between unit vectors c and d, from
/// |b|² = |c x d|² and c.d, and g = theta / sin(theta). Below about 0.57
/// degrees (x² = |b|²/(c.d)² < 1e-4) atan(x)/x = sum_k (-1)^k x^{2k}/(2k+1)
/// to five terms is exact to round-off (the first term left out is below
/// 1e-21): theta = x series, g = series / (c.d), without atan2 (bonds in a
/// solid shear by small angles, and this is the force loop's kernel).
template <class S>
struct AngleAndRatio {
  S theta, sine, g;
  S theta2;  ///< theta² (without the square root in the common case)
};
template <class S>
inline AngleAndRatio<S> shear_angle(const S& sine2, const S& cosine) {
  using std::atan2;
  using std::sqrt;
  AngleAndRatio<S> a;
  a.sine = sqrt(sine2);
  if (cosine > 0.0 && sine2 < 1e-4 * cosine * cosine) {
    const S inv_cosine = 1.0 / cosine;
    const S x2 = sine2 * (inv_cosine * inv_cosine);
    const S series = 1.0 - x2 * (1.0 / 3 - x2 * (1.0 / 5 - x2 * (1.0 / 7 - x2 * (1.0 / 9))));
    a.g = series * inv_cosine;
    a.theta = a.sine * a.g;
    a.theta2 = sine2 * (a.g * a.g);
    return a;
  }
  a.theta = atan2(a.sine, cosine);
  a.g = a.theta / a.sine;
  a.theta2 = a.theta * a.theta;
  return a;
}
}  // namespace bdem_detail

/// One bond (9.1-9.4, 10.1) for any scalar type S (double, or dual numbers
/// for derivatives). x_i, x_j: centres; q_i, q_j: unit quaternions of
/// Q_i = R_i R_i0ᵀ and Q_j (either sign: the result does not depend on it);
/// d0: unit rest direction (x_i0 - x_j0)/l0; l0: rest length (> 0).
template <class S>
[[gnu::always_inline]] inline BdemBondResultT<S> bdem_bond_t(const Eigen::Matrix<S, 3, 1>& x_i,
                                                             const Eigen::Matrix<S, 3, 1>& x_j,
                                                             const Eigen::Quaternion<S>& q_i,
                                                             const Eigen::Quaternion<S>& q_j, const Vec3& d0_in,
                                                             double l0, const BdemStiffness& k) {
  using V3 = Eigen::Matrix<S, 3, 1>;
  using std::abs;
  using std::sqrt;
  const V3 d0 = d0_in.template cast<S>();
  const V3 vi = q_i.vec();
  const S si = q_i.w();
  V3 vj = q_j.vec();
  S sj = q_j.w();
  if (vi.dot(vj) + si * sj < 0.0) {  // same hemisphere (9.7, item 3)
    vj = -vj;
    sj = -sj;
  }
  // P = q_i q_j^-1 (Hamilton product with the conjugate of q_j).
  const V3 vp = sj * vi - si * vj - vi.cross(vj);
  const S sp = si * sj + vi.dot(vj);
  const V3 t = 2.0 * vp;
  const S inv_one_plus_sp = 1.0 / (1.0 + sp);
  const V3 hv = vp * inv_one_plus_sp;
  // Common rotation q_c and the carried direction c = R(q_c) d0.
  V3 vc = vi + vj;
  S sc = si + sj;
  const S inv_norm = 1.0 / sqrt(vc.squaredNorm() + sc * sc);
  vc *= inv_norm;
  sc *= inv_norm;
  const V3 u = vc.cross(d0);
  const V3 c = d0 + 2.0 * (sc * u + vc.cross(u));
  // Current direction and shear angle.
  const V3 rv = x_i - x_j;
  const S r = sqrt(rv.squaredNorm());
  const S inv_r = 1.0 / r;
  const V3 d = rv * inv_r;
  const V3 b = c.cross(d);
  const S cosine = c.dot(d);
  const bdem_detail::AngleAndRatio<S> angle = bdem_detail::shear_angle<S>(b.squaredNorm(), cosine);
  const S theta = angle.theta, g = angle.g;
  // Bend/twist moment m = K t (iBDEM's K t, built on c).
  const S tc = t.dot(c);
  const V3 t_perp = t - tc * c;
  const V3 m = (k.twist * tc) * c + k.bending * t_perp;
  const V3 corr = m - (m.dot(t) * (0.25 * inv_one_plus_sp)) * t;
  const S stretch = r - l0;
  const S ksg = k.shear * g;

  BdemBondResultT<S> out;
  out.force = (-k.normal * stretch) * d + (ksg * inv_r) * (c - cosine * d);
  const V3 hb = hv.cross(b);
  out.moment_i = (0.5 * ksg) * (b + hb) - corr;
  out.moment_j = (0.5 * ksg) * (b - hb) + corr;
  out.stretch_energy = 0.5 * k.normal * stretch * stretch;
  out.shear_energy = 0.5 * k.shear * theta * theta;
  out.bend_twist_energy = 0.5 * (k.twist * tc * tc + k.bending * t_perp.squaredNorm());
  out.axial_force = k.normal * stretch;
  out.shear_force = k.shear * theta * inv_r;
  out.twist_moment = abs(k.twist * tc);
  out.bending_moment = k.bending * sqrt(t_perp.squaredNorm());
  out.shear_force2 = (k.shear * k.shear) * angle.theta2 * (inv_r * inv_r);
  out.bending_moment2 = (k.bending * k.bending) * t_perp.squaredNorm();
  out.cos_half_relative = sp;
  return out;
}

/// One bond in doubles: the engine's force loop (see bdem_bond_t).
[[gnu::always_inline]] inline BdemBondResult bdem_bond(const Vec3& x_i, const Vec3& x_j, const Quat& q_i,
                                                       const Quat& q_j, const Vec3& d0, double l0,
                                                       const BdemStiffness& k) {
  return bdem_bond_t<double>(x_i, x_j, q_i, q_j, d0, l0, k);
}

/// Stresses of eqs. (12)-(13) (MODEL.md 10.1), pressure units.
struct BdemStress {
  double sigma = 0.0;  ///< |F_n|/S + M_b r_b/I (max(F_n, 0) with tension_only)
  double tau = 0.0;    ///< F_s/S + M_t r_b/J_p
};

inline BdemStress bdem_stress(const BdemBondResult& r, const BdemStiffness& k, bool tension_only) {
  const double axial = tension_only ? std::max(r.axial_force, 0.0) : std::abs(r.axial_force);
  BdemStress s;
  s.sigma = axial * k.inv_area + r.bending_moment * k.bend_factor;
  s.tau = r.shear_force * k.inv_area + r.twist_moment * k.twist_factor;
  return s;
}

/// The criterion of 10.1, sigma > sigma_c or tau > tau_c, without square
/// roots: sigma = a + b with a = |F_n|/S and b = M_b r_b/I >= 0 passes
/// sigma_c exactly when a > sigma_c or b² > (sigma_c - a)² (and tau alike).
/// Agrees with bdem_stress() except where a stress equals its strength to
/// round-off.
inline bool bdem_over_strength(const BdemBondResult& r, const BdemStiffness& k, bool tension_only,
                               double tensile_strength, double shear_strength) {
  const double axial = tension_only ? std::max(r.axial_force, 0.0) : std::abs(r.axial_force);
  const double sigma_left = tensile_strength - axial * k.inv_area;  // room left for the bending term
  if (sigma_left < 0.0 || r.bending_moment2 * (k.bend_factor * k.bend_factor) > sigma_left * sigma_left) return true;
  const double tau_left = shear_strength - r.twist_moment * k.twist_factor;
  return tau_left < 0.0 || r.shear_force2 * (k.inv_area * k.inv_area) > tau_left * tau_left;
}

/// The estimate of MODEL.md 9.6: omega_est = 2.9 sqrt(E/(rho r²)) (the
/// largest angular frequency of an FCC lattice of touching spheres at
/// nu = 0, safe for nu >= 0), and the explicit step fraction * 2/omega_est
/// (time). Throws std::invalid_argument for a value not finite and > 0.
double bdem_stable_step(double youngs_modulus, double density, double radius, double fraction);

}  // namespace dem
