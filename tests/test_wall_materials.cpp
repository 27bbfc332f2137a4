// Walls of a material and pair tables (docs/model.md §11.2;
// docs/scene-format.md [[wall]] material and [[interaction]]):
//  - a glass sphere dropped on a steel wall touches it for Hertz's contact
//    time with E* of glass and steel, and on a wall without a material (of
//    the particle's own, glass on glass) for the longer one of that E*;
//  - an [[interaction]] mu_s governs a sphere sliding on a wall of another
//    material: it decelerates at mu_s g;
//  - with the Hertz-Mindlin, linear and JKR laws a run restarted from a
//    checkpoint continues bit for bit with wall materials and pair tables,
//    which the checkpoint keeps; without them the laws and walls write the
//    bytes of the former layout;
//  - scene errors name the file, the line and the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

#include "contact/adhesive_contact.hpp"
#include "contact/friction_wall_provider.hpp"
#include "contact/hertz_mindlin.hpp"
#include "contact/linear_spring_dashpot.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_builder.hpp"
#include "scene_support.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {

using dem::testing::snapshot;

/// A folder of this test process for the scenes' CSV tables.
const fs::path& folder() {
  static const fs::path dir = dem::testing::scratch_folder("wall_materials");
  return dir;
}

using dem::testing::write_text;

SceneSpec parse(const std::string& text) { return parse_scene_text(text, "s.toml", folder()); }

Simulation simulation_of(const std::string& text) { return make_simulation(build_scene(parse(text))); }

std::string error_of(const std::string& text) {
  try {
    (void)simulation_of(text);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

// ------------------------------------------------------------ glass on steel

constexpr double kGlassE = 63e9, kGlassNu = 0.23, kGlassRho = 2500, kSteelE = 210e9, kSteelNu = 0.3;
constexpr double kD = 0.01, kSpeed = 1.0;

/// A glass sphere (d = 10 mm) falling at 1 m/s onto a wall at z = 0;
/// `wall_key`: the wall's material line (or "").
std::string drop_scene(const std::string& wall_key) {
  write_text(folder() / "drop.csv", "x,y,z,diameter,vx,vy,vz\n0,0,0.005001,0.01,0,0,-1\n");
  return R"(
[run]
time_step = 1e-8
steps = 10
[[material]]
name = "glass"
density = 2500.0
E = 63e9
nu = 0.23
e = 1.0
mu_s = 0.0
[[material]]
name = "steel"           # of the wall alone: no density
E = 210e9
nu = 0.3
e = 1.0
mu_s = 0.0
[[particles]]
source = "csv"
file = "drop.csv"
material = "glass"
[contact]
law = "hertz-mindlin"
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
)" + wall_key + "\n";
}

/// The contact duration of the drop (time, to a step) and the rebound speed ratio.
std::pair<double, double> drop(const std::string& wall_key) {
  Simulation sim = simulation_of(drop_scene(wall_key));
  double touched = -1.0;
  for (int k = 0; k < 1000000; ++k) {
    sim.step();
    const double gap = sim.particles().position[0].z() - 0.5 * kD;
    if (gap < 0.0 && touched < 0.0) touched = sim.time();
    if (touched >= 0.0 && gap > 0.0) return {sim.time() - touched, sim.particles().velocity[0].z() / kSpeed};
  }
  return {NAN, NAN};
}

/// Hertz's contact time 2.868 (m*²/(R* E*² v))^(1/5) of the sphere on a
/// body of infinite mass and radius (m* = m, R* = r), 1/E* = (1 - nu_1²)/E_1
/// + (1 - nu_2²)/E_2.
double hertz_time(double e1, double nu1, double e2, double nu2) {
  const double e_star = 1.0 / ((1 - nu1 * nu1) / e1 + (1 - nu2 * nu2) / e2);
  const double m = kGlassRho * std::numbers::pi * kD * kD * kD / 6.0, r = 0.5 * kD;
  return 2.868 * std::pow(m * m / (r * e_star * e_star * kSpeed), 0.2);
}

// ------------------------------------------------------------ sliding

/// A sphere launched at 1 m/s along a floor of "plate" under gravity, with
/// `tables` added: its deceleration while it slides, over g.
double sliding_deceleration(const std::string& tables) {
  write_text(folder() / "slide.csv", "x,y,z,diameter,vx,vy,vz\n0,0,0.005,0.01,1,0,0\n");
  const std::string text = R"(
[run]
time_step = 1e-6
steps = 10
[[material]]
name = "grain"
density = 2500.0
E = 1e7
e = 0.5
mu_s = 0.5
[[material]]
name = "plate"
E = 2e7
e = 0.5
mu_s = 0.1
[[particles]]
source = "csv"
file = "slide.csv"
material = "grain"
[contact]
law = "hertz-mindlin"
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "plate"
[gravity]
acceleration = [0.0, 0.0, -9.81]
)" + tables;
  Simulation sim = simulation_of(text);
  // Sliding lasts 2 v0/(7 mu g) > 0.07 s for mu <= 0.4; the bounce of the
  // first contact has settled by 20 ms.
  double v1 = 0.0;
  for (int k = 1; k <= 60000; ++k) {
    sim.step();
    if (k == 20000) v1 = sim.particles().velocity[0].x();
  }
  return (v1 - sim.particles().velocity[0].x()) / 0.040 / 9.81;
}

