// Bad input and careless use: nothing crashes, nothing is
// silently wrong, nothing is lost. Each test is one way in which a scene
// file, a CSV table or the command line used to crash, be accepted by
// `dem check` and then refused by `dem run`, or run with something wrong:
//  - memory: a scene too large for the memory is refused by its estimate
//    before it is built, and the estimate is close to the run's peak;
//  - a CSV table with a header and no rows;
//  - the critical time step counts the shear and wall stiffnesses;
//  - check refuses what run refuses (values near the double range);
//  - numeric command-line options are checked, bad input is exit 1;
//  - coincident particles, a huge gap, repeated bond pairs, a non-finite
//    mass, directories and devices given as files, the documented example
//    errors.
// Most tests go through the programs as a user runs them (popen).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "app_support.hpp"
#include "engine/time_step.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {


using Result = dem::testing::CommandResult;
Result sh(const std::string& command) { return dem::testing::run_command(command); }

std::string dem_app() { return dem::testing::app_path("dem"); }
std::string torus_app() { return dem::testing::app_path("dem_torus"); }

/// A shell prefix that caps the virtual memory of what follows at 6 GiB, so
/// that a program that does not check its memory fails fast instead of
/// taking the machine's.
const char* kMemoryCap = "ulimit -v 6291456; ";

fs::path folder(const std::string& name) { return dem::testing::fresh_folder("bad_input", name); }

fs::path write(const fs::path& p, const std::string& text) { return dem::testing::write_text_file(p, text); }

std::string read(const fs::path& p) { return dem::testing::read_file_text(p); }

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return text;
  return text.replace(at, from.size(), to);
}

/// The first line starting with "error: ", or "".
std::string error_line(const std::string& output) {
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("error: ", 0) == 0) return line;
  return "";
}

/// A size printed as "N KiB|MiB|GiB" after `label`, in MiB; NaN if absent.
double mib_after(const std::string& output, const std::string& label) {
  const std::regex re(label + R"(\s*([0-9.eE+]+) (KiB|MiB|GiB))");
  std::smatch m;
  if (!std::regex_search(output, m, re)) return NAN;
  const double v = std::stod(m[1]);
  return m[2] == "KiB" ? v / 1024 : m[2] == "GiB" ? v * 1024 : v;
}

const std::string kRing = R"([run]
time_step = 1e-3
steps = 200

[[particles]]
source = "ring_torus"
count = 20
speed = 1.0
gap = 0.1

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

std::string scene_path(const std::string& name) { return std::string(DEM_SOURCE_DIR) + "/scenes/" + name; }

}  // namespace

// ------------------------------------------------------------------ memory

// The estimate dem check prints is within 20% of the peak resident memory
// of dem run (VTK frames and the checkpoint included) on a scene of about
// 10^5 particles.
TEST(BadInputMemory, EstimateIsWithinTwentyPercentOfThePeak) {
  const fs::path dir = folder("estimate");
  std::string scene = read(scene_path("solid_torus.toml"));
  scene = replace(scene, "particle_diameter = 1e-3", "target_particles = 100000");
  const fs::path file = write(dir / "torus.toml", scene);
  const Result check = sh(dem_app() + " check " + file.string());
  ASSERT_EQ(check.status, 0) << check.output;
  const Result run =
      sh(dem_app() + " run " + file.string() + " --quiet --steps 10 --output-dir " + (dir / "out").string());
  ASSERT_EQ(run.status, 0) << run.output;
  const double estimate = mib_after(check.output, "memory estimate:");
  const double peak = mib_after(run.output, "peak memory:");
  ASSERT_TRUE(std::isfinite(estimate)) << check.output;
  ASSERT_TRUE(std::isfinite(peak)) << run.output;
  EXPECT_LT(std::abs(estimate - peak), 0.2 * peak) << "estimate " << estimate << " MiB, peak " << peak << " MiB";
}

