// Scene files (scene/, docs/scene-format.md): every kind of bad input is an
// error naming the file, the line and the key; the shipped scenes build the
// same particles and bonds as the generators; bonds by distance and from CSV
// files; CSV particles; walls; the time step.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "scene/ring_torus.hpp"
#include "scene/solid_torus.hpp"
#include "engine/time_step.hpp"
#include "scene/csv_table.hpp"
#include "scene/scene_builder.hpp"
#include "scene_support.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {

const std::string kRing = R"([run]
integrator = "rrp25"
time_step = 1e-3
end_time = 1.0

[[particles]]
source = "ring_torus"
count = 12

[bonds]
bending = 10.0
axial = 200.0
shear = 200.0

[contact]
stiffness = 2100.0

[[wall]]
point = [0, 0, 0]
normal = [1, 0, 0]
stiffness = 2100.0
)";

fs::path folder() {
  const fs::path p = fs::temp_directory_path() / ("dem_test_scene_" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

SceneSpec parse(const std::string& text) { return parse_scene_text(text, "s.toml", folder()); }

/// The SceneError message for `text`, or "" if it parsed and built.
std::string error_of(const std::string& text) {
  try {
    build_scene(parse(text));
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

using dem::testing::replaced;

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST(SceneFile, TheBaseSceneBuilds) { EXPECT_EQ(error_of(kRing), ""); }

TEST(SceneFile, ErrorsNameFileLineAndKey) {
  struct Case {
    std::string from, to, expect;
  };
  const Case cases[] = {
      {"end_time = 1.0", "end_time = 1.0\nend_tme = 2.0", "s.toml:5:1: [run] end_tme: unknown key"},
      {"time_step = 1e-3", "time_step = \"fast\"", "s.toml:3:13: [run] time_step: expected a number or \"auto\""},
      {"time_step = 1e-3", "time_step = -1e-3", "s.toml:3:13: [run] time_step: expected a finite number > 0, got -0.001"},
      {"integrator = \"rrp25\"", "integrator = \"rrp24\"", "[run] integrator: expected \"rrp23\", \"rrp25\", \"rrp27\" or \"implicit\""},
      {"end_time = 1.0", "", "give exactly one of end_time (time) and steps"},
      {"count = 12", "count = 2", "s.toml:8:9: [[particles]] count: a ring needs at least 3 particles"},
      {"count = 12", "count = 12.5", "[[particles]] count: expected a whole number, got 12.5"},
      {"source = \"ring_torus\"", "source = \"ring\"", "[[particles]] source: expected \"ring_torus\""},
      {"stiffness = 2100.0\n\n[[wall]]", "stiffness = -1.0\n\n[[wall]]", "[contact] stiffness: expected a finite number >= 0"},
      {"normal = [1, 0, 0]", "normal = [1, 0]", "[[wall]] normal: expected an array of three numbers"},
      {"normal = [1, 0, 0]", "normal = [0, 0, 0]", "[[wall]] normal: must not be the zero vector"},
      {"shear = 200.0", "", "give all three of bending, axial and shear"},
      {"[contact]\nstiffness = 2100.0", "", "the [contact] table is required"},
      {"point = [0, 0, 0]", "point = [5, 0, 0]", "starts behind this wall"},
      {"time_step = 1e-3", "time_step = 1.0", "is over the stability limit"},
      {"end_time = 1.0", "end_time = 1.0\n[gravity]\nacceleration = 9.81", "[gravity] acceleration: expected an array of three numbers"},
      {"[run]", "[run]\n[run]", "not valid TOML"},
      {"[[wall]]", "[walls]\n[[wall]]", "s.toml:18:2: [top level] walls: unknown table"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(replaced(kRing, c.from, c.to));
    EXPECT_NE(message.find(c.expect), std::string::npos)
        << "replacing '" << c.from << "' by '" << c.to << "': got '" << message << "'";
  }
}

TEST(SceneFile, MaterialValuesAreChecked) {
  const std::string solid = R"([run]
steps = 1
[material]
particle_poisson = 0.7
[[particles]]
source = "solid_torus"
target_particles = 200
[contact]
stiffness = "auto"
)";
  EXPECT_NE(error_of(solid).find("s.toml:4:20: [material] particle_poisson: expected Poisson's ratio in (-1, 0.5), got 0.7"),
            std::string::npos)
      << error_of(solid);
  const std::string needs = replaced(replaced(solid, "particle_poisson = 0.7", "density = 1000.0"), "", "");
  EXPECT_NE(error_of(needs).find("needs [material] particle_modulus"), std::string::npos) << error_of(needs);
}

TEST(SceneFile, WallsThatTrapNothingAreRefused) {
  const std::string text = kRing + R"(
[[wall]]
point = [-1, 0, 0]
normal = [-1, 0, 0]
stiffness = 1.0
)";
  EXPECT_NE(error_of(text).find("the space between them is empty"), std::string::npos) << error_of(text);
}

TEST(SceneFile, RingSceneBuildsTheGeneratorsRing) {
  const BuiltScene b = build_scene(parse(kRing));
  RingTorusParameters p;
  p.particles = 12;
  const Scene ref = make_ring_torus(p);
  ASSERT_EQ(b.scene.particles.size(), 12u);
  ASSERT_EQ(b.scene.bonds.size(), 12u);
  for (std::size_t k = 0; k < 12; ++k) {
    const std::uint32_t id = b.scene.particles.id[k];
    EXPECT_EQ(b.scene.particles.position[k], ref.particles.position[id]);
    EXPECT_EQ(b.scene.particles.velocity[k], ref.particles.velocity[id]);
  }
  EXPECT_EQ(b.scene.contact.stiffness, 2100.0);
  ASSERT_EQ(b.scene.walls.size(), 1u);
  EXPECT_EQ(b.time_step, 1e-3);
  EXPECT_EQ(b.steps, 1000u);
  EXPECT_EQ(b.scene.bonds.stiffness(0).bending, 10.0);
}

TEST(SceneFile, AutoTimeStepAndHertzStiffnessesFromTheMaterial) {
  const std::string text = R"([run]
time_step = "auto"
time_step_fraction = 0.2
steps = 10
[material]
density = 2000.0
particle_modulus = 1e10
particle_poisson = 0.3
binder_modulus = 1e9
bond_radius_ratio = 0.5
[[particles]]
source = "solid_torus"
particle_diameter = 4e-3
[contact]
stiffness = "auto"
[[wall]]
point = [0, 0, 0]
normal = [1, 0, 0]
stiffness = "auto"
)";
  const BuiltScene b = build_scene(parse(text));
  SolidTorusParameters p;
  p.particle_diameter = 4e-3;
  const SolidTorusConstants c = solid_torus_constants(p);
  const Scene ref = make_solid_torus(p);
  EXPECT_EQ(b.scene.particles.size(), ref.particles.size());
  EXPECT_EQ(b.scene.bonds.size(), ref.bonds.size());
  EXPECT_DOUBLE_EQ(b.scene.contact.stiffness, c.k_contact);
  EXPECT_DOUBLE_EQ(b.scene.walls.at(0).stiffness, c.k_wall);
  EXPECT_DOUBLE_EQ(b.scene.bonds.stiffness(0).axial, c.k_axial);
  EXPECT_DOUBLE_EQ(b.scene.bonds.stiffness(0).bending, c.k_bending);
  const double h_crit = critical_time_step(b.scene.particles, b.scene.bonds, b.scene.contact);
  EXPECT_EQ(b.critical_time_step, h_crit);
  EXPECT_EQ(b.time_step, 0.2 * h_crit);
  EXPECT_TRUE(b.automatic_time_step);
}

TEST(SceneFile, CsvParticlesWithBondsByDistanceAndFromAFile) {
  const fs::path dir = folder();
  write(dir / "grains.csv", "# three spheres in a row and one apart\nx,y,z,diameter,vx,vy,vz\n"
                            "0,0,0,1,0,0,0\n1,0,0,1,0.5,0,0\n2,0,0,1,0,0,0\n10,0,0,2,0,0,0\n");
  write(dir / "pairs.csv", "i,j\n0,2\n");
  const std::string base = R"([run]
time_step = 1e-3
steps = 5
[material]
density = 1000.0
binder_modulus = 1e6
bond_radius_ratio = 0.5
[[particles]]
source = "csv"
file = "grains.csv"
[contact]
stiffness = 10.0
)";
  const BuiltScene by_distance = build_scene(parse(base + "[bonds]\npairs = \"distance\"\ndistance = 1.01\n"));
  EXPECT_EQ(by_distance.scene.particles.size(), 4u);
  EXPECT_EQ(by_distance.scene.bonds.size(), 2u);  // 0-1 and 1-2
  const ParticleStore& s = by_distance.scene.particles;
  for (std::size_t k = 0; k < 4; ++k) {
    const double d = 2 * s.radius[k];
    EXPECT_DOUBLE_EQ(s.mass[k], 1000.0 * M_PI * d * d * d / 6.0);
    EXPECT_DOUBLE_EQ(s.inertia[k], s.mass[k] * d * d / 10.0);
    if (s.id[k] == 1) {
      EXPECT_EQ(s.velocity[k], Vec3(0.5, 0, 0));
    }
  }
  // K^a = E_b pi r_b^2 r0 with r_b = beta (r_i + r_j)/2 = 0.25, r0 = 1.
  EXPECT_DOUBLE_EQ(by_distance.scene.bonds.stiffness(0).axial, 1e6 * M_PI * 0.0625);
  const BuiltScene from_file = build_scene(parse(base + "[bonds]\npairs = \"csv\"\nfile = \"pairs.csv\"\n"));
  ASSERT_EQ(from_file.scene.bonds.size(), 1u);
  EXPECT_DOUBLE_EQ(from_file.scene.bonds.rest_length[0], 2.0);

  write(dir / "bad.csv", "x,y,z,diameter\n0,0,0,1\n1,0,zero,1\n");
  const std::string bad = replaced(base, "grains.csv", "bad.csv");
  EXPECT_NE(error_of(bad).find("bad.csv:3: column \"z\": expected a finite number, got \"zero\""), std::string::npos)
      << error_of(bad);
  write(dir / "neg.csv", "x,y,z,diameter\n0,0,0,-1\n");
  const std::string neg = replaced(base, "grains.csv", "neg.csv");
  EXPECT_NE(error_of(neg).find("neg.csv:2"), std::string::npos) << error_of(neg);
  EXPECT_NE(error_of(neg).find("diameter"), std::string::npos) << error_of(neg);
  write(dir / "pairs_bad.csv", "i,j\n0,7\n");
  const std::string pairs_bad = base + "[bonds]\npairs = \"csv\"\nfile = \"pairs_bad.csv\"\n";
  EXPECT_NE(error_of(pairs_bad).find("pairs_bad.csv:2: i and j must be particle indices in [0, 4)"), std::string::npos)
      << error_of(pairs_bad);
  const std::string missing = replaced(base, "grains.csv", "nowhere.csv");
  EXPECT_NE(error_of(missing).find("nowhere.csv: no such file"), std::string::npos) << error_of(missing);
}

TEST(SceneFile, GravityAndOutputIntervals) {
  const SceneSpec s = parse(kRing + "[gravity]\nacceleration = [0, 0, -9.81]\n[output]\nvtk_every = 7\n"
                                    "energy_every = 3\ncheckpoint_every = 11\n");
  EXPECT_EQ(s.gravity, Vec3(0, 0, -9.81));
  EXPECT_EQ(s.output.vtk_every, 7u);
  EXPECT_EQ(s.output.energy_every, 3u);
  EXPECT_EQ(s.output.checkpoint_every, 11u);
}

TEST(SceneFile, ShippedScenesValidate) {
  for (const char* name : {"ring_torus", "solid_torus", "lattice", "clumps"}) {
    const fs::path p = fs::path(DEM_SOURCE_DIR) / "scenes" / (std::string(name) + ".toml");
    EXPECT_NO_THROW(read_scene_file(p)) << p;
  }
  EXPECT_EQ(build_scene(read_scene_file(fs::path(DEM_SOURCE_DIR) / "scenes/ring_torus.toml")).steps, 35000u);
}

TEST(CsvTable, RejectsUnknownMissingAndRaggedColumns) {
  EXPECT_THROW(parse_csv_table("x,y\n1,2\n", "t.csv", {"x", "y", "z"}, {}), SceneError);
  EXPECT_THROW(parse_csv_table("x,w\n1,2\n", "t.csv", {"x"}, {}), SceneError);
  EXPECT_THROW(parse_csv_table("x,y\n1\n", "t.csv", {"x", "y"}, {}), SceneError);
  EXPECT_THROW(parse_csv_table("x,x\n1,2\n", "t.csv", {"x"}, {}), SceneError);
  EXPECT_THROW(parse_csv_table("", "t.csv", {"x"}, {}), SceneError);
  const CsvTable t = parse_csv_table("\n# c\nx , y\n1, 2.5\n\n3,-4e1\n", "t.csv", {"x", "y"}, {});
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.at(1, "y"), -40.0);
  EXPECT_EQ(t.line_of(1), 6u);
}