// ------------------------------------------------------------ checkpoints

/// 27 grains thrown onto a wall of "plate" by gravity, with pair tables,
/// under `law` ("hertz-mindlin", "linear" or "jkr").
std::string box_scene(const std::string& law) {
  const bool mindlin = law == "hertz-mindlin";
  const std::string law_keys = mindlin         ? "rolling = \"epsd\"\nrolling_damping = 0.1\n"
                               : law == "jkr" ? "surface_energy = 0.05\n"
                                              : "stiffness = 1000.0\n";
  return R"(
[run]
time_step = 2e-6
steps = 10
[[material]]
name = "grain"
density = 2500.0
E = 1e7
e = 0.5
mu_s = 0.5
mu_r = 0.1
[[material]]
name = "plate"
E = 3e7
e = 0.8
mu_s = 0.2
mu_r = 0.05
[[interaction]]
materials = ["grain", "plate"]
e = 0.6
mu_s = 0.3
)" + std::string(mindlin ? "mu_r = 0.02\n" : "") +
         R"([[interaction]]
materials = ["grain", "grain"]
mu_s = 0.4
[[particles]]
source = "box_lattice"
material = "grain"
per_side = 3
diameter = 0.01
spacing_ratio = 1.02
temperature = 1e-7
origin = [0.00502, 0.0, 0.0]
[contact]
law = ")" + law + "\"\n" + law_keys + R"(skin_fraction = 0.2
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [1.0, 0.0, 0.0]
material = "plate"
[gravity]
acceleration = [-100.0, 0.0, 0.0]
)";
}

/// The wall provider of a simulation's contact law and its law's pair table size.
template <class Law>
void expect_materials_kept(const Simulation& sim, const char* walls, std::size_t rows) {
  const auto* p = dynamic_cast<const WallContactProvider<Law>*>(sim.forces().find(walls));
  ASSERT_NE(p, nullptr) << walls;
  EXPECT_EQ(p->walls().at(0).material, 1u) << walls;
  EXPECT_EQ(p->law().pair_table().size(), rows) << walls;
}

std::vector<std::byte> saved(const auto& thing) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  thing.save(w);
  return out;
}

}  // namespace

