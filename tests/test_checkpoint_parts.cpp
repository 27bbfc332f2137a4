// Checkpoints in parts (run/checkpoint_parts.hpp, io/checkpoint_part.hpp,
// issue 28 item 3), without MPI: a state split into parts as the ranks of
// a decomposed run split it (engine/partition.hpp), each part written as
// its rank writes it, is put back together into exactly the checkpoint of
// the undivided simulation (byte for byte); a part that is missing,
// truncated, corrupted, of another step or rank, or a scene whose bonds
// changed, is refused naming the part or the scene. (The MPI layout tests,
// tests/tools/test_mpi_restart.sh, restart such checkpoints on other rank
// counts.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include "app_support.hpp"
#include "part_support.hpp"
#include "engine/partition.hpp"
#include "io/checkpoint.hpp"
#include "io/checkpoint_part.hpp"
#include "run/checkpoint_parts.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {

// The shipped bonded ring (scenes/ring_torus.toml) with `count` spheres:
// bonds, contacts (with their neighbour list) and the wall all hold state
// once it reaches the wall (after about 100 steps).
std::string ring_scene(int count) {
  std::string text = dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/scenes/ring_torus.toml");
  const std::size_t at = text.find("count = 80");
  EXPECT_NE(at, std::string::npos);
  return text.replace(at, 10, "count = " + std::to_string(count));
}

constexpr std::uint64_t kRunId = 0x5eed;

Simulation build(const std::string& text) { return make_simulation(build_scene(parse_scene_text(text, "ring.toml", "."))); }

