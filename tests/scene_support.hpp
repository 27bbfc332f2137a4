#pragma once
// Shared helpers for the tests that build scenes from TOML text.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scene/scene_builder.hpp"

namespace dem::testing {

/// `text` with its first `from` replaced by `to` (a test failure if absent).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

/// The SceneError message of making a Simulation of `text` (parsed as
/// "s.toml" in "."), or "" when it is made: every check `dem run` does
/// before its first step.
inline std::string simulation_error(const std::string& text) {
  try {
    (void)make_simulation(build_scene(parse_scene_text(text, "s.toml", ".")));
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

/// A folder of this test process for the files its scenes read (CSV
/// tables), created on first use: the system's temporary folder /
/// "dem_test_<tag>_<pid>".
inline std::filesystem::path scratch_folder(const std::string& tag) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("dem_test_" + tag + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(p);
  return p;
}

/// Writes `text` to `path` (replacing it).
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace dem::testing
