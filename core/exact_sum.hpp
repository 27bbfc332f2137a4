#pragma once
/// \file exact_sum.hpp
/// Exact, order-independent sums of doubles: a fixed-point superaccumulator
/// (Kulisch's long accumulator, as in ExBLAS and ReproBLAS's exact mode).
///
/// Every finite double is an integer multiple of 2^-1074, so a sum of
/// doubles is an integer times 2^-1074. ExactSum keeps that integer in
/// kLimbs signed 64-bit limbs of 32 bits each (limb k weighs 2^(32 k - 1074)),
/// so adding a term is exact and two accumulators merge by adding limbs.
/// value() rounds the exact total to the nearest double. The result is
/// therefore the same bits whatever the order of the terms, the number of
/// threads or blocks, and however they are split between MPI ranks
/// (merge(), or a sum of limbs after normalize()): what the engine's global
/// reductions (energies, momenta, the ledger's per-step work) need to be the
/// same on any rank x thread layout (engine/partition.hpp, mpi/domain.hpp).
///
/// Non-finite terms are summed apart (an inf or NaN total is returned as
/// such). Cost: a few integer operations per term; about 560 bytes.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

namespace dem {

class ExactSum {
 public:
  static constexpr int kLimbBits = 32;
  /// 2^-1074 .. 2^(32 kLimbs - 1074): every double and sums of up to 2^60 of the largest.
  static constexpr int kLimbs = 70;

  ExactSum() { limbs_.fill(0); }
  explicit ExactSum(double x) : ExactSum() { add(x); }

  /// Adds x exactly.
  void add(double x) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const int e = static_cast<int>((bits >> 52) & 0x7ff);
    if (e == 0x7ff) {  // inf or NaN
      special_ += x;
      has_special_ = true;
      return;
    }
    std::uint64_t m = bits & ((std::uint64_t{1} << 52) - 1);
    if (e != 0) m |= std::uint64_t{1} << 52;
    if (m == 0) return;
    const int p = e == 0 ? 0 : e - 1;  // x = m 2^(p - 1074)
    const int k = p >> 5, s = p & 31;
    const unsigned __int128 v = static_cast<unsigned __int128>(m) << s;
    const std::int64_t l0 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) & 0xffffffffu);
    const std::int64_t l1 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v >> 32) & 0xffffffffu);
    const std::int64_t l2 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v >> 64));
    // The sign without a branch (terms of either sign in random order
    // would mispredict it half the time): (l ^ neg) - neg is -l where
    // neg = -1, l where neg = 0.
    const std::int64_t neg = -static_cast<std::int64_t>(bits >> 63);
    limbs_[k] += (l0 ^ neg) - neg;
    limbs_[k + 1] += (l1 ^ neg) - neg;
    limbs_[k + 2] += (l2 ^ neg) - neg;
    if (++pending_ >= kMaxPending) normalize();
  }

  ExactSum& operator+=(double x) {
    add(x);
    return *this;
  }

  /// Adds another accumulator's total exactly.
  void merge(const ExactSum& o) {
    ExactSum b = o;
    b.normalize();
    normalize();
    for (int k = 0; k < kLimbs; ++k) limbs_[k] += b.limbs_[k];
    if (b.has_special_) {
      special_ += b.special_;
      has_special_ = true;
    }
    normalize();
  }
  ExactSum& operator+=(const ExactSum& o) {
    merge(o);
    return *this;
  }

  /// Carries so that limbs 0 .. kLimbs-2 are in [0, 2^32) and the top one
  /// holds the sign: the one representation of the total.
  void normalize() {
    std::int64_t carry = 0;
    for (int k = 0; k < kLimbs - 1; ++k) {
      const std::int64_t v = limbs_[k] + carry;
      const std::int64_t lo = v & 0xffffffff;
      carry = (v - lo) / (std::int64_t{1} << 32);
      limbs_[k] = lo;
    }
    limbs_[kLimbs - 1] += carry;
    pending_ = 0;
  }

  /// The exact total rounded to the nearest double (inf or NaN if a term was).
  double value() const {
    if (has_special_) return special_;
    ExactSum a = *this;
    a.normalize();
    bool negative = a.limbs_[kLimbs - 1] < 0;
    if (negative) {
      for (auto& l : a.limbs_) l = -l;
      a.normalize();
    }
    int top = kLimbs - 1;
    while (top >= 0 && a.limbs_[top] == 0) --top;
    if (top < 0) return 0.0;
    // The top three limbs (up to 96 bits, more than 53 + 2) with a sticky
    // bit for anything below: one correctly rounded conversion.
    unsigned __int128 v = 0;
    for (int k = top; k > top - 3; --k) {
      v <<= 32;
      if (k >= 0) v |= static_cast<std::uint64_t>(a.limbs_[k]);
    }
    bool sticky = false;
    for (int k = top - 3; k >= 0 && !sticky; --k) sticky = a.limbs_[k] != 0;
    if (sticky) v |= 1;
    const double r = std::ldexp(static_cast<double>(v), 32 * (top - 2) - 1074);
    return negative ? -r : r;
  }

  /// The limbs after normalize() (for an MPI sum of limbs; the sum of
  /// normalized limbs of up to 2^31 accumulators cannot overflow).
  std::array<std::int64_t, kLimbs>& limbs() { return limbs_; }
  const std::array<std::int64_t, kLimbs>& limbs() const { return limbs_; }
  double special() const { return has_special_ ? special_ : 0.0; }
  bool has_special() const { return has_special_; }
  void set_special(double s, bool has) {
    special_ = s;
    has_special_ = has;
  }

  friend bool operator==(const ExactSum& a, const ExactSum& b) {
    ExactSum x = a, y = b;
    x.normalize();
    y.normalize();
    return x.limbs_ == y.limbs_ && x.has_special_ == y.has_special_ &&
           (!x.has_special_ || std::bit_cast<std::uint64_t>(x.special_) == std::bit_cast<std::uint64_t>(y.special_));
  }

 private:
  static constexpr std::uint32_t kMaxPending = 1u << 30;
  std::array<std::int64_t, kLimbs> limbs_;
  double special_ = 0.0;
  bool has_special_ = false;
  std::uint32_t pending_ = 0;
};

