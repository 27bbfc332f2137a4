// Every scene key, table-driven: for each key the parser looks up in a shipped scene's tables
// (scene_key_variants: given or not, so a new key is covered without a new
// test), each of the values below must either be refused as bad input
// naming the key (what `dem check` and `dem run` print, exit 1), or build
// and run a few steps with every energy finite. Before this test, beta =
// 1e200, mu_r = 1e300, a group velocity of 1e200 or a Hertz-Mindlin step of
// 1 s passed `dem check` and gave NaN (or a blow-up) at the first steps.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "app_support.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {

/// At and beyond every documented range, and of the wrong type.
const std::vector<std::string> kValues = {"nan", "inf", "-inf", "1e300", "-1e300", "0", "-1", "\"text\""};

/// Small scenes that together use every table: Part I (ring), Part II
/// (bonds, fracture, groups, penalty contact), clumps and gravity,
/// Hertz-Mindlin friction with walls (EPSD rolling; SDS rolling with
/// Marshall twisting; SDS twisting), the linear spring-dashpot law's keys,
/// JKR adhesion's keys, triangle-mesh walls ([[mesh]]), a deforming periodic cell ([domain]) and
/// its servo, a packing from a sieve table bonded by gap (a gap ratio, and a
/// binder volume fraction), a "dense" packing made from a tile
/// (tile_particles), viscous damping ([damping]).
const char* kScenes[] = {"scenes/ring_torus.toml",         "scenes/cantilever.toml",
                         "scenes/clumps.toml",             "scenes/three_point_bending.toml",
                         "tests/scenes/friction_box.toml", "tests/scenes/twist_box.toml",
                         "tests/scenes/twist_sds_box.toml", "tests/scenes/linear_box.toml",
                         "tests/scenes/adhesive_box.toml", "tests/scenes/mesh_box.toml",
                         "scenes/periodic_shear.toml",     "tests/scenes/periodic_servo.toml",
                         "tests/scenes/packing_gap.toml",  "tests/scenes/packing_binder.toml",
                         "tests/scenes/packing_tiled.toml",
                         "tests/scenes/damped_bending.toml"};

bool all_finite(const EnergyReport& r) { return std::isfinite(r.balance()) && std::isfinite(r.total()); }

}  // namespace

TEST(SceneKeys, EveryKeyIsRefusedNamingItOrRunsClean) {
  std::size_t refused = 0, ran = 0;
  for (const char* name : kScenes) {
    const fs::path path = fs::path(DEM_SOURCE_DIR) / name;
    const std::string text = dem::testing::read_file_text(path);
    const std::vector<SceneKeyVariant> variants =
        scene_key_variants(text, path.string(), path.parent_path(), kValues);
    ASSERT_GT(variants.size(), 10 * kValues.size()) << name;
    for (const SceneKeyVariant& v : variants) {
      const std::string what = std::string(name) + ": [" + v.section + "] " + v.key + " = " + v.value;
      BuildOptions options;
      options.memory_limit = MemoryLimit{std::uint64_t{1} << 30, "the test's 1 GiB"};
      try {
        Simulation sim = make_simulation(build_scene(parse_scene_text(v.text, path.string(), path.parent_path()), options));
        for (int k = 0; k < 5; ++k) sim.step();
        EXPECT_TRUE(all_finite(sim.energy_report())) << what;
        ++ran;
      } catch (const SceneError& e) {
        // A value the parser refuses: the message names the key. A value in
        // the key's range that makes the built scene impossible (a mass or
        // a coordinate that overflows, a group's box left empty) is refused
        // naming the table's file and line and what overflowed.
        const std::string m = e.what();
        bool parsed = true;
        try {
          (void)parse_scene_text(v.text, path.string(), path.parent_path());
        } catch (const SceneError&) {
          parsed = false;
        }
        if (parsed)
          EXPECT_NE(m.find(path.string() + ":"), std::string::npos) << what << "\n  " << m;
        else
          EXPECT_NE(m.find(v.key), std::string::npos) << what << "\n  " << m;
        ++refused;
      } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": neither refused as bad input nor run clean: " << e.what();
      }
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(ran, 0u);
  std::printf("scene keys: %zu variants refused naming the key, %zu built and ran clean\n", refused, ran);
}
