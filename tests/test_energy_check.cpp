// The run's energy check (run/energy_check.hpp) and what was found
// wrong with the one before it:
//  - a run whose energy is zero restarts and runs on as it would have
//    (the reference is a flag in the checkpoint, not a zero scale);
//  - the scale does not depend on where the origin is, and is never zero
//    while anything can move;
//  - after a switch of integrators the explicit drift is measured from the
//    switch;
//  - implicit runs stop when E_balance rises; newton_tolerance is bounded;
//  - a diverged or non-finite state never replaces a good checkpoint.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>

#include "app_support.hpp"
#include "run/energy_check.hpp"
#include "run/run_loop.hpp"
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
std::string scenes() { return std::string(DEM_SOURCE_DIR) + "/scenes/"; }
fs::path scratch(const std::string& name) { return dem::testing::fresh_folder("energy", name); }

/// A report with kinetic energy `kin`, gravity's potential `grav` and a
/// field scale `field`.
EnergyReport report(double kin, double grav, double field = 0.0) {
  EnergyReport r;
  r.kinetic_translation = kin;
  r.gravity = grav;
  r.field_scale = field;
  return r;
}

EnergyCheck explicit_check(EnergyCheckState state = {}) {
  return EnergyCheck(state, EnergyLimits{}, false, "E_total", "try a smaller step");
}

/// 64 grains 2 mm across on a 4 x 4 x 4 grid 5 mm apart (none touching),
/// their centre of mass at (0, 0, z0), falling under gravity.
std::string falling_grains(double z0) {
  std::ostringstream csv;
  csv << "x,y,z,diameter,material\n";
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k)
        csv << (i - 1.5) * 0.005 << "," << (j - 1.5) * 0.005 << "," << std::setprecision(17) << z0 + (k - 1.5) * 0.005
            << std::setprecision(6) << ",0.002,glass\n";
  return csv.str();
}

const char* kFallingScene = R"([run]
time_step = 1e-6
steps = 400
[output]
energy_every = 20
[[material]]
name = "glass"
density = 2500.0
E = 1e8
nu = 0.3
[[particles]]
source = "csv"
file = "grains.csv"
material = "glass"
[contact]
law = "hertz-mindlin"
[gravity]
acceleration = [0.0, 0.0, -9.81]
)";

}  // namespace

// ---------------------------------------------------------------- the check itself

TEST(EnergyCheck, ScaleIsTheLargestEnergyInPlayAndTheFieldFloor) {
  EnergyCheck c = explicit_check();
  ASSERT_TRUE(c.start(report(0.0, 5.0, 2.0), 0));
  EXPECT_EQ(c.state().scale, 2.0);  // at rest: the work of the fields over a radius
  EXPECT_EQ(c.row(report(0.0, 5.0, 2.0), 0, 0.0), "");
  // Falling: kinetic energy 3 and gravity's work 3.
  EXPECT_EQ(c.row(report(3.0, 2.0, 2.0), 10, 1.0), "");
  EXPECT_EQ(c.state().scale, 6.0);
  EXPECT_EQ(c.largest_drift(), 0.0);
  // A second start keeps the reference.
  EXPECT_FALSE(c.start(report(9.0, 0.0), 20));
  EXPECT_EQ(c.state().initial_energy, 5.0);
}

// Before: the scale was |E_0| + |U_gravity(0)|, about 8e-22 for grains with
// their centre of mass at the origin, and the first row stopped the run.
TEST(EnergyCheck, ShiftingTheOriginChangesNothing) {
  for (const double shift : {0.0, 1e-3, 1e3}) {
    EnergyCheck c = explicit_check();
    c.start(report(0.0, 8e-22 + shift, 0.5), 0);
    EXPECT_EQ(c.row(report(0.25, 8e-22 + shift - 0.25, 0.5), 1, 0.1), "");
    // A drift of 0.1 of the scale 0.5 warns, whatever the origin.
    EXPECT_NE(c.row(report(0.30, 8e-22 + shift - 0.25, 0.5), 2, 0.2), "") << shift;
    EXPECT_NEAR(c.largest_drift(), 0.05 / 0.5, 1e-9) << shift;
  }
}

// Before: a zero scale turned the check off.
TEST(EnergyCheck, NothingMovingMayNotGainEnergy) {
  EnergyCheck c = explicit_check();
  c.start(report(0.0, 0.0, 0.0), 0);
  EXPECT_EQ(c.state().scale, 0.0);
  EXPECT_EQ(c.row(report(0.0, 0.0, 0.0), 5, 0.5), "");  // nothing moved: no drift
  EXPECT_THROW(c.verify(report(1e-300, 0.0, 0.0), 6, 0.6), EnergyCheckError);
}

