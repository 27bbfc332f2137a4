#pragma once
// Tests that run under each SIMD target (core/simd.hpp): an RAII scope that
// forces one and goes back to "auto".
#include <string>

#include "core/simd.hpp"

namespace dem::testing {

class SimdTargetScope {
 public:
  explicit SimdTargetScope(const std::string& name) { set_simd_target(name); }
  ~SimdTargetScope() { set_simd_target("auto"); }
  SimdTargetScope(const SimdTargetScope&) = delete;
  SimdTargetScope& operator=(const SimdTargetScope&) = delete;
};

}  // namespace dem::testing
