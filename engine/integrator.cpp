#include "engine/integrator.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/parallel.hpp"
#include "core/rotation.hpp"

namespace dem {

IntegratorMap parse_integrator_map(const std::string& name) {
  if (name == "23") return IntegratorMap::rrp23;
  if (name == "25") return IntegratorMap::rrp25;
  if (name == "27") return IntegratorMap::rrp27;
  if (name == "implicit") return IntegratorMap::implicit;
  throw std::invalid_argument("unknown integrator '" + name +
                              "': expected 23, 25 or 27 (the maps of Baker & Gonzalez) or implicit");
}

std::string integrator_map_name(IntegratorMap map) {
  switch (map) {
    case IntegratorMap::rrp23: return "23";
    case IntegratorMap::rrp25: return "25";
    case IntegratorMap::rrp27: return "27";
    case IntegratorMap::implicit: return "implicit";
  }
  return "?";
}

namespace {
std::string stability_message(std::size_t particle, double largest, double step) {
  std::ostringstream os;
  os.precision(6);
  os << "map (23) is unstable at particle " << particle << ": h |w| >= 1 with h = " << step
     << " (the incremental rotation would reach 90 degrees); the largest stable step for this "
        "particle is about "
     << largest << ", use a smaller time step or map (25)";
  return os.str();
}
}  // namespace

StabilityError::StabilityError(std::size_t p, double largest, double step)
    : std::runtime_error(stability_message(p, largest, step)),
      particle(p),
      largest_stable_step(largest) {}

double largest_stable_step_rrp23(const Vec3& omega, const Vec3& moment, double inertia,
                                 double h_hint) {
  auto f = [&](double h) { return h * (omega + (0.5 * h / inertia) * moment).norm(); };
  double hi = h_hint > 0.0 ? h_hint : 1.0;
  for (int k = 0; k < 200 && f(hi) < 1.0; ++k) hi *= 2.0;
  if (f(hi) < 1.0) return std::numeric_limits<double>::infinity();
  double lo = 0.0;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (f(mid) < 1.0 ? lo : hi) = mid;
  }
  return lo;
}

