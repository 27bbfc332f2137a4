#pragma once
// Shared helpers for the tests that run the apps as a user does and read
// the files they write.

#include <sys/wait.h>

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

}  // namespace dem::testing