TEST(EnergyCheck, DriftPastTheLimitStopsNamingStepTimeAndKey) {
  EnergyCheck c = explicit_check();
  c.start(report(1.0, 0.0), 0);
  try {
    // Energy created by an unstable step does not raise the scale: a drift
    // of 1.5 against a scale of 1.
    c.row(report(2.5, 0.0), 70, 0.7);
    FAIL() << "no stop";
  } catch (const EnergyCheckError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "at step 70 (t = 0.7)")) << m;
    EXPECT_TRUE(contains(m, "by 1.5 of the energy scale 1 ")) << m;
    EXPECT_TRUE(contains(m, "[run] max_energy_drift = 0.5")) << m;
    EXPECT_TRUE(contains(e.hint(), "time step")) << e.hint();
  }
}

TEST(EnergyCheck, VerifyChangesNothing) {
  EnergyCheck c = explicit_check();
  c.start(report(1.0, 0.0), 0);
  const EnergyCheckState before = c.state();
  c.verify(report(1.2, 0.0), 3, 0.3);
  EXPECT_EQ(c.state().scale, before.scale);
  EXPECT_EQ(c.state().highest, before.highest);
  EXPECT_THROW(c.verify(report(5.0, 0.0), 3, 0.3), EnergyCheckError);
  EXPECT_THROW(c.verify(report(std::nan(""), 0.0), 3, 0.3), EnergyCheckError);
}

TEST(EnergyCheck, ImplicitRunsMayDissipateButNotRise) {
  EnergyLimits limits;
  limits.implicit_rise = 0.01;
  EnergyCheck c({}, limits, true, "E_balance", "");
  c.start(report(1.0, 0.0), 0);
  EXPECT_EQ(c.row(report(0.5, 0.0), 1, 0.1), "");   // dissipated half: fine, no warning
  EXPECT_EQ(c.row(report(0.505, 0.0), 2, 0.2), "");  // below the largest earlier value
  try {
    c.row(report(1.05, 0.0), 3, 0.3);  // 0.05 above the largest, 1.0
    FAIL() << "no stop";
  } catch (const EnergyCheckError& e) {
    EXPECT_TRUE(contains(e.what(), "has risen above its largest earlier value 1")) << e.what();
    EXPECT_TRUE(contains(e.what(), "[run] implicit_energy_rise = 0.01")) << e.what();
    EXPECT_TRUE(contains(e.hint(), "newton_tolerance")) << e.hint();
  }
  EXPECT_THROW(EnergyCheck({}, EnergyLimits{0.5, 0.05, 0.0}, true, "E", ""), std::invalid_argument);
}

// A check continued from its state (a restart) judges exactly as the
// uninterrupted one.
TEST(EnergyCheck, ContinuesFromItsStateExactly) {
  EnergyCheck whole = explicit_check();
  whole.start(report(1.0, 0.0), 0);
  whole.row(report(1.3, 0.0), 1, 0.1);
  EnergyCheck restarted = explicit_check(whole.state());
  EXPECT_FALSE(restarted.start(report(7.0, 0.0), 1));
  for (EnergyCheck* c : {&whole, &restarted}) {
    c->row(report(1.1, 0.0), 2, 0.2);
    EXPECT_THROW(c->row(report(1.6, 0.0), 3, 0.3), EnergyCheckError);  // 0.6 of 1
  }
  EXPECT_EQ(whole.state().scale, restarted.state().scale);
}

// ---------------------------------------------------------------- runs