void advance_configuration(ParticleStore& s, IntegratorMap map, double h, const DriftSink* drift, bool moments) {
  if (map == IntegratorMap::implicit)
    throw std::logic_error("advance_configuration: the implicit integrator is run by the stepper");
  const std::size_t n = s.size();
  if (drift != nullptr && drift->count != n)
    throw std::invalid_argument("advance_configuration: the drift sink is for another particle count");
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::atomic<std::size_t> failed{kNone};
  // Particles [b, e): the kick and drift, and with a sink (Drift) the
  // rebuild test's block results of NeighbourSearch's own pass: the same
  // values, as max and min are exact in any order and +-inf starts them.
  // b is a block start when Drift.
  const auto advance_range = [&]<bool Drift>(std::size_t b, std::size_t e) {
    // Neighbouring particles mostly share mass and inertia: the divisions
    // are redone only when they change (the same values either way).
    double last_m = std::numeric_limits<double>::quiet_NaN(), inv_m = 0.0;
    double last_j = std::numeric_limits<double>::quiet_NaN(), inv_j = 0.0;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double lo[3] = {kInf, kInf, kInf}, hi[3] = {-kInf, -kInf, -kInf};
    double worst = 0.0;
    std::size_t bad = n;
    for (std::size_t i = b; i < e; ++i) {
      if (!(s.mass[i] == last_m)) inv_m = 1.0 / (last_m = s.mass[i]);
      if (moments && !(s.inertia[i] == last_j)) inv_j = 1.0 / (last_j = s.inertia[i]);
      Vec3 delta_alpha;
      if (map == IntegratorMap::rrp27) {
        s.velocity[i] += (h * inv_m) * s.force[i];
        if (moments) s.angular_velocity[i] += (h * inv_j) * s.moment[i];
        delta_alpha = h * s.angular_velocity[i];
      } else {
        s.velocity[i] += (0.5 * h * inv_m) * s.force[i];
        // w_k = Omega_k + h/(2J) tau_k, kept in angular_velocity until the
        // second half kick (without moments tau_k = 0 and w_k = Omega_k).
        if (moments) s.angular_velocity[i] += (0.5 * h * inv_j) * s.moment[i];
        const Vec3& w = s.angular_velocity[i];
        if (map == IntegratorMap::rrp25) {
          delta_alpha = h * w;
        } else {
          const double hw2 = h * h * w.squaredNorm();
          if (!(hw2 < 1.0)) {
            std::size_t prev = failed.load();
            while (i < prev && !failed.compare_exchange_weak(prev, i)) {
            }
            continue;
          }
          delta_alpha = (2.0 * h / (1.0 + std::sqrt(1.0 - hw2))) * w;
        }
      }
      const Vec3 x = s.position[i] + h * s.velocity[i];
      s.position[i] = x;
      // A sphere that does not turn keeps its attitude exactly (and skips
      // the quaternion product: on the frictionless lattice no sphere turns).
      if (delta_alpha.x() != 0.0 || delta_alpha.y() != 0.0 || delta_alpha.z() != 0.0)
        s.attitude[i] = compose_spatial(s.attitude[i], delta_alpha);
      if constexpr (Drift) {
        const Vec3& ref = drift->reference[i];
        const double d0 = x[0] - ref[0], d1 = x[1] - ref[1], d2 = x[2] - ref[2];
        // Finite x gives finite d (the reference is finite); the test on d
        // catches NaN and inf alike.
        if (!(std::abs(d0) < kInf && std::abs(d1) < kInf && std::abs(d2) < kInf)) {
          if (bad == n && !(std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]))) bad = i;
          if (bad != n) continue;
        }
        if (bad != n) continue;
        worst = std::max(worst, Vec3(d0, d1, d2).squaredNorm());
        lo[0] = std::min(lo[0], d0);
        lo[1] = std::min(lo[1], d1);
        lo[2] = std::min(lo[2], d2);
        hi[0] = std::max(hi[0], d0);
        hi[1] = std::max(hi[1], d1);
        hi[2] = std::max(hi[2], d2);
      }
    }
    if constexpr (Drift) {
      const std::size_t block = b / kReductionBlock;
      drift->low[block] = Vec3(lo[0], lo[1], lo[2]);
      drift->high[block] = Vec3(hi[0], hi[1], hi[2]);
      drift->worst[block] = worst;
      drift->bad[block] = bad;
    }
  };
  if (drift != nullptr) {
    const std::size_t blocks = (n + kReductionBlock - 1) / kReductionBlock;
    parallel_for_ranges(
        blocks,
        [&](std::size_t b0, std::size_t b1) {
          for (std::size_t k = b0; k < b1; ++k)
            advance_range.template operator()<true>(k * kReductionBlock, std::min(n, (k + 1) * kReductionBlock));
        },
        1);
  } else {
    parallel_for_ranges(n, [&](std::size_t b, std::size_t e) { advance_range.template operator()<false>(b, e); });
  }
  const std::size_t p = failed.load();
  if (p != kNone) {
    const double inv_j = 1.0 / s.inertia[p];
    const Vec3 omega = s.angular_velocity[p] - (0.5 * h * inv_j) * s.moment[p];
    throw StabilityError(p, largest_stable_step_rrp23(omega, s.moment[p], s.inertia[p], h), h);
  }
}

void complete_step(ParticleStore& s, IntegratorMap map, double h) {
  if (map == IntegratorMap::rrp27) return;
  if (map == IntegratorMap::implicit)
    throw std::logic_error("complete_step: the implicit integrator is run by the stepper");
  parallel_for_ranges(s.size(), [&](std::size_t b, std::size_t e) { complete_step_range(s, h, b, e); });
}

void complete_step_range(ParticleStore& s, double h, std::size_t begin, std::size_t end, bool moments) {
  double last_m = std::numeric_limits<double>::quiet_NaN(), kick_v = 0.0;
  double last_j = std::numeric_limits<double>::quiet_NaN(), kick_w = 0.0;
  for (std::size_t i = begin; i < end; ++i) {
    if (!(s.mass[i] == last_m)) kick_v = 0.5 * h / (last_m = s.mass[i]);
    s.velocity[i] += kick_v * s.force[i];
    if (!moments) continue;
    if (!(s.inertia[i] == last_j)) kick_w = 0.5 * h / (last_j = s.inertia[i]);
    s.angular_velocity[i] += kick_w * s.moment[i];
  }
}

}  // namespace dem
