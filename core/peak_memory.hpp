#pragma once
/// \file peak_memory.hpp
/// Peak resident memory of this process, for the apps' summaries and the
/// benchmarks (Linux: getrusage's ru_maxrss is in kibibytes).

#include <sys/resource.h>

namespace dem {

/// Largest resident set size of the process so far (bytes).
inline long long peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<long long>(usage.ru_maxrss) * 1024;
}

}  // namespace dem
