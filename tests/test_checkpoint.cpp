// Binary checkpoints (io/checkpoint.hpp): exact round trips through memory
// and files, refusal of truncated, corrupted and inconsistent input, and the
// atomic replacement of an existing checkpoint.

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "engine/force_field.hpp"
#include "scene/ring_torus.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint.hpp"

namespace fs = std::filesystem;
using namespace dem;

namespace {

/// A ring torus after a few steps of map (25): it has hit the wall, so
/// positions, attitudes, forces and moments are all non-trivial, and the
/// particles have been re-ordered (ids are not the identity).
CheckpointState make_state(std::size_t particles = 12, std::size_t steps = 60) {
  RingTorusParameters p;
  p.particles = particles;
  p.tilt_deg = 20.0;
  p.spin = Vec3(0.3, -0.2, 0.5);
  p.speed = 2.0;
  Scene scene = make_ring_torus(p);
  scene.gravity = Vec3(0.0, -0.5, 0.1);
  // Two stiffness types, to round-trip a type table of more than one entry.
  scene.bonds.add(scene.particles, 0, static_cast<std::uint32_t>(particles / 2),
                  BondStiffness{1.0, 2.0, 3.0});
  ForceField forces(scene.particles, scene.bonds, scene.contact, scene.walls, scene.gravity);
  Simulation sim(scene.particles, std::move(forces), IntegratorMap::rrp25, 5e-3);
  CheckpointState s;
  for (std::size_t k = 0; k < steps; ++k) {
    sim.step();
    if (k == steps / 2) s.neighbour_build_positions = sim.particles().position;
    if (k % 20 == 0) s.frame_times.push_back(sim.time());
  }
  s.scene_path = "scenes/ring torus (12).toml";
  s.scene_text = std::string("# ring torus\nparticles = 12\n\0binary-safe\n\xff", 42);
  s.map = sim.map();
  s.time_step = sim.time_step();
  s.step_count = sim.step_count();
  s.scene.particles = sim.particles();
  s.scene.bonds = sim.forces().bonds();
  s.scene.contact = sim.forces().contact();
  s.scene.walls = sim.forces().walls();
  s.scene.gravity = sim.forces().gravity();
  s.neighbour_rebuilds = sim.forces().neighbours().rebuild_count();
  s.energy_rows = 7;
  return s;
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
bool same_bits_vec(const Vec3& a, const Vec3& b) {
  return std::memcmp(a.data(), b.data(), 3 * sizeof(double)) == 0;
}
bool same_bits_quat(const Quat& a, const Quat& b) {
  return std::memcmp(a.coeffs().data(), b.coeffs().data(), 4 * sizeof(double)) == 0;
}

template <class T, class Eq>
void expect_same_array(const std::vector<T>& a, const std::vector<T>& b, const char* what,
                       Eq eq) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(eq(a[i], b[i])) << what << " " << i;
}
template <class T>
void expect_same_array(const std::vector<T>& a, const std::vector<T>& b, const char* what) {
  expect_same_array(a, b, what, same_bits<T>);
}

void expect_identical(const CheckpointState& a, const CheckpointState& b) {
  EXPECT_EQ(a.scene_path, b.scene_path);
  EXPECT_EQ(a.scene_text, b.scene_text);
  EXPECT_EQ(a.map, b.map);
  EXPECT_TRUE(same_bits(a.time_step, b.time_step));
  EXPECT_EQ(a.step_count, b.step_count);
  const ParticleStore& p = a.scene.particles;
  const ParticleStore& q = b.scene.particles;
  expect_same_array(p.position, q.position, "position", same_bits_vec);
  expect_same_array(p.velocity, q.velocity, "velocity", same_bits_vec);
  expect_same_array(p.attitude, q.attitude, "attitude", same_bits_quat);
  expect_same_array(p.angular_velocity, q.angular_velocity, "angular_velocity", same_bits_vec);
  expect_same_array(p.force, q.force, "force", same_bits_vec);
  expect_same_array(p.moment, q.moment, "moment", same_bits_vec);
  expect_same_array(p.mass, q.mass, "mass");
  expect_same_array(p.inertia, q.inertia, "inertia");
  expect_same_array(p.radius, q.radius, "radius");
  expect_same_array(p.reference_position, q.reference_position, "reference_position",
                    same_bits_vec);
  expect_same_array(p.reference_attitude, q.reference_attitude, "reference_attitude",
                    same_bits_quat);
  expect_same_array(p.id, q.id, "id");
  const BondList& c = a.scene.bonds;
  const BondList& d = b.scene.bonds;
  expect_same_array(c.first, d.first, "bond first");
  expect_same_array(c.second, d.second, "bond second");
  expect_same_array(c.rest_length, d.rest_length, "rest_length");
  expect_same_array(c.rest_direction, d.rest_direction, "rest_direction", same_bits_vec);
  expect_same_array(c.type, d.type, "bond type");
  expect_same_array(c.stiffness_types, d.stiffness_types, "stiffness_types");
  EXPECT_TRUE(same_bits(a.scene.contact.stiffness, b.scene.contact.stiffness));
  EXPECT_TRUE(same_bits(a.scene.contact.skin, b.scene.contact.skin));
  EXPECT_EQ(a.scene.contact.reorder_on_rebuild, b.scene.contact.reorder_on_rebuild);
  ASSERT_EQ(a.scene.walls.size(), b.scene.walls.size());
  for (std::size_t w = 0; w < a.scene.walls.size(); ++w) {
    EXPECT_TRUE(same_bits_vec(a.scene.walls[w].point, b.scene.walls[w].point));
    EXPECT_TRUE(same_bits_vec(a.scene.walls[w].normal, b.scene.walls[w].normal));
    EXPECT_TRUE(same_bits(a.scene.walls[w].stiffness, b.scene.walls[w].stiffness));
  }
  EXPECT_TRUE(same_bits_vec(a.scene.gravity, b.scene.gravity));
  expect_same_array(a.neighbour_build_positions, b.neighbour_build_positions,
                    "neighbour_build_positions", same_bits_vec);
  EXPECT_EQ(a.neighbour_rebuilds, b.neighbour_rebuilds);
  expect_same_array(a.frame_times, b.frame_times, "frame_times");
  EXPECT_EQ(a.energy_rows, b.energy_rows);
}

/// The message of the CheckpointError that decode_checkpoint throws ("" if
/// it does not throw).
std::string decode_error(std::span<const std::byte> bytes) {
  try {
    decode_checkpoint(bytes);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

/// Standard CRC-32 (reflected, polynomial 0xEDB88320), independent of zlib.
std::uint32_t reference_crc32(std::span<const std::byte> bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::byte b : bytes) {
    crc ^= static_cast<std::uint8_t>(b);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/// Rewrites the header's payload length and checksum after an edit of the
/// payload, so that the payload parser sees the edit.
void reseal(std::vector<std::byte>& bytes) {
  const std::uint64_t length = bytes.size() - checkpoint_header_size;
  const std::uint32_t crc =
      reference_crc32(std::span(bytes).subspan(checkpoint_header_size));
  std::memcpy(bytes.data() + 16, &length, 8);
  std::memcpy(bytes.data() + 24, &crc, 4);
}

template <class T>
void poke(std::vector<std::byte>& bytes, std::size_t at, T value) {
  ASSERT_LE(at + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

/// Offset in the file of the particle count.
std::size_t particle_count_offset(const CheckpointState& s) {
  return checkpoint_header_size + 8 + s.scene_path.size() + 8 + s.scene_text.size() + 4 + 8 + 8;
}

/// A fresh, empty folder under the system's temporary folder, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "dem_checkpoint_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

std::vector<std::byte> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

class Checkpoint : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    state_ = new CheckpointState(make_state());
    bytes_ = new std::vector<std::byte>(encode_checkpoint(*state_));
  }
  static void TearDownTestSuite() {
    delete state_;
    delete bytes_;
  }
  static const CheckpointState& state() { return *state_; }
  static const std::vector<std::byte>& bytes() { return *bytes_; }

 private:
  static inline CheckpointState* state_ = nullptr;
  static inline std::vector<std::byte>* bytes_ = nullptr;
};

}  // namespace

TEST_F(Checkpoint, TheStateIsNonTrivial) {
  const ParticleStore& p = state().scene.particles;
  ASSERT_EQ(p.size(), 12u);
  bool moved = false, rotated = false, loaded = false, reordered = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    moved |= !same_bits_vec(p.position[i], p.reference_position[i]);
    rotated |= !same_bits_quat(p.attitude[i], Quat::Identity());
    loaded |= p.force[i].norm() > 0.0 && p.moment[i].norm() > 0.0;
    reordered |= p.id[i] != i;
  }
  EXPECT_TRUE(moved);
  EXPECT_TRUE(rotated);
  EXPECT_TRUE(loaded);
  EXPECT_TRUE(reordered) << "the particles were never re-ordered; ids are the identity";
  EXPECT_EQ(state().scene.bonds.stiffness_types.size(), 2u);
  EXPECT_EQ(state().scene.walls.size(), 1u);
}

TEST_F(Checkpoint, HeaderLayout) {
  const auto& b = bytes();
  ASSERT_GT(b.size(), checkpoint_header_size);
  EXPECT_EQ(std::memcmp(b.data(), "DEMCKPT\0", 8), 0);
  std::uint32_t version = 0, crc = 0;
  std::uint64_t length = 0;
  std::memcpy(&version, b.data() + 8, 4);
  std::memcpy(&length, b.data() + 16, 8);
  std::memcpy(&crc, b.data() + 24, 4);
  EXPECT_EQ(version, 1u);
  EXPECT_EQ(length, b.size() - checkpoint_header_size);
  EXPECT_EQ(crc, reference_crc32(std::span(b).subspan(checkpoint_header_size)));
}

TEST_F(Checkpoint, EncodeDecodeRoundTripIsBitwiseIdentical) {
  const CheckpointState back = decode_checkpoint(bytes());
  expect_identical(state(), back);
  EXPECT_EQ(encode_checkpoint(back), bytes());
}

TEST_F(Checkpoint, RoundTripKeepsSpecialValues) {
  CheckpointState s = state();
  s.scene.particles.force[0] = Vec3(std::numeric_limits<double>::quiet_NaN(), -0.0,
                                    std::numeric_limits<double>::infinity());
  s.scene.particles.moment[1] = Vec3(std::numeric_limits<double>::denorm_min(), -0.0, 1e308);
  s.scene.gravity = Vec3(-0.0, 0.0, -0.0);
  s.map = IntegratorMap::rrp23;
  s.step_count = std::numeric_limits<std::uint64_t>::max();
  s.scene.contact.reorder_on_rebuild = false;
  s.scene_path.clear();
  s.scene_text.clear();
  const CheckpointState back = decode_checkpoint(encode_checkpoint(s));
  expect_identical(s, back);
}

TEST_F(Checkpoint, EmptySceneRoundTrips) {
  CheckpointState s;
  s.time_step = 1e-3;
  s.map = IntegratorMap::rrp27;
  expect_identical(s, decode_checkpoint(encode_checkpoint(s)));
}

TEST_F(Checkpoint, DecodedBondListAcceptsFurtherBonds) {
  CheckpointState s = decode_checkpoint(bytes());
  BondList& bonds = s.scene.bonds;
  const std::size_t types = bonds.stiffness_types.size();
  const BondStiffness old = bonds.stiffness_types[1];
  const std::size_t b = bonds.add(s.scene.particles, 1, 5, old);
  EXPECT_EQ(bonds.type[b], 1u) << "an existing stiffness triple must reuse its type";
  EXPECT_EQ(bonds.stiffness_types.size(), types);
  const std::size_t c = bonds.add(s.scene.particles, 2, 7, BondStiffness{4.0, 5.0, 6.0});
  EXPECT_EQ(bonds.type[c], types);
  EXPECT_EQ(bonds.stiffness_types.size(), types + 1);
}

TEST_F(Checkpoint, FileRoundTripLeavesNoTemporaryFile) {
  TempDir dir;
  const fs::path path = dir.path() / "run.ckpt";
  write_checkpoint(path, state());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"run.ckpt"});
  EXPECT_EQ(file_bytes(path), bytes());
  expect_identical(state(), read_checkpoint(path));
}

