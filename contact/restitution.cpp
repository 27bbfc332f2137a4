#include "contact/restitution.hpp"

#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <stdexcept>

#include <boost/numeric/odeint.hpp>

namespace dem {

namespace {
constexpr std::array<std::pair<NormalDamping, std::string_view>, 3> kNames = {
    {{NormalDamping::exact, "exact"}, {NormalDamping::tsuji_clamped, "tsuji-clamped"}, {NormalDamping::tsuji, "tsuji"}}};
}  // namespace

std::string_view normal_damping_name(NormalDamping d) {
  for (const auto& [k, name] : kNames)
    if (k == d) return name;
  return "?";
}

std::optional<NormalDamping> parse_normal_damping(std::string_view name) {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

double tsuji_damping(double e) {
  const double ln_e = std::log(e);
  const double beta = ln_e / std::sqrt(ln_e * ln_e + std::numbers::pi * std::numbers::pi);
  return -2.0 * std::sqrt(5.0 / 6.0) * beta;
}

namespace {
using State = std::array<double, 2>;  // x, x'

/// The scaled normal force f = x^{3/2} + sqrt(3/2) c x^{1/4} x'.
double scaled_force(const State& s, double c) {
  const double x = std::max(s[0], 0.0);
  return x * std::sqrt(x) + std::sqrt(1.5) * c * std::sqrt(std::sqrt(x)) * s[1];
}

/// The contact is over at s (moving apart, and past x = 0 or, clamped, the
/// force has fallen to 0).
bool ended(const State& s, double c, bool clamped) {
  return s[1] < 0.0 && (s[0] <= 0.0 || (clamped && scaled_force(s, c) <= 0.0));
}
}  // namespace

HertzCollision hertz_collision(double c, bool clamped) {
  if (!(std::isfinite(c) && c >= 0.0)) throw std::invalid_argument("hertz_collision: c must be finite and >= 0");
  namespace odeint = boost::numeric::odeint;
  const auto rhs = [c, clamped](const State& s, State& ds, double) {
    const double f = scaled_force(s, c);
    ds[0] = s[1];
    ds[1] = clamped ? -std::max(f, 0.0) : -f;
  };
  auto stepper = odeint::make_dense_output(1e-12, 1e-12, odeint::runge_kutta_dopri5<State>());
  stepper.initialize(State{0.0, 1.0}, 0.0, 1e-6);
  HertzCollision out;
  for (int k = 0; k < 1000000; ++k) {
    const auto [t0, t1] = stepper.do_step(rhs);
    const State now = stepper.current_state();
    State s;
    if (now[1] <= 0.0 && out.max_overlap == 0.0) {  // the turning point is in this step
      double lo = t0, hi = t1;
      for (int b = 0; b < 80; ++b) {
        const double mid = 0.5 * (lo + hi);
        stepper.calc_state(mid, s);
        (s[1] > 0.0 ? lo : hi) = mid;
      }
      stepper.calc_state(lo, s);
      out.max_overlap = s[0];
    }
    if (!ended(now, c, clamped)) continue;
    double lo = t0, hi = t1;
    for (int b = 0; b < 100; ++b) {
      const double mid = 0.5 * (lo + hi);
      stepper.calc_state(mid, s);
      (ended(s, c, clamped) ? hi : lo) = mid;
    }
    stepper.calc_state(hi, s);
    out.restitution = -s[1];
    // Clamped: from here the pair moves apart at constant speed.
    out.duration = hi + std::max(s[0], 0.0) / -s[1];
    return out;
  }
  throw std::runtime_error("hertz_collision: the collision did not end");
}

double damping_coefficient(NormalDamping d, double e) {
  if (!(e > 0.0 && e <= 1.0)) throw std::invalid_argument("the coefficient of restitution e must be in (0, 1]");
  if (d != NormalDamping::exact) return tsuji_damping(e);
  if (e == 1.0) return 0.0;
  static std::mutex mutex;
  static std::map<double, double> solved;
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = solved.find(e); it != solved.end()) return it->second;
  // e(c) falls from 1 at c = 0 towards 0: bracket, then bisect.
  double lo = 0.0, hi = std::max(1.0, 2.0 * tsuji_damping(e));
  while (hertz_collision(hi, true).restitution > e) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e8) throw std::invalid_argument("the coefficient of restitution e is too small to reach");
  }
  while (hi - lo > 1e-13 * hi) {
    const double mid = 0.5 * (lo + hi);
    (hertz_collision(mid, true).restitution > e ? lo : hi) = mid;
  }
  const double c = 0.5 * (lo + hi);
  solved.emplace(e, c);
  return c;
}

}  // namespace dem
