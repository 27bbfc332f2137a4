// FIRE minimisation of a packing's harmonic overlap energy (docs/model.md §21.3).
#include "scene/packing_relaxation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/parallel.hpp"

namespace dem {

namespace {

/// FIRE's constants (Bitzek et al. 2006; Guénolé et al. 2020), for unit
/// masses and unit stiffness: the stiffest mode of a particle with about
/// 12 contacts has ω² ≈ 24, so steps above 2/√24 ≈ 0.4 are unstable and
/// end in a restart.
constexpr double kDtStart = 0.1, kDtMax = 0.4, kDtMin = 0.002;
constexpr double kGrow = 1.1, kShrink = 0.5, kAlphaStart = 0.1, kAlphaShrink = 0.99;
constexpr int kDelay = 5;
/// The Verlet skin as a fraction of the mean scaled diameter.
constexpr double kSkinRatio = 0.3;

}  // namespace

OverlapRelaxation::OverlapRelaxation(const Confinement& c, const std::vector<double>& d)
    : c_(c), d_(d), cell_(PeriodicCell::box(c.lower, c.upper, c.periodic)) {
  const std::size_t n = d.size();
  law_.stiffness = 1.0;
  d_max_ = n ? *std::max_element(d.begin(), d.end()) : 0.0;
  const double mean = n ? std::accumulate(d.begin(), d.end(), 0.0) / double(n) : 0.0;
  skin_ratio_ = kSkinRatio * mean;
  radii_.assign(n, 0.0);
  f_.assign(n, Vec3::Zero());
  v_.assign(n, Vec3::Zero());
  worst_.assign(n, 0.0);
  overlap_sum_.assign(n, 0.0);
  overlap_count_.assign(n, 0);
}

void OverlapRelaxation::rebuild(std::vector<Vec3>& x) {
  if (cell_.any()) parallel_for_each(x.size(), [&](std::size_t i) { x[i] = c_.wrap(x[i]); }, 4096);
  search_.rebuild(x, radii_);
}

void OverlapRelaxation::pair_forces(const std::vector<Vec3>& x) {
  const NeighbourList& list = search_.list();
  const std::size_t m = list.pair_count();
  pair_force_.resize(m);
  pair_overlap_.resize(m);
  parallel_for_each(m, [&](std::size_t k) {
    const std::uint32_t i = list.owner[k], j = list.partner[k];
    const Vec3 xj = partner_image(list, cell_, x, k);
    const double overlap = radii_[i] + radii_[j] - (x[i] - xj).norm();
    pair_overlap_[k] = std::max(overlap, 0.0);
    if (!(overlap > 0.0)) {
      pair_force_[k] = Vec3::Zero();
    } else if (x[i] == xj) {
      pair_force_[k] = Vec3(-overlap, 0.0, 0.0);  // coincident centres: apart along x, the lower id to -x
    } else {
      PenaltyContactLaw::State state;  // stateless: no history
      pair_force_[k] = law_.force(x[i], xj, radii_[i], radii_[j], state);
    }
  }, 1024);
}

RelaxResult OverlapRelaxation::forces(const std::vector<Vec3>& x, double s) {
  pair_forces(x);
  const NeighbourList& list = search_.list();
  parallel_for_each(x.size(), [&](std::size_t i) {
    Vec3 f = Vec3::Zero();
    double worst = 0.0, sum = 0.0;
    std::uint32_t count = 0;
    const auto ratio = [&](std::size_t k, std::uint32_t j) {
      return pair_overlap_[k] / (s * std::min(d_[i], d_[j]));
    };
    for (std::uint32_t k = list.offsets[i]; k < list.offsets[i + 1]; ++k) {
      f += pair_force_[k];
      if (pair_overlap_[k] > 0.0) {
        worst = std::max(worst, ratio(k, list.partner[k]));
        sum += pair_overlap_[k], ++count;
      }
    }
    for (std::uint32_t q = list.incoming_offsets[i]; q < list.incoming_offsets[i + 1]; ++q) {
      const std::uint32_t k = list.incoming_pairs[q];
      f -= pair_force_[k];
      if (pair_overlap_[k] > 0.0) worst = std::max(worst, ratio(k, list.owner[k]));
    }
    c_.walls(x[i], radii_[i], [&](double out, const Vec3& n) {
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
  for (std::size_t i = 0; i < n; ++i) radii_[i] = 0.5 * s * d_[i];
  // The list finds one image of a pair at most: a periodic axis must be two
  // cutoffs (s d_max + skin) wide, so a narrow cell takes a thinner skin.
  double skin = s * skin_ratio_;
  if (cell_.any()) {
    const double room = 0.5 * cell_.smallest_periodic_width() - s * d_max_;
    if (!(room > 0.0))
      throw std::invalid_argument("packing: a periodic axis of the cell is narrower than two largest diameters "
                                  "at the genesis's radius scale " + std::to_string(s));
    skin = std::min(skin, 0.9 * room);
  }
  search_ = NeighbourSearch(skin);
  search_.set_cell(cell_);
  rebuild(x);
  std::fill(v_.begin(), v_.end(), Vec3::Zero());
  double dt = kDtStart, alpha = kAlphaStart;
  int positive = 0;
  RelaxResult r;
  for (std::uint64_t step = 0;; ++step) {
    r = forces(x, s);
    r.steps = step;
    if (r.max_overlap_ratio < limits.zero_overlap) {
      r.outcome = RelaxOutcome::unjammed;
      break;
    }
    if (r.max_force <= limits.force_ratio * r.mean_overlap) {
      r.outcome = RelaxOutcome::jammed;
      break;
    }
    if (step == limits.max_steps) break;
    double power = 0.0;
    for (std::size_t i = 0; i < n; ++i) power += f_[i].dot(v_[i]);
    if (power > 0.0) {
      if (++positive > kDelay) dt = std::min(dt * kGrow, kDtMax), alpha *= kAlphaShrink;
    } else {
      // Uphill: half a step back, stop, and start again carefully.
      positive = 0;
      dt = std::max(dt * kShrink, kDtMin);
      alpha = kAlphaStart;
      parallel_for_each(n, [&](std::size_t i) {
        x[i] -= 0.5 * dt * v_[i];
        v_[i] = Vec3::Zero();
      });
    }
    parallel_for_each(n, [&](std::size_t i) { v_[i] += dt * f_[i]; });
    double vv = 0.0, ff = 0.0;
    for (std::size_t i = 0; i < n; ++i) vv += v_[i].squaredNorm(), ff += f_[i].squaredNorm();
    const double mix = ff > 0.0 ? alpha * std::sqrt(vv / ff) : 0.0;
    parallel_for_each(n, [&](std::size_t i) {
      v_[i] = (1.0 - alpha) * v_[i] + mix * f_[i];
      x[i] += dt * v_[i];
    });
    if (search_.rebuild_due(x, radii_)) rebuild(x);
  }
  if (cell_.any()) parallel_for_each(n, [&](std::size_t i) { x[i] = c_.wrap(x[i]); }, 4096);
  return r;
}

}  // namespace dem
