// Size distributions of packings (scene/size_distribution.hpp,
// docs/model.md §21.1): the inverse-CDF sampler against its distributions,
// and its determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "scene/invalid_key.hpp"
#include "scene/size_distribution.hpp"

namespace dem {
namespace {

/// A 6-size sieve table (a coarse sand), percent passing by mass.
SizeDistribution six_sieves() {
  SizeDistribution s;
  s.kind = SizeDistributionKind::sieve;
  s.sieve_sizes = {0.5e-3, 1e-3, 1.5e-3, 2e-3, 3e-3, 4e-3};
  s.sieve_passing = {0.0, 12.0, 35.0, 60.0, 88.0, 100.0};
  return s;
}

/// Percent passing by mass at `size`, counted here from the masses d^3.
double passing(const std::vector<double>& d, double size, double fines) {
  double below = 0.0, all = 0.0;
  for (const double x : d) {
    all += x * x * x;
    if (x <= size) below += x * x * x;
  }
  return fines + (100.0 - fines) * below / all;
}

TEST(PackingSizes, SieveTableReproducedWithin2PointsOn50000) {
  const SizeDistribution s = six_sieves();
  const SizeSampler sampler(s);
  const std::vector<double> d = sample_diameters(sampler, 7, 50000 * sampler.mean_volume(), 1u << 20);
  ASSERT_GT(d.size(), 48000u);
  ASSERT_LT(d.size(), 52000u);
  for (std::size_t k = 0; k < s.sieve_sizes.size(); ++k) {
    const double got = passing(d, s.sieve_sizes[k], 0.0);
    EXPECT_NEAR(got, s.sieve_passing[k], 2.0) << "sieve " << s.sieve_sizes[k];
  }
  // achieved_passing (the report's measure) agrees with the count here.
  const std::vector<double> a = achieved_passing(d, s.sieve_sizes, 0.0);
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], passing(d, s.sieve_sizes[k], 0.0), 1e-9);
  for (const double x : d) {
    EXPECT_GE(x, s.sieve_sizes.front());
    EXPECT_LE(x, s.sieve_sizes.back());
  }
}

TEST(PackingSizes, FinesBelowDMinCountAsBinder) {
  SizeDistribution s = six_sieves();
  s.d_min = 1.2e-3;  // 12 + 23 * 0.4 = 21.2 % of the mass is binder
  EXPECT_DOUBLE_EQ(binder_fines_percent(s), 12.0 + 23.0 * 0.4);
  const SizeSampler sampler(s);
  const std::vector<double> d = sample_diameters(sampler, 11, 50000 * sampler.mean_volume(), 1u << 20);
  EXPECT_GE(*std::min_element(d.begin(), d.end()), 1.2e-3);
  for (std::size_t k = 2; k < s.sieve_sizes.size(); ++k)
    EXPECT_NEAR(passing(d, s.sieve_sizes[k], binder_fines_percent(s)), s.sieve_passing[k], 2.0);
}

TEST(PackingSizes, UniformMeanAndBounds) {
  SizeDistribution s;
  s.d_min = 1.0, s.d_max = 3.0;
  const SizeSampler sampler(s);
  std::mt19937_64 rng(3);
  const int n = 40000;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    const double d = sampler.diameter(uniform_01(rng));
    ASSERT_GE(d, 1.0);
    ASSERT_LE(d, 3.0);
    sum += d;
  }
  // Standard deviation of the mean: (2/sqrt(12))/sqrt(n) = 0.0029.
  EXPECT_NEAR(sum / n, 2.0, 5 * 0.0029);
  // E[pi d^3 / 6] = pi/6 (3^4 - 1^4)/(4 * 2) = pi/6 * 10.
  EXPECT_NEAR(sampler.mean_volume(), std::numbers::pi / 6.0 * 10.0, 1e-6);
}

TEST(PackingSizes, LognormalMedianAndTruncation) {
  SizeDistribution s;
  s.kind = SizeDistributionKind::lognormal;
  s.median = 2.0, s.sigma_ln = 0.3;
  s.d_min = 2.0 * std::exp(-0.6), s.d_max = 2.0 * std::exp(0.6);  // +-2 sigma: symmetric
  const SizeSampler sampler(s);
  std::mt19937_64 rng(5);
  const int n = 40000;
  int below = 0, below_sigma = 0;
  for (int i = 0; i < n; ++i) {
    const double d = sampler.diameter(uniform_01(rng));
    ASSERT_GE(d, s.d_min);
    ASSERT_LE(d, s.d_max);
    below += d < 2.0;
    below_sigma += d < 2.0 * std::exp(-0.3);
  }
  // P(d < median) = 0.5; P(d < median e^-sigma) = (Phi(-1) - Phi(-2)) / (Phi(2) - Phi(-2)) = 0.14271.
  const double sd = std::sqrt(0.25 / n);
  EXPECT_NEAR(static_cast<double>(below) / n, 0.5, 5 * sd);
  EXPECT_NEAR(static_cast<double>(below_sigma) / n, 0.1359051 / 0.9544997, 5 * sd);
}

TEST(PackingSizes, NormalQuantileKnownValues) {
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-15);
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-13);
  EXPECT_NEAR(normal_quantile(0.01), -2.326347874040841, 1e-13);
  EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-11);
  EXPECT_THROW(normal_quantile(0.0), std::invalid_argument);
}