TEST(WallMaterials, GlassOnSteelTouchesForHertzsTimeOfTheTwoMaterials) {
  const auto [steel, e_steel] = drop("material = \"steel\"");
  const auto [glass, e_glass] = drop("");
  const double hertz_steel = hertz_time(kGlassE, kGlassNu, kSteelE, kSteelNu);
  const double hertz_glass = hertz_time(kGlassE, kGlassNu, kGlassE, kGlassNu);
  std::printf("glass on a steel wall: contact %.6e s (Hertz %.6e s, %+.3f%%), rebound %.6f\n", steel, hertz_steel,
              100 * (steel / hertz_steel - 1), e_steel);
  std::printf("glass on a wall of its own material: contact %.6e s (Hertz %.6e s, %+.3f%%), rebound %.6f\n", glass,
              hertz_glass, 100 * (glass / hertz_glass - 1), e_glass);
  EXPECT_NEAR(steel, hertz_steel, 0.01 * hertz_steel);
  EXPECT_NEAR(glass, hertz_glass, 0.01 * hertz_glass);
  EXPECT_LT(steel, 0.9 * glass) << "E* of glass on steel is larger than of glass on glass";
  EXPECT_NEAR(e_steel, 1.0, 1e-3);  // e = 1: elastic
}

TEST(WallMaterials, TheWallKeepsTheParticlesOwnMaterialWithoutTheKey) {
  // The wall named of the particle's own material is the wall without the key, bit for bit.
  Simulation a = simulation_of(drop_scene("material = \"glass\"")), b = simulation_of(drop_scene(""));
  for (int k = 0; k < 4000; ++k) {
    a.step();
    b.step();
  }
  EXPECT_GT(b.particles().velocity[0].z(), 0.0) << "it rebounded from the wall";
  EXPECT_EQ(snapshot(a), snapshot(b));
  EXPECT_EQ(a.energy_report().total(), b.energy_report().total());
}

TEST(WallMaterials, APairTablesMuGovernsSlidingOnAWallOfAMaterial) {
  const double table = sliding_deceleration("[[interaction]]\nmaterials = [\"plate\", \"grain\"]\nmu_s = 0.3\n");
  const double mixed = sliding_deceleration("");
  std::printf("sliding on the plate: a/g = %.6f with the table's mu_s = 0.3, %.6f mixed (sqrt(0.5 0.1) = %.6f)\n",
              table, mixed, std::sqrt(0.05));
  EXPECT_NEAR(table, 0.3, 0.003);
  EXPECT_NEAR(mixed, std::sqrt(0.05), 0.003);
}

TEST(WallMaterials, RestartsContinueBitForBitAndKeepTheTables) {
  for (const std::string law : {"hertz-mindlin", "linear", "jkr"}) {
    const std::string text = box_scene(law);
    Simulation whole = simulation_of(text);
    for (int k = 0; k < 1000; ++k) whole.step();
    Simulation half = simulation_of(text);
    for (int k = 0; k < 500; ++k) half.step();
    Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(half))));
    if (law == "hertz-mindlin") expect_materials_kept<HertzMindlinLaw>(resumed, "mwalls", 2);
    if (law == "linear") expect_materials_kept<LinearSpringDashpotLaw>(resumed, "lwalls", 2);
    if (law == "jkr") expect_materials_kept<AdhesiveContactLaw>(resumed, "jkrwalls", 2);
    for (int k = 500; k < 1000; ++k) resumed.step();
    EXPECT_NE(whole.energy_report().wall, 0.0) << law << ": the grains rest on the wall";
    EXPECT_TRUE(snapshot(resumed) == snapshot(whole)) << law;
  }
}