TEST_F(Checkpoint, TruncatedFilesAreRefused) {
  const auto& b = bytes();
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= checkpoint_header_size + 64; ++n) lengths.push_back(n);
  for (std::size_t n = checkpoint_header_size + 64; n < b.size(); n += 1 + b.size() / 300)
    lengths.push_back(n);
  for (std::size_t n = b.size() - 16; n < b.size(); ++n) lengths.push_back(n);
  for (std::size_t n : lengths) {
    const std::string message = decode_error(std::span(b).first(n));
    EXPECT_FALSE(message.empty()) << "a file cut at " << n << " of " << b.size()
                                  << " bytes was accepted";
    if (n >= checkpoint_header_size) {
      EXPECT_EQ(message, "truncated: the header announces " + std::to_string(b.size()) +
                             " bytes, the file has " + std::to_string(n));
    }
  }
}

TEST_F(Checkpoint, EverySampledSingleByteFlipIsRefused) {
  const auto& b = bytes();
  std::vector<std::size_t> offsets;
  for (std::size_t i = 0; i < checkpoint_header_size + 64; ++i) offsets.push_back(i);
  for (std::size_t i = checkpoint_header_size + 64; i < b.size(); i += 1 + b.size() / 500)
    offsets.push_back(i);
  offsets.push_back(b.size() - 1);
  for (std::size_t i : offsets)
    for (std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
      std::vector<std::byte> copy = b;
      copy[i] ^= std::byte{mask};
      EXPECT_FALSE(decode_error(copy).empty())
          << "flipping byte " << i << " with mask " << int(mask) << " was not detected";
    }
}

