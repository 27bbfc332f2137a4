#pragma once
/// \file cli_checks.hpp
/// CLI11 validators for the numeric options of the apps (dem, dem_torus),
/// with messages that name the value and the rule; CLI11 reports them as
/// "--OPTION: MESSAGE". The apps turn every parse error into exit status 1
/// (bad input), as they do for bad scenes.
///
/// CLI11's own CLI::PositiveNumber, CLI::NonNegativeNumber and CLI::Range
/// let NaN through (every comparison with NaN is false) and print their
/// bounds with std::to_string; these check finiteness first, and are built
/// on the same CLI::Validator.

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/format.hpp"

namespace dem::cli {

namespace detail {

/// The option's text as a double, or nullopt (whole text, C locale rules).
inline bool parse_double(const std::string& text, double& v) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtod(text.c_str(), &end);
  return end != nullptr && *end == '\0';
}

}  // namespace detail

/// A finite number in [lo, hi] (each end open if asked); `what` says what
/// the value is ("a time step", "K^pp (contact stiffness)").
inline CLI::Validator finite_number(const std::string& what, double lo = -std::numeric_limits<double>::infinity(),
                                    bool lo_open = false, double hi = std::numeric_limits<double>::infinity(),
                                    bool hi_open = false) {
  std::string rule = "a finite number";
  if (std::isfinite(lo) && std::isfinite(hi))
    rule += std::string(" in ") + (lo_open ? "(" : "[") + format_g(lo) + ", " + format_g(hi) + (hi_open ? ")" : "]");
  else if (std::isfinite(lo))
    rule += (lo_open ? " > " : " >= ") + format_g(lo);
  else if (std::isfinite(hi))
    rule += (hi_open ? " < " : " <= ") + format_g(hi);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0.0;
        const bool ok = detail::parse_double(text, v) && std::isfinite(v) && (lo_open ? v > lo : v >= lo) &&
                        (hi_open ? v < hi : v <= hi);
        return ok ? std::string() : what + " must be " + rule + ", got '" + text + "'";
      },
      rule);
}

/// A positive finite number.
inline CLI::Validator positive_number(const std::string& what) { return finite_number(what, 0.0, true); }

/// A finite number >= 0.
inline CLI::Validator nonnegative_number(const std::string& what) { return finite_number(what, 0.0, false); }

/// A whole number in [lo, hi] (written without a fraction or exponent).
inline CLI::Validator whole_number(const std::string& what, long long lo, long long hi) {
  const std::string rule = "a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        const bool ok = !text.empty() && end != nullptr && *end == '\0' && errno == 0 && v >= lo && v <= hi;
        return ok ? std::string() : what + " must be " + rule + ", got '" + text + "'";
      },
      rule);
}

}  // namespace dem::cli
