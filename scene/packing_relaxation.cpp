// FIRE minimisation of a packing's harmonic overlap energy (docs/model.md §21.3).
#include "scene/packing_relaxation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace dem {

namespace {

/// FIRE's constants (Bitzek et al. 2006; Guénolé et al. 2020), for unit
/// masses and unit stiffness: the stiffest mode of a particle with about
/// 12 contacts has ω² ≈ 24, so steps above 2/√24 ≈ 0.4 are unstable and
/// end in a restart.
constexpr double kDtStart = 0.1, kDtMax = 0.4, kDtMin = 0.002;
constexpr double kGrow = 1.1, kShrink = 0.5, kAlphaStart = 0.1, kAlphaShrink = 0.99;
constexpr int kDelay = 5;

template <class F>
void for_each_particle(std::size_t n, F&& f) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 512), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) f(i);
  });
}

}  // namespace

OverlapRelaxation::OverlapRelaxation(const Confinement& c, const std::vector<double>& d) : c_(c), d_(d) {
  const std::size_t n = d.size();
  d_max_ = n ? *std::max_element(d.begin(), d.end()) : 0.0;
  const double mean = n ? std::accumulate(d.begin(), d.end(), 0.0) / double(n) : 0.0;
  skin_ = 0.3 * mean;
  f_.assign(n, Vec3::Zero());
  v_.assign(n, Vec3::Zero());
  moved_.assign(n, Vec3::Zero());
  worst_.assign(n, 0.0);
  overlap_sum_.assign(n, 0.0);
  overlap_count_.assign(n, 0);
  start_.assign(n + 1, 0);
}

void OverlapRelaxation::build_neighbours(const std::vector<Vec3>& x, double s) {
  const std::size_t n = x.size();
  const double skin = s * skin_;
  const CellGrid grid(c_, s * d_max_ + skin, x);
  const auto near = [&](std::size_t i, std::uint32_t j) {
    return j != i && c_.image(x[i] - x[j]).norm() < 0.5 * s * (d_[i] + d_[j]) + skin;
  };
  std::vector<std::uint32_t> count(n, 0);
  for_each_particle(n, [&](std::size_t i) {
    grid.around(x[i], [&](std::uint32_t j) { count[i] += near(i, j); });
  });
  start_[0] = 0;
  for (std::size_t i = 0; i < n; ++i) start_[i + 1] = start_[i] + count[i];
  ids_.resize(start_[n]);
  for_each_particle(n, [&](std::size_t i) {
    std::uint64_t q = start_[i];
    grid.around(x[i], [&](std::uint32_t j) {
      if (near(i, j)) ids_[q++] = j;
    });
  });
  std::fill(moved_.begin(), moved_.end(), Vec3::Zero());
  built_scale_ = s;
}

RelaxResult OverlapRelaxation::forces(const std::vector<Vec3>& x, double s) {
  for_each_particle(x.size(), [&](std::size_t i) {
    Vec3 f = Vec3::Zero();
    double worst = 0.0, sum = 0.0;
    std::uint32_t count = 0;
    for (std::uint64_t q = start_[i]; q < start_[i + 1]; ++q) {
      const std::uint32_t j = ids_[q];
      const Vec3 r = c_.image(x[i] - x[j]);
      const double dist = r.norm();
      const double overlap = 0.5 * s * (d_[i] + d_[j]) - dist;
      if (overlap <= 0.0) continue;
      // Coincident centres: apart along x, by id.
      f += overlap * (dist > 0.0 ? Vec3(r / dist) : Vec3(i < j ? -1.0 : 1.0, 0.0, 0.0));
      worst = std::max(worst, overlap / (s * std::min(d_[i], d_[j])));
      sum += overlap, ++count;
    }
    c_.walls(x[i], 0.5 * s * d_[i], [&](double out, const Vec3& n) {
      f += out * n;
      worst = std::max(worst, out / (s * d_[i]));
      sum += out, ++count;
    });
    f_[i] = f;
    worst_[i] = worst;
    overlap_sum_[i] = sum;
    overlap_count_[i] = count;
  });
  RelaxResult r;
  double sum = 0.0;
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    r.max_overlap_ratio = std::max(r.max_overlap_ratio, worst_[i]);
    r.max_force = std::max(r.max_force, f_[i].norm());
    sum += overlap_sum_[i], count += overlap_count_[i];
  }
  r.mean_overlap = count ? sum / double(count) : 0.0;
  return r;
}

RelaxResult OverlapRelaxation::relax(std::vector<Vec3>& x, double s, const RelaxLimits& limits) {
  const std::size_t n = x.size();
  build_neighbours(x, s);
  std::fill(v_.begin(), v_.end(), Vec3::Zero());
  double dt = kDtStart, alpha = kAlphaStart;
  int positive = 0;
  for (std::uint64_t step = 0;; ++step) {
    RelaxResult r = forces(x, s);
    r.steps = step;
    if (r.max_overlap_ratio < limits.zero_overlap) {
      r.outcome = RelaxOutcome::unjammed;
      return r;
    }
    if (r.max_force <= limits.force_ratio * r.mean_overlap) {
      r.outcome = RelaxOutcome::jammed;
      return r;
    }
    if (step == limits.max_steps) return r;
    double power = 0.0;
    for (std::size_t i = 0; i < n; ++i) power += f_[i].dot(v_[i]);
    if (power > 0.0) {
      if (++positive > kDelay) dt = std::min(dt * kGrow, kDtMax), alpha *= kAlphaShrink;
    } else {
      // Uphill: half a step back, stop, and start again carefully.
      positive = 0;
      dt = std::max(dt * kShrink, kDtMin);
      alpha = kAlphaStart;
      for_each_particle(n, [&](std::size_t i) {
        x[i] = c_.wrap(x[i] - 0.5 * dt * v_[i]);
        moved_[i] -= 0.5 * dt * v_[i];
        v_[i] = Vec3::Zero();
      });
    }
    for_each_particle(n, [&](std::size_t i) { v_[i] += dt * f_[i]; });
    double vv = 0.0, ff = 0.0;
    for (std::size_t i = 0; i < n; ++i) vv += v_[i].squaredNorm(), ff += f_[i].squaredNorm();
    const double mix = ff > 0.0 ? alpha * std::sqrt(vv / ff) : 0.0;
    double reach = 0.0;
    std::vector<double>& moved = worst_;  // scratch: |moved| per particle
    for_each_particle(n, [&](std::size_t i) {
      v_[i] = (1.0 - alpha) * v_[i] + mix * f_[i];
      x[i] = c_.wrap(x[i] + dt * v_[i]);
      moved_[i] += dt * v_[i];
      moved[i] = moved_[i].norm();
    });
    for (std::size_t i = 0; i < n; ++i) reach = std::max(reach, moved[i]);
    if (2.0 * reach + std::max(0.0, s - built_scale_) * d_max_ >= built_scale_ * skin_) build_neighbours(x, s);
  }
}

}  // namespace dem
