// Restarts (run/run_loop.hpp, run/output_folder.hpp, io/checkpoint.hpp): a run from 0 to T and a
// run to T/2 continued from its checkpoint to T give byte-identical
// energy.csv and final state, for every integrator, with bonds, contacts and
// a wall active across the restart; an interrupted run (SIGTERM) writes a
// checkpoint that continues the same way; the checkpoint keeps the run's
// identity and energy reference, and version-2 checkpoints still restart.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <thread>

#include "app_support.hpp"
#include "run/run_loop.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {

// A ring that hits the wall early (gap 0), spinning, so that bonds, contacts
// and the wall all work across the middle of the run.
std::string ring_scene(const std::string& integrator, std::uint64_t steps) {
  return "[run]\nintegrator = \"" + integrator + "\"\ntime_step = 2e-3\nsteps = " + std::to_string(steps) +
         R"(
[output]
energy_every = 7
vtk_every = 50
checkpoint_every = 0
[[particles]]
source = "ring_torus"
count = 40
speed = 3.0
gap = 0.0
spin = [0.0, 0.0, 1.5]
[bonds]
bending = 10.0
axial = 200.0
shear = 200.0
[contact]
stiffness = 2100.0
skin_fraction = 0.2
[[wall]]
point = [0, 0, 0]
normal = [1, 0, 0]
stiffness = 2100.0
)";
}

fs::path folder(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("dem_test_restart_" + std::to_string(::getpid())) / name;
  fs::remove_all(p);
  return p;
}

std::string read(const fs::path& p) { return dem::testing::read_file_text(p); }

RunPlan plan_for(const fs::path& out, std::uint64_t end_step, const std::string& text) {
  const SceneSpec spec = parse_scene_text(text, "ring.toml", ".");
  RunPlan plan;
  plan.output_dir = out;
  plan.end_step = end_step;
  plan.output = spec.output;
  plan.scene_path = "ring.toml";
  plan.scene_text = text;
  plan.progress = false;
  return plan;
}

Simulation fresh(const std::string& text) {
  BuiltScene b = build_scene(parse_scene_text(text, "ring.toml", "."));
  Scene& s = b.scene;
  ForceField field(s.particles, std::move(s.bonds), s.contact, std::move(s.walls), s.gravity);
  return Simulation(std::move(s.particles), std::move(field), b.map, b.time_step);
}

/// Continues the run whose checkpoint is in `out` to end_step.
int resume(const fs::path& out, std::uint64_t end_step, CheckpointState* final_state) {
  const CheckpointState c = read_checkpoint(out / kCheckpointFile);
  RunPlan plan = plan_for(out, end_step, c.scene_text);
  std::ostringstream log;
  plan_restart_output(c, out / kCheckpointFile, plan, log);  // the run's own folder: continue it
  EXPECT_TRUE(plan.resume);
  Simulation sim = simulation_from(c);
  const int status = run_to_end(sim, plan, log);
  *final_state = read_checkpoint(out / kCheckpointFile);
  return status;
}

std::vector<std::byte> state_bytes(CheckpointState c) {
  c.scene_text.clear();  // the same scene in both; compare the physics
  c.run_id = 0;          // two runs, two identities
  return encode_checkpoint(c);
}

}  // namespace

TEST(Restart, HalfwayCheckpointContinuesBitForBitForEveryIntegrator) {
  const std::uint64_t total = 600, half = 303;  // half is off the energy and VTK schedules
  for (const char* map : {"rrp23", "rrp25", "rrp27"}) {
    const std::string text = ring_scene(map, total);
    std::ostringstream log;
    const fs::path whole = folder(std::string("whole_") + map), parts = folder(std::string("parts_") + map);
    Simulation a = fresh(text);
    ASSERT_EQ(run_to_end(a, plan_for(whole, total, text), log), kExitOk) << log.str();
    const EnergyReport r = a.energy_report();
    Simulation b = fresh(text);
    ASSERT_EQ(run_to_end(b, plan_for(parts, half, text), log), kExitOk) << log.str();
    EXPECT_GT(b.forces().neighbours().list().pair_count(), 0u);
    CheckpointState end_of_parts;
    ASSERT_EQ(resume(parts, total, &end_of_parts), kExitOk);
    const CheckpointState end_of_whole = read_checkpoint(whole / kCheckpointFile);
    EXPECT_EQ(read(whole / "energy.csv"), read(parts / "energy.csv")) << map;
    EXPECT_EQ(read(whole / "particles.pvd"), read(parts / "particles.pvd")) << map;
    EXPECT_TRUE(state_bytes(end_of_whole) == state_bytes(end_of_parts)) << map;
    EXPECT_EQ(end_of_parts.step_count, total);
    // The run was not trivial: the wall and the contacts were loaded.
    std::istringstream rows(read(whole / "energy.csv"));
    std::string line;
    double wall = 0, contact = 0;
    std::getline(rows, line);
    while (std::getline(rows, line)) {
      double v[16];
      std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &v[6], &v[7]);
      contact = std::max(contact, v[6]);
      wall = std::max(wall, v[7]);
    }
    EXPECT_GT(wall, 0.0) << map;
    EXPECT_GT(contact, 0.0) << map;
    (void)r;
  }
}

