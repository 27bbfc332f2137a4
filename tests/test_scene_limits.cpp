// Issue 22's defects of scene checks and messages, each as it was found:
//  - item 2: Hertz-Mindlin friction integrated its tangential history with
//    the old step after `dem restart --time-step`;
//  - item 4: Hertz-Mindlin contact had no time-step limit (`inf`);
//  - item 11: BDEM bonds took Baker-Gonzalez stiffnesses they ignored; CSV
//    particles could not take their mass from a [[material]];
//  - item 12: time_step = "auto" for BDEM ignored nu, beta and rest lengths;
//  - item 13: values that overflow at the first step passed `dem check`;
//  - item 14: two loads on a particle named neither group nor file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "app_support.hpp"
#include "contact/friction_wall_provider.hpp"
#include "contact/hertz_mindlin.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {

using Result = dem::testing::CommandResult;
using dem::testing::contains;
using dem::testing::write_text_file;
Result sh(const std::string& command) { return dem::testing::run_command(command); }
std::string dem_app() { return dem::testing::app_path("dem"); }
fs::path scratch(const std::string& name) { return dem::testing::fresh_folder("limits", name); }

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// Two glass grains falling onto a floor, the upper one onto the lower one,
/// each sliding sideways (nothing touches at the start), with Hertz-Mindlin
/// friction and rolling resistance.
const char* kGrains = R"(x,y,z,diameter,vx,vy,vz
0.0,0.0,0.00105,0.002,0.1,0.0,-0.5
0.0,0.0,0.0033,0.002,-0.1,0.0,-1.0
)";

std::string grain_scene(const std::string& time_step) {
  return "[run]\ntime_step = " + time_step + R"(
steps = 400
[output]
energy_every = 50
[[material]]
name = "glass"
density = 2500.0
E = 1e7
nu = 0.25
e = 0.8
mu_s = 0.3
mu_r = 0.1
[[particles]]
source = "csv"
file = "grains.csv"
material = "glass"
[contact]
law = "hertz-mindlin"
rolling = true
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
[gravity]
acceleration = [0.0, 0.0, -9.81]
)";
}

Simulation simulation_of(const fs::path& scene) { return make_simulation(build_scene(read_scene_file(scene))); }

}  // namespace

// Item 2: a run continued at another step integrates the friction histories
// with that step: from a checkpoint at the start, continuing at h2 is the
// run made at h2, bit for bit (before, the law kept h1).
TEST(SceneLimits, HertzMindlinTakesTheRestartsTimeStep) {
  const fs::path dir = scratch("mindlin_step");
  write_text_file(dir / "grains.csv", kGrains);
  write_text_file(dir / "h1.toml", grain_scene("2e-6"));
  write_text_file(dir / "h2.toml", grain_scene("1e-6"));
  Simulation a = simulation_of(dir / "h1.toml");
  CheckpointState c = capture_simulation(a);
  c.time_step = 1e-6;
  Simulation restarted = simulation_from(c);
  Simulation direct = simulation_of(dir / "h2.toml");
  for (const Simulation* s : {&restarted, &direct})
    for (const auto& p : s->forces().providers()) {
      if (const auto* m = dynamic_cast<const HertzMindlinProvider*>(p.get())) {
        EXPECT_EQ(m->law().time_step(), 1e-6);
      }
    }
  for (int k = 0; k < 3000; ++k) {
    restarted.step();
    direct.step();
  }
  const ParticleStore& x = restarted.particles();
  const ParticleStore& y = direct.particles();
  ASSERT_EQ(x.size(), y.size());
  double spin = 0.0;  // friction has turned the grains: the histories worked
  for (std::size_t i = 0; i < x.size(); ++i) spin = std::max(spin, x.angular_velocity[i].norm());
  EXPECT_GT(spin, 1.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x.position[i], y.position[i]) << i;
    EXPECT_EQ(x.angular_velocity[i], y.angular_velocity[i]) << i;
  }
}

