// libFuzzer target for the scene-file parser (scene/scene_spec.hpp): any
// input must be parsed or refused with SceneError; anything else (another
// exception, a crash, undefined behaviour, a huge allocation, a hang) is a
// bug. The parser never builds particles, so every input costs bounded time.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scene/scene_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    dem::parse_scene_text(text, "fuzz.toml", "/nonexistent");
  } catch (const dem::SceneError&) {
  }
  return 0;
}