// Issue 22, item 3: with the centre of mass a hair (1e-18 m) above the
// origin, U_gravity(0) about 1e-20 J, the old scale |E_0| + |U_gravity(0)|
// stopped the run at step 40 with a drift of 0.75 (exit 2); 1 m higher it
// ran clean. Now both run clean with the same scale.
TEST(EnergyCheckRuns, FreeFallIsCleanWhereverTheOriginIs) {
  std::string summaries[2];
  for (int k = 0; k < 2; ++k) {
    const fs::path dir = scratch("fall_" + std::to_string(k));
    write_text_file(dir / "grains.csv", falling_grains(k == 0 ? 1e-18 : 1.0));
    write_text_file(dir / "fall.toml", kFallingScene);
    const Result r = sh(dem_app() + " run " + (dir / "fall.toml").string() + " --quiet --output-dir " +
                        (dir / "out").string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_FALSE(contains(r.output, "warning")) << r.output;
    const std::size_t at = r.output.find("energy scale S = ");
    ASSERT_NE(at, std::string::npos) << r.output;
    summaries[k] = r.output.substr(at, r.output.find(')', at) - at);
  }
  EXPECT_EQ(summaries[0], summaries[1]);
}

// Issue 22, item 1: the cantilever (E_0 about 1e-17) run to step 1000 and
// restarted to 20000 stopped at step 7000 with a drift of 0.566; the
// uninterrupted run did not. Now the restart writes the uninterrupted run's
// energy.csv byte for byte.
TEST(EnergyCheckRuns, ZeroEnergyRunRestartsAsItWouldHaveRun) {
  const fs::path dir = scratch("cantilever");
  const std::string scene = scenes() + "cantilever.toml";
  const Result whole = sh(dem_app() + " run " + scene + " --quiet --steps 20000 --output-dir " + (dir / "whole").string());
  ASSERT_EQ(whole.status, 0) << whole.output;
  const Result part = sh(dem_app() + " run " + scene + " --quiet --steps 1000 --output-dir " + (dir / "part").string());
  ASSERT_EQ(part.status, 0) << part.output;
  const Result rest = sh(dem_app() + " restart " + (dir / "part" / "checkpoint.bin").string() + " --quiet --steps 20000");
  ASSERT_EQ(rest.status, 0) << rest.output;
  EXPECT_EQ(dem::testing::read_file_text(dir / "whole" / "energy.csv"),
            dem::testing::read_file_text(dir / "part" / "energy.csv"));
  const CheckpointState a = read_checkpoint(dir / "whole" / "checkpoint.bin");
  const CheckpointState b = read_checkpoint(dir / "part" / "checkpoint.bin");
  EXPECT_EQ(a.energy_check.initial_energy, b.energy_check.initial_energy);
  EXPECT_EQ(a.energy_check.scale, b.energy_check.scale);
  EXPECT_GT(a.energy_check.scale, 0.0);  // the tip load's work over a radius at least
}

// Issue 22, item 5: explicit to step 400, implicit to 440, then explicit
// again to 500 stopped (exit 2): the implicit part's numerical dissipation
// was counted as drift. Now the explicit reference is taken at the switch,
// and the run says so.
TEST(EnergyCheckRuns, ExplicitAfterImplicitIsMeasuredFromTheSwitch) {
  const fs::path dir = scratch("switch");
  // The shipped plate drop, 8 x 8 x 2 cells instead of 28 x 28 x 2 (the
  // code before the fix stopped this one too, at step 480 with a drift of
  // 0.876).
  std::string plate = dem::testing::read_file_text(scenes() + "plate_drop.toml");
  const std::size_t cells = plate.find("cells = [28, 28, 2]");
  ASSERT_NE(cells, std::string::npos);
  plate.replace(cells, 19, "cells = [8, 8, 2]");
  write_text_file(dir / "plate.toml", plate);
  const fs::path ckpt = dir / "out" / "checkpoint.bin";
  Result r = sh(dem_app() + " run " + (dir / "plate.toml").string() + " --quiet --steps 400 --output-dir " +
                (dir / "out").string());
  ASSERT_EQ(r.status, 0) << r.output;
  r = sh(dem_app() + " restart " + ckpt.string() + " --quiet --integrator implicit --time-step 1e-4 --steps 440");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "energy check: its reference E_0 = ")) << r.output;
  r = sh(dem_app() + " restart " + ckpt.string() + " --quiet --integrator 25 --time-step 2.5e-7 --steps 500");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "is taken at step 440, where this run's integration starts")) << r.output;
  EXPECT_EQ(read_checkpoint(ckpt).energy_check.reference_step, 440u);
  // The limits can be given to a restart.
  r = sh(dem_app() + " restart " + ckpt.string() + " --quiet --steps 520 --max-energy-drift 1e-30");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "past the limit --max-energy-drift = 1e-30")) << r.output;
}