TEST_F(Checkpoint, WrongMagicIsRefused) {
  std::vector<std::byte> copy = bytes();
  copy[0] = std::byte{'X'};
  EXPECT_EQ(decode_error(copy), "not a DEM checkpoint (bad magic number)");
  const std::string text = "particles = 12\n# a scene file, not a checkpoint\n";
  std::vector<std::byte> junk(text.size());
  std::memcpy(junk.data(), text.data(), text.size());
  EXPECT_EQ(decode_error(junk), "not a DEM checkpoint (bad magic number)");
  EXPECT_EQ(decode_error(std::span(junk).first(3)), "not a DEM checkpoint (bad magic number)");
}

TEST_F(Checkpoint, FutureVersionIsRefused) {
  std::vector<std::byte> copy = bytes();
  poke<std::uint32_t>(copy, 8, 2);
  EXPECT_EQ(decode_error(copy),
            "checkpoint format version 2 is not supported; this build reads version 1");
}

TEST_F(Checkpoint, ChecksumMismatchIsReported) {
  std::vector<std::byte> copy = bytes();
  copy[copy.size() / 2] ^= std::byte{0x10};
  EXPECT_EQ(decode_error(copy), "checksum mismatch: the file is corrupted");
}

TEST_F(Checkpoint, ExtraBytesAfterThePayloadAreRefused) {
  std::vector<std::byte> copy = bytes();
  copy.push_back(std::byte{0});
  EXPECT_NE(decode_error(copy).find("the header announces"), std::string::npos);
  reseal(copy);
  EXPECT_NE(decode_error(copy).find("unexpected bytes after the end of the payload"),
            std::string::npos);
}

