// The apps as a user runs them: bad input gives a clear error and a non-zero
// exit; a short torus run writes its files; energy.csv does not depend on the
// thread count.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app_support.hpp"
#include "io/checkpoint.hpp"

namespace fs = std::filesystem;

namespace {


using Result = dem::testing::CommandResult;
Result run(const std::string& command) { return dem::testing::run_command(command); }

std::string torus() { return std::string(DEM_BINARY_DIR) + "/apps/dem_torus"; }

fs::path scratch(const std::string& name) {
  // One folder per process: two test runs at once (two builds) never share it.
  const fs::path p = fs::temp_directory_path() / ("dem_test_apps_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

std::string read_file(const fs::path& p) { return dem::testing::read_file_text(p); }

}  // namespace

TEST(DemTorus, RejectsBadInputWithClearErrors) {
  const fs::path out = scratch("bad");
  const std::string base = torus() + " --quiet --steps 5 --output-dir " + out.string();
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : {Case{"--dt -1", "--dt"}, Case{"--dt 0", "--dt"},
                        Case{"--integrator 24", "unknown integrator '24'"},
                        Case{"--particles 2", "at least 3 particles"},
                        Case{"--kpp -5", "K^pp"}, Case{"--kpw -1", "K^pw"}, Case{"--energy-every 0", "--energy-every"},
                        Case{"--spin 1,2", "spin"}, Case{"--no-such-option", "no-such-option"},
                        Case{"--density 2", "--solid"},
                        Case{"--solid --particles 50", "--target-particles"},
                        Case{"--solid --particle-poisson 0.5", "Poisson"},
                        Case{"--solid --particle-diameter -1e-3", "particle diameter"},
                        Case{"--solid --target-particles 100 --particle-diameter 1e-3", "not both"},
                        Case{"--solid --dt-fraction 2", "--dt-fraction"}}) {
    const Result r = run(base + " " + c.args);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.status, -1) << c.args << ": crashed";
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(DemTorus, OutputFolderThatCannotBeCreatedIsAnError) {
  const fs::path file = scratch("file");
  std::ofstream(file) << "a regular file";
  const Result r = run(torus() + " --quiet --steps 5 --output-dir " + (file / "sub").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find((file / "sub").string()), std::string::npos) << r.output;
  fs::remove(file);
}

TEST(DemTorus, ShortRunWritesParaViewFilesAndEnergyTable) {
  const fs::path out = scratch("short");
  const Result r = run(torus() + " --quiet --steps 200 --vtk-every 50 --output-dir " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(out / "particles.pvd"));
  EXPECT_TRUE(fs::exists(out / "bonds.pvd"));
  EXPECT_TRUE(fs::exists(out / "particles_000004.vtp"));
  const std::string csv = read_file(out / "energy.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "t,E_kin_trans,E_kin_rot,U_bend,U_axial,U_shear,U_contact,U_wall,U_gravity,E_total,P_x,P_y,P_z,"
            "L_x,L_y,L_z,W_fracture,W_contact,W_filter,E_balance,n_broken,n_fragments,W_boundary");
  EXPECT_NE(r.output.find("particle-steps/s"), std::string::npos);
  EXPECT_NE(r.output.find("neighbour-list builds"), std::string::npos);
  fs::remove_all(out);
}

TEST(DemTorus, EnergyTableIsIdenticalOnOneAndTwoThreads) {
  std::string tables[2];
  for (int t = 1; t <= 2; ++t) {
    const fs::path out = scratch("threads" + std::to_string(t));
    // 4,000 particles so that every parallel loop and block sum is split.
    const Result r = run(torus() + " --quiet --particles 4000 --dt 1e-5 --steps 400 "
                         "--energy-every 10 --vtk-every 0 --threads " +
                         std::to_string(t) + " --output-dir " + out.string());
    ASSERT_EQ(r.status, 0) << r.output;
    tables[t - 1] = read_file(out / "energy.csv");
    fs::remove_all(out);
  }
  EXPECT_GT(tables[0].size(), 1000u);
  EXPECT_EQ(tables[0], tables[1]);
}

TEST(DemTorus, UnstableStepStopsWithErrorAndKeepsFiles) {
  const fs::path out = scratch("unstable");
  const Result r = run(torus() + " --quiet --dt 4e-3 --t-end 35 --output-dir " + out.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("failed at step"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("smaller --dt"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out / "energy.csv"));
  EXPECT_TRUE(fs::exists(out / "particles.pvd"));
  fs::remove_all(out);
}

// The solid torus (docs/model.md §7), small: files for ParaView, the time
// step as a stated fraction of the critical step, and a summary.
TEST(DemTorus, SolidTorusShortRun) {
  const fs::path out = scratch("solid");
  const Result r = run(torus() + " --solid --target-particles 2000 --steps 30 --vtk-every 10 "
                                 "--energy-every 10 --quiet --output-dir " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("0.1 of the critical step"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("particle-steps/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("peak memory"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out / "particles.pvd"));
  EXPECT_TRUE(fs::exists(out / "bonds_000003.vtp"));
  std::ifstream in(out / "energy.csv");
  std::string line;
  int rows = -1;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 4);  // t = 0 and steps 10, 20, 30
}

TEST(DemPendulum, BadOutputFolderIsAnError) {
  const fs::path file = scratch("pfile");
  std::ofstream(file) << "a regular file";
  const Result r = run(std::string(DEM_BINARY_DIR) + "/apps/dem_pendulum --output-dir " +
                       (file / "sub").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.status, -1);
  fs::remove(file);
}

namespace {
std::string dem_app() { return std::string(DEM_BINARY_DIR) + "/apps/dem"; }
}  // namespace

// dem check / run / restart as a user types them.
TEST(Dem, CheckRunAndRestartFromTheCommandLine) {
  const fs::path out = scratch("dem_run");
  const std::string scene = std::string(DEM_SOURCE_DIR) + "/scenes/ring_torus.toml";
  const Result check = run(dem_app() + " check " + scene);
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("particles: 80"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("critical time step estimate"), std::string::npos) << check.output;
  const Result first = run(dem_app() + " run " + scene + " --quiet --steps 300 --output-dir " + out.string());
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_TRUE(fs::exists(out / "checkpoint.bin"));
  EXPECT_TRUE(fs::exists(out / "particles.pvd"));
  const Result second = run(dem_app() + " restart " + (out / "checkpoint.bin").string() + " --quiet --steps 600");
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_NE(second.output.find("restart from"), std::string::npos) << second.output;
  const Result past = run(dem_app() + " restart " + (out / "checkpoint.bin").string() + " --steps 100");
  EXPECT_EQ(past.status, 1) << past.output;
  EXPECT_NE(past.output.find("give a later --t-end or --steps"), std::string::npos) << past.output;
}

TEST(Dem, RunsTheClumpScene) {
  const fs::path out = scratch("dem_clumps");
  const std::string scene = std::string(DEM_SOURCE_DIR) + "/scenes/clumps.toml";
  const Result r = run(dem_app() + " run " + scene + " --quiet --steps 500 --output-dir " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("2 clumps, integrated by the LGVI"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out / "particles.pvd"));
}

TEST(Dem, BadInputIsExitOneWithAClearError) {
  const fs::path dir = scratch("dem_bad");
  fs::create_directories(dir);
  std::ofstream(dir / "typo.toml") << "[run]\nsteps = 10\ntime_stpe = 1e-3\n";
  std::ofstream(dir / "garbage.bin") << "not a checkpoint at all, just some text";
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : {Case{"check " + (dir / "typo.toml").string(), "typo.toml:3:1: [run] time_stpe: unknown key"},
                        Case{"run " + (dir / "none.toml").string(), "none.toml: no such file"},
                        Case{"restart " + (dir / "garbage.bin").string(), "bad magic number"},
                        Case{"run", "scene is required"}}) {
    const Result r = run(dem_app() + " " + c.args);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.output.find(c.expect), std::string::npos) << c.args << ": " << r.output;
  }
}

TEST(DemDumbbells, ReproducesThePapersEnergyErrorAndWritesItsFiles) {
  const fs::path out = scratch("dumbbells");
  const Result r = run(std::string(DEM_BINARY_DIR) + "/apps/dem_dumbbells --output-dir " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("largest |E - E_0|: 2.696"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("E_0 = 0.4406874"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(out / "energy.csv").substr(0, 62),
            "t,E_kin_trans,E_kin_rot,U_gravity,E_total,P_x,P_y,P_z,L_x,L_y,");
  EXPECT_TRUE(fs::exists(out / "attitude.csv"));
  EXPECT_TRUE(fs::exists(out / "particles.pvd"));
  const Result bad = run(std::string(DEM_BINARY_DIR) + "/apps/dem_dumbbells --dt -1");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("--dt must be a finite positive time step"), std::string::npos) << bad.output;
}

TEST(DemTorus, WritesACheckpointThatDemRestartContinuesBitForBit) {
  const fs::path parts = scratch("torus_parts"), whole = scratch("torus_whole");
  const std::string opts = " --quiet --energy-every 7 --vtk-every 0 --output-dir ";
  const Result first = run(torus() + opts + parts.string() + " --steps 153");
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_TRUE(fs::exists(parts / "checkpoint.bin"));
  const Result second = run(dem_app() + " restart " + (parts / "checkpoint.bin").string() + " --quiet --steps 400");
  ASSERT_EQ(second.status, 0) << second.output;
  const Result straight = run(torus() + opts + whole.string() + " --steps 400");
  ASSERT_EQ(straight.status, 0) << straight.output;
  EXPECT_EQ(read_file(parts / "energy.csv"), read_file(whole / "energy.csv"));
  // The same state; the two runs differ only in their identities.
  dem::CheckpointState a = dem::read_checkpoint(parts / "checkpoint.bin");
  dem::CheckpointState b = dem::read_checkpoint(whole / "checkpoint.bin");
  EXPECT_NE(a.run_id, b.run_id);
  a.run_id = b.run_id = 0;
  EXPECT_TRUE(dem::encode_checkpoint(a) == dem::encode_checkpoint(b));
  fs::remove_all(parts);
  fs::remove_all(whole);
}

// The plate drop (docs/model.md §13.3) writes the same energy.csv and
// bond_failures.csv at 1, 2 and 3 threads, and when stopped at an odd step
// and continued by dem restart.
TEST(Dem, PlateDropTablesAreTheSameForAnyThreadCountAndAcrossARestart) {
  const std::string scene = std::string(DEM_SOURCE_DIR) + "/scenes/plate_drop.toml";
  std::vector<std::string> energy, failures;
  for (const char* threads : {"1", "2", "3"}) {
    const fs::path out = scratch(std::string("dem_plate_") + threads);
    const Result r = run(dem_app() + " run " + scene + " --quiet --steps 400 --threads " + threads +
                         " --output-dir " + out.string());
    ASSERT_EQ(r.status, 0) << r.output;
    energy.push_back(read_file(out / "energy.csv"));
    failures.push_back(read_file(out / "bond_failures.csv"));
  }
  ASSERT_GT(std::count(failures[0].begin(), failures[0].end(), '\n'), 100) << "the plate should break";
  EXPECT_EQ(energy[1], energy[0]);
  EXPECT_EQ(energy[2], energy[0]);
  EXPECT_EQ(failures[1], failures[0]);
  EXPECT_EQ(failures[2], failures[0]);
  const fs::path out = scratch("dem_plate_restart");
  const Result first = run(dem_app() + " run " + scene + " --quiet --steps 211 --threads 2 --output-dir " + out.string());
  ASSERT_EQ(first.status, 0) << first.output;
  const Result second =
      run(dem_app() + " restart " + (out / "checkpoint.bin").string() + " --quiet --steps 400 --threads 1");
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_EQ(read_file(out / "energy.csv"), energy[0]);
  EXPECT_EQ(read_file(out / "bond_failures.csv"), failures[0]);
}

// dem restart --integrator implicit --time-step DT continues an explicit
// run implicitly with a larger step, the clock continuing from the
// checkpoint's time (solver.csv appears), and back to map (25) with
// --t-end on the same clock; a bad time step is refused naming the option.
TEST(Dem, RestartSwitchesIntegratorAndTimeStepWithAContinuousClock) {
  const fs::path dir = scratch("switch");
  fs::create_directories(dir);
  std::string scene = read_file(fs::path(DEM_SOURCE_DIR) / "scenes" / "plate_drop.toml");
  scene.replace(scene.find("energy_every = 80"), 17, "energy_every = 10");
  {
    std::ofstream(dir / "plate.toml") << scene;
  }
  const std::string dem = std::string(DEM_BINARY_DIR) + "/apps/dem";
  const fs::path out = dir / "out";
  ASSERT_EQ(run(dem + " run " + (dir / "plate.toml").string() + " --quiet --steps 100 --output-dir " + out.string())
                .status,
            0);
  const std::string ckpt = (out / "checkpoint.bin").string();
  const Result implicit = run(dem + " restart " + ckpt + " --integrator implicit --time-step 2.5e-6 --steps 120 --quiet");
  ASSERT_EQ(implicit.status, 0) << implicit.output;
  EXPECT_TRUE(fs::exists(out / "solver.csv"));
  const dem::CheckpointState mid = dem::read_checkpoint(out / "checkpoint.bin");
  EXPECT_EQ(mid.map, dem::IntegratorMap::implicit);
  EXPECT_EQ(mid.step_count, 120u);
  EXPECT_EQ(mid.step_origin, 100u);
  EXPECT_DOUBLE_EQ(mid.time_origin, 100 * 2.5e-7);
  const Result back = run(dem + " restart " + ckpt + " --integrator 25 --time-step 2.5e-7 --t-end 1e-4 --quiet");
  ASSERT_EQ(back.status, 0) << back.output;
  // energy.csv's times: every 10 steps, 2.5e-6 s apart while explicit,
  // 2.5e-5 s while implicit, then 2.5e-6 again, ending at 1e-4.
  std::ifstream in(out / "energy.csv");
  std::string line;
  std::getline(in, line);
  std::vector<double> t;
  while (std::getline(in, line)) t.push_back(std::stod(line.substr(0, line.find(','))));
  ASSERT_EQ(t.size(), 11u + 2u + 10u);
  EXPECT_NEAR(t[10], 2.5e-5, 1e-18);
  EXPECT_NEAR(t[12], 7.5e-5, 1e-18);
  EXPECT_NEAR(t.back(), 1e-4, 1e-18);
  for (std::size_t k = 1; k < t.size(); ++k) EXPECT_GT(t[k], t[k - 1]) << k;
  const Result bad = run(dem + " restart " + ckpt + " --time-step -1 --quiet");
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_NE(bad.output.find("--time-step"), std::string::npos) << bad.output;
}

// An implicit step that does not converge stops the run (exit 2) with the
// error of docs/model.md §12.5 (residual, particle, a smaller time step) and
// keeps what was written.
TEST(Dem, ImplicitStepThatDoesNotConvergeStopsTheRunAndKeepsTheFiles) {
  const fs::path dir = scratch("implicit_fail");
  fs::create_directories(dir);
  std::string scene = read_file(fs::path(DEM_SOURCE_DIR) / "scenes" / "plate_drop.toml");
  scene.replace(scene.find("integrator = \"rrp25\""), 20,
                "integrator = \"implicit\"\nmax_newton_iterations = 1");
  scene.replace(scene.find("time_step = 2.5e-7"), 18, "time_step = 2.5e-5");
  {
    std::ofstream(dir / "plate.toml") << scene;
  }
  const std::string dem = std::string(DEM_BINARY_DIR) + "/apps/dem";
  const Result r = run(dem + " run " + (dir / "plate.toml").string() + " --quiet --output-dir " + (dir / "out").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("did not converge"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("particle id"), std::string::npos) << r.output;
  // It says what stopped it (the iteration limit), not the time step.
  EXPECT_NE(r.output.find("[run] max_newton_iterations = "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("The time step is probably too large"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir / "out" / "energy.csv"));
  EXPECT_TRUE(fs::exists(dir / "out" / "solver.csv"));
}