// A solid torus of 1.4e8 particles: refused at once by check and run, with
// the estimate, the limit and the key to change (it used to take all the
// memory and be killed).
TEST(BadInputMemory, SceneLargerThanTheMemoryIsRefusedBeforeItIsBuilt) {
  const fs::path dir = folder("huge");
  const fs::path file = write(dir / "huge.toml", replace(read(scene_path("solid_torus.toml")),
                                                         "particle_diameter = 1e-3", "particle_diameter = 1e-4"));
  for (const std::string& command :
       {std::string("check "), "run --quiet --output-dir " + (dir / "out").string() + " "}) {
    const Result r = sh(kMemoryCap + dem_app() + " " + command + file.string());
    const std::string e = error_line(r.output);
    EXPECT_EQ(r.status, 1) << command << r.output;
    EXPECT_NE(e.find("huge.toml:26:1: [[particles]] particle_diameter: the scene needs about"), std::string::npos) << e;
    EXPECT_NE(e.find("GiB of memory"), std::string::npos) << e;
    EXPECT_NE(e.find("allowed (MemAvailable in /proc/meminfo"), std::string::npos) << e;
    EXPECT_NE(e.find("use a larger particle_diameter"), std::string::npos) << e;
  }
  EXPECT_FALSE(fs::exists(dir / "out" / "energy.csv"));
}

// dem_torus holds its tori to the available memory the same way.
TEST(BadInputMemory, DemTorusRefusesATorusLargerThanTheMemory) {
  const fs::path dir = folder("torus_huge");
  for (const std::string args : {"--solid --particle-diameter 1e-4", "--particles 1000000000"}) {
    const Result r = sh(kMemoryCap + torus_app() + " --quiet --steps 1 " + args + " --output-dir " + (dir / "out").string());
    EXPECT_EQ(r.status, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("error: the scene needs about"), std::string::npos) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(args.find("diameter") != std::string::npos ? "use a larger --particle-diameter"
                                                                      : "use a smaller --particles"),
              std::string::npos)
        << r.output;
  }
}

// --max-memory sets the limit (bytes or K, M, G, T); the shipped solid
// torus does not fit in 64 MiB.
TEST(BadInputMemory, MaxMemoryOptionSetsTheLimit) {
  const std::string scene = scene_path("solid_torus.toml");
  const Result small = sh(dem_app() + " check " + scene + " --max-memory 64M");
  EXPECT_EQ(small.status, 1) << small.output;
  EXPECT_NE(small.output.find("more than the 64 MiB allowed (--max-memory 64M"), std::string::npos) << small.output;
  EXPECT_NE(small.output.find("[[particles]] particle_diameter"), std::string::npos) << small.output;
  const Result enough = sh(dem_app() + " check " + scene + " --max-memory 2G");
  EXPECT_EQ(enough.status, 0) << enough.output;
  EXPECT_NE(enough.output.find("limit 2 GiB (--max-memory 2G)"), std::string::npos) << enough.output;
  const Result bad = sh(dem_app() + " check " + scene + " --max-memory 12X");
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("--max-memory"), std::string::npos) << bad.output;
}

// dem restart holds itself to --max-memory (else MemAvailable) before it
// touches the output folder, with the estimate it prints; its estimate is
// within 20% of its peak.
TEST(BadInputMemory, RestartIsHeldToTheMemoryLimit) {
  const fs::path dir = folder("restart_memory");
  const fs::path file = write(dir / "torus.toml", replace(read(scene_path("solid_torus.toml")),
                                                          "particle_diameter = 1e-3", "target_particles = 100000"));
  const fs::path out = dir / "out";
  const Result run = sh(dem_app() + " run " + file.string() + " --quiet --steps 4 --output-dir " + out.string());
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string energy = read(out / "energy.csv"), checkpoint = read(out / "checkpoint.bin");
  const std::string restart = dem_app() + " restart " + (out / "checkpoint.bin").string() + " --quiet --steps 8";
  const Result small = sh(restart + " --max-memory 64M");
  EXPECT_EQ(small.status, 1) << small.output;
  const std::string e = error_line(small.output);
  EXPECT_NE(e.find("error: the restart needs about"), std::string::npos) << small.output;
  EXPECT_NE(e.find("MiB, over 64 MiB (--max-memory 64M)"), std::string::npos) << small.output;
  EXPECT_EQ(read(out / "energy.csv"), energy);
  EXPECT_EQ(read(out / "checkpoint.bin"), checkpoint);
  const Result enough = sh(restart + " --max-memory 4G");
  ASSERT_EQ(enough.status, 0) << enough.output;
  EXPECT_NE(enough.output.find("at the peak of the restart"), std::string::npos) << enough.output;
  EXPECT_NE(enough.output.find("limit 4 GiB (--max-memory 4G)"), std::string::npos) << enough.output;
  const double estimate = mib_after(enough.output, "memory estimate:");
  const double peak = mib_after(enough.output, "peak memory:");
  ASSERT_TRUE(std::isfinite(estimate)) << enough.output;
  ASSERT_TRUE(std::isfinite(peak)) << enough.output;
  EXPECT_LT(std::abs(estimate - peak), 0.2 * peak) << "estimate " << estimate << " MiB, peak " << peak << " MiB";
}

