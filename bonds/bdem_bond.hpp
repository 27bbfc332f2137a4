#pragma once
/// \file bdem_bond.hpp
/// The BDEM bond law of iBDEM section 3.2 as corrected in docs/model.md §9,
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
/// product is the Hamilton product of docs/model.md Part II). Units: SI in the
/// engine's BDEM scenes (m, N, N m, Pa), any consistent set otherwise.

#include <array>
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

namespace lanes {
#include "bonds/bdem_lanes.inc"

/// The Ops policy of bdem_lanes for a scalar S (double or dual numbers).
/// The shear angle below about 0.57 degrees (x² = |b|²/(c.d)² < 1e-4) by
/// the series of atan(x)/x to five terms, exact to round-off (the first
/// term left out is below 1e-21), else by atan2.
template <class S>
struct BdemScalarOps {
  static S c(double v) { return S(v); }
  static S sqrt(const S& x) {
    using std::sqrt;
    return sqrt(x);
  }
  static S abs(const S& x) {
    using std::abs;
    return abs(x);
  }
  static S flip(const S& x) { return S(x < 0.0 ? -1.0 : 1.0); }
  void shear_angle(const S& sine2, const S& cosine, S& theta, S& g, S& theta2) {
    using std::atan2;
    if (cosine > 0.0 && sine2 < 1e-4 * cosine * cosine) {
      bdem_lanes_series(sine2, cosine, theta, g, theta2, *this);
      return;
    }
    const S sine = sqrt(sine2);
    theta = atan2(sine, cosine);
    g = theta / sine;
    theta2 = theta * theta;
  }
};
}  // namespace lanes

/// The kernel of bonds/bdem_lanes.inc run on one bond, any scalar type S,
/// computing `What`.
template <class S, lanes::BdemLaneResults What = lanes::BdemLaneResults::full>
[[gnu::always_inline]] inline lanes::BdemLaneOutput<S> bdem_lane_output(
    const Eigen::Matrix<S, 3, 1>& x_i, const Eigen::Matrix<S, 3, 1>& x_j, const Eigen::Quaternion<S>& q_i,
    const Eigen::Quaternion<S>& q_j, const Vec3& d0, double l0, const BdemStiffness& k) {
  const lanes::BdemLaneInput<S> in{{x_i[0], x_i[1], x_i[2]},
                                   {x_j[0], x_j[1], x_j[2]},
                                   {q_i.w(), q_i.x(), q_i.y(), q_i.z()},
                                   {q_j.w(), q_j.x(), q_j.y(), q_j.z()},
                                   {S(d0[0]), S(d0[1]), S(d0[2])},
                                   S(l0),
                                   S(k.normal),
                                   S(k.shear),
                                   S(k.bending),
                                   S(k.twist)};
  lanes::BdemLaneOutput<S> out;
  lanes::BdemScalarOps<S> ops;
  lanes::bdem_lanes<What>(in, out, ops);
  return out;
}

/// One bond (9.1-9.4, 10.1) for any scalar type S (double, or dual numbers
/// for derivatives). x_i, x_j: centres; q_i, q_j: unit quaternions of
/// Q_i = R_i R_i0ᵀ and Q_j (either sign: the result does not depend on it);
/// d0: unit rest direction (x_i0 - x_j0)/l0; l0: rest length (> 0).
template <class S>
[[gnu::always_inline]] inline BdemBondResultT<S> bdem_bond_t(const Eigen::Matrix<S, 3, 1>& x_i,
                                                             const Eigen::Matrix<S, 3, 1>& x_j,
                                                             const Eigen::Quaternion<S>& q_i,
                                                             const Eigen::Quaternion<S>& q_j, const Vec3& d0,
                                                             double l0, const BdemStiffness& k) {
  // The arithmetic is bonds/bdem_lanes.inc's, which the vectorised force
  // loop (bonds/bdem_kernel.hpp) runs lane by lane with the same bits.
  const lanes::BdemLaneOutput<S> o = bdem_lane_output(x_i, x_j, q_i, q_j, d0, l0, k);
  BdemBondResultT<S> out;
  for (int c = 0; c < 3; ++c) {
    out.force[c] = o.force[c];
    out.moment_i[c] = o.moment_i[c];
    out.moment_j[c] = o.moment_j[c];
  }
  out.stretch_energy = o.stretch_energy;
  out.shear_energy = o.shear_energy;
  out.bend_twist_energy = o.bend_twist_energy;
  out.axial_force = o.axial_force;
  out.shear_force = o.shear_force;
  out.twist_moment = o.twist_moment;
  out.bending_moment = o.bending_moment;
  out.shear_force2 = o.shear_force2;
  out.bending_moment2 = o.bending_moment2;
  out.cos_half_relative = o.cos_half_relative;
  return out;
}

[[gnu::always_inline]] inline BdemBondResult bdem_bond(const Vec3& x_i, const Vec3& x_j, const Quat& q_i,
                                                       const Quat& q_j, const Vec3& d0, double l0,
                                                       const BdemStiffness& k) {
  return bdem_bond_t<double>(x_i, x_j, q_i, q_j, d0, l0, k);
}

/// The bond's eight strains e (r - l0, t.c, t - (t.c) c, g(theta_s) b:
/// length, then dimensionless) with V = ½ sum_k w_k e_k², w =
/// bdem_strain_weights(k): what the Gauss-Newton Hessian blocks
/// sum_k w_k grad e_k grad e_kᵀ are made of (docs/model.md §12.4). Same
/// arguments as bdem_bond_t.
template <class S>
std::array<S, 8> bdem_bond_strains_t(const Eigen::Matrix<S, 3, 1>& x_i, const Eigen::Matrix<S, 3, 1>& x_j,
                                     const Eigen::Quaternion<S>& q_i, const Eigen::Quaternion<S>& q_j,
                                     const Vec3& d0, double l0, const BdemStiffness& k) {
  const lanes::BdemLaneOutput<S> o =
      bdem_lane_output<S, lanes::BdemLaneResults::strains>(x_i, x_j, q_i, q_j, d0, l0, k);
  std::array<S, 8> e;
  for (int c = 0; c < 8; ++c) e[c] = o.strain[c];
  return e;
}

/// The weights of bdem_bond_strains_t's strains: (k_n, k_tw, k_b, k_b,
/// k_b, k_s, k_s, k_s).
inline std::array<double, 8> bdem_strain_weights(const BdemStiffness& k) {
  return {k.normal, k.twist, k.bending, k.bending, k.bending, k.shear, k.shear, k.shear};
}

/// Stresses of eqs. (12)-(13) (docs/model.md §10.1), pressure units.
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

/// The estimate of docs/model.md §9.6: omega_est = 2.9 sqrt(E/(rho r²)) (the
/// largest angular frequency of an FCC lattice of touching spheres at
/// nu = 0, safe for nu >= 0), and the explicit step fraction * 2/omega_est
/// (time). Throws std::invalid_argument for a value not finite and > 0.
double bdem_stable_step(double youngs_modulus, double density, double radius, double fraction);

}  // namespace dem