// Payloads with a valid checksum but impossible contents.
TEST_F(Checkpoint, CountsThatDoNotFitAreRefusedBeforeAllocating) {
  const std::size_t at = particle_count_offset(state());
  const std::size_t after = bytes().size() - at - 8;  // bytes after the particle count
  const std::uint64_t just_too_many = after / 236 + 1;  // 236 bytes a particle
  for (std::uint64_t count :
       {std::uint64_t{1} << 62, std::numeric_limits<std::uint64_t>::max(), just_too_many}) {
    std::vector<std::byte> copy = bytes();
    poke<std::uint64_t>(copy, at, count);
    reseal(copy);
    const std::string message = decode_error(copy);
    EXPECT_NE(message.find("does not fit"), std::string::npos) << message;
  }
  std::vector<std::byte> copy = bytes();
  poke<std::uint64_t>(copy, checkpoint_header_size, std::uint64_t{1} << 40);  // scene path
  reseal(copy);
  EXPECT_NE(decode_error(copy).find("scene path is"), std::string::npos);
}

TEST_F(Checkpoint, InconsistentContentsAreRefused) {
  const std::size_t n = state().scene.particles.size();
  struct Case {
    const char* expect;
    std::function<void(CheckpointState&)> edit;
  };
  const std::vector<Case> cases = {
      {"time step", [](CheckpointState& s) { s.time_step = 0.0; }},
      {"time step", [](CheckpointState& s) { s.time_step = std::nan(""); }},
      {"integrator map 24", [](CheckpointState& s) { s.map = static_cast<IntegratorMap>(7); }},
      {"particle index out of range",
       [n](CheckpointState& s) { s.scene.bonds.second[3] = static_cast<std::uint32_t>(n); }},
      {"bonded to itself",
       [](CheckpointState& s) { s.scene.bonds.second[3] = s.scene.bonds.first[3]; }},
      {"stiffness type 2 out of range", [](CheckpointState& s) { s.scene.bonds.type[0] = 2; }},
      {"repeats an earlier type",
       [](CheckpointState& s) {
         s.scene.bonds.stiffness_types[1] = s.scene.bonds.stiffness_types[0];
       }},
      {"rest length", [](CheckpointState& s) { s.scene.bonds.rest_length[0] = -1.0; }},
      {"mass of particle 4", [](CheckpointState& s) { s.scene.particles.mass[4] = 0.0; }},
      {"not a permutation",
       [](CheckpointState& s) { s.scene.particles.id[2] = s.scene.particles.id[3]; }},
      {"position of particle 1 is not finite",
       [](CheckpointState& s) { s.scene.particles.position[1].y() = INFINITY; }},
      {"neighbour build positions for",
       [](CheckpointState& s) { s.neighbour_build_positions.pop_back(); }},
      {"wall 0: normal", [](CheckpointState& s) { s.scene.walls[0].normal *= 1.1; }},
      {"frame time 2", [](CheckpointState& s) { s.frame_times[2] = 0.0; }},
  };
  for (const Case& c : cases) {
    CheckpointState s = state();
    c.edit(s);
    std::vector<std::byte> encoded;
    if (std::string(c.expect) == "integrator map 24") {  // encode refuses a bad enum
      EXPECT_THROW(encode_checkpoint(s), std::invalid_argument);
      encoded = bytes();
      poke<std::uint32_t>(encoded, particle_count_offset(state()) - 20, 24);
      reseal(encoded);
    } else {
      encoded = encode_checkpoint(s);
    }
    const std::string message = decode_error(encoded);
    EXPECT_NE(message.find(c.expect), std::string::npos)
        << "expected '" << c.expect << "', got '" << message << "'";
    EXPECT_EQ(message.rfind("inconsistent: ", 0), 0u) << message;
  }
  std::vector<std::byte> copy = bytes();  // the reorder flag is one byte, 0 or 1
  CheckpointState s = state();
  s.scene.contact.reorder_on_rebuild = false;
  std::vector<std::byte> off = encode_checkpoint(s);
  std::size_t flag = 0;
  for (std::size_t i = 0; i < off.size(); ++i)
    if (off[i] != copy[i] && i >= checkpoint_header_size + 8) flag = i;  // past the checksum
  ASSERT_NE(flag, 0u);
  copy[flag] = std::byte{2};
  reseal(copy);
  EXPECT_NE(decode_error(copy).find("reorder flag must be 0 or 1"), std::string::npos);
}