/// Exact sums of K quantities over [0, n): term(i, t) adds particle or
/// record i's K terms into t (t[c].add(x)). Parallel over fixed blocks;
/// the result does not depend on the thread count or the order of i.
template <std::size_t K, class Term>
std::array<ExactSum, K> exact_sums(std::size_t n, Term&& term) {
  std::array<ExactSum, K> total;
  const std::size_t threads = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  if (threads == 1) {
    for (std::size_t i = 0; i < n; ++i) term(i, total);  // one thread: no blocks (the sum is exact)
    return total;
  }
  // Blocks of at least 512 items and at most 16 a thread. The sums are
  // exact, so the blocking does not change them; with fixed blocks of 4,096
  // a scene of 3,000 particles was summed by one thread.
  const std::size_t kBlock = std::max<std::size_t>(512, (n + 16 * threads - 1) / (16 * threads));
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::array<ExactSum, K>> partial(blocks);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t b = r.begin(); b < r.end(); ++b) {
      std::array<ExactSum, K>& t = partial[b];
      const std::size_t end = std::min(n, (b + 1) * kBlock);
      for (std::size_t i = b * kBlock; i < end; ++i) term(i, t);
    }
  });
  for (const auto& p : partial)
    for (std::size_t c = 0; c < K; ++c) total[c].merge(p[c]);
  return total;
}

/// One exact sum: term(i) is the i-th double.
template <class Term>
ExactSum exact_sum(std::size_t n, Term&& term) {
  return exact_sums<1>(n, [&](std::size_t i, std::array<ExactSum, 1>& t) { t[0].add(term(i)); })[0];
}

}  // namespace dem
