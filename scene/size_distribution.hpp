#pragma once
/// \file size_distribution.hpp
/// Particle size distributions of a packing (docs/model.md §21.1,
/// docs/scene-format.md `source = "packing"`): uniform, truncated lognormal,
/// or a sieve curve (percent passing by mass against size), and a
/// deterministic sampler of diameters by explicit inverse-CDF sampling of
/// std::mt19937_64 (never std::*_distribution, whose output is
/// implementation-defined), so that a seed gives the same diameters on any
/// thread count and standard library.

#include <cstdint>
#include <random>
#include <vector>

namespace dem {

enum class SizeDistributionKind { uniform, lognormal, sieve };

/// A size distribution as a scene gives it (lengths in m, or any one unit).
///  - uniform: number density uniform in d on [d_min, d_max];
///  - lognormal: ln d normal with median `median` and standard deviation
///    `sigma_ln`, truncated to [d_min, d_max];
///  - sieve: the mass passing P(d) (percent) linear in d between the table's
///    points (sieve_sizes ascending, sieve_passing non-decreasing, the last
///    100); the mass below d_min (default: the first sieve size) is binder,
///    not particles; grains lie in [d_min, last sieve size] with number
///    density proportional to P'(d) / d^3 (mass proportional to d^3).
struct SizeDistribution {
  SizeDistributionKind kind = SizeDistributionKind::uniform;
  double d_min = 0.0;   ///< length; sieve: 0 = the first sieve size
  double d_max = 0.0;   ///< length; sieve: unused (the last sieve size)
  double median = 0.0;  ///< lognormal: length
  double sigma_ln = 0.0;  ///< lognormal: > 0 (dimensionless)
  std::vector<double> sieve_sizes;    ///< sieve: length, strictly ascending, > 0
  std::vector<double> sieve_passing;  ///< sieve: percent by mass, non-decreasing, in [0, 100], last 100
};

/// Throws InvalidKey (scene/invalid_key.hpp) naming the key: sizes not
/// finite and positive, d_min >= d_max, sigma_ln <= 0, a lognormal
/// truncation holding no probability, a sieve table of fewer than 2 rows,
/// of two lengths, not ascending, not monotone, outside [0, 100], not
/// rising to 100, or a d_min outside [first size, last size) or leaving no
/// grains.
void validate_size_distribution(const SizeDistribution& s);

/// A uniform number in [0, 1) from the top 53 bits of one draw.
inline double uniform_01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

/// The inverse of the standard normal CDF at p in (0, 1) (Acklam's rational
/// approximation refined by one Halley step on std::erfc; |error| ~ 1e-15).
double normal_quantile(double p);

/// The inverse number CDF of a validated distribution.
class SizeSampler {
 public:
  /// Validates `s` (throws as validate_size_distribution).
  explicit SizeSampler(const SizeDistribution& s);

  /// The diameter at number quantile u in [0, 1): monotone in u.
  double diameter(double u) const;
  double smallest() const { return lo_; }  ///< the support's lower end (length)
  double largest() const { return hi_; }   ///< the support's upper end (length)
  /// The mean sphere volume pi d^3 / 6 by number (midpoint rule on 4096
  /// quantiles; for particle-count estimates).
  double mean_volume() const { return mean_volume_; }
  /// The requested percent passing by mass at size d (sieve: the table,
  /// linear between its points, binder fines included; others: the
  /// distribution's own mass CDF, by the midpoint rule).
  double requested_passing(double d) const;

 private:
  SizeDistribution s_;
  double lo_ = 0.0, hi_ = 0.0;
  double mean_volume_ = 0.0;
  double phi_lo_ = 0.0, phi_hi_ = 0.0;  ///< lognormal: the truncation's CDF values
  double fines_ = 0.0;                  ///< sieve: percent passing at d_min (binder)
  std::vector<double> a_, b_, cumulative_;  ///< sieve: intervals and their cumulative number weights
};

/// Diameters drawn with std::mt19937_64(seed), one draw each, until their
/// total sphere volume reaches `target_volume` (the last one taking it
/// over). Throws std::invalid_argument if that would take more than
/// `max_count` particles (checked first from mean_volume(), then while
/// drawing).
std::vector<double> sample_diameters(const SizeSampler& sampler, std::uint64_t seed, double target_volume,
                                     std::uint64_t max_count);

/// Diameters by stratified sampling: T = round(target_volume /
/// mean_volume()) of them (at least 1), one uniform draw of
/// std::mt19937_64(seed) in each of the T equal number-quantile strata
/// [k/T, (k+1)/T), then shuffled (Fisher-Yates, the same stream). The
/// sample's number CDF is within 1/T of the distribution's at every size,
/// so a small sample carries the distribution (the tile of a tiled
/// packing, docs/model.md §21.8). Throws std::invalid_argument if T would
/// be above `max_count`.
///
/// `bin_weights` (empty: none) re-weights the distribution by number: B
/// positive weights w_b, one per equal number-quantile bin [b/B, (b+1)/B),
/// the density within bin b taken w_b / mean(w) times the distribution's.
/// The strata are then equal in the weighted measure, and T uses the
/// weighted mean volume. Throws std::invalid_argument for a weight that is
/// not positive and finite.
std::vector<double> stratified_diameters(const SizeSampler& sampler, std::uint64_t seed, double target_volume,
                                         std::uint64_t max_count, const std::vector<double>& bin_weights = {});

/// The percent passing by mass at each size of `sizes` in a sample
/// (mass proportional to d^3), with `fines` percent (binder) added as
/// passing everywhere: fines + (100 - fines) M(d <= size) / M.
std::vector<double> achieved_passing(const std::vector<double>& diameters, const std::vector<double>& sizes,
                                     double fines);

/// Percent passing at the distribution's d_min that counts as binder (sieve;
/// 0 for the others).
double binder_fines_percent(const SizeDistribution& s);

}  // namespace dem