// Bonds between every pair closer than a huge distance: 2e9 pairs of 64,000
// particles. Counted on a cell grid up to what the limit has room for, and
// refused in a second (they used to grow without bound).
TEST(BadInputMemory, BondsByAHugeDistanceAreCountedAndRefused) {
  const fs::path dir = folder("distance");
  const fs::path file = write(dir / "distance.toml", R"([run]
time_step = 1e-3
steps = 10
[[particles]]
source = "box_lattice"
per_side = 40
[bonds]
pairs = "distance"
distance = 1e6
bending = 1.0
axial = 1.0
shear = 1.0
[contact]
stiffness = 1050.0
)");
  for (const std::string& command :
       {std::string("check "), "run --quiet --output-dir " + (dir / "out").string() + " "}) {
    const Result r =
        sh(std::string("timeout 120 sh -c '") + kMemoryCap + dem_app() + " " + command + file.string() + "'");
    EXPECT_EQ(r.status, 1) << r.output;
    const std::string e = error_line(r.output);
    EXPECT_NE(e.find("distance.toml:7:1: [bonds] distance: counting stopped at"), std::string::npos) << e;
    EXPECT_NE(e.find("pairs closer than 1e+06"), std::string::npos) << e;
    EXPECT_NE(e.find("use a smaller distance"), std::string::npos) << e;
  }
}

// ---------------------------------------------------------- empty tables

TEST(BadInputCsv, ParticleTableWithAHeaderAndNoRowsIsAnError) {
  const fs::path dir = folder("empty_csv");
  write(dir / "grains.csv", "x,y,z,diameter\n# no particles yet\n\n   \n");
  const fs::path file = write(dir / "s.toml", R"([run]
time_step = 1e-3
steps = 10
[material]
density = 1000.0
[[particles]]
source = "csv"
file = "grains.csv"
)");
  for (const std::string& command :
       {std::string("check "), "run --quiet --output-dir " + (dir / "out").string() + " "}) {
    const Result r = sh(dem_app() + " " + command + file.string());
    EXPECT_EQ(r.status, 1) << r.output;  // not a crash
    EXPECT_NE(error_line(r.output).find("s.toml:6:1: [[particles]] file: " + (dir / "grains.csv").string() +
                                        ": no particle rows"),
              std::string::npos)
        << r.output;
  }
}

TEST(BadInputCsv, BondTableWithNoRowsRepeatedAndReversedPairsAreErrors) {
  const fs::path dir = folder("bond_csv");
  write(dir / "grains.csv", "x,y,z,diameter\n0,0,0,1\n1,0,0,1\n2,0,0,1\n");
  const std::string scene = R"([run]
time_step = 1e-3
steps = 10
[material]
density = 1000.0
[[particles]]
source = "csv"
file = "grains.csv"
[bonds]
pairs = "csv"
file = "pairs.csv"
bending = 1.0
axial = 1.0
shear = 1.0
[contact]
stiffness = 10.0
)";
  const fs::path file = write(dir / "s.toml", scene);
  const std::string pairs = (dir / "pairs.csv").string();
  struct Case {
    std::string csv, expect;
  };
  for (const Case& c :
       {Case{"i,j\n# none\n", pairs + ": no bond rows"},
        Case{"i,j\n0,1\n1,2\n0,1\n", pairs + ":4: the pair 0,1 repeats line 2 (0,1): list each bonded pair once"},
        Case{"i,j\n0,1\n\n2,1\n1,2\n", pairs + ":5: the pair 1,2 repeats line 4 (2,1), reversed"}}) {
    write(dir / "pairs.csv", c.csv);
    const Result r = sh(dem_app() + " check " + file.string());
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(error_line(r.output).find(c.expect), std::string::npos) << c.csv << "\n" << r.output;
  }
  write(dir / "pairs.csv", "i,j\n0,1\n1,2\n");
  const Result ok = sh(dem_app() + " check " + file.string());
  EXPECT_EQ(ok.status, 0) << ok.output;
}

// ------------------------------------------------------ critical time step

