#include "core/simd.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <hwy/highway.h>
#include <hwy/targets.h>

namespace dem {

namespace {

std::atomic<bool> scalar_forced{false};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// Highway targets compiled into the kernels and supported by this CPU,
/// best first (lowest bit first), ignoring any forcing.
std::vector<std::int64_t> cpu_targets() {
  hwy::SetSupportedTargetsForTest(0);
  std::vector<std::int64_t> out;
  for (std::int64_t t = hwy::SupportedTargets() & HWY_TARGETS; t != 0; t &= t - 1) out.push_back(t & ~(t - 1));
  return out;
}

std::int64_t current_mock = 0;

/// The name of a Highway target as set_simd_target takes it: lower case,
/// and Highway's own one-lane SCALAR target as "hwy_scalar" (so that
/// "scalar" stays the plain loop).
std::string target_name(std::int64_t t) {
  const std::string n = lower(hwy::TargetName(t));
  return n == "scalar" ? "hwy_scalar" : n;
}

/// DEM_SIMD in the environment forces a target for the whole process from
/// its start (so that `DEM_SIMD=avx2 ctest` runs every test as a machine
/// without AVX-512 would); an unusable name is reported and ignored.
const bool environment_applied = [] {
  const char* name = std::getenv("DEM_SIMD");
  if (name == nullptr || *name == '\0') return false;
  try {
    set_simd_target(name);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "warning: DEM_SIMD ignored: %s\n", e.what());
    return false;
  }
  return true;
}();

}  // namespace

std::vector<std::string> available_simd_targets() {
  const std::int64_t mock = current_mock;
  std::vector<std::string> names;
  for (std::int64_t t : cpu_targets()) names.push_back(target_name(t));
  names.push_back("scalar");
  hwy::SetSupportedTargetsForTest(mock);  // cpu_targets() cleared it
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return names;
}

void set_simd_target(const std::string& requested) {
  std::string name = lower(requested);
  if (name == "avx512") name = "avx3";
  if (name == "auto") {
    current_mock = 0;
    hwy::SetSupportedTargetsForTest(0);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
    scalar_forced = false;
    return;
  }
  if (name == "scalar") {
    scalar_forced = true;
    return;
  }
  std::string list;
  for (std::int64_t t : cpu_targets()) {
    const std::string n = target_name(t);
    list += n + ", ";
    if (n == name) {
      current_mock = t;
      hwy::SetSupportedTargetsForTest(t);
      hwy::GetChosenTarget().Update(hwy::SupportedTargets());
      scalar_forced = false;
      return;
    }
  }
  hwy::SetSupportedTargetsForTest(current_mock);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  throw std::invalid_argument("SIMD target '" + requested + "' is not available on this CPU; available: " + list +
                              "scalar, auto");
}

std::string simd_target() {
  if (scalar_forced) return "scalar";
  const std::int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  return target_name(supported & ~(supported - 1));
}

bool simd_scalar_forced() { return scalar_forced; }

}  // namespace dem