fs::path folder(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("dem_test_parts_" + std::to_string(::getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

/// The run fields of a checkpoint of `sim` (as the run writes them).
CheckpointState run_fields(const Simulation& sim, const std::string& text) {
  CheckpointState c = capture_run_state(sim);
  c.scene_path = "ring.toml";
  c.scene_text = text;
  c.run_id = kRunId;
  c.end_step = 400;
  return c;
}

/// `whole` split into `ranks` parts as a decomposed run splits it, each
/// part's file written as its rank writes it, and the index.
void write_in_parts(const Simulation& whole, const std::string& text, std::uint32_t ranks, const fs::path& out) {
  PartFactory factory(build(text));
  const GlobalState g = capture_global_state(whole);
  const std::vector<std::uint32_t> owner = bisect_owners(g.particles.position, g.particles.id, ranks);
  const std::vector<PartLayout> layouts =
      part_layouts(g.particles, owner, ranks, 2.0 * factory.interaction_range(g), factory.bond_keys());
  CheckpointState index = run_fields(whole, text);
  CheckpointParts parts;
  parts.particle_count = whole.particles().size();
  parts.bond_count = whole.forces().bonds().size();
  parts.bond_digest = bond_digest(whole);
  parts.rebuild_count = g.rebuild_count;
  parts.build_edges = g.build_edges;
  parts.failed_bonds = g.failed_bonds;
  for (std::uint32_t k = 0; k < ranks; ++k) {
    const Simulation part = factory.make(g, layouts[k]);
    const std::string file = "checkpoint_parts/step_" + std::to_string(whole.step_count()) + "_of_" +
                             std::to_string(ranks) + "/part_" + std::to_string(k) + ".bin";
    const std::vector<std::byte> bytes =
        encode_checkpoint_part(PartLabel{k, ranks, whole.step_count(), kRunId}, pack_owned(part));
    fs::create_directories((out / file).parent_path());
    write_file_durably(out / file, bytes, "part");
    parts.parts.push_back(CheckpointPart{file, bytes.size(), crc32_of(bytes), layouts[k].owned_count()});
  }
  index.parts = parts;
  write_checkpoint_index(out / "checkpoint.bin", index);
}

/// The checkpoint the undivided run writes of `whole`.
std::vector<std::byte> whole_bytes(const Simulation& whole, const std::string& text) {
  CheckpointState c = capture_simulation(whole);
  const CheckpointState f = run_fields(whole, text);
  c.scene_path = f.scene_path;
  c.scene_text = f.scene_text;
  c.run_id = f.run_id;
  c.end_step = f.end_step;
  return encode_checkpoint(c);
}

Simulation stepped(const std::string& text, int steps) {
  Simulation sim = build(text);
  for (int k = 0; k < steps; ++k) sim.step();
  return sim;
}

std::string refusal(const fs::path& index) {
  try {
    (void)read_whole_checkpoint(index);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(read without error)";
}

void overwrite(const fs::path& p, const std::vector<char>& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<char> bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(CheckpointParts, PartsPutTogetherAreTheUndividedRunsCheckpointByteForByte) {
  const std::string text = ring_scene(40);
  const Simulation whole = stepped(text, 137);
  ASSERT_GT(whole.forces().bonds().size(), 0u);
  const std::vector<std::byte> expected = whole_bytes(whole, text);
  for (const std::uint32_t ranks : {1u, 2u, 3u, 5u}) {
    const fs::path out = folder("ranks" + std::to_string(ranks));
    write_in_parts(whole, text, ranks, out);
    const CheckpointState index = read_checkpoint(out / "checkpoint.bin");
    ASSERT_TRUE(index.parts.has_value());
    EXPECT_EQ(index.parts->parts.size(), ranks);
    EXPECT_TRUE(index.particles.size() == 0);
    const CheckpointState put_together = read_whole_checkpoint(out / "checkpoint.bin");
    EXPECT_FALSE(put_together.parts.has_value());
    EXPECT_TRUE(encode_checkpoint(put_together) == expected) << ranks << " parts";
  }
}

TEST(CheckpointParts, ThePlateDropsFailedBondsAndFrictionlessContactsPutTogetherByteForByte) {
  // BDEM bonds that break (failed flags by scene index) and penalty contact.
  const std::string text = dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/scenes/plate_drop.toml");
  const Simulation whole = stepped(text, 200);
  ASSERT_GT(whole.forces().failed_bonds().size(), 0u);
  const fs::path out = folder("plate");
  write_in_parts(whole, text, 3, out);
  EXPECT_TRUE(encode_checkpoint(read_whole_checkpoint(out / "checkpoint.bin")) == whole_bytes(whole, text));
}

// What a restart on several MPI ranks reads (read_checkpoint_parts): the
// template of the scene without its first forces, and the parts' whole
// state, which is the running whole's state at the checkpoint (particles,
// the list's build, the periodic cell the bisection puts positions into)
// and whose parts give the running whole's forces: nothing is put together.
TEST(CheckpointParts, ARestartOnRanksReadsTheRunningWholesStateWithoutPuttingItTogether) {
  bool periodic = false;
  for (const auto& [text, steps] : std::vector<std::pair<std::string, int>>{
           {ring_scene(40), 137},
           {dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/scenes/plate_drop.toml"), 200},
           {dem::testing::read_file_text(std::string(DEM_SOURCE_DIR) + "/tests/scenes/periodic_gas.toml"), 90}}) {
    const Simulation whole = stepped(text, steps);
    const GlobalState expected = capture_global_state(whole);
    for (const std::uint32_t ranks : {2u, 3u}) {
      const fs::path out = folder("start" + std::to_string(ranks));
      write_in_parts(whole, text, ranks, out);
      CheckpointPartsStart start = read_checkpoint_parts(read_checkpoint(out / "checkpoint.bin"), out / "checkpoint.bin");
      EXPECT_FALSE(start.whole.first_forces());
      const GlobalState& state = start.state;
      expect_same_start(state, expected, std::to_string(ranks) + " parts");
      EXPECT_EQ(state.steps, expected.steps);
      ASSERT_EQ(state.cell.has_value(), expected.cell.has_value()) << ranks << " parts";
      if (state.cell) {
        periodic = periodic || state.cell->any();
        EXPECT_TRUE(state.cell->edges == expected.cell->edges && state.cell->origin == expected.cell->origin &&
                    state.cell->periodic == expected.cell->periodic);
        EXPECT_TRUE(state.build_edges.has_value());
      }
      PartFactory factory(std::move(start.whole));
      for (std::size_t parts = 1; parts <= 3; ++parts) expect_made_parts_match(whole, factory, state, parts);
    }
  }
  EXPECT_TRUE(periodic) << "no periodic cell: the cell the parts are bisected in is not checked";
}

TEST(CheckpointParts, TheWriterOfOneRankWritesAPartAndAnIndexThatRestart) {
  // write_checkpoint_part() on a one-rank run (the collective calls are then
  // the rank's own): what every rank of an MPI run does.
  struct OneRank final : DecomposedRun {
    const Simulation& whole;
    explicit OneRank(const Simulation& w) : whole(w) {}
    int rank() const override { return 0; }
    int ranks() const override { return 1; }
    void after_step() override {}
    const Simulation& reference() const override { return whole; }
    std::size_t particle_count() const override { return whole.particles().size(); }
    const std::vector<std::uint32_t>& failed_bonds() const override { return failed; }
    std::uint64_t broadcast(std::uint64_t v) override { return v; }
    std::vector<std::vector<std::byte>> gather_to_root(const std::vector<std::byte>& mine) override { return {mine}; }
    std::vector<std::uint32_t> fragment_labels(const ParticleStore&) const override { return {}; }
    bool any(bool mine) override { return mine; }
    [[noreturn]] void abort(int) override { std::abort(); }
    std::vector<std::uint32_t> failed;
  };
  const std::string text = ring_scene(40);
  const fs::path out = folder("one_rank");
  for (const int steps : {60, 95}) {  // the second checkpoint's folder replaces the first's
    const Simulation whole = stepped(text, steps);
    OneRank run(whole);
    run.failed = whole.forces().failed_bonds();
    const std::optional<CheckpointParts> parts = write_checkpoint_part(out, run, whole, kRunId);
    ASSERT_TRUE(parts.has_value());
    CheckpointState index = run_fields(whole, text);
    index.parts = parts;
    write_checkpoint_index(out / "checkpoint.bin", index);
    EXPECT_TRUE(encode_checkpoint(read_whole_checkpoint(out / "checkpoint.bin")) == whole_bytes(whole, text)) << steps;
  }
  std::vector<std::string> folders;
  for (const auto& e : fs::directory_iterator(out / kCheckpointPartsFolder)) folders.push_back(e.path().filename());
  EXPECT_EQ(folders, std::vector<std::string>{"step_95_of_1"});
  // The parts' folder is one of the run's files: a run into the folder
  // needs --overwrite, which removes it with the rest.
  const OutputFolder::Files files = OutputFolder(out).engine_files();
  EXPECT_EQ(files.files, (std::vector<std::string>{"checkpoint.bin", "checkpoint_parts"}));
  OutputFolder(out).remove(files.files);
  EXPECT_FALSE(fs::exists(out / kCheckpointPartsFolder));
}

TEST(CheckpointParts, AMissingTruncatedCorruptedOrMisplacedPartIsRefusedNamingIt) {
  const std::string text = ring_scene(40);
  const Simulation whole = stepped(text, 80);
  const fs::path base = folder("bad");
  write_in_parts(whole, text, 3, base);
  const std::string parts = "checkpoint_parts/step_80_of_3/";
  const auto fresh_copy = [&](const std::string& name) {
    const fs::path d = folder(name);
    fs::copy(base, d, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return d;
  };
  {
    const fs::path d = fresh_copy("missing");
    fs::remove(d / parts / "part_0.bin");
    const std::string e = refusal(d / "checkpoint.bin");
    EXPECT_NE(e.find("checkpoint part 0 of 3"), std::string::npos) << e;
    EXPECT_NE(e.find("cannot open"), std::string::npos) << e;
  }
  {
    const fs::path d = fresh_copy("truncated");
    std::vector<char> b = bytes_of(d / parts / "part_1.bin");
    b.resize(b.size() - 100);
    overwrite(d / parts / "part_1.bin", b);
    const std::string e = refusal(d / "checkpoint.bin");
    EXPECT_NE(e.find("checkpoint part 1 of 3 ('" + parts + "part_1.bin')"), std::string::npos) << e;
    EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  }
  {
    const fs::path d = fresh_copy("corrupted");
    std::vector<char> b = bytes_of(d / parts / "part_2.bin");
    b[b.size() / 2] ^= 0x10;
    overwrite(d / parts / "part_2.bin", b);
    const std::string e = refusal(d / "checkpoint.bin");
    EXPECT_NE(e.find("checkpoint part 2 of 3"), std::string::npos) << e;
    EXPECT_NE(e.find("checksum mismatch"), std::string::npos) << e;
  }
  {
    // Part 1 in part 0's place, with the index made to list it: its own
    // header says whose it is.
    const fs::path d = fresh_copy("misplaced");
    fs::copy_file(d / parts / "part_1.bin", d / parts / "part_0.bin", fs::copy_options::overwrite_existing);
    CheckpointState index = read_checkpoint(d / "checkpoint.bin");
    index.parts->parts[0].bytes = index.parts->parts[1].bytes;
    index.parts->parts[0].crc = index.parts->parts[1].crc;
    write_checkpoint(d / "checkpoint.bin", index);
    const std::string e = refusal(d / "checkpoint.bin");
    EXPECT_NE(e.find("checkpoint part 0 of 3"), std::string::npos) << e;
    EXPECT_NE(e.find("it is part 1 of 3 of step 80, not part 0 of 3 of step 80"), std::string::npos) << e;
  }
  {
    // The scene now makes another ring: its bonds are not the checkpoint's.
    const fs::path d = fresh_copy("scene");
    CheckpointState index = read_checkpoint(d / "checkpoint.bin");
    index.scene_text = ring_scene(44);
    write_checkpoint(d / "checkpoint.bin", index);
    const std::string e = refusal(d / "checkpoint.bin");
    EXPECT_NE(e.find("now gives 44 particles"), std::string::npos) << e;
  }
  {
    // A part file named outside the index's folder is refused by the index.
    const fs::path d = fresh_copy("outside");
    CheckpointState index = read_checkpoint(d / "checkpoint.bin");
    index.parts->parts[2].file = "../elsewhere.bin";
    EXPECT_THROW(write_checkpoint(d / "checkpoint.bin", index), CheckpointError);
  }
  EXPECT_NO_THROW((void)read_whole_checkpoint(base / "checkpoint.bin"));
}
