#pragma once
/// \file format.hpp
/// Numbers in messages and summaries: one formatting rule for the project.

#include <cstdio>
#include <string>

namespace dem {

/// v with `digits` significant digits, as printf's "%.*g" (17 digits read
/// back as the same double).
inline std::string format_g(double v, int digits = 6) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
  return buffer;
}

}  // namespace dem