namespace {

/// h_crit of a ring of n particles (mass m = J = 1) with bond stiffnesses
/// km, ka, ks, contact kpp and a wall kpw, by the formula of
/// engine/time_step.hpp (`full`) or by docs/model.md §7 as it was
/// (axial bonds and contact, bending only).
double ring_critical_step(int n, double km, double ka, double ks, double kpp, double kpw, bool full) {
  const double d = 3.0 * std::sin(M_PI / n), r = d / 2;  // D_p of a ring of diameter 3; r0 = D_p
  const double contact = 1.5 * kpp / (d * d) * 0.1, wall = 1.5 * kpw / (r * r) * 0.1;
  const double k = full ? 2 * (ka + 9.0 / 8.0 * ks) / (d * d) + contact + wall : 2 * ka / (d * d) + contact;
  const double kr = full ? 2 * (km + 9.0 / 16.0 * ks) : 2 * km;
  return std::min(std::sqrt(1.0 / k), std::sqrt(1.0 / kr));
}

/// Runs `steps` steps; returns the largest |E - E_0|/E_0 (infinity if a step failed).
double energy_drift(Simulation& sim, int steps) {
  const double e0 = sim.energy_report().total();
  double worst = 0.0;
  try {
    for (int k = 0; k < steps; ++k) {
      sim.step();
      const double e = sim.energy_report().total();
      if (!std::isfinite(e)) return INFINITY;
      worst = std::max(worst, std::abs(e - e0) / std::abs(e0));
    }
  } catch (const std::exception&) {
    return INFINITY;
  }
  return worst;
}

}  // namespace

// K^s = 1e8 (the shear term's tangent stiffness reaches 9/8 K^s/r0^2): the
// estimate is 0.0018 of docs/model.md §7's, and a run at 0.9 of it hits
// the wall at 10 and stays bounded for 3,000 steps (at 0.9 of the old
// estimate it diverges at once).
TEST(BadInputTimeStep, ShearStiffnessSetsTheCriticalStep) {
  std::string text = replace(kRing, "shear = 200.0", "shear = 1e8");
  text = replace(replace(text, "time_step = 1e-3", "time_step = \"auto\"\ntime_step_fraction = 0.9"), "steps = 200",
                 "steps = 3000");
  text = replace(replace(text, "speed = 1.0", "speed = 10.0"), "gap = 0.1", "gap = 0.0");
  BuiltScene built = build_scene(parse_scene_text(text, "shear.toml", "."));
  const double h_new = ring_critical_step(20, 10, 200, 1e8, 2100, 2100, true);
  const double h_old = ring_critical_step(20, 10, 200, 1e8, 2100, 2100, false);
  EXPECT_NEAR(built.critical_time_step, h_new, 1e-12 * h_new);
  EXPECT_NEAR(built.critical_time_step / h_old, 0.00179, 0.00001);  // sqrt(k_old / k_new)
  EXPECT_EQ(built.critical.term, "bond shear");
  EXPECT_FALSE(built.critical.rotation);
  Simulation sim = make_simulation(std::move(built));
  EXPECT_LT(energy_drift(sim, 3000), 1e-3);
}

// A wall of K^pw = 1e9 sets the step (at 1% of the radius, like contact).
TEST(BadInputTimeStep, WallStiffnessSetsTheCriticalStep) {
  std::string text = replace(kRing, "normal = [1, 0, 0]\nstiffness = 2100.0", "normal = [1, 0, 0]\nstiffness = 1e9");
  text = replace(replace(text, "time_step = 1e-3", "time_step = \"auto\"\ntime_step_fraction = 0.9"), "steps = 200",
                 "steps = 3000");
  text = replace(replace(text, "speed = 1.0", "speed = 10.0"), "gap = 0.1", "gap = 0.0");
  BuiltScene built = build_scene(parse_scene_text(text, "wall.toml", "."));
  const double h_new = ring_critical_step(20, 10, 200, 200, 2100, 1e9, true);
  const double h_old = ring_critical_step(20, 10, 200, 200, 2100, 1e9, false);
  EXPECT_NEAR(built.critical_time_step, h_new, 1e-12 * h_new);
  EXPECT_NEAR(built.critical_time_step / h_old, 0.00109, 0.00001);
  EXPECT_EQ(built.critical.term, "wall");
  Simulation sim = make_simulation(std::move(built));
  EXPECT_LT(energy_drift(sim, 3000), 1e-2);
}