TEST(SceneFile, BondsAreHeldFirstBelowSecondAndSortedAlsoWithoutReordering) {
  // scenes/clumps.toml asks for no re-ordering; its ring's closing bond was
  // made as (23, 0). The parts of an MPI run hold every bond so (they
  // renumber), and a bond taken the other way round rounds differently.
  const BuiltScene b = build_scene(read_scene_file(fs::path(DEM_SOURCE_DIR) / "scenes/clumps.toml"));
  const BondList& bonds = b.scene.bonds;
  ASSERT_EQ(bonds.size(), 24u);
  bool closing = false;
  for (std::size_t k = 0; k < bonds.size(); ++k) {
    EXPECT_LT(bonds.first[k], bonds.second[k]) << "bond " << k;
    if (k > 0) {
      EXPECT_TRUE(std::pair(bonds.first[k - 1], bonds.second[k - 1]) < std::pair(bonds.first[k], bonds.second[k]))
          << "bond " << k;
    }
    closing = closing || (bonds.first[k] == 0 && bonds.second[k] == 23);
  }
  EXPECT_TRUE(closing);
}

TEST(SceneFile, ClumpsRefuseTheFrictionFilter) {
  // The filter changes sphere velocities; members take theirs from the clump.
  const std::string text = R"([run]
integrator = "rrp25"
time_step = 1e-3
end_time = 1.0

[[material]]
name = "grain"
density = 1.9099
E = 4200.0

[[particles]]
source = "ring_torus"
count = 12
torus_diameter = 4.0
speed = 0.0
material = "grain"

[bonds]
pairs = "none"

[contact]
law = "penalty"
friction_filter = true

[[clump]]
centres = [[3.0, 5.0, 0.0], [4.0, 5.0, 0.0]]
diameters = 1.0
member_mass = 1.0
)";
  const std::string error = error_of(text);
  EXPECT_NE(error.find("s.toml:25:1: a [[clump]] cannot be combined with [contact] friction_filter = true"),
            std::string::npos)
      << error;
  // Without the filter the same scene builds.
  EXPECT_EQ(error_of(replaced(text, "friction_filter = true", "")), "");
}