// Item 4: `dem check` printed "critical time step estimate: inf" for
// Hertz-Mindlin contact and accepted 2e-3 s or 1 s.
TEST(SceneLimits, HertzMindlinStepsOverTheRayleighStepAreRefused) {
  const fs::path dir = scratch("mindlin_limit");
  write_text_file(dir / "grains.csv", kGrains);
  // Rayleigh step: pi r sqrt(rho/G)/(0.1631 nu + 0.8766) with r = 1 mm,
  // rho = 2500, G = 1e7/2.5: 8.5614e-5 s.
  const double h_r = M_PI * 1e-3 * std::sqrt(2500.0 / 4e6) / (0.1631 * 0.25 + 0.8766);
  for (const std::string h : {"2e-3", "1.0", "8.6e-5"}) {
    write_text_file(dir / "big.toml", grain_scene(h));
    const Result r = sh(dem_app() + " check " + (dir / "big.toml").string());
    EXPECT_EQ(r.status, 1) << h << r.output;
    EXPECT_TRUE(contains(r.output, "is over the stability limit")) << r.output;
    EXPECT_TRUE(contains(r.output, "Rayleigh time step of particle")) << r.output;
  }
  write_text_file(dir / "auto.toml", grain_scene("\"auto\""));
  const Result ok = sh(dem_app() + " check " + (dir / "auto.toml").string());
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_TRUE(contains(ok.output, "critical time step estimate (engine/time_step.hpp): 8.56136e-05")) << ok.output;
  EXPECT_NEAR(rayleigh_time_step(1e-3, 2500.0 * 4.0 / 3.0 * M_PI * 1e-9, 1e7, 0.25), h_r, 1e-15);
  // Just under the limit runs to its end without a drift warning.
  write_text_file(dir / "under.toml", grain_scene("8.5e-5"));
  const Result run = sh(dem_app() + " run " + (dir / "under.toml").string() + " --quiet --output-dir " +
                        (dir / "out").string());
  EXPECT_EQ(run.status, 0) << run.output;
}

// Item 11.
TEST(SceneLimits, BdemBondsRefuseBakerGonzalezStiffnesses) {
  const fs::path dir = scratch("bdem_keys");
  const std::string cantilever = dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/scenes/cantilever.toml");
  write_text_file(dir / "c.toml", replace(cantilever, "law = \"bdem\"", "law = \"bdem\"\naxial = 5.0"));
  const Result r = sh(dem_app() + " check " + (dir / "c.toml").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "[bonds] axial: is a Baker-Gonzalez stiffness")) << r.output;
}

TEST(SceneLimits, CsvParticlesTakeTheirMaterialsDensity) {
  const fs::path dir = scratch("csv_material");
  write_text_file(dir / "p.csv", "x,y,z,diameter,material\n0,0,0,0.002,light\n0.01,0,0,0.002,heavy\n0.02,0,0,0.002,light\n");
  const std::string scene = R"([run]
time_step = 1e-6
steps = 10
[[material]]
name = "light"
density = 1000.0
E = 1e7
[[material]]
name = "heavy"
density = 8000.0
E = 1e7
[[particles]]
source = "csv"
file = "p.csv"
[contact]
law = "hertz-mindlin"
)";
  write_text_file(dir / "s.toml", scene);
  const SceneSpec spec = read_scene_file(dir / "s.toml");
  const BuiltScene b = build_scene(spec);
  const double v = M_PI * 8e-9 / 6.0;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::uint32_t id = b.scene.particles.id[i];
    EXPECT_DOUBLE_EQ(b.scene.particles.mass[i], (id == 1 ? 8000.0 : 1000.0) * v) << id;
    EXPECT_EQ(b.scene.particles.material[i], id == 1 ? 1u : 0u) << id;
  }
  // Without the column, the source's material key.
  write_text_file(dir / "q.csv", "x,y,z,diameter\n0,0,0,0.002\n");
  write_text_file(dir / "q.toml", replace(replace(scene, "p.csv", "q.csv"), "file = \"q.csv\"", "file = \"q.csv\"\nmaterial = \"heavy\""));
  EXPECT_DOUBLE_EQ(build_scene(read_scene_file(dir / "q.toml")).scene.particles.mass[0], 8000.0 * v);
  // An unknown name is an error naming the file, line and column.
  write_text_file(dir / "p.csv", "x,y,z,diameter,material\n0,0,0,0.002,lead\n");
  const Result r = sh(dem_app() + " check " + (dir / "s.toml").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "p.csv:2: column \"material\": no [[material]] is named \"lead\"")) << r.output;
}