// dem check says what sets the step, and refuses a step over it.
TEST(BadInputTimeStep, CheckNamesTheStiffnessThatSetsTheStep) {
  const Result r = sh(dem_app() + " check " + scene_path("ring_torus.toml"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("critical time step estimate (engine/time_step.hpp): 0.00239174, set by the wall stiffness "
                          "9.083e+04 of particle"),
            std::string::npos)
      << r.output;
  const fs::path dir = folder("step");
  const fs::path file =
      write(dir / "s.toml", replace(read(scene_path("ring_torus.toml")), "time_step = 1e-3", "time_step = 4.4e-3"));
  const Result over = sh(dem_app() + " check " + file.string());
  EXPECT_EQ(over.status, 1) << over.output;
  EXPECT_NE(over.output.find("[run] time_step = 0.0044 is over the stability limit"), std::string::npos) << over.output;
  EXPECT_NE(over.output.find("set by the wall stiffness"), std::string::npos) << over.output;
}

// ------------------------------------------- check refuses what run refuses

namespace {

/// check and run (10 steps) of `text` give the same error line, which holds `expect`.
void expect_both_refuse(const std::string& name, const std::string& text, const std::string& expect) {
  const fs::path dir = folder("both_" + name);
  const fs::path file = write(dir / (name + ".toml"), text);
  const Result check = sh(dem_app() + " check " + file.string());
  const Result run =
      sh(dem_app() + " run " + file.string() + " --quiet --steps 10 --output-dir " + (dir / "out").string());
  EXPECT_EQ(check.status, 1) << name << ": " << check.output;
  EXPECT_EQ(run.status, 1) << name << ": " << run.output;
  EXPECT_EQ(error_line(check.output), error_line(run.output)) << name;
  EXPECT_NE(error_line(check.output).find(expect), std::string::npos) << name << ": " << check.output;
}

}  // namespace

TEST(BadInputCheckAndRun, ValuesNearTheDoubleRangeAreRefusedByBoth) {
  expect_both_refuse(
      "skin", replace(kRing, "stiffness = 2100.0\n\n[[wall]]", "stiffness = 2100.0\nskin_fraction = 1e308\n\n[[wall]]"),
      "[contact] skin_fraction: the skin 4.69303e+307 is over 1e100");
  expect_both_refuse("mass", replace(kRing, "count = 20", "count = 20\nmass = 1e308"),
                     "[[particles]] mass, speed: the translational kinetic energy sum m|v|^2/2 overflows at the "
                     "start: particle 0 (particle 0 of the [[particles]] table at");
  expect_both_refuse("torus", replace(kRing, "count = 20", "count = 20\ntorus_diameter = 1e308"),
                     "diameter 1.56434e+307 is over 1e100");
  expect_both_refuse("shear", replace(kRing, "shear = 200.0", "shear = 1e308"),
                     "[bonds] shear: the bond shear stiffness of particle");
  expect_both_refuse("gap", replace(kRing, "gap = 0.1", "gap = 1e308"),
                     "[[particles]] gap, torus_diameter: particle 0 (particle 0 of the [[particles]] table at");
}

// Moving walls (docs/model.md §11.8): bad motion keys, refused by both
// naming the key.
TEST(BadInputCheckAndRun, BadWallMotionKeysAreRefusedByBoth) {
  const std::string wall = "normal = [1, 0, 0]";
  expect_both_refuse("servo_no_area", replace(kRing, wall, wall + "\nservo_stress = 1e4"),
                     "servo_area: is required with servo_stress");
  expect_both_refuse("velocity_and_servo",
                     replace(kRing, wall, wall + "\nvelocity = [1.0, 0.0, 0.0]\nservo_stress = 1e4\nservo_area = 1.0\n"
                                                 "servo_gain = 1e-3\nservo_max_speed = 1.0"),
                     "servo_stress: does not go with velocity");
  expect_both_refuse("negative_stress",
                     replace(kRing, wall, wall + "\nservo_stress = -1.0\nservo_area = 1.0\nservo_gain = 1e-3\n"
                                                 "servo_max_speed = 1.0"),
                     "servo_stress: expected a finite number >= 0");
  expect_both_refuse("gain_alone", replace(kRing, wall, wall + "\nservo_gain = 1e-3"),
                     "servo_gain: only applies with servo_stress");
}

// A periodic [domain] (docs/model.md §20): a cell narrower than two
// interaction ranges, a bond longer than half the cell, particles outside it.
TEST(BadInputCheckAndRun, PeriodicDomainIsRefusedByBoth) {
  const std::string shear = read(scene_path("periodic_shear.toml"));
  const std::string upper = "upper = [0.011313708498984761, 0.011313708498984761, 0.011313708498984761]";
  expect_both_refuse("narrow",
                     replace(replace(shear, "cells = [4, 4, 4]", "cells = [4, 4, 1]"), upper,
                             "upper = [0.011313708498984761, 0.011313708498984761, 0.0028284271247461901]"),
                     "[domain] periodic: the cell is 0.00282843 wide along z, less than two interaction ranges");
  expect_both_refuse("long_bond", replace(shear, "distance = 2.2e-3", "distance = 6e-3"),
                     "[bonds] distance: 0.006 is not shorter than half the periodic cell");
  expect_both_refuse("outside", replace(shear, "lower = [0.0, 0.0, 0.0]", "lower = [0.001, 0.0, 0.0]"),
                     "[domain] lower, upper: particle 0 (");
  expect_both_refuse("upper", replace(shear, upper, "upper = [0.0113, 0.0, 0.0113]"),
                     "[domain] upper: must exceed lower on every axis");
}

// A packing (docs/model.md §21, issue 27): the bad tables and values the
// issue lists, refused by both naming the key.
TEST(BadInputCheckAndRun, BadPackingKeysAreRefusedByBoth) {
  const std::string scene = R"([run]
time_step = "auto"
steps = 10
[[material]]
name = "grain"
density = 2650.0
E = 5e7
[contact]
law = "penalty"
[[particles]]
source = "packing"
material = "grain"
region = "box"
lower = [0.0, 0.0, 0.0]
upper = [0.02, 0.02, 0.02]
size_distribution = "sieve"
sieve_sizes = [1e-3, 2e-3, 3e-3]
sieve_passing = [0, 40, 100]
solid_fraction = 0.5
seed = 1
)";
  expect_both_refuse("not_100", replace(scene, "[0, 40, 100]", "[0, 40, 90]"), "sieve_passing: must rise to 100");
  expect_both_refuse("not_monotone", replace(scene, "[0, 40, 100]", "[0, 60, 50]"), "sieve_passing: must not decrease");
  expect_both_refuse("size", replace(scene, "[1e-3, 2e-3, 3e-3]", "[0, 2e-3, 3e-3]"),
                     "sieve_sizes: sizes must be finite and > 0");
  expect_both_refuse("fraction", replace(scene, "solid_fraction = 0.5", "solid_fraction = 0.8"),
                     "solid_fraction: expected a number in (0, 0.74]");
  expect_both_refuse("no_interior", replace(scene, "upper = [0.02, 0.02, 0.02]", "upper = [0.02, 0.0, 0.02]"),
                     "upper: must be above lower on every axis");
  expect_both_refuse("seed", replace(scene, "seed = 1", "seed = 1.5"), "seed: expected a whole number >= 0");
  expect_both_refuse("mesh", replace(scene, "region = \"box\"", "region = \"mesh\""),
                     "file: is required: a closed STL or OBJ surface");
  // 0.7 of a small walled box: below 0.74, but more than the region holds.
  expect_both_refuse("cannot_hold",
                     replace(replace(scene, "solid_fraction = 0.5", "solid_fraction = 0.7"),
                             "upper = [0.02, 0.02, 0.02]", "upper = [0.008, 0.008, 0.008]"),
                     "solid_fraction: the relaxation left overlaps of");
}