TEST(WallMaterials, WithoutThemTheCheckpointBytesAreTheFormerOnes) {
  // Hertz-Mindlin as written before pair tables: materials, h, flags 0x80,
  // the 10-byte options block.
  const ContactMaterial m{1e7, 0.3, 0.5, 0.4, 0.1};
  const HertzMindlinLaw plain({m, m}, 1e-6);
  std::vector<std::byte> former;
  ByteWriter w(former);
  w.u64(2);
  for (int k = 0; k < 2; ++k)
    for (const double x : {m.youngs_modulus, m.poisson_ratio, m.restitution, m.sliding_friction, m.rolling_friction})
      w.f64(x);
  w.f64(1e-6);
  w.u8(0x80);
  w.u32(10);
  w.u8(0);
  w.u8(0);
  w.f64(0.0);
  EXPECT_EQ(saved(plain), former);
  // With a table: bit 6 and the rows after the options; they load back.
  PairTable table = {{0, 1, 0.7, std::nullopt, 0.05}};
  const HertzMindlinLaw with({m, m}, 1e-6, {}, table);
  const std::vector<std::byte> bytes = saved(with);
  EXPECT_EQ(static_cast<std::uint8_t>(bytes[8 + 80 + 8]), 0xc0);
  ByteReader r(bytes);
  const HertzMindlinLaw loaded = HertzMindlinLaw::load(r);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(saved(loaded), bytes);
  EXPECT_EQ(loaded.pair(1, 0).damping, damping_coefficient(NormalDamping::exact, 0.7));
  EXPECT_EQ(loaded.pair(0, 1).mu_r, 0.05);
  EXPECT_EQ(loaded.pair(0, 1).mu_s, std::sqrt(0.4 * 0.4));

  // Linear and adhesive laws: the same bytes without a table.
  const LinearSpringDashpotLaw linear(1e3, 300, 0.5, {{0.5, 0.4}, {0.6, 0.2}}, 1e-6);
  std::vector<std::byte> linear_former;
  linear_former.reserve(128);  // (GCC 12 warns of a false overflow in the growing writes)
  ByteWriter lw(linear_former);
  for (const double x : {1e3, 300.0, 0.5, 1e-6}) lw.f64(x);
  lw.u64(2);
  for (const double x : {0.5, 0.4, 0.6, 0.2}) lw.f64(x);
  EXPECT_EQ(saved(linear), linear_former);
  const LinearSpringDashpotLaw linear_table(1e3, 300, 0.5, {{0.5, 0.4}, {0.6, 0.2}}, 1e-6, {{1, 0, 0.9, 0.1, {}}});
  std::vector<std::byte> lb = saved(linear_table);
  ByteReader lr(lb);
  EXPECT_EQ(saved(LinearSpringDashpotLaw::load(lr)), lb);
  EXPECT_EQ(lr.remaining(), 0u);

  const AdhesiveMaterial am{1e7, 0.3, 0.5, 0.4};
  const AdhesiveContactLaw adhesive(Adhesion::dmt, 0.01, 1.0, {am, am}, 1e-6);
  EXPECT_EQ(static_cast<std::uint8_t>(saved(adhesive)[0]), 1u);
  const AdhesiveContactLaw adhesive_table(Adhesion::dmt, 0.01, 1.0, {am, am}, 1e-6, {{0, 0, 0.3, {}, {}}});
  std::vector<std::byte> ab = saved(adhesive_table);
  EXPECT_EQ(static_cast<std::uint8_t>(ab[0]), 0x81u);
  ByteReader ar(ab);
  EXPECT_EQ(saved(AdhesiveContactLaw::load(ar)), ab);

  // The wall provider: a wall's material follows the former section.
  ParticleStore s;
  s.add(ParticleSpec{});
  Wall floor{Vec3::Zero(), Vec3::UnitZ(), 0.0};
  const std::vector<std::byte> own = saved(FrictionWallProvider({floor}, plain, 1, "mwalls"));
  floor.material = 1;
  const std::vector<std::byte> named = saved(FrictionWallProvider({floor}, plain, 1, "mwalls"));
  ASSERT_EQ(named.size(), own.size() + 4);
  EXPECT_TRUE(std::equal(own.begin(), own.end(), named.begin()));
  ByteReader old_reader(own), new_reader(named);
  EXPECT_EQ(FrictionWallProvider::load(old_reader, s, "mwalls")->walls()[0].material, Wall::kParticleMaterial);
  EXPECT_EQ(FrictionWallProvider::load(new_reader, s, "mwalls")->walls()[0].material, 1u);
  EXPECT_EQ(new_reader.remaining(), 0u);
  // A wall material the law does not have is refused, built or loaded.
  floor.material = 2;
  EXPECT_THROW(FrictionWallProvider({floor}, plain, 1, "mwalls"), std::invalid_argument);
  std::vector<std::byte> bad = named;
  bad[bad.size() - 4] = std::byte{2};
  ByteReader bad_reader(bad);
  EXPECT_THROW(FrictionWallProvider::load(bad_reader, s, "mwalls"), StateError);
}

