// Size distributions and their deterministic inverse-CDF sampler
// (docs/model.md §21.1).
#include "scene/size_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "core/exact_sum.hpp"
#include "core/format.hpp"
#include "scene/invalid_key.hpp"

namespace dem {

namespace {

constexpr int kQuadraturePoints = 4096;

double standard_normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

bool positive(double v) { return std::isfinite(v) && v > 0.0; }

void check_sieve(const SizeDistribution& s) {
  const auto& d = s.sieve_sizes;
  const auto& p = s.sieve_passing;
  if (d.size() < 2) throw InvalidKey("sieve_sizes", "a sieve table needs at least 2 sizes");
  if (p.size() != d.size())
    throw InvalidKey("sieve_passing", "has " + std::to_string(p.size()) + " values, sieve_sizes has " +
                                          std::to_string(d.size()) + ": one percent passing for each size");
  for (std::size_t k = 0; k < d.size(); ++k) {
    if (!positive(d[k])) throw InvalidKey("sieve_sizes", "sizes must be finite and > 0, got " + format_g(d[k]));
    if (k > 0 && !(d[k] > d[k - 1]))
      throw InvalidKey("sieve_sizes", "must be strictly ascending: " + format_g(d[k]) + " follows " + format_g(d[k - 1]));
    if (!std::isfinite(p[k]) || p[k] < 0.0 || p[k] > 100.0)
      throw InvalidKey("sieve_passing", "percent passing must be in [0, 100], got " + format_g(p[k]));
    if (k > 0 && p[k] < p[k - 1])
      throw InvalidKey("sieve_passing", "must not decrease (percent passing by mass is cumulative): " +
                                            format_g(p[k]) + " follows " + format_g(p[k - 1]));
  }
  if (p.back() != 100.0)
    throw InvalidKey("sieve_passing", "must rise to 100 at the largest sieve size, ends at " + format_g(p.back()));
  if (s.d_min != 0.0) {
    if (!positive(s.d_min)) throw InvalidKey("d_min", "must be finite and > 0, got " + format_g(s.d_min));
    if (s.d_min < d.front() || s.d_min >= d.back())
      throw InvalidKey("d_min", "the resolution cutoff must lie in [" + format_g(d.front()) + ", " +
                                    format_g(d.back()) + "), the sieve table's sizes; got " + format_g(s.d_min));
  }
  if (binder_fines_percent(s) >= 100.0)
    throw InvalidKey("d_min", "leaves no grains: 100% of the mass passes d_min = " + format_g(s.d_min));
}

}  // namespace

double binder_fines_percent(const SizeDistribution& s) {
  if (s.kind != SizeDistributionKind::sieve) return 0.0;
  const auto& d = s.sieve_sizes;
  const auto& p = s.sieve_passing;
  const double x = s.d_min != 0.0 ? s.d_min : d.front();
  for (std::size_t k = 1; k < d.size(); ++k)
    if (x < d[k]) return p[k - 1] + (p[k] - p[k - 1]) * (x - d[k - 1]) / (d[k] - d[k - 1]);
  return p.back();
}

void validate_size_distribution(const SizeDistribution& s) {
  switch (s.kind) {
    case SizeDistributionKind::sieve:
      check_sieve(s);
      return;
    case SizeDistributionKind::lognormal:
      if (!positive(s.median)) throw InvalidKey("median", "must be finite and > 0, got " + format_g(s.median));
      if (!positive(s.sigma_ln)) throw InvalidKey("sigma_ln", "must be finite and > 0, got " + format_g(s.sigma_ln));
      [[fallthrough]];
    case SizeDistributionKind::uniform:
      if (!positive(s.d_min)) throw InvalidKey("d_min", "must be finite and > 0, got " + format_g(s.d_min));
      if (!positive(s.d_max)) throw InvalidKey("d_max", "must be finite and > 0, got " + format_g(s.d_max));
      if (!(s.d_max > s.d_min))
        throw InvalidKey("d_max", "must be larger than d_min = " + format_g(s.d_min) + ", got " + format_g(s.d_max));
      if (s.kind == SizeDistributionKind::lognormal) {
        const double lo = standard_normal_cdf(std::log(s.d_min / s.median) / s.sigma_ln);
        const double hi = standard_normal_cdf(std::log(s.d_max / s.median) / s.sigma_ln);
        if (!(hi - lo > 1e-9))
          throw InvalidKey("d_max", "the truncation [d_min, d_max] holds no probability of the lognormal (median " +
                                        format_g(s.median) + ", sigma_ln " + format_g(s.sigma_ln) + ")");
      }
      return;
  }
}

double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("normal_quantile: p must be in (0, 1)");
  // Acklam's coefficients.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double p_low = 0.02425;
  double x = 0.0;
  if (p < p_low || p > 1.0 - p_low) {
    const double q = std::sqrt(-2.0 * std::log(p < p_low ? p : 1.0 - p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    if (p > 1.0 - p_low) x = -x;
  } else {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  // One Halley step on Phi(x) - p.
  const double e = standard_normal_cdf(x) - p;
  const double u = e * std::sqrt(2.0 * std::numbers::pi) * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

SizeSampler::SizeSampler(const SizeDistribution& s) : s_(s) {
  validate_size_distribution(s_);
  switch (s_.kind) {
    case SizeDistributionKind::uniform:
      lo_ = s_.d_min, hi_ = s_.d_max;
      break;
    case SizeDistributionKind::lognormal:
      lo_ = s_.d_min, hi_ = s_.d_max;
      phi_lo_ = standard_normal_cdf(std::log(lo_ / s_.median) / s_.sigma_ln);
      phi_hi_ = standard_normal_cdf(std::log(hi_ / s_.median) / s_.sigma_ln);
      break;
    case SizeDistributionKind::sieve: {
      const auto& d = s_.sieve_sizes;
      lo_ = s_.d_min != 0.0 ? s_.d_min : d.front();
      hi_ = d.back();
      fines_ = binder_fines_percent(s_);
      // Piecewise-linear mass passing on [a, b]: number weight
      // integral of c x^-3 dx = c (a^-2 - b^-2) / 2, c = dP / (b - a).
      double total = 0.0;
      for (std::size_t k = 1; k < d.size(); ++k) {
        if (d[k] <= lo_) continue;
        const double a = std::max(d[k - 1], lo_), b = d[k];
        const double pa = d[k - 1] >= lo_ ? s_.sieve_passing[k - 1] : fines_;
        const double c = (s_.sieve_passing[k] - pa) / (b - a);
        a_.push_back(a), b_.push_back(b);
        total += 0.5 * c * (1.0 / (a * a) - 1.0 / (b * b));
        cumulative_.push_back(total);
      }
      for (double& w : cumulative_) w /= total;
      break;
    }
  }
  double volume = 0.0;
  for (int i = 0; i < kQuadraturePoints; ++i) {
    const double x = diameter((i + 0.5) / kQuadraturePoints);
    volume += std::numbers::pi / 6.0 * x * x * x;
  }
  mean_volume_ = volume / kQuadraturePoints;
}

double SizeSampler::diameter(double u) const {
  switch (s_.kind) {
    case SizeDistributionKind::uniform:
      return std::min(hi_, lo_ + u * (hi_ - lo_));
    case SizeDistributionKind::lognormal: {
      const double p = std::clamp(phi_lo_ + u * (phi_hi_ - phi_lo_), 1e-300, 1.0 - 0x1.0p-53);
      return std::clamp(s_.median * std::exp(s_.sigma_ln * normal_quantile(p)), lo_, hi_);
    }
    case SizeDistributionKind::sieve: {
      const std::size_t k = static_cast<std::size_t>(
          std::min<std::ptrdiff_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin(),
                                   static_cast<std::ptrdiff_t>(cumulative_.size()) - 1));
      const double below = k == 0 ? 0.0 : cumulative_[k - 1];
      const double width = cumulative_[k] - below;
      const double v = width > 0.0 ? std::clamp((u - below) / width, 0.0, 1.0) : 0.0;
      const double ia = 1.0 / (a_[k] * a_[k]), ib = 1.0 / (b_[k] * b_[k]);
      return std::clamp(1.0 / std::sqrt(ia - v * (ia - ib)), a_[k], b_[k]);
    }
  }
  return lo_;
}

double SizeSampler::requested_passing(double d) const {
  if (s_.kind == SizeDistributionKind::sieve) {
    const auto& x = s_.sieve_sizes;
    const auto& p = s_.sieve_passing;
    if (d >= x.back()) return 100.0;
    if (d <= x.front()) return p.front() * std::max(d, 0.0) / x.front();
    for (std::size_t k = 1; k < x.size(); ++k)
      if (d < x[k]) return p[k - 1] + (p[k] - p[k - 1]) * (d - x[k - 1]) / (x[k] - x[k - 1]);
    return 100.0;
  }
  double below = 0.0, all = 0.0;
  for (int i = 0; i < kQuadraturePoints; ++i) {
    const double x = diameter((i + 0.5) / kQuadraturePoints);
    all += x * x * x;
    if (x <= d) below += x * x * x;
  }
  return 100.0 * below / all;
}

std::vector<double> sample_diameters(const SizeSampler& sampler, std::uint64_t seed, double target_volume,
                                     std::uint64_t max_count) {
  if (!(target_volume >= 0.0) || !std::isfinite(target_volume))
    throw std::invalid_argument("sample_diameters: the target volume must be finite and >= 0");
  const double expected = target_volume / sampler.mean_volume();
  if (expected > static_cast<double>(max_count))
    throw std::invalid_argument("about " + format_g(expected, 3) + " particles would be needed, more than " +
                                std::to_string(max_count));
  std::mt19937_64 rng(seed);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(expected * 1.05) + 16);
  double volume = 0.0;
  while (volume < target_volume) {
    if (out.size() >= max_count)
      throw std::invalid_argument("more than " + std::to_string(max_count) + " particles would be needed");
    const double d = sampler.diameter(uniform_01(rng));
    out.push_back(d);
    volume += std::numbers::pi / 6.0 * d * d * d;
  }
  return out;
}

namespace {

/// The number quantile u at which the weighted measure of [0, u) is v
/// (bin_weights as in stratified_diameters; `cumulative` its B+1 partial
/// sums over the total, from 0 to 1).
double weighted_quantile(double v, const std::vector<double>& weights, const std::vector<double>& cumulative) {
  const std::size_t bins = weights.size();
  std::size_t b = static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), v) - cumulative.begin());
  b = std::clamp<std::size_t>(b, 1, bins) - 1;
  const double width = cumulative[b + 1] - cumulative[b];
  const double within = width > 0.0 ? std::clamp((v - cumulative[b]) / width, 0.0, 1.0) : 0.0;
  return std::min((static_cast<double>(b) + within) / static_cast<double>(bins), std::nextafter(1.0, 0.0));
}

}  // namespace