// Item 12: nu = -0.99, beta = 10 and a short rest length were accepted by
// "auto" and diverged; the step now follows every bond's own stiffness.
TEST(SceneLimits, BdemAutomaticStepFollowsEveryBondsStiffness) {
  const fs::path dir = scratch("bdem_auto");
  const std::string cantilever =
      replace(dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/scenes/cantilever.toml"), "end_time = 5.0",
              "end_time = 0.005");
  const auto critical = [&](const std::string& text) {
    write_text_file(dir / "c.toml", text);
    const Result r = sh(dem_app() + " check " + (dir / "c.toml").string());
    EXPECT_EQ(r.status, 0) << r.output;
    const std::size_t at = r.output.find("critical time step estimate (engine/time_step.hpp): ");
    EXPECT_NE(at, std::string::npos) << r.output;
    const std::string label = "critical time step estimate (engine/time_step.hpp): ";
    return std::make_pair(at == std::string::npos ? 0.0 : std::stod(r.output.substr(at + label.size())), r.output);
  };
  const double nominal = critical(cantilever).first;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\nbeta = 1.0", "\nbeta = 10.0"},
                                 {"\nnu = 0.3", "\nnu = -0.99"}}) {
    const std::string text = replace(cantilever, from, to);
    const auto [h, out] = critical(text);
    EXPECT_LT(h, 0.5 * nominal) << to << out;
    EXPECT_TRUE(contains(out, "bdem_bonds_time_step")) << out;
    // The automatic step runs clean.
    const Result r = sh(dem_app() + " run " + (dir / "c.toml").string() + " --quiet --overwrite --output-dir " +
                        (dir / "out").string());
    EXPECT_EQ(r.status, 0) << to << r.output;
    EXPECT_FALSE(contains(r.output, "warning")) << to << r.output;
  }
}

// Item 13: each of these passed `dem check` and gave NaN at step 0 or 1.
TEST(SceneLimits, ValuesThatOverflowAtTheFirstStepAreRefusedNamingTheKey) {
  const fs::path dir = scratch("overflow");
  const std::string cantilever = dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/scenes/cantilever.toml");
  write_text_file(dir / "grains.csv", kGrains);
  const std::pair<std::string, std::string> cases[] = {
      {replace(cantilever, "beta = 1.0", "beta = 1e200"), "beta = 1e+200"},
      {replace(cantilever, "force = [0.0, 0.0, -1e-4]", "force = [0.0, 0.0, -1e300]"), "[[group]] \"tip\" force"},
      {replace(cantilever, "force = [0.0, 0.0, -1e-4]", "motion = \"velocity\"\nvelocity = [0.0, 0.0, 1e200]"),
       "[[group]] \"tip\" velocity"},
      {replace(grain_scene("1e-6"), "mu_r = 0.1", "mu_r = 1e300"), "mu_r = 1e+300"},
  };
  for (const auto& [text, key] : cases) {
    write_text_file(dir / "s.toml", text);
    for (const std::string& cmd :
         {std::string("check "), "run --quiet --overwrite --output-dir " + (dir / "out").string() + " "}) {
      const Result r = sh(dem_app() + " " + cmd + (dir / "s.toml").string());
      EXPECT_EQ(r.status, 1) << key << r.output;
      EXPECT_TRUE(contains(r.output, key)) << key << r.output;
    }
  }
}

// Item 14: "two loads on particle id 5" named neither the groups nor the file.
TEST(SceneLimits, TwoLoadsOnAParticleNameBothGroups) {
  const fs::path dir = scratch("loads");
  const std::string cantilever = dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/scenes/cantilever.toml");
  write_text_file(dir / "c.toml", cantilever + "\n[[group]]\nname = \"wind\"\nids = [30, 40]\nforce = [0.0, 1e-5, 0.0]\n");
  const Result r = sh(dem_app() + " check " + (dir / "c.toml").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "[[group]] \"wind\" force: particle 40 is already loaded by [[group]] \"tip\" (")) << r.output;
  EXPECT_TRUE(contains(r.output, "c.toml:")) << r.output;
}