TEST(WallMaterials, TheLawsRefuseBadTables) {
  const ContactMaterial m{1e7, 0.3, 0.5, 0.4, 0.1};
  EXPECT_THROW(HertzMindlinLaw({m}, 1e-6, {}, {{0, 1, 0.5, {}, {}}}), std::invalid_argument);  // no material 1
  EXPECT_THROW(HertzMindlinLaw({m, m}, 1e-6, {}, {{0, 1, 0.5, {}, {}}, {1, 0, {}, 0.2, {}}}),
               std::invalid_argument);  // twice
  EXPECT_THROW(HertzMindlinLaw({m}, 1e-6, {}, {{0, 0, 1.5, {}, {}}}), std::invalid_argument);
  EXPECT_THROW(HertzMindlinLaw({m}, 1e-6, {}, {{0, 0, {}, -0.1, {}}}), std::invalid_argument);
  EXPECT_THROW(HertzMindlinLaw({m}, 1e-6, {}, {{0, 0, {}, {}, INFINITY}}), std::invalid_argument);
  EXPECT_THROW(LinearSpringDashpotLaw(1e3, 300, 0.5, {{0.5, 0.4}}, 1e-6, {{0, 0, {}, {}, 0.1}}),
               std::invalid_argument);  // no rolling resistance
  EXPECT_NO_THROW(HertzMindlinLaw({m}, 1e-6, {}, {{0, 0, 0.9, 0.0, 0.0}}));
}

// ------------------------------------------------------------ scene errors

namespace {
const std::string kSlideBase = R"(
[run]
time_step = 1e-6
steps = 10
[[material]]
name = "grain"
density = 2500.0
E = 1e7
[[material]]
name = "plate"
E = 2e7
[[particles]]
source = "csv"
file = "slide.csv"
material = "grain"
[contact]
law = "hertz-mindlin"
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "plate"
[[interaction]]
materials = ["grain", "plate"]
e = 0.7
)";

std::string with(const std::string& from, const std::string& to) {
  return dem::testing::replaced(kSlideBase, from, to);
}
}  // namespace

TEST(WallMaterials, SceneKeysAreReadAndResolved) {
  write_text(folder() / "slide.csv", "x,y,z,diameter,vx,vy,vz\n0,0,0.005,0.01,1,0,0\n");
  const SceneSpec s =
      parse(kSlideBase + "[[interaction]]\nmaterials = [\"grain\", \"grain\"]\nmu_s = 0.2\nmu_r = 0.01\n");
  ASSERT_EQ(s.walls.size(), 1u);
  EXPECT_EQ(s.walls[0].material, 1u);
  ASSERT_EQ(s.interactions.size(), 2u);
  EXPECT_EQ(s.interactions[0].pair.a, 0u);
  EXPECT_EQ(s.interactions[0].pair.b, 1u);
  EXPECT_EQ(s.interactions[0].pair.restitution, 0.7);
  EXPECT_FALSE(s.interactions[0].pair.sliding_friction);
  EXPECT_EQ(s.interactions[1].pair.a, 0u);
  EXPECT_EQ(s.interactions[1].pair.b, 0u);
  EXPECT_EQ(s.interactions[1].pair.sliding_friction, 0.2);
  EXPECT_EQ(s.interactions[1].pair.rolling_friction, 0.01);
  EXPECT_EQ(s.materials[1].material.density, 0.0);
  EXPECT_EQ(error_of(kSlideBase), "");
  // No material key: each particle's own.
  EXPECT_EQ(parse(with("material = \"plate\"\n[[interaction]]", "[[interaction]]")).walls[0].material,
            Wall::kParticleMaterial);
}