// Issue 22, item 6: newton_tolerance = 0.1 let E_balance rise from 0.0153 to
// 0.0696 J with exit 0; 1 or 1e300 took no Newton iteration at all.
TEST(EnergyCheckRuns, ImplicitRunsStopWhenEnergyRisesAndNewtonToleranceIsBounded) {
  const fs::path dir = scratch("implicit");
  const std::string base = dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/tests/scenes/plate_drop_implicit.toml");
  const auto with_run_keys = [&](const std::string& keys) {
    std::string text = base;
    const std::size_t at = text.find("[run]");
    text.insert(text.find('\n', at) + 1, keys);
    return text;
  };
  for (const std::string value : {"0.1", "1.0", "1e300"}) {
    write_text_file(dir / "loose.toml", with_run_keys("newton_tolerance = " + value + "\n"));
    const Result r = sh(dem_app() + " check " + (dir / "loose.toml").string());
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "[run] newton_tolerance: expected a number in (0, 0.001]")) << r.output;
  }
  // A rise past the limit stops the run (exit 2) naming step, time and rise.
  write_text_file(dir / "strict.toml", with_run_keys("implicit_energy_rise = 1e-300\n"));
  const Result r = sh(dem_app() + " run " + (dir / "strict.toml").string() + " --quiet --steps 24 --output-dir " +
                      (dir / "out").string());
  if (r.status == 2) {
    EXPECT_TRUE(contains(r.output, "has risen above its largest earlier value")) << r.output;
    EXPECT_TRUE(contains(r.output, "Lower [run] newton_tolerance")) << r.output;
    EXPECT_FALSE(contains(r.output, "time step is probably too large")) << r.output;
  } else {
    // Backward Euler never rose at all: every row at most the one before.
    EXPECT_EQ(r.status, 0) << r.output;
  }
  // The key belongs to implicit runs.
  write_text_file(dir / "explicit.toml", dem::testing::read_file_text(scenes() + "ring_torus.toml") + "");
  std::string ring = dem::testing::read_file_text(scenes() + "ring_torus.toml");
  ring.insert(ring.find('\n', ring.find("[run]")) + 1, "implicit_energy_rise = 0.1\n");
  write_text_file(dir / "explicit.toml", ring);
  const Result e = sh(dem_app() + " check " + (dir / "explicit.toml").string());
  EXPECT_EQ(e.status, 1) << e.output;
  EXPECT_TRUE(contains(e.output, "implicit_energy_rise: only applies with integrator = \"implicit\"")) << e.output;
}

// Issue 22, item 7: with a checkpoint every step, the checkpoint of a
// diverged step replaced the last good one. Now the run stops before
// writing it, and the checkpoint on disk restarts.
TEST(EnergyCheckRuns, DivergedStateNeverReplacesAGoodCheckpoint) {
  const fs::path dir = scratch("diverged");
  std::string ring = dem::testing::read_file_text(scenes() + "ring_torus.toml");
  // The paper's ring at a step that drifts, with a strict limit, energy rows
  // every 50 steps and a checkpoint every step.
  const auto set = [&](const std::string& key, const std::string& value) {
    const std::size_t at = ring.find("\n" + key + " ");
    ASSERT_NE(at, std::string::npos) << key;
    ring.replace(at + 1, ring.find('\n', at + 1) - at - 1, key + " = " + value);
  };
  set("time_step", "2.33e-3");
  set("energy_every", "50");
  set("checkpoint_every", "1");
  ring.insert(ring.find('\n', ring.find("[run]")) + 1, "max_energy_drift = 0.02\n");
  write_text_file(dir / "ring.toml", ring);
  const Result r = sh(dem_app() + " run " + (dir / "ring.toml").string() + " --quiet --output-dir " +
                      (dir / "out").string());
  ASSERT_EQ(r.status, 2) << r.output;
  const std::size_t at = r.output.find("failed at step ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::uint64_t failed = std::stoull(r.output.substr(at + 15));
  EXPECT_NE(failed % 50, 0u) << "stopped at a checkpoint, not at an energy row: " << r.output;
  const CheckpointState c = read_checkpoint(dir / "out" / "checkpoint.bin");
  EXPECT_EQ(c.step_count + 1, failed);
  const Result rest = sh(dem_app() + " restart " + (dir / "out" / "checkpoint.bin").string() + " --quiet --steps " +
                         std::to_string(failed - 1 + 1) + " --max-energy-drift 100");
  EXPECT_EQ(rest.status, 0) << rest.output;
}

// The writer refuses what the reader refuses, and keeps the file it had.
TEST(EnergyCheckRuns, WriterRefusesANonFiniteStateAndKeepsTheLastCheckpoint) {
  const fs::path dir = scratch("nonfinite");
  const Result r = sh(dem_app() + " run " + scenes() + "ring_torus.toml --quiet --steps 20 --output-dir " +
                      (dir / "out").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path path = dir / "out" / "checkpoint.bin";
  const std::string good = dem::testing::read_file_text(path);
  CheckpointState c = read_checkpoint(path);
  for (int defect = 0; defect < 3; ++defect) {
    CheckpointState bad = c;
    if (defect == 0) bad.ledger.contact = std::nan("");
    if (defect == 1) bad.particles.position[3].x() = INFINITY;
    if (defect == 2) bad.energy_check.scale = INFINITY;
    try {
      write_checkpoint(path, bad);
      FAIL() << "written: defect " << defect;
    } catch (const CheckpointError& e) {
      EXPECT_TRUE(contains(e.what(), "the last one written is kept")) << e.what();
    }
    EXPECT_EQ(dem::testing::read_file_text(path), good);
  }
}