TEST(PackingSizes, CountReachesTheTargetVolumeAndSeedsDiffer) {
  const SizeSampler sampler(six_sieves());
  const double target = 3000 * sampler.mean_volume();
  const std::vector<double> a = sample_diameters(sampler, 1, target, 1u << 20);
  const std::vector<double> b = sample_diameters(sampler, 1, target, 1u << 20);
  const std::vector<double> c = sample_diameters(sampler, 2, target, 1u << 20);
  EXPECT_EQ(a, b);  // the same bits
  EXPECT_NE(a, c);
  double v = 0.0;
  for (std::size_t i = 0; i + 1 < a.size(); ++i) v += std::numbers::pi / 6.0 * a[i] * a[i] * a[i];
  EXPECT_LT(v, target);
  v += std::numbers::pi / 6.0 * a.back() * a.back() * a.back();
  EXPECT_GE(v, target);
  EXPECT_THROW(sample_diameters(sampler, 1, target, 100), std::invalid_argument);
}

TEST(PackingSizes, BadTablesNameTheirKey) {
  const auto key_of = [](SizeDistribution s) -> std::string {
    try {
      validate_size_distribution(s);
    } catch (const InvalidKey& e) {
      return e.key();
    }
    return "";
  };
  SizeDistribution s = six_sieves();
  s.sieve_passing.back() = 95.0;
  EXPECT_EQ(key_of(s), "sieve_passing");  // not rising to 100
  s = six_sieves();
  s.sieve_passing[3] = 30.0;
  EXPECT_EQ(key_of(s), "sieve_passing");  // not monotone
  s = six_sieves();
  s.sieve_sizes[0] = -1e-3;
  EXPECT_EQ(key_of(s), "sieve_sizes");  // not positive
  s = six_sieves();
  std::swap(s.sieve_sizes[1], s.sieve_sizes[2]);
  EXPECT_EQ(key_of(s), "sieve_sizes");  // not ascending
  s = six_sieves();
  s.d_min = 0.1e-3;
  EXPECT_EQ(key_of(s), "d_min");  // below the table
  SizeDistribution u;
  u.d_min = 2.0, u.d_max = 1.0;
  EXPECT_EQ(key_of(u), "d_max");
  u.d_min = 0.0;
  EXPECT_EQ(key_of(u), "d_min");
  EXPECT_EQ(key_of(six_sieves()), "");
}

// Stratified sampling (the tile of a tiled packing): T = round(V / mean
// volume) diameters whose number CDF is within 1/T of the distribution's at
// every size (checked at 200 sizes by counting here), shuffled (not in
// size order), the same for a seed and another for another seed; on 2,000
// the sieve table's mass passing within 2 points.
TEST(PackingSizes, StratifiedSampleCarriesTheDistribution) {
  const SizeSampler sampler(six_sieves());
  const double volume = 2000 * sampler.mean_volume();
  const std::vector<double> d = stratified_diameters(sampler, 5, volume, 1u << 20);
  ASSERT_EQ(d.size(), 2000u);
  EXPECT_FALSE(std::is_sorted(d.begin(), d.end()));
  EXPECT_EQ(d, stratified_diameters(sampler, 5, volume, 1u << 20));
  EXPECT_NE(d, stratified_diameters(sampler, 6, volume, 1u << 20));
  // The number CDF at size diameter(u) is u: the sample's within 1/T.
  for (int q = 1; q < 200; ++q) {
    const double u = q / 200.0, size = sampler.diameter(u);
    const double below = double(std::count_if(d.begin(), d.end(), [&](double x) { return x <= size; }));
    EXPECT_NEAR(below / 2000.0, u, 1.0 / 2000.0 + 1e-12) << "u " << u;
  }
  for (std::size_t k = 0; k < 6; ++k)
    EXPECT_NEAR(passing(d, six_sieves().sieve_sizes[k], 0.0), six_sieves().sieve_passing[k], 2.0);
  EXPECT_THROW(stratified_diameters(sampler, 5, volume, 1000), std::invalid_argument);
}

// Bin weights (the rattler compensation of a tile): with weights 3 and 1
// on the lower and upper half by number, 3/4 of the sample lies below the
// distribution's median (within 1/T), each half uniform in its quantiles
// (the CDF at u = 1/4 is 3/8); the count follows the weighted mean volume
// (more small grains: more of them for the volume); unit weights give the
// unweighted counts' CDF; a weight that is not positive is refused.
TEST(PackingSizes, BinWeightsRaiseTheirBinsShare) {
  const SizeSampler sampler(six_sieves());
  const double volume = 2000 * sampler.mean_volume();
  const std::vector<double> d = stratified_diameters(sampler, 5, volume, 1u << 20, {3.0, 1.0});
  const auto share_below = [&](const std::vector<double>& v, double u) {
    const double size = sampler.diameter(u);
    return double(std::count_if(v.begin(), v.end(), [&](double x) { return x <= size; })) / double(v.size());
  };
  ASSERT_GT(d.size(), 2000u);
  EXPECT_NEAR(share_below(d, 0.5), 0.75, 1.0 / double(d.size()) + 1e-12);
  EXPECT_NEAR(share_below(d, 0.25), 0.375, 1.0 / double(d.size()) + 1e-12);
  double sphere_volume = 0.0;
  for (const double x : d) sphere_volume += std::numbers::pi / 6.0 * x * x * x;
  EXPECT_NEAR(sphere_volume / volume, 1.0, 0.01);
  const std::vector<double> unit = stratified_diameters(sampler, 5, volume, 1u << 20, {1.0, 1.0, 1.0, 1.0});
  EXPECT_NEAR(double(unit.size()), 2000.0, 2.0);
  for (int q = 1; q < 20; ++q) EXPECT_NEAR(share_below(unit, q / 20.0), q / 20.0, 1.0 / double(unit.size()) + 1e-12);
  EXPECT_THROW(stratified_diameters(sampler, 5, volume, 1u << 20, {1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(stratified_diameters(sampler, 5, volume, 1u << 20, {1.0, -2.0}), std::invalid_argument);
}

}  // namespace
}  // namespace dem