// A normal of huge components is a direction like any other: both accept it.
TEST(BadInputCheckAndRun, HugeWallNormalIsNormalisedWithoutOverflow) {
  const fs::path dir = folder("normal");
  const fs::path file =
      write(dir / "n.toml", replace(replace(kRing, "normal = [1, 0, 0]", "normal = [1e308, 1e308, 0]"),
                                    "point = [0, 0, 0]", "point = [-10, -10, 0]"));
  const Result check = sh(dem_app() + " check " + file.string());
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("normal (0.707107, 0.707107, 0)"), std::string::npos) << check.output;
  const Result run =
      sh(dem_app() + " run " + file.string() + " --quiet --steps 10 --output-dir " + (dir / "out").string());
  EXPECT_EQ(run.status, 0) << run.output;
}

// ------------------------------------------------------------ command line

TEST(BadInputCommandLine, EveryBadOptionIsExitOneWithTheOptionNamed) {
  const fs::path dir = folder("cli");
  const std::string scene = scene_path("ring_torus.toml");
  const std::string out = " --output-dir " + (dir / "out").string();
  struct Case {
    std::string args, expect;
  };
  for (const Case& c :
       {Case{"run " + scene + " --threads -1" + out, "--threads: the thread count must be a whole number"},
        Case{"run " + scene + " --threads abc" + out, "--threads"},
        Case{"run " + scene + " --threads 1e9" + out, "--threads"}, Case{"", "A subcommand is required"},
        Case{"run " + scene + " --t-end nan" + out, "--t-end: the end time must be a finite number > 0, got 'nan'"},
        Case{"run " + scene + " --t-end inf" + out, "--t-end"}, Case{"run " + scene + " --t-end -1" + out, "--t-end"},
        Case{"run " + scene + " --steps -2" + out, "--steps"}, Case{"run " + scene + " --steps 1.5" + out, "--steps"},
        Case{"run " + scene + " --no-such-option" + out, "no-such-option"},
        Case{"check " + scene + " --max-memory -5G", "--max-memory"},
        Case{"restart " + (dir / "none.bin").string() + " --threads -1", "--threads"}}) {
    const Result r = sh(dem_app() + " " + c.args);
    EXPECT_EQ(r.status, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.find("18446744073709551615"), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_EQ(sh(dem_app() + " --help").status, 0);
  EXPECT_EQ(sh(dem_app() + " run --help").status, 0);
}

TEST(BadInputCommandLine, DemTorusChecksEveryNumber) {
  const fs::path dir = folder("torus_cli");
  const std::string base = torus_app() + " --quiet --steps 5 --output-dir " + (dir / "out").string() + " ";
  struct Case {
    std::string args, option;
  };
  for (const Case& c : {Case{"--dt nan", "--dt"},
                        Case{"--dt inf", "--dt"},
                        Case{"--dt-fraction nan", "--dt-fraction"},
                        Case{"--t-end nan", "--t-end"},
                        Case{"--steps -3", "--steps"},
                        Case{"--particles -1", "--particles"},
                        Case{"--particles 1e3", "--particles"},
                        Case{"--tilt-deg inf", "--tilt-deg"},
                        Case{"--speed nan", "--speed"},
                        Case{"--spin 1,nan,0", "--spin"},
                        Case{"--km nan", "--km"},
                        Case{"--ka -1", "--ka"},
                        Case{"--ks inf", "--ks"},
                        Case{"--kpp nan", "--kpp"},
                        Case{"--kpw -2", "--kpw"},
                        Case{"--vtk-every -1", "--vtk-every"},
                        Case{"--energy-every 0", "--energy-every"},
                        Case{"--threads -1", "--threads"},
                        Case{"--checkpoint-every -1", "--checkpoint-every"},
                        Case{"--solid --gap nan", "--gap"},
                        Case{"--solid --density 0", "--density"},
                        Case{"--solid --major-diameter inf", "--major-diameter"},
                        Case{"--solid --target-particles -5", "--target-particles"},
                        Case{"--solid --particle-poisson nan", "--particle-poisson"},
                        Case{"--solid --binder-modulus -1", "--binder-modulus"},
                        Case{"--solid --bond-radius-ratio nan", "--bond-radius-ratio"},
                        Case{"--solid --tube-diameter abc", "--tube-diameter"},
                        Case{"--solid --particle-modulus 0", "--particle-modulus"}}) {
    const Result r = sh(base + c.args);
    EXPECT_EQ(r.status, 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.option), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.find("18446744073709551615"), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_EQ(sh(torus_app() + " --help").status, 0);
}

// ------------------------------------------------- silently accepted nonsense

TEST(BadInputNonsense, CoincidentParticlesAreRefusedWithTheirRows) {
  const fs::path dir = folder("coincident");
  write(dir / "grains.csv", "x,y,z,diameter\n0,0,0,1\n# a comment\n3,0,0,1\n0,0,0,0.5\n");
  const fs::path file = write(dir / "s.toml", R"([run]
time_step = 1e-3
steps = 10
[material]
density = 1000.0
[[particles]]
source = "csv"
file = "grains.csv"
[contact]
stiffness = 10.0
)");
  const Result r = sh(dem_app() + " check " + file.string());
  EXPECT_EQ(r.status, 1) << r.output;
  const std::string csv = (dir / "grains.csv").string();
  EXPECT_NE(error_line(r.output).find(csv + ":2 (particle 0) and " + csv + ":5 (particle 2) are at one place"),
            std::string::npos)
      << r.output;
}

TEST(BadInputNonsense, NonFiniteOrTinyMassIsPrintedAsItIs) {
  const fs::path dir = folder("mass");
  write(dir / "grains.csv", "x,y,z,diameter,mass\n0,0,0,1,1\n3,0,0,1,-1e-10\n");
  const fs::path file = write(dir / "s.toml", R"([run]
time_step = 1e-3
steps = 10
[[particles]]
source = "csv"
file = "grains.csv"
[contact]
stiffness = 10.0
)");
  const Result r = sh(dem_app() + " check " + file.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("particle 1: mass must be a finite positive number, got -1e-10"), std::string::npos)
      << r.output;
  ParticleStore s;
  ParticleSpec p;
  p.mass = NAN;
  try {
    s.add(p);
    ADD_FAILURE() << "a NaN mass was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("got nan"), std::string::npos) << e.what();
  }
}

TEST(BadInputNonsense, DirectoriesAndDevicesAreNotReportedAsMissing) {
  const fs::path dir = folder("not_files");
  fs::create_directories(dir / "scene.toml");
  const Result d = sh(dem_app() + " check " + (dir / "scene.toml").string());
  EXPECT_EQ(d.status, 1);
  EXPECT_NE(d.output.find((dir / "scene.toml").string() + ": is a directory"), std::string::npos) << d.output;
  const Result z = sh(dem_app() + " check /dev/zero");
  EXPECT_EQ(z.status, 1);
  EXPECT_NE(z.output.find("/dev/zero: is not a regular file"), std::string::npos) << z.output;
  const Result none = sh(dem_app() + " check " + (dir / "none.toml").string());
  EXPECT_NE(none.output.find("none.toml: no such file"), std::string::npos) << none.output;
  fs::create_directories(dir / "grains.csv");
  const std::string scene = R"([run]
time_step = 1e-3
steps = 10
[material]
density = 1000.0
[[particles]]
source = "csv"
file = "FILE"
)";
  const Result cd = sh(dem_app() + " check " + write(dir / "a.toml", replace(scene, "FILE", "grains.csv")).string());
  EXPECT_EQ(cd.status, 1);
  EXPECT_NE(cd.output.find((dir / "grains.csv").string() + ": is a directory"), std::string::npos) << cd.output;
  const Result cz = sh(dem_app() + " check " + write(dir / "b.toml", replace(scene, "FILE", "/dev/zero")).string());
  EXPECT_EQ(cz.status, 1);
  EXPECT_NE(cz.output.find("/dev/zero: is not a regular file"), std::string::npos) << cz.output;
}

// The example errors of docs/scene-format.md and README.md are exactly what
// dem prints for such files.
TEST(BadInputNonsense, DocumentedExampleErrorsAreWhatDemPrints) {
  const fs::path dir = folder("documented");
  fs::create_directories(dir / "scenes");
  // Line 3, column 13: the value of time_step.
  write(dir / "scenes" / "my.toml", "[run]\nsteps = 10\ntime_step = -0.001\n");
  write(dir / "my.toml", "[run]\nsteps = 10\ntime_step = -0.001\n");
  // Line 12, column 1: a misspelt key of [run].
  std::string misspelt = "[run]\ntime_step = 1e-3\n";
  for (int line = 3; line < 12; ++line) misspelt += "# line " + std::to_string(line) + "\n";
  write(dir / "scenes" / "typo.toml", misspelt + "end_tme = 35.0\n");
  const auto printed = [&](const std::string& scene, const std::string& real) {
    const Result r = sh("cd " + dir.string() + " && " + dem_app() + " check " + real);
    std::string line = error_line(r.output);
    // The documented file name stands for the one checked.
    const auto at = line.find(real);
    if (at != std::string::npos) line.replace(at, real.size(), scene);
    return line;
  };
  int examples = 0;
  std::istringstream doc(read(std::string(DEM_SOURCE_DIR) + "/docs/scene-format.md"));
  std::string line;
  while (std::getline(doc, line)) {
    const auto at = line.find("error: scenes/my.toml:");
    if (at == std::string::npos) continue;
    const std::string example = line.substr(at);
    ++examples;
    const bool typo = example.find("unknown key") != std::string::npos;
    EXPECT_EQ(printed("scenes/my.toml", typo ? "scenes/typo.toml" : "scenes/my.toml"), example);
  }
  EXPECT_EQ(examples, 2);
  // README.md: "e.g. `error: my.toml:3:13: ...`", wrapped over two lines.
  std::string readme = read(std::string(DEM_SOURCE_DIR) + "/README.md");
  const auto start = readme.find("`error: my.toml:");
  ASSERT_NE(start, std::string::npos);
  std::string example = readme.substr(start + 1, readme.find('`', start + 1) - start - 1);
  example = std::regex_replace(example, std::regex(R"(\s*\n\s*)"), " ");
  EXPECT_EQ(printed("my.toml", "my.toml"), example);
}
