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
};

/// Stiffnesses of 9.2 from E (pressure), nu, the bond radius r_b and the
/// rest length l0 (lengths); G = E/(2(1 + nu)). Throws
/// std::invalid_argument for E <= 0, nu outside (-1, 0.5], r_b <= 0,
/// l0 <= 0 or anything not finite.
BdemStiffness bdem_stiffness(double youngs_modulus, double poisson_ratio, double bond_radius, double rest_length);

/// Everything one evaluation of one bond gives (9.3, 9.4, 10.1).
struct BdemBondResult {
  Vec3 force = Vec3::Zero();     ///< F_i on the first end; F_j = -F_i (force)
  Vec3 moment_i = Vec3::Zero();  ///< spatial moment tau_i (force length)
  Vec3 moment_j = Vec3::Zero();  ///< spatial moment tau_j (force length)
  double stretch_energy = 0.0;     ///< V_stretch (energy)
  double shear_energy = 0.0;       ///< V_shear
  double bend_twist_energy = 0.0;  ///< V_bt
  double axial_force = 0.0;     ///< F_n = k_n (r - l0), tension positive (force)
  double shear_force = 0.0;     ///< F_s = k_s theta_s / r (force)
  double twist_moment = 0.0;    ///< M_t = |k_tw (t.c)| (force length)
  double bending_moment = 0.0;  ///< M_b = k_b |t - (t.c) c| (force length)
  /// s_P = cos(theta_ij / 2) after the alignment: the relative rotation
  /// theta_ij is past 2pi/3 exactly when s_P < 0.5.
  double cos_half_relative = 1.0;
};

namespace bdem_detail {
/// The angle theta = atan2(|b|, c.d) between unit vectors c and d, from
/// |b|² = |c x d|² and c.d, and g = theta / sin(theta). Below about 0.57
/// degrees (x² = |b|²/(c.d)² < 1e-4) atan(x)/x = sum_k (-1)^k x^{2k}/(2k+1)
/// to five terms is exact to round-off (the first term left out is below
/// 1e-21): theta = x series, g = series / (c.d), without atan2 (bonds in a
/// solid shear by small angles, and this is the force loop's kernel).
struct AngleAndRatio {
  double theta, sine, g;
};
inline AngleAndRatio shear_angle(double sine2, double cosine) {
  AngleAndRatio a;
  a.sine = std::sqrt(sine2);
  if (cosine > 0.0 && sine2 < 1e-4 * cosine * cosine) {
    const double x2 = sine2 / (cosine * cosine);
    const double series = 1.0 - x2 * (1.0 / 3 - x2 * (1.0 / 5 - x2 * (1.0 / 7 - x2 * (1.0 / 9))));
    a.theta = a.sine / cosine * series;
    a.g = series / cosine;
    return a;
  }
  a.theta = std::atan2(a.sine, cosine);
  a.g = a.theta / a.sine;
  return a;
}
}  // namespace bdem_detail

/// One bond (9.1-9.4, 10.1). x_i, x_j: centres; q_i, q_j: unit quaternions
/// of Q_i = R_i R_i0ᵀ and Q_j (either sign: the result does not depend on
/// it); d0: unit rest direction (x_i0 - x_j0)/l0; l0: rest length (> 0).
[[gnu::always_inline]] inline BdemBondResult bdem_bond(const Vec3& x_i, const Vec3& x_j, const Quat& q_i, const Quat& q_j, const Vec3& d0,
                                double l0, const BdemStiffness& k) {
  const Vec3 vi = q_i.vec();
  const double si = q_i.w();
  Vec3 vj = q_j.vec();
  double sj = q_j.w();
  if (vi.dot(vj) + si * sj < 0.0) {  // same hemisphere (9.7, item 3)
    vj = -vj;
    sj = -sj;
  }
  // P = q_i q_j^-1 (Hamilton product with the conjugate of q_j).
  const Vec3 vp = sj * vi - si * vj - vi.cross(vj);
  const double sp = si * sj + vi.dot(vj);
  const Vec3 t = 2.0 * vp;
  const double one_plus_sp = 1.0 + sp;
  const Vec3 hv = vp / one_plus_sp;
  // Common rotation q_c and the carried direction c = R(q_c) d0.
  Vec3 vc = vi + vj;
  double sc = si + sj;
  const double inv_norm = 1.0 / std::sqrt(vc.squaredNorm() + sc * sc);
  vc *= inv_norm;
  sc *= inv_norm;
  const Vec3 u = vc.cross(d0);
  const Vec3 c = d0 + 2.0 * (sc * u + vc.cross(u));
  // Current direction and shear angle.
  const Vec3 rv = x_i - x_j;
  const double r = rv.norm();
  const Vec3 d = rv / r;
  const Vec3 b = c.cross(d);
  const double cosine = c.dot(d);
  const bdem_detail::AngleAndRatio angle = bdem_detail::shear_angle(b.squaredNorm(), cosine);
  const double theta = angle.theta, g = angle.g;
  // Bend/twist moment m = K t (iBDEM's K t, built on c).
  const double tc = t.dot(c);
  const Vec3 t_perp = t - tc * c;
  const Vec3 m = (k.twist * tc) * c + k.bending * t_perp;
  const Vec3 corr = m - (m.dot(t) / (4.0 * one_plus_sp)) * t;
  const double stretch = r - l0;
  const double ksg = k.shear * g;

  BdemBondResult out;
  out.force = (-k.normal * stretch) * d + (ksg / r) * (c - cosine * d);
  const Vec3 hb = hv.cross(b);
  out.moment_i = (0.5 * ksg) * (b + hb) - corr;
  out.moment_j = (0.5 * ksg) * (b - hb) + corr;
  out.stretch_energy = 0.5 * k.normal * stretch * stretch;
  out.shear_energy = 0.5 * k.shear * theta * theta;
  out.bend_twist_energy = 0.5 * (k.twist * tc * tc + k.bending * t_perp.squaredNorm());
  out.axial_force = k.normal * stretch;
  out.shear_force = k.shear * theta / r;
  out.twist_moment = std::abs(k.twist * tc);
  out.bending_moment = k.bending * t_perp.norm();
  out.cos_half_relative = sp;
  return out;
}

/// Stresses of eqs. (12)-(13) (MODEL.md 10.1), pressure units.
struct BdemStress {
  double sigma = 0.0;  ///< |F_n|/S + M_b r_b/I (max(F_n, 0) with tension_only)
  double tau = 0.0;    ///< F_s/S + M_t r_b/J_p
};

inline BdemStress bdem_stress(const BdemBondResult& r, const BdemStiffness& k, bool tension_only) {
  const double axial = tension_only ? std::max(r.axial_force, 0.0) : std::abs(r.axial_force);
  BdemStress s;
  s.sigma = axial / k.area + r.bending_moment * k.bond_radius / k.inertia;
  s.tau = r.shear_force / k.area + r.twist_moment * k.bond_radius / k.polar;
  return s;
}

/// The estimate of MODEL.md 9.6: omega_est = 2.9 sqrt(E/(rho r²)) (the
/// largest angular frequency of an FCC lattice of touching spheres at
/// nu = 0, safe for nu >= 0), and the explicit step fraction * 2/omega_est
/// (time). Throws std::invalid_argument for a value not finite and > 0.
double bdem_stable_step(double youngs_modulus, double density, double radius, double fraction);

}  // namespace dem