TEST(SceneFile, ClumpsAreBuiltAfterTheSourcesByIdAndMayBeReordered) {
  const BuiltScene b = build_scene(read_scene_file(fs::path(DEM_SOURCE_DIR) / "scenes/clumps.toml"));
  ASSERT_EQ(b.clumps.size(), 2u);
  EXPECT_EQ(b.scene.particles.size(), 24u + 4u + 2u);
  EXPECT_EQ(b.clumps[0].ids, (std::vector<std::uint32_t>{24, 25, 26, 27}));
  EXPECT_EQ(b.clumps[1].ids, (std::vector<std::uint32_t>{28, 29}));
  EXPECT_EQ(b.scene.particles.radius[29], 0.7);
  EXPECT_EQ(b.scene.bonds.size(), 24u) << "no bond reaches a clump";
  EXPECT_FALSE(b.scene.contact.reorder_on_rebuild) << "scenes/clumps.toml asks for no re-ordering";
  // Without that line the clump scene is re-ordered like any other (members by id).
  std::ifstream in(fs::path(DEM_SOURCE_DIR) / "scenes/clumps.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("reorder_on_rebuild = false"), 26, "");
  const BuiltScene r = build_scene(parse_scene_text(text, "c.toml", fs::path(DEM_SOURCE_DIR) / "scenes"));
  EXPECT_TRUE(r.scene.contact.reorder_on_rebuild);
  for (std::size_t k = 0; k < 4; ++k)
    EXPECT_EQ(r.scene.particles.id[slots_of_ids(r.scene.particles, r.clumps[0].ids)[k]], 24 + k);
  EXPECT_EQ(b.clumps[0].angular_velocity, Vec3(0.0, 0.5, 2.0));
  const std::string bad = kRing + "[[clump]]\ncenters = [[0, 0, 0]]\n";
  EXPECT_NE(error_of(bad).find("s.toml:22:1: [[clump]] centres: is required"), std::string::npos) << error_of(bad);
  const std::string ragged = kRing + "[[clump]]\ncentres = [[3, 9, 0], [4, 9, 0]]\ndiameters = [1, 1, 1]\nmember_mass = 1\n";
  EXPECT_NE(error_of(ragged).find("[[clump]] diameters: expected one number or 2 numbers, got 3"), std::string::npos)
      << error_of(ragged);
  const std::string no_mass = kRing + "[[clump]]\ncentres = [[3, 9, 0]]\ndiameters = 1\n";
  EXPECT_NE(error_of(no_mass).find("needs [material] density"), std::string::npos) << error_of(no_mass);
}