TEST_F(Checkpoint, WriteIntoAMissingFolderThrowsAndLeavesNothing) {
  TempDir dir;
  const fs::path path = dir.path() / "missing" / "run.ckpt";
  try {
    write_checkpoint(path, state());
    FAIL() << "write_checkpoint into a missing folder did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "missing"));
  EXPECT_TRUE(dir.entries().empty());
}

TEST_F(Checkpoint, ReadingAMissingOrInvalidFileNamesIt) {
  TempDir dir;
  const fs::path path = dir.path() / "absent.ckpt";
  try {
    read_checkpoint(path);
    FAIL() << "read_checkpoint of a missing file did not throw";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  std::ofstream(path) << "not a checkpoint";
  try {
    read_checkpoint(path);
    FAIL() << "read_checkpoint of a text file did not throw";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()), "checkpoint '" + path.string() +
                                         "': not a DEM checkpoint (bad magic number)");
  }
}

TEST_F(Checkpoint, ASecondWriteReplacesTheFirst) {
  TempDir dir;
  const fs::path path = dir.path() / "run.ckpt";
  CheckpointState first = state();
  first.step_count = 1;
  write_checkpoint(path, first);
  write_checkpoint(path, state());
  expect_identical(state(), read_checkpoint(path));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"run.ckpt"});
}

// The temporary file cannot be created: the old checkpoint is untouched.
TEST_F(Checkpoint, AFailedCreateKeepsTheOldCheckpoint) {
  TempDir dir;
  const fs::path path = dir.path() / "run.ckpt";
  CheckpointState old = state();
  old.step_count = 1;
  write_checkpoint(path, old);
  fs::create_directory(dir.path() / "run.ckpt.tmp");  // blocks the temporary file
  EXPECT_THROW(write_checkpoint(path, state()), std::runtime_error);
  expect_identical(old, read_checkpoint(path));
}

// The write stops half way (file size limit, EFBIG): the old checkpoint is
// untouched and the partial temporary file is removed.
TEST_F(Checkpoint, AWriteThatFailsHalfWayKeepsTheOldCheckpoint) {
  TempDir dir;
  const fs::path path = dir.path() / "run.ckpt";
  CheckpointState old = make_state(4, 2);
  write_checkpoint(path, old);
  const std::size_t old_size = fs::file_size(path);
  ASSERT_GT(bytes().size(), 2 * old_size);

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = old_size + 100;  // the new file fails after old_size + 100 bytes
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string message;
  try {
    write_checkpoint(path, state());
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);

  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"run.ckpt"});
  EXPECT_EQ(fs::file_size(path), old_size);
  expect_identical(old, read_checkpoint(path));
}
