#pragma once
/// \file parallel.hpp
/// The engine's only wrapper of the thread library (oneTBB).
///
/// Determinism contract: parallel loops write only the slots of their own
/// indices, and reductions of doubles are summed over fixed blocks of
/// kReductionBlock items whose partial sums are combined in block order, so
/// every result is bitwise identical for any thread count.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

namespace dem {

/// Items per block of a deterministic reduction (independent of threads).
inline constexpr std::size_t kReductionBlock = 2048;

/// Limits the number of worker threads while alive. threads = 0 keeps the
/// library's default (all cores).
class ThreadLimit {
 public:
  explicit ThreadLimit(std::size_t threads) {
    if (threads > 0)
      control_ = std::make_unique<tbb::global_control>(
          tbb::global_control::max_allowed_parallelism, threads);
  }

 private:
  std::unique_ptr<tbb::global_control> control_;
};

/// Number of threads the loops below may use now.
inline std::size_t active_threads() {
  return tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
}

/// Calls body(begin, end) on disjoint sub-ranges covering [0, n) (on one
/// thread: once, on the whole range, without the scheduler's splitting).
template <class Body>
void parallel_for_ranges(std::size_t n, Body&& body, std::size_t grain = 512) {
  if (n == 0) return;
  if (active_threads() == 1) {
    body(std::size_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain),
                    [&](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end()); });
}

/// Calls body(i) for every i in [0, n), in parallel.
template <class Body>
void parallel_for_each(std::size_t n, Body&& body, std::size_t grain = 512) {
  parallel_for_ranges(
      n,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) body(i);
      },
      grain);
}

/// Sorts [first, last) in parallel. `less` must be a strict total order
/// (no two distinct items equivalent, e.g. ties broken by index): the sorted
/// sequence is then unique, so the result does not depend on the thread
/// count or on how the sort splits its work.
template <class It, class Less>
void parallel_sort_total(It first, It last, Less&& less) {
  tbb::parallel_sort(first, last, less);
}

/// Deterministic reduction: T supports +=; `zero` is its additive identity
/// (Eigen vectors are not zeroed by default construction). Each block of kReductionBlock consecutive items is summed in
/// index order by term(i) calls, and the block sums are added in block order.
template <class T, class Term>
T deterministic_sum(std::size_t n, const T& zero, Term&& term) {
  const std::size_t blocks = (n + kReductionBlock - 1) / kReductionBlock;
  std::vector<T> partial(blocks, zero);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t b = r.begin(); b < r.end(); ++b) {
                        T sum = zero;
                        const std::size_t end = std::min(n, (b + 1) * kReductionBlock);
                        for (std::size_t i = b * kReductionBlock; i < end; ++i) sum += term(i);
                        partial[b] = sum;
                      }
                    });
  T total = zero;
  for (const T& p : partial) total += p;
  return total;
}

}  // namespace dem
