#pragma once
/// \file scene_input.hpp
/// What the scene fuzz target (fuzz/fuzz_scene.cpp) does with one input,
/// shared with the test that replays the seed corpus (tests/test_fuzz_scene.cpp)
/// so that it also runs in builds without libFuzzer.
///
/// An input is a scene file followed by the files it reads (CSV tables),
/// each after a line "#@@ file NAME" (a TOML comment; NAME of letters,
/// digits, '.', '_', '-', at most 64 characters):
///
///     [run] ...
///     [[particles]]
///     source = "csv"
///     file = "grains.csv"
///     #@@ file grains.csv
///     x,y,z,diameter
///     0,0,0,1
///
/// The files are written into a folder of their own (emptied first), and
/// the scene is parsed, built with a memory limit of 64 MiB (so that no
/// input can make the fuzzer run out of memory: larger scenes are refused
/// by their estimate before they are built) and assembled, as `dem check`
/// does. Any input must be built or refused with SceneError; anything else
/// (another exception, a crash, undefined behaviour) is a bug.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "scene/scene_builder.hpp"

namespace dem::fuzzing {

/// Memory limit of a fuzzed scene (bytes).
inline constexpr std::uint64_t kFuzzMemoryLimit = 64ull << 20;

/// A file name the input may give: [A-Za-z0-9._-]{1,64}, not "." or "..".
inline bool safe_file_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  for (const char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      return false;
  return true;
}

/// Splits `input` (see the file comment), writes its files into `folder`
/// (created and emptied first), then parses, builds and assembles the scene.
/// Throws SceneError if the scene is refused.
inline void build_scene_input(std::string_view input, const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(folder, ec);
  for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) fs::remove_all(e.path(), ec);
  constexpr std::string_view kMarker = "#@@ file ";
  std::string_view scene = input;
  std::size_t at = input.find(kMarker);
  while (at != std::string_view::npos && at != 0 && input[at - 1] != '\n') at = input.find(kMarker, at + 1);
  if (at != std::string_view::npos) scene = input.substr(0, at);
  while (at != std::string_view::npos) {
    const std::size_t name_at = at + kMarker.size();
    const std::size_t line_end = std::min(input.find('\n', name_at), input.size());
    const std::string_view name = input.substr(name_at, line_end - name_at);
    std::size_t next = input.find(kMarker, line_end);
    while (next != std::string_view::npos && input[next - 1] != '\n') next = input.find(kMarker, next + 1);
    const std::size_t body_at = std::min(line_end + 1, input.size());
    const std::string_view body =
        input.substr(body_at, (next == std::string_view::npos ? input.size() : next) - body_at);
    if (safe_file_name(name))
      std::ofstream(folder / std::string(name), std::ios::binary)
          .write(body.data(), static_cast<std::streamsize>(body.size()));
    at = next;
  }
  const SceneSpec spec = parse_scene_text(scene, "fuzz.toml", folder);
  BuildOptions options;
  options.memory_limit = MemoryLimit{kFuzzMemoryLimit, "the fuzz target's limit"};
  assemble_scene(build_scene(spec, options));
}

}  // namespace dem::fuzzing