TEST(Restart, SigtermWritesACheckpointThatContinuesTheSameWay) {
  const std::uint64_t total = 400000;
  const std::string text = ring_scene("rrp25", total);
  const fs::path out = folder("signal");
  Simulation sim = fresh(text);
  std::ostringstream log;
  int status = -1;
  std::thread runner([&] { status = run_to_end(sim, plan_for(out, total, text), log); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::raise(SIGTERM);
  runner.join();
  ASSERT_EQ(status, kExitInterrupted) << log.str();
  EXPECT_NE(log.str().find("continue with: dem restart"), std::string::npos) << log.str();
  const CheckpointState c = read_checkpoint(out / kCheckpointFile);
  ASSERT_GT(c.step_count, 0u);
  ASSERT_LT(c.step_count, total);
  // Continue 200 steps from the checkpoint, and compare with a run straight
  // to the same step.
  const std::uint64_t end = c.step_count + 200;
  CheckpointState continued;
  ASSERT_EQ(resume(out, end, &continued), kExitOk);
  const fs::path straight = folder("straight");
  Simulation s = fresh(text);
  ASSERT_EQ(run_to_end(s, plan_for(straight, end, text), log), kExitOk);
  EXPECT_TRUE(state_bytes(continued) == state_bytes(read_checkpoint(straight / kCheckpointFile)));
  EXPECT_EQ(read(out / "energy.csv"), read(straight / "energy.csv"));
}

TEST(Restart, RefusesAnEnergyTableThatDoesNotMatch) {
  const std::string text = ring_scene("rrp25", 100);
  const fs::path out = folder("mismatch");
  Simulation sim = fresh(text);
  std::ostringstream log;
  ASSERT_EQ(run_to_end(sim, plan_for(out, 100, text), log), kExitOk);
  std::ofstream(out / "energy.csv") << "t,E\n";
  CheckpointState end;
  EXPECT_THROW(resume(out, 200, &end), std::runtime_error);
}

TEST(Restart, ClumpScenesContinueBitForBitReorderedOrNot) {
  std::ifstream in(fs::path(DEM_SOURCE_DIR) / "scenes/clumps.toml");
  const std::string shipped((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::uint64_t total = 900, half = 451;  // half is off the energy and VTK schedules
  for (const bool reorder : {false, true}) {
    std::string text = shipped;
    const std::string line = "reorder_on_rebuild = false";
    text.replace(text.find(line), line.size(), reorder ? "reorder_on_rebuild = true" : line);
    const auto start = [&] { return make_simulation(build_scene(parse_scene_text(text, "clumps.toml", "."))); };
    const std::string tag = reorder ? "clumps_reordered" : "clumps";
    const fs::path whole = folder("whole_" + tag), parts = folder("parts_" + tag);
    std::ostringstream log;
    Simulation a = start();
    ASSERT_EQ(a.clumps().size(), 2u);
    ASSERT_EQ(run_to_end(a, plan_for(whole, total, text), log), kExitOk) << log.str();
    if (reorder) {
      EXPECT_GT(a.reorder_count(), 0u);
    }
    Simulation b = start();
    ASSERT_EQ(run_to_end(b, plan_for(parts, half, text), log), kExitOk) << log.str();
    EXPECT_EQ(read_checkpoint(parts / kCheckpointFile).clumps.size(), 2u);
    CheckpointState end_of_parts;
    ASSERT_EQ(resume(parts, total, &end_of_parts), kExitOk);
    EXPECT_EQ(read(whole / "energy.csv"), read(parts / "energy.csv")) << tag;
    EXPECT_EQ(read(whole / "particles.pvd"), read(parts / "particles.pvd")) << tag;
    EXPECT_TRUE(state_bytes(read_checkpoint(whole / kCheckpointFile)) == state_bytes(end_of_parts)) << tag;
  }
}

namespace {

/// The first data row's E_total (column 10) of an energy table.
double first_total(const fs::path& csv) {
  std::istringstream rows(read(csv));
  std::string line;
  std::getline(rows, line);
  std::getline(rows, line);
  std::istringstream fields(line);
  std::string v;
  for (int k = 0; k < 10; ++k) std::getline(fields, v, ',');
  return std::stod(v);
}

std::uint32_t crc32_reference(std::span<const std::byte> bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::byte b : bytes) {
    crc ^= static_cast<std::uint32_t>(b);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/// The same checkpoint in format version 2: the "run" section without its
/// five version-3 fields (40 bytes).
std::vector<std::byte> as_version_2(std::vector<std::byte> b) {
  // The "run" section of version 14 ends with the 40 bytes of version 3's
  // fields, the 40 of version 4's (the ledger and a zero group count), the
  // 48 of version 5's (the implicit settings and the clock origin), the
  // 25 of version 6's (the energy check), the 25 of version 8's (Hessian
  // blocks, event tolerance, the event control's steps), the 1 of
  // version 10's (the preconditioner), the 1 of version 12's (the
  // Hessian update) and the 1 of version 14's (the implicit scheme).
  constexpr std::size_t kDrop = 181;
  const std::size_t length_at = checkpoint_header_size + 4 + 8 + 3;  // section count, tag "run"
  std::uint64_t length = 0, payload = 0;
  std::memcpy(&length, b.data() + length_at, 8);
  const std::size_t end = length_at + 8 + length;
  b.erase(b.begin() + static_cast<std::ptrdiff_t>(end - kDrop), b.begin() + static_cast<std::ptrdiff_t>(end));
  length -= kDrop;
  std::memcpy(b.data() + length_at, &length, 8);
  const std::uint32_t version = 2;
  std::memcpy(b.data() + 8, &version, 4);
  std::memcpy(&payload, b.data() + 16, 8);
  payload -= kDrop;
  std::memcpy(b.data() + 16, &payload, 8);
  const std::uint32_t crc = crc32_reference(std::span(b).subspan(checkpoint_header_size));
  std::memcpy(b.data() + 24, &crc, 4);
  return b;
}

}  // namespace

// The checkpoint carries the run's identity (also in run.id) and its energy
// reference E_0, so that a restart checks the drift against the run's start,
// not its own.
TEST(Restart, CheckpointKeepsTheRunsIdentityAndEnergyReference) {
  const std::string text = ring_scene("rrp25", 400);
  const fs::path out = folder("identity");
  Simulation sim = fresh(text);
  std::ostringstream log;
  ASSERT_EQ(run_to_end(sim, plan_for(out, 203, text), log), kExitOk) << log.str();
  const CheckpointState c = read_checkpoint(out / kCheckpointFile);
  EXPECT_NE(c.run_id, 0u);
  EXPECT_EQ(read(out / kRunIdFile), run_id_text(c.run_id) + "\n");
  EXPECT_EQ(read_run_id(out), c.run_id);
  EXPECT_TRUE(c.energy_check.measured);
  EXPECT_EQ(c.energy_check.initial_energy, first_total(out / "energy.csv"));
  EXPECT_EQ(c.energy_check.reference_step, 0u);
  // Kinetic and elastic energies only: the scale is at least E_0.
  EXPECT_GE(c.energy_check.scale, std::abs(c.energy_check.initial_energy));
  EXPECT_EQ(c.max_energy_drift, kDefaultMaxEnergyDrift);
  EXPECT_EQ(c.warn_energy_drift, kDefaultWarnEnergyDrift);
  CheckpointState end;
  ASSERT_EQ(resume(out, 400, &end), kExitOk);
  EXPECT_EQ(end.run_id, c.run_id);
  EXPECT_EQ(end.energy_check.initial_energy, c.energy_check.initial_energy);
  EXPECT_GE(end.energy_check.scale, c.energy_check.scale);
  // Decoding stays strict about the new fields.
  CheckpointState bad = c;
  bad.energy_check.scale = -1.0;
  EXPECT_THROW(decode_checkpoint(encode_checkpoint(bad)), CheckpointError);
  bad = c;
  bad.max_energy_drift = 0.0;
  EXPECT_THROW(decode_checkpoint(encode_checkpoint(bad)), CheckpointError);
  bad = c;
  bad.energy_check.initial_energy = std::nan("");
  EXPECT_THROW(decode_checkpoint(encode_checkpoint(bad)), CheckpointError);
}

// A checkpoint of format version 2 (before run identities) still restarts in
// a folder without run.id, and the run gets an identity from then on; a
// folder of an identified run is refused to it.
TEST(Restart, VersionTwoCheckpointsStillRestart) {
  const std::string text = ring_scene("rrp25", 400);
  const fs::path out = folder("version2");
  Simulation sim = fresh(text);
  std::ostringstream log;
  ASSERT_EQ(run_to_end(sim, plan_for(out, 203, text), log), kExitOk) << log.str();
  const std::vector<std::byte> v2 = as_version_2(encode_checkpoint(read_checkpoint(out / kCheckpointFile)));
  const CheckpointState old = decode_checkpoint(v2);
  EXPECT_EQ(old.run_id, 0u);
  EXPECT_FALSE(old.energy_check.measured);
  EXPECT_EQ(old.max_energy_drift, kDefaultMaxEnergyDrift);
  {
    RunPlan plan = plan_for(out, 400, text);
    EXPECT_THROW(plan_restart_output(old, out / kCheckpointFile, plan, log), OutputFolderError);
  }
  fs::remove(out / kRunIdFile);  // a folder written before run identities
  RunPlan plan = plan_for(out, 400, text);
  std::ostringstream notes;
  plan_restart_output(old, out / kCheckpointFile, plan, notes);
  EXPECT_NE(notes.str().find("older version"), std::string::npos) << notes.str();
  Simulation continued = simulation_from(old);
  ASSERT_EQ(run_to_end(continued, plan, log), kExitOk) << log.str();
  const CheckpointState end = read_checkpoint(out / kCheckpointFile);
  EXPECT_NE(end.run_id, 0u);
  EXPECT_EQ(read_run_id(out), end.run_id);
}
