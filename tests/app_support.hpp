#pragma once
// Shared helpers for the tests that run the apps as a user does and read
// the files they write.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dem::testing {

/// Exit status and combined stdout and stderr of a command.
struct CommandResult {
  int status = -1;  ///< exit status; -1 if killed by a signal or not started
  std::string output;
};

/// Runs `command` through bash (so ulimit and the like work), capturing
/// stdout and stderr.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  std::string quoted = "bash -c '";
  for (char c : command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "' 2>&1";
  FILE* pipe = popen(quoted.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) r.output += buf;
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

/// The whole content of a file (empty if it cannot be read).
inline std::string read_file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A program of this build, e.g. app_path("dem").
inline std::string app_path(const std::string& name) { return std::string(DEM_BINARY_DIR) + "/apps/" + name; }

/// A fresh, empty folder for one test: TMPDIR/dem_test_SUITE_PID/NAME (tests
/// run in parallel, each in its own process).
inline std::filesystem::path fresh_folder(const std::string& suite, const std::string& name) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("dem_test_" + suite + "_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

/// Writes `text` as the whole file; returns its path.
inline std::filesystem::path write_text_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace dem::testing
