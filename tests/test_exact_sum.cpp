// Exact sums (core/exact_sum.hpp): against an independent correctly rounded
// sum (Shewchuk's expansion, as Python's math.fsum), independent of order
// and of how the terms are split, and through the energy report.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/diagnostics.hpp"
#include "core/exact_sum.hpp"

namespace dem {
namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

/// Correctly rounded sum by Shewchuk's non-overlapping partials (fsum).
double fsum(const std::vector<double>& xs) {
  std::vector<double> partials;
  for (double x : xs) {
    std::size_t i = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0.0) partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    partials.push_back(x);
  }
  // Round the expansion: sum from the top, then correct a half-way case.
  if (partials.empty()) return 0.0;
  std::size_t n = partials.size();
  double hi = partials[--n], lo = 0.0;
  while (n > 0) {
    const double x = hi, y = partials[--n];
    hi = x + y;
    const double yr = hi - x;
    lo = y - yr;
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
    const double y = lo * 2.0;
    const double x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

std::vector<double> wide_terms(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> ex(-60, 60);
  std::vector<double> xs(n);
  for (double& x : xs) x = std::ldexp(mant(rng), ex(rng));
  return xs;
}

ExactSum sum_of(const std::vector<double>& xs) {
  ExactSum s;
  for (const double x : xs) s.add(x);
  return s;
}

TEST(ExactSum, MatchesCorrectlyRoundedReference) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const std::vector<double> xs = wide_terms(1000 + 37 * seed, seed);
    EXPECT_EQ(bits(sum_of(xs).value()), bits(fsum(xs))) << "seed " << seed;
  }
}

TEST(ExactSum, CancellationIsExact) {
  ExactSum s;
  s.add(1e300);
  s.add(1.0);
  s.add(-1e300);
  s.add(1e-300);
  s.add(-1e-300);
  s.add(std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(s.value(), 1.0);
  ExactSum t;
  for (const double x : wide_terms(5000, 7)) {
    t.add(x);
    t.add(-x);
  }
  EXPECT_EQ(bits(t.value()), bits(0.0));
  ExactSum d;
  d.add(std::numeric_limits<double>::denorm_min());
  d.add(std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(d.value(), 2 * std::numeric_limits<double>::denorm_min());
  ExactSum big;
  big.add(std::numeric_limits<double>::max());
  big.add(-std::numeric_limits<double>::max());
  big.add(-2.5);
  EXPECT_EQ(big.value(), -2.5);
}

TEST(ExactSum, SameBitsForAnyOrderAndSplit) {
  std::vector<double> xs = wide_terms(20000, 3);
  const double reference = sum_of(xs).value();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(xs.begin(), xs.end(), rng);
    // Split into 1..4 parts ("ranks"), merged in any order.
    const std::size_t parts = 1 + trial % 4;
    std::vector<ExactSum> part(parts);
    for (std::size_t k = 0; k < xs.size(); ++k) part[(k * 7) % parts].add(xs[k]);
    ExactSum total;
    for (std::size_t p = parts; p-- > 0;) total.merge(part[p]);
    EXPECT_EQ(bits(total.value()), bits(reference));
    // Summing normalized limbs (what an MPI_SUM of them does) is the same.
    ExactSum by_limbs;
    for (ExactSum& p : part) {
      p.normalize();
      for (int l = 0; l < ExactSum::kLimbs; ++l) by_limbs.limbs()[l] += p.limbs()[l];
    }
    EXPECT_EQ(bits(by_limbs.value()), bits(reference));
  }
  // The parallel block sum, too.
  const ExactSum par = exact_sum(xs.size(), [&](std::size_t i) { return xs[i]; });
  EXPECT_EQ(bits(par.value()), bits(reference));
}

TEST(ExactSum, NonFiniteTermsGiveNonFiniteTotals) {
  ExactSum s;
  s.add(1.0);
  s.add(std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(s.value()));
  s.add(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(s.value()));
}

TEST(ExactSum, ManyTermsNormalizeWithoutOverflow) {
  ExactSum s;
  const double x = std::ldexp(0.999999, 31);  // fills the limbs' 32 bits
  const std::size_t n = (1u << 30) + 5;         // past one automatic normalize
  for (std::size_t k = 0; k < n; ++k) s.add(x);
  EXPECT_EQ(s.value(), x * static_cast<double>(n));
}

TEST(EnergyReport, ColumnsAreExactSumsThatMerge) {
  const std::vector<double> xs = wide_terms(3000, 5);
  EnergyReport whole, a, b;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    whole.add("U_contact", xs[k]);
    (k % 3 == 0 ? a : b).add("U_contact", xs[k]);
    (k % 2 == 0 ? a : b).add("E_kin_trans", xs[k] * xs[k]);
    whole.add("E_kin_trans", xs[k] * xs[k]);
  }
  b.merge(a);
  EXPECT_EQ(bits(b.contact), bits(whole.contact));
  EXPECT_EQ(bits(b.kinetic_translation), bits(whole.kinetic_translation));
  EXPECT_EQ(bits(whole.contact), bits(fsum(xs)));
}

}  // namespace
}  // namespace dem
