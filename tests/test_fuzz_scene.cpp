// The scene fuzz target's work (fuzz/scene_input.hpp: parse, build with a
// 64 MiB memory limit, assemble) on every input of its seed corpus
// tests/fuzz_corpus/scene/, in builds without libFuzzer: each is built or
// refused with SceneError, nothing else. The seeds hold one scene for each
// kind of bad input test_bad_input.cpp covers; some are checked for the refusal they get.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "app_support.hpp"
#include "fuzz/scene_input.hpp"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) { return dem::testing::read_file_text(p); }

}  // namespace

TEST(FuzzScene, EverySeedIsBuiltOrRefusedWithASceneError) {
  const fs::path corpus = fs::path(DEM_SOURCE_DIR) / "tests" / "fuzz_corpus" / "scene";
  const fs::path work = fs::temp_directory_path() / ("dem_test_fuzz_scene_" + std::to_string(::getpid()));
  // Seeds whose refusal is known: a part of the message.
  const std::map<std::string, std::string> refused = {
      {"empty_csv.toml", "no particle rows"},
      {"huge_solid_torus.toml", "[[particles]] particle_diameter: the scene needs about"},
      {"distance_bonds_explode.toml", "[bonds] distance: counting stopped at"},
      {"skin_fraction_1e308.toml", "[contact] skin_fraction"},
      {"mass_1e308.toml", "overflows at the start"},
      {"torus_diameter_1e308.toml", "is over 1e100"},
      {"shear_1e308.toml", "[bonds] shear"},
      {"gap_1e308.toml", "[[particles]] gap, torus_diameter"},
      {"coincident_csv.toml", "are at one place"},
      {"repeated_bond_pairs.toml", "reversed: list each bonded pair once"},
      {"negative_tiny_mass.toml", "got -1e-10"},
      {"csv_is_a_directory.toml", "is a directory"},
      {"csv_is_dev_zero.toml", "is not a regular file"},
      {"step_over_shear_limit.toml", "is over the stability limit"},
      {"step_over_wall_limit.toml", "set by the wall stiffness"},
  };
  std::size_t seeds = 0, seen = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(corpus)) {
    ++seeds;
    const std::string name = e.path().filename().string();
    std::string message;
    try {
      dem::fuzzing::build_scene_input(read(e.path()), work);
    } catch (const dem::SceneError& error) {
      message = error.what();
    } catch (const std::exception& error) {
      ADD_FAILURE() << name << ": not a SceneError: " << error.what();
    }
    const auto it = refused.find(name);
    if (it == refused.end()) continue;
    ++seen;
    EXPECT_NE(message.find(it->second), std::string::npos) << name << ": " << message;
  }
  EXPECT_EQ(seen, refused.size());
  EXPECT_GE(seeds, refused.size() + 5);
  fs::remove_all(work);
}
