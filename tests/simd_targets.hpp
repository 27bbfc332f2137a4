#pragma once
// Tests that run under each SIMD target (core/simd.hpp): an RAII scope that
// forces one and goes back to the target in use before (DEM_SIMD's, or the
// best).
#include <string>

#include "core/simd.hpp"

namespace dem::testing {

class SimdTargetScope {
 public:
  explicit SimdTargetScope(const std::string& name) : previous_(simd_target()) { set_simd_target(name); }
  ~SimdTargetScope() { set_simd_target(previous_); }
  SimdTargetScope(const SimdTargetScope&) = delete;
  SimdTargetScope& operator=(const SimdTargetScope&) = delete;

 private:
  std::string previous_;
};

}  // namespace dem::testing
