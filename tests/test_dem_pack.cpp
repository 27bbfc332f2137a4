// `dem pack` (scene/specimen_files.hpp, docs/model.md §21.6): a packing with
// gap bonds written as particles.csv and bonds.csv is read back by a scene
// bit for bit (the same particles, bonds and stiffnesses, and the same
// energy.csv of a run); the files do not depend on the thread count and do
// on the seed; existing files are kept unless --overwrite.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "app_support.hpp"
#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"
#include "scene/specimen_files.hpp"
#include "scene_support.hpp"

namespace fs = std::filesystem;

namespace dem {
namespace {

std::string dem_app() { return std::string(DEM_BINARY_DIR) + "/apps/dem"; }

/// A cylinder of about 1,400 grains bonded by gap; `source` and `pairs` are
/// the [[particles]] and [bonds] lines that say where they come from.
std::string scene_text(const std::string& source, const std::string& pairs) {
  return R"(
[run]
time_step = 2e-8
steps = 200
[output]
energy_every = 10
vtk_every = 0
[contact]
law = "hertz-mindlin"
[[material]]
name = "grain"
density = 2500
E = 1e9
nu = 0.3
[[particles]]
material = "grain"
)" + source + "[bonds]\nbinder_modulus = 2e9\nbond_radius_ratio = 0.5\n" +
         pairs;
}

std::string packing(int seed) {
  return R"(source = "packing"
region = "cylinder"
base = [0, 0, 0]
axis = [0, 0, 1]
radius = 0.006
height = 0.012
size_distribution = "uniform"
d_min = 0.0008
d_max = 0.0012
solid_fraction = 0.55
seed = )" + std::to_string(seed) +
         "\n";
}

const std::string kGap = "pairs = \"gap\"\nmax_gap_ratio = 0.1\n";

std::string read_back(const fs::path& folder) {
  return scene_text("source = \"csv\"\nfile = \"" + (folder / "particles.csv").string() + "\"\n",
                    "pairs = \"csv\"\nfile = \"" + (folder / "bonds.csv").string() + "\"\n");
}

BuiltScene build(const std::string& text) { return build_scene(parse_scene_text(text, "pack.toml", ".")); }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(DemPack, TheWrittenSpecimenIsBuiltAgainBitForBit) {
  const fs::path dir = testing::scratch_folder("pack_same");
  const BuiltScene a = build(scene_text(packing(3), kGap));
  write_specimen(dir / "spec", a.scene, parse_scene_text(scene_text(packing(3), kGap), "pack.toml", "."), "", true);
  const BuiltScene b = build(read_back(dir / "spec"));
  const ParticleStore &p = a.scene.particles, &q = b.scene.particles;
  ASSERT_EQ(p.size(), q.size());
  ASSERT_GT(p.size(), 1000u);
  // Both stores are in the order the builder sorts them into; compare by id.
  std::vector<std::uint32_t> slot_q(q.size());
  for (std::uint32_t s = 0; s < q.size(); ++s) slot_q[q.id[s]] = s;
  for (std::uint32_t s = 0; s < p.size(); ++s) {
    const std::uint32_t t = slot_q[p.id[s]];
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(same_bits(p.position[s][k], q.position[t][k])) << "id " << p.id[s];
    ASSERT_TRUE(same_bits(p.radius[s], q.radius[t]));
    ASSERT_TRUE(same_bits(p.mass[s], q.mass[t]));
    ASSERT_TRUE(same_bits(p.inertia[s], q.inertia[t]));
    ASSERT_EQ(p.material[s], q.material[t]);
  }
  const BondList &x = a.scene.bonds, &y = b.scene.bonds;
  ASSERT_EQ(x.size(), y.size());
  ASSERT_GT(x.size(), p.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    EXPECT_EQ(p.id[x.first[k]], q.id[y.first[k]]);
    EXPECT_EQ(p.id[x.second[k]], q.id[y.second[k]]);
    EXPECT_TRUE(same_bits(x.rest_length[k], y.rest_length[k]));
    EXPECT_TRUE(same_bits(x.stiffness(k).axial, y.stiffness(k).axial));
    EXPECT_TRUE(same_bits(x.stiffness(k).bending, y.stiffness(k).bending));
  }
}

TEST(DemPack, FromTheCommandLineTheFilesAreTheSameOnOneTwoAndThreeThreadsAndARunReadsThemBack) {
  const fs::path dir = testing::scratch_folder("pack_cli");
  testing::write_text(dir / "a.toml", scene_text(packing(3), kGap));
  std::string first_particles, first_bonds;
  for (const int threads : {1, 2, 3}) {
    const std::string count = std::to_string(threads);
    const fs::path out = dir / ("t" + count);
    const auto r = testing::run_command(dem_app() + " pack " + (dir / "a.toml").string() + " --threads " + count +
                                        " --output-dir " + out.string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("bonds to"), std::string::npos) << r.output;
    EXPECT_TRUE(fs::exists(out / "packing.json")) << out;
    const std::string particles = testing::read_file_text(out / "particles.csv");
    const std::string bonds = testing::read_file_text(out / "bonds.csv");
    if (threads == 1) {
      first_particles = particles, first_bonds = bonds;
      EXPECT_GT(particles.size(), 100000u);
    } else {
      EXPECT_EQ(particles, first_particles) << threads << " threads";
      EXPECT_EQ(bonds, first_bonds) << threads << " threads";
    }
  }
  // Another seed, another packing.
  testing::write_text(dir / "c.toml", scene_text(packing(4), kGap));
  const auto other = testing::run_command(dem_app() + " pack " + (dir / "c.toml").string() + " --output-dir " +
                                          (dir / "seed4").string());
  ASSERT_EQ(other.status, 0) << other.output;
  EXPECT_NE(testing::read_file_text(dir / "seed4" / "particles.csv"), first_particles);
  // A run of the scene and a run of the files it wrote: the same energy.csv.
  testing::write_text(dir / "b.toml", read_back(dir / "t1"));
  for (const char* name : {"a", "b"}) {
    const auto r = testing::run_command(dem_app() + " run " + (dir / (std::string(name) + ".toml")).string() +
                                        " --quiet --output-dir " + (dir / (std::string("run_") + name)).string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  EXPECT_EQ(testing::read_file_text(dir / "run_a" / "energy.csv"),
            testing::read_file_text(dir / "run_b" / "energy.csv"));
  // The run of the packing writes its report; the run of the files has none.
  EXPECT_NE(testing::read_file_text(dir / "run_a" / "packing.json").find("\"solid_fraction\""), std::string::npos);
  EXPECT_EQ(testing::read_file_text(dir / "run_a" / "packing.json"), testing::read_file_text(dir / "t1" / "packing.json"));
  EXPECT_FALSE(fs::exists(dir / "run_b" / "packing.json"));
  // The files are kept unless --overwrite.
  const auto again = testing::run_command(dem_app() + " pack " + (dir / "a.toml").string() + " --output-dir " +
                                          (dir / "t1").string());
  EXPECT_EQ(again.status, 1) << again.output;
  EXPECT_NE(again.output.find("--overwrite"), std::string::npos) << again.output;
  const auto replaced = testing::run_command(dem_app() + " pack " + (dir / "a.toml").string() +
                                             " --overwrite --output-dir " + (dir / "t1").string());
  EXPECT_EQ(replaced.status, 0) << replaced.output;
  EXPECT_EQ(testing::read_file_text(dir / "t1" / "particles.csv"), first_particles);
}

}  // namespace
}  // namespace dem