std::vector<double> stratified_diameters(const SizeSampler& sampler, std::uint64_t seed, double target_volume,
                                         std::uint64_t max_count, const std::vector<double>& bin_weights) {
  if (!(target_volume >= 0.0) || !std::isfinite(target_volume))
    throw std::invalid_argument("stratified_diameters: the target volume must be finite and >= 0");
  std::vector<double> cumulative{0.0};
  double mean_volume = sampler.mean_volume();
  if (!bin_weights.empty()) {
    // The weighted mean volume: each bin's own (midpoint rule) by its share.
    constexpr int kPoints = 256;
    const double bins = static_cast<double>(bin_weights.size());
    ExactSum total, volume;
    for (std::size_t b = 0; b < bin_weights.size(); ++b) {
      const double w = bin_weights[b];
      if (!(w > 0.0) || !std::isfinite(w))
        throw std::invalid_argument("stratified_diameters: bin weights must be positive and finite, got " + format_g(w, 3));
      ExactSum bin;
      for (int m = 0; m < kPoints; ++m) {
        const double d = sampler.diameter((static_cast<double>(b) + (m + 0.5) / kPoints) / bins);
        bin.add(std::numbers::pi / 6.0 * d * d * d);
      }
      total.add(w);
      volume.add(w * bin.value() / kPoints);
      cumulative.push_back(total.value());
    }
    for (double& c : cumulative) c /= total.value();
    mean_volume = volume.value() / total.value();
  }
  const double expected = std::max(1.0, std::round(target_volume / mean_volume));
  if (expected > static_cast<double>(max_count))
    throw std::invalid_argument("about " + format_g(expected, 3) + " particles would be needed, more than " +
                                std::to_string(max_count));
  const auto count = static_cast<std::size_t>(expected);
  std::mt19937_64 rng(seed);
  std::vector<double> out(count);
  for (std::size_t k = 0; k < count; ++k) {
    const double v = (static_cast<double>(k) + uniform_01(rng)) / static_cast<double>(count);
    out[k] = sampler.diameter(bin_weights.empty() ? v : weighted_quantile(v, bin_weights, cumulative));
  }
  for (std::size_t i = count; i > 1; --i) {
    const auto j = std::min(static_cast<std::size_t>(uniform_01(rng) * static_cast<double>(i)), i - 1);
    std::swap(out[i - 1], out[j]);
  }
  return out;
}

std::vector<double> achieved_passing(const std::vector<double>& diameters, const std::vector<double>& sizes,
                                     double fines) {
  ExactSum total;
  std::vector<ExactSum> below(sizes.size());
  for (const double d : diameters) {
    const double m = d * d * d;
    total.add(m);
    for (std::size_t k = 0; k < sizes.size(); ++k)
      if (d <= sizes[k]) below[k].add(m);
  }
  std::vector<double> out;
  const double all = total.value();
  for (const ExactSum& b : below) out.push_back(fines + (100.0 - fines) * (all > 0.0 ? b.value() / all : 0.0));
  return out;
}

}  // namespace dem