TEST(WallMaterials, BadKeysAreRefusedNamingFileLineAndKey) {
  write_text(folder() / "slide.csv", "x,y,z,diameter,vx,vy,vz\n0,0,0.005,0.01,1,0,0\n");
  const auto expect_error = [](const std::string& text, const std::string& part) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find(part), std::string::npos) << "expected '" << part << "' in: " << e;
    EXPECT_EQ(e.rfind("s.toml:", 0), 0u) << e;
  };
  expect_error(with("material = \"plate\"\n[[interaction]]", "material = \"steel\"\n[[interaction]]"),
               ":21:12: [[wall]] material: no [[material]] is named \"steel\" (the scene has \"grain\", \"plate\")");
  expect_error(with("material = \"plate\"\n[[interaction]]", "material = 3\n[[interaction]]"),
               "[[wall]] material: expected a string, got 3");
  expect_error(with("[\"grain\", \"plate\"]", "[\"grain\", \"stone\"]"),
               ":23:23: [[interaction]] materials: no [[material]] is named \"stone\"");
  expect_error(with("[\"grain\", \"plate\"]", "[\"grain\"]"),
               "[[interaction]] materials: expected two [[material]] names");
  expect_error(with("materials = [\"grain\", \"plate\"]\n", ""), "[[interaction]] materials: is required");
  expect_error(kSlideBase + "[[interaction]]\nmaterials = [\"plate\", \"grain\"]\nmu_s = 0.1\n",
               ":26:13: [[interaction]] materials: the pair (\"plate\", \"grain\") is already given by the "
               "[[interaction]] at s.toml:22:1");
  expect_error(with("e = 0.7", "e = 1.5"), "[[interaction]] e: expected a number in (0, 1], got 1.5");
  expect_error(with("e = 0.7", "mu_s = -0.1"), "[[interaction]] mu_s: expected a finite number >= 0");
  expect_error(with("e = 0.7", "mu_r = inf"), "[[interaction]] mu_r: expected a finite number >= 0");
  expect_error(with("e = 0.7", "mu_k = 0.1"), "[[interaction]] mu_k: unknown key");
  expect_error(with("e = 0.7\n", ""), "[[interaction]]: give at least one coefficient of the pair");
  // Laws without materials take neither; linear has no rolling resistance.
  const std::string hertz = with("law = \"hertz-mindlin\"", "law = \"hertz\"\nstiffness = 100.0");
  expect_error(hertz, "[[wall]] material: does not apply with [contact] law = \"hertz\"");
  expect_error(with("law = \"hertz-mindlin\"", "law = \"penalty\""),
               ":21:12: [[wall]] material: does not apply with [contact] law = \"penalty\" (its walls take a "
               "stiffness, not a [[material]]; laws with wall materials: \"hertz-mindlin\", \"linear\", \"jkr\" "
               "or \"dmt\")");
  const std::string hertz_table =
      dem::testing::replaced(hertz, "material = \"plate\"\n[[interaction]]", "stiffness = 100.0\n[[interaction]]");
  expect_error(hertz_table,
               "[[interaction]]: does not apply with [contact] law = \"hertz\"");
  const std::string linear = with("law = \"hertz-mindlin\"", "law = \"linear\"\nstiffness = 100.0");
  EXPECT_EQ(error_of(linear), "");
  expect_error(dem::testing::replaced(linear, "e = 0.7", "mu_r = 0.1"),
               "[[interaction]] mu_r: does not apply to law \"linear\" (its pair coefficients: \"e\" or \"mu_s\")");
  // Only a material of walls alone may leave out its density.
  expect_error(with("source = \"csv\"\nfile = \"slide.csv\"\nmaterial = \"grain\"",
                    "source = \"chain\"\nmaterial = \"plate\"\ncount = 2\ndiameter = 0.01\norigin = [0.0, 0.0, 0.005]"),
               ":9:1: [[material]] density: is required: \"plate\" is the material of the [[particles]] at "
               "s.toml:12:1");
}

TEST(WallMaterials, CsvRowsOfAMaterialWithoutDensityAreRefused) {
  write_text(folder() / "rows.csv", "x,y,z,diameter,material\n0,0,0.005,0.01,grain\n0,0.05,0.005,0.01,plate\n");
  const std::string e = error_of(with("file = \"slide.csv\"", "file = \"rows.csv\""));
  EXPECT_NE(e.find("s.toml:9:1: [[material]] density: is required: \"plate\" is the material of the particle at "),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("rows.csv:3: "), std::string::npos) << e;
}
