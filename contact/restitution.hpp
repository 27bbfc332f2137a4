#pragma once
/// \file restitution.hpp
/// The normal damping of Hertz contact and the coefficient of restitution it
/// gives (docs/model.md §11.5). The damping force of a Hertz contact is
///
///     F_d = c sqrt(S_n m*) v_n,   S_n = 2 E* sqrt(R* delta),
///
/// with a dimensionless coefficient c >= 0. Scaled by delta_0 =
/// (m* v_0² / K)^{2/5} and t_0 = delta_0 / v_0 (K = 4/3 E* sqrt(R*), v_0 the
/// approach speed), a binary collision becomes
///
///     x'' = -f,  f = x^{3/2} + sqrt(3/2) c x^{1/4} x',  x(0) = 0, x'(0) = 1,
///
/// without any constant of the pair or the speed: the restitution e = -x'
/// at separation depends on c alone, at every speed. The laws:
///   - exact: the force is kept non-attractive (f >= 0) and c is solved once
///     from e so that the collision rebounds with exactly e (the default);
///   - tsuji-clamped: c = -2 sqrt(5/6) ln e / sqrt(ln² e + pi²) (Tsuji, Tanaka &
///     Ishida 1992 in the form of LIGGGHTS/LAMMPS), with f >= 0 (LIGGGHTS's
///     `limitForce on`); its restitution is larger than e (0.397 for 0.3);
///   - tsuji: the same c, the force may pull (LIGGGHTS's default).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dem {

enum class NormalDamping : std::uint8_t { exact = 0, tsuji_clamped = 1, tsuji = 2 };

/// "exact", "tsuji-clamped", "tsuji": the scene's `damping` values.
std::string_view normal_damping_name(NormalDamping d);
/// The damping of this name, or nullopt.
std::optional<NormalDamping> parse_normal_damping(std::string_view name);

/// The force is kept >= 0 (exact, tsuji-clamped).
inline bool clamps_force(NormalDamping d) { return d != NormalDamping::tsuji; }

/// Tsuji's coefficient -2 sqrt(5/6) ln e / sqrt(ln² e + pi²), e in (0, 1].
double tsuji_damping(double e);

/// The dimensionless collision above with coefficient c >= 0: the
/// restitution and the contact duration (in units of t_0).
struct HertzCollision {
  double restitution = 1.0;
  double duration = 0.0;
  double max_overlap = 0.0;  ///< in units of delta_0
};
/// Integrated with an adaptive Dormand-Prince scheme (Boost.Odeint) to a
/// relative accuracy of about 1e-10; the end of contact (x = 0, or f = 0
/// on unloading when clamped, after which the pair moves apart freely) is
/// located by bisection on the dense output. Throws std::invalid_argument
/// for c < 0 or not finite.
HertzCollision hertz_collision(double c, bool clamped);

/// The coefficient c of this damping law for the input e in (0, 1]: Tsuji's
/// for the Tsuji laws; for exact, the root of hertz_collision(c,
/// true).restitution = e (bisection to 1e-13 relative; memoised per e, so
/// each distinct e costs one solve of about a millisecond). Throws
/// std::invalid_argument for e outside (0, 1].
double damping_coefficient(NormalDamping d, double e);

}  // namespace dem
