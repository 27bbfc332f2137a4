// libFuzzer target for scene files (scene/scene_spec.hpp, scene_builder.hpp):
// a scene and the CSV tables it reads (fuzz/scene_input.hpp gives the
// format) are parsed, built with a 64 MiB memory limit and assembled, as
// `dem check` does. Any input must be built or refused with SceneError;
// anything else (another exception, a crash, undefined behaviour, a huge
// allocation, a hang) is a bug. The memory estimate refuses every scene
// larger than the limit before it is built, so each input costs bounded
// time and memory.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz/scene_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("dem_fuzz_scene_" + std::to_string(::getpid()));
  try {
    dem::fuzzing::build_scene_input(std::string_view(reinterpret_cast<const char*>(data), size), folder);
  } catch (const dem::SceneError&) {
  }
  return 0;
}
