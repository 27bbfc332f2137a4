// Binary checkpoints (io/checkpoint.hpp, format version 2): exact round
// trips through memory and files (particles, clumps, every force provider's
// section), a restart that continues bit for bit, refusal of truncated,
// corrupted and inconsistent input (header, section framing, particles,
// clumps, each provider's section), and the atomic replacement of an
// existing checkpoint. Also keeps the fuzz seed corpus
// (tests/fuzz_corpus/checkpoint) decodable, and rewrites it when
// DEM_WRITE_CHECKPOINT_SEEDS is set.

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

#include "bonds/bond_provider.hpp"
#include "contact/wall_provider.hpp"
#include "core/field_io.hpp"
#include "engine/clump.hpp"
#include "engine/force_field.hpp"
#include "engine/provider_registry.hpp"
#include "engine/simulation.hpp"
#include "fields/gravity_provider.hpp"
#include "io/checkpoint.hpp"
#include "scene/ring_torus.hpp"

namespace fs = std::filesystem;
using namespace dem;

namespace {

/// A ring torus after `steps` steps of `map`: with the defaults it has hit
/// the wall, so positions, attitudes, forces and moments are all
/// non-trivial, and the particles have been re-ordered (ids are not the
/// identity). Frame times are recorded every 20 steps into *frames.
Simulation ring_simulation(std::size_t particles, std::size_t steps, std::vector<double>* frames = nullptr,
                           IntegratorMap map = IntegratorMap::rrp25, bool two_types = true) {
  RingTorusParameters p;
  p.particles = particles;
  p.tilt_deg = 20.0;
  p.spin = Vec3(0.3, -0.2, 0.5);
  p.speed = 2.0;
  Scene scene = make_ring_torus(p);
  scene.gravity = Vec3(0.0, -0.5, 0.1);
  // Two stiffness types, to round-trip a type table of more than one entry.
  if (two_types)
    scene.bonds.add(scene.particles, 0, static_cast<std::uint32_t>(particles / 2), BondStiffness{1.0, 2.0, 3.0});
  ForceField forces(scene.particles, scene.bonds, scene.contact, scene.walls, scene.gravity);
  Simulation sim(scene.particles, std::move(forces), map, 5e-3);
  for (std::size_t k = 0; k < steps; ++k) {
    sim.step();
    if (frames && k % 20 == 0) frames->push_back(sim.time());
  }
  return sim;
}

/// Fills the run's output fields (everything capture_simulation leaves).
void add_run_fields(CheckpointState& s, std::vector<double> frames) {
  s.scene_path = "scenes/ring torus (12).toml";
  s.scene_text = std::string("# ring torus\nparticles = 12\n\0binary-safe\n\xff", 42);
  s.frame_times = std::move(frames);
  s.energy_rows = 7;
  s.vtk_every = 20;
  s.energy_every = 3;
  s.checkpoint_every = 50;
  s.end_step = 1000;
}

CheckpointState make_state(std::size_t particles = 12, std::size_t steps = 60) {
  std::vector<double> frames;
  const Simulation sim = ring_simulation(particles, steps, &frames);
  CheckpointState s = capture_simulation(sim);
  add_run_fields(s, std::move(frames));
  return s;
}

/// Four unit spheres in an irregular, touching arrangement (a general J).
std::vector<std::uint32_t> add_tetromino(ParticleStore& s, const Vec3& at) {
  std::vector<std::uint32_t> slots;
  for (const Vec3& r : {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, 0, 0), Vec3(2, 1, 0)}) {
    ParticleSpec p;
    p.position = at + r;
    p.mass = 1.0;
    p.inertia = 0.1;
    p.diameter = 1.0;
    slots.push_back(static_cast<std::uint32_t>(s.add(p)));
  }
  return slots;
}

/// Two tumbling tetromino clumps and three free spheres falling onto a wall
/// y = 0, with contact, gravity and re-ordering.
Simulation clump_simulation(std::size_t steps, IntegratorMap map = IntegratorMap::rrp25) {
  ParticleStore s;
  for (int k = 0; k < 3; ++k) {
    ParticleSpec p;
    p.position = Vec3(1.0 + 1.2 * k, 4.0, 0.3 * k);
    p.velocity = Vec3(0.1 * k, -2.5, 0.0);
    p.angular_velocity = Vec3(0.0, 0.5 * k, 1.0);
    p.mass = 0.8;
    p.inertia = 0.05;
    p.diameter = 0.9;
    s.add(p);
  }
  const std::vector<std::uint32_t> a = add_tetromino(s, Vec3(0.3, 0.9, 0.1));
  const std::vector<std::uint32_t> b = add_tetromino(s, Vec3(-0.5, 2.3, -0.2));
  std::vector<Clump> clumps{make_clump(s, a, Vec3(0.5, -3.0, 0.0), Vec3(1.0, 2.0, -1.5)),
                            make_clump(s, b, Vec3(-0.5, -2.5, 0.2), Vec3(0.3, -0.5, 1.0))};
  ForceField field(s, BondList{}, ContactSettings{100.0, 0.1, true}, {Wall{Vec3::Zero(), Vec3::UnitY(), 100.0}},
                   Vec3(0.0, -1.0, 0.0));
  Simulation sim(std::move(s), std::move(field), std::move(clumps), map, 5e-3);
  for (std::size_t k = 0; k < steps; ++k) sim.step();
  return sim;
}

CheckpointState make_clump_state(std::size_t steps = 60) {
  CheckpointState s = capture_simulation(clump_simulation(steps));
  add_run_fields(s, {0.0, 0.1});
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
bool same_bits_mat(const Mat3& a, const Mat3& b) {
  return std::memcmp(a.data(), b.data(), 9 * sizeof(double)) == 0;
}
template <class T>
bool same_bits_element(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Vec3>) return same_bits_vec(a, b);
  else if constexpr (std::is_same_v<T, Quat>) return same_bits_quat(a, b);
  else return same_bits(a, b);
}

template <class T, class Eq>
void expect_same_array(const std::vector<T>& a, const std::vector<T>& b, const std::string& what, Eq eq) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(eq(a[i], b[i])) << what << " " << i;
}
template <class T>
void expect_same_array(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  expect_same_array(a, b, what, same_bits_element<T>);
}

/// Every field of two structures of arrays (ParticleStore, BondList), by
/// their field lists, bit for bit.
template <class Store>
void expect_same_fields(const Store& a, const Store& b, const std::string& what) {
  std::vector<std::function<void(const Store&)>> checks;
  a.for_each_field([&](const char* name, const auto& va) {
    using V = std::decay_t<decltype(va)>;
    const std::string field = what + " " + name;
    std::size_t index = 0;
    b.for_each_field([&](const char* other, const auto& vb) {
      if constexpr (std::is_same_v<V, std::decay_t<decltype(vb)>>)
        if (std::string(other) == name) {
          expect_same_array(va, vb, field);
          ++index;
        }
    });
    EXPECT_EQ(index, 1u) << field;
  });
}

void expect_same_clumps(const std::vector<Clump>& a, const std::vector<Clump>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    const RigidBody& x = a[k].body;
    const RigidBody& y = b[k].body;
    EXPECT_TRUE(same_bits(x.mass, y.mass)) << "clump " << k;
    EXPECT_TRUE(same_bits_mat(x.inertia, y.inertia)) << "clump " << k;
    EXPECT_TRUE(same_bits_vec(x.position, y.position)) << "clump " << k;
    EXPECT_TRUE(same_bits_vec(x.velocity, y.velocity)) << "clump " << k;
    EXPECT_TRUE(same_bits_mat(x.attitude, y.attitude)) << "clump " << k;
    EXPECT_TRUE(same_bits_vec(x.momentum, y.momentum)) << "clump " << k;
    EXPECT_TRUE(same_bits_vec(x.force, y.force)) << "clump " << k;
    EXPECT_TRUE(same_bits_vec(x.moment, y.moment)) << "clump " << k;
    expect_same_array(a[k].members, b[k].members, "clump members");
    expect_same_array(a[k].offsets, b[k].offsets, "clump offsets");
    expect_same_array(a[k].member_attitudes, b[k].member_attitudes, "clump member attitudes");
  }
}

void expect_identical(const CheckpointState& a, const CheckpointState& b) {
  EXPECT_EQ(a.scene_path, b.scene_path);
  EXPECT_EQ(a.scene_text, b.scene_text);
  EXPECT_EQ(a.map, b.map);
  EXPECT_TRUE(same_bits(a.time_step, b.time_step));
  EXPECT_EQ(a.step_count, b.step_count);
  EXPECT_EQ(a.reorder_on_rebuild, b.reorder_on_rebuild);
  expect_same_fields(a.particles, b.particles, "particle");
  expect_same_clumps(a.clumps, b.clumps);
  ASSERT_EQ(a.providers.size(), b.providers.size());
  for (std::size_t k = 0; k < a.providers.size(); ++k) {
    EXPECT_EQ(a.providers[k].name, b.providers[k].name);
    EXPECT_TRUE(a.providers[k].bytes == b.providers[k].bytes) << "provider section " << a.providers[k].name;
  }
  expect_same_array(a.frame_times, b.frame_times, "frame_times");
  EXPECT_EQ(a.energy_rows, b.energy_rows);
  EXPECT_EQ(a.vtk_every, b.vtk_every);
  EXPECT_EQ(a.energy_every, b.energy_every);
  EXPECT_EQ(a.checkpoint_every, b.checkpoint_every);
  EXPECT_EQ(a.end_step, b.end_step);
}

// ---------------------------------------------------------------- provider sections

const ProviderSection& section_of(const CheckpointState& s, const std::string& name) {
  for (const ProviderSection& p : s.providers)
    if (p.name == name) return p;
  throw std::logic_error("no provider section " + name);
}
std::vector<std::byte>& section_of(CheckpointState& s, const std::string& name) {
  for (ProviderSection& p : s.providers)
    if (p.name == name) return p.bytes;
  throw std::logic_error("no provider section " + name);
}

/// The bond list of a "bonds" section, by the provider's own loader.
BondList bonds_of(const CheckpointState& s) {
  ByteReader r(section_of(s, "bonds").bytes);
  return BondProvider::load(r, s.particles)->bonds();
}
/// A "bonds" section as BondProvider::save writes it (the BondList fields,
/// then the stiffness types), for any bond list, valid or not.
std::vector<std::byte> bonds_section(const BondList& b) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  save_fields(w, b, b.size(), "bond");
  w.u64(b.stiffness_types.size());
  for (const BondStiffness& k : b.stiffness_types) {
    w.f64(k.bending);
    w.f64(k.axial);
    w.f64(k.shear);
  }
  return out;
}

/// The fields of a "contact" section (Hertz law).
struct ContactSection {
  double stiffness = 0.0, skin = 0.0;
  std::vector<Vec3> built;
  std::uint64_t rebuilds = 0;
};
ContactSection contact_of(const CheckpointState& s) {
  ByteReader r(section_of(s, "contact").bytes);
  ContactSection c;
  c.stiffness = r.f64("stiffness");
  c.skin = r.f64("skin");
  r.array(c.built, 24, "built", [](ByteReader& rr) { return rr.vec3("built"); });
  c.rebuilds = r.u64("rebuilds");
  r.expect_end("contact");
  return c;
}
std::vector<std::byte> contact_section(const ContactSection& c) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.f64(c.stiffness);
  w.f64(c.skin);
  w.array(c.built, [](ByteWriter& ww, const Vec3& x) { ww.vec3(x); });
  w.u64(c.rebuilds);
  return out;
}

std::vector<Wall> walls_of(const CheckpointState& s) {
  ByteReader r(section_of(s, "walls").bytes);
  return WallProvider::load(r)->walls();
}
std::vector<std::byte> walls_section(const std::vector<Wall>& walls) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.array(walls, [](ByteWriter& ww, const Wall& wall) {
    ww.vec3(wall.point);
    ww.vec3(wall.normal);
    ww.f64(wall.stiffness);
  });
  w.u8(0);  // the law: Hertz (section 4)
  w.u64(0);  // no friction filter
  w.u64(0);
  return out;
}

Vec3 gravity_of(const CheckpointState& s) {
  ByteReader r(section_of(s, "gravity").bytes);
  return GravityProvider::load(r)->gravity();
}
std::vector<std::byte> gravity_section(const Vec3& g) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.vec3(g);
  return out;
}

void edit_bonds(CheckpointState& s, const std::function<void(BondList&)>& edit) {
  BondList b = bonds_of(s);
  edit(b);
  section_of(s, "bonds") = bonds_section(b);
}
void edit_contact(CheckpointState& s, const std::function<void(ContactSection&)>& edit) {
  ContactSection c = contact_of(s);
  edit(c);
  section_of(s, "contact") = contact_section(c);
}
void edit_walls(CheckpointState& s, const std::function<void(std::vector<Wall>&)>& edit) {
  std::vector<Wall> w = walls_of(s);
  edit(w);
  section_of(s, "walls") = walls_section(w);
}

// ---------------------------------------------------------------- bytes

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
  const std::uint32_t crc = reference_crc32(std::span(bytes).subspan(checkpoint_header_size));
  std::memcpy(bytes.data() + 16, &length, 8);
  std::memcpy(bytes.data() + 24, &crc, 4);
}

template <class T>
void poke(std::vector<std::byte>& bytes, std::size_t at, T value) {
  ASSERT_LE(at + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}
template <class T>
T peek(const std::vector<std::byte>& bytes, std::size_t at) {
  T v{};
  if (at + sizeof(T) <= bytes.size()) std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

/// Where a payload section lies in an encoded file (io/checkpoint.hpp: a
/// u32 section count, then each section's string tag, u64 length, bytes).
struct SectionAt {
  std::size_t tag_at = 0;     ///< the tag's u64 byte count
  std::size_t length_at = 0;  ///< the section's u64 length
  std::size_t body_at = 0;    ///< the section's first byte
  std::uint64_t length = 0;
};
SectionAt find_section(const std::vector<std::byte>& bytes, const std::string& tag) {
  std::size_t at = checkpoint_header_size;
  const std::uint32_t count = peek<std::uint32_t>(bytes, at);
  at += 4;
  for (std::uint32_t k = 0; k < count; ++k) {
    SectionAt s;
    s.tag_at = at;
    const std::uint64_t tag_size = peek<std::uint64_t>(bytes, at);
    const std::string t(reinterpret_cast<const char*>(bytes.data() + at + 8), tag_size);
    s.length_at = at + 8 + tag_size;
    s.length = peek<std::uint64_t>(bytes, s.length_at);
    s.body_at = s.length_at + 8;
    if (t == tag) return s;
    at = s.body_at + s.length;
  }
  throw std::logic_error("no section " + tag);
}

/// Appends `extra` to the end of a section's bytes, adjusting its length.
std::vector<std::byte> grow_section(std::vector<std::byte> bytes, const std::string& tag,
                                    std::vector<std::byte> extra) {
  const SectionAt s = find_section(bytes, tag);
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(s.body_at + s.length), extra.begin(), extra.end());
  const std::uint64_t length = s.length + extra.size();
  std::memcpy(bytes.data() + s.length_at, &length, 8);
  reseal(bytes);
  return bytes;
}

/// Offsets in the "run" section of an encoded state.
std::size_t map_offset(const std::vector<std::byte>& bytes, const CheckpointState& s) {
  return find_section(bytes, "run").body_at + 8 + s.scene_path.size() + 8 + s.scene_text.size();
}
std::size_t reorder_flag_offset(const std::vector<std::byte>& bytes, const CheckpointState& s) {
  return map_offset(bytes, s) + 4 + 8 + 8;
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
    clump_state_ = new CheckpointState(make_clump_state());
    clump_bytes_ = new std::vector<std::byte>(encode_checkpoint(*clump_state_));
  }
  static void TearDownTestSuite() {
    delete state_;
    delete bytes_;
    delete clump_state_;
    delete clump_bytes_;
  }
  static const CheckpointState& state() { return *state_; }
  static const std::vector<std::byte>& bytes() { return *bytes_; }
  static const CheckpointState& clump_state() { return *clump_state_; }
  static const std::vector<std::byte>& clump_bytes() { return *clump_bytes_; }

 private:
  static inline CheckpointState* state_ = nullptr;
  static inline std::vector<std::byte>* bytes_ = nullptr;
  static inline CheckpointState* clump_state_ = nullptr;
  static inline std::vector<std::byte>* clump_bytes_ = nullptr;
};

/// An edit of a state and the words its decode error must contain, after
/// the prefix (e.g. "inconsistent: ", "provider 'bonds': inconsistent: ").
struct Case {
  std::string prefix;
  std::string expect;
  std::function<void(CheckpointState&)> edit;
};

void expect_refused(const CheckpointState& base, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    CheckpointState s = base;
    c.edit(s);
    const std::string message = decode_error(encode_checkpoint(s));
    EXPECT_EQ(message.rfind(c.prefix, 0), 0u) << "expected prefix '" << c.prefix << "', got '" << message << "'";
    EXPECT_NE(message.find(c.expect), std::string::npos)
        << "expected '" << c.expect << "', got '" << message << "'";
  }
}

}  // namespace

// ---------------------------------------------------------------- round trips

TEST_F(Checkpoint, TheStateIsNonTrivial) {
  const ParticleStore& p = state().particles;
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
  ASSERT_EQ(state().providers.size(), 4u);
  const std::vector<std::string> names{"bonds", "contact", "walls", "gravity"};
  for (std::size_t k = 0; k < names.size(); ++k) EXPECT_EQ(state().providers[k].name, names[k]);
  const BondList bonds = bonds_of(state());
  EXPECT_EQ(bonds.size(), 13u);
  EXPECT_EQ(bonds.stiffness_types.size(), 2u);
  const ContactSection contact = contact_of(state());
  EXPECT_EQ(contact.built.size(), 12u);
  EXPECT_GT(contact.rebuilds, 1u);
  EXPECT_GT(contact.stiffness, 0.0);
  EXPECT_GT(contact.skin, 0.0);
  EXPECT_EQ(walls_of(state()).size(), 1u);
  EXPECT_TRUE(same_bits_vec(gravity_of(state()), Vec3(0.0, -0.5, 0.1)));
  EXPECT_TRUE(state().clumps.empty());
  EXPECT_TRUE(state().reorder_on_rebuild);
  EXPECT_EQ(state().frame_times.size(), 3u);
}

TEST_F(Checkpoint, HeaderLayout) {
  const auto& b = bytes();
  ASSERT_GT(b.size(), checkpoint_header_size);
  EXPECT_EQ(std::memcmp(b.data(), "DEMCKPT\0", 8), 0);
  EXPECT_EQ(peek<std::uint32_t>(b, 8), 14u);
  EXPECT_EQ(checkpoint_format_version, 14u);
  EXPECT_EQ(peek<std::uint32_t>(b, 12), 0u);
  EXPECT_EQ(peek<std::uint64_t>(b, 16), b.size() - checkpoint_header_size);
  EXPECT_EQ(peek<std::uint32_t>(b, 24), reference_crc32(std::span(b).subspan(checkpoint_header_size)));
  EXPECT_EQ(peek<std::uint32_t>(b, 28), 0u);
  // The payload: 3 + 4 sections, in order, the last one ending the file.
  EXPECT_EQ(peek<std::uint32_t>(b, checkpoint_header_size), 7u);
  std::size_t at = checkpoint_header_size + 4;
  for (const char* tag : {"run", "particles", "clumps", "provider:bonds", "provider:contact", "provider:walls",
                          "provider:gravity"}) {
    const SectionAt s = find_section(b, tag);
    EXPECT_EQ(s.tag_at, at) << tag;
    at = s.body_at + s.length;
  }
  EXPECT_EQ(at, b.size());
  // Each provider section holds exactly the bytes of the provider's save().
  for (const ProviderSection& p : state().providers) {
    const SectionAt s = find_section(b, "provider:" + p.name);
    ASSERT_EQ(s.length, p.bytes.size()) << p.name;
    EXPECT_EQ(std::memcmp(b.data() + s.body_at, p.bytes.data(), p.bytes.size()), 0) << p.name;
  }
}

TEST_F(Checkpoint, EncodeDecodeRoundTripIsBitwiseIdentical) {
  const CheckpointState back = decode_checkpoint(bytes());
  expect_identical(state(), back);
  EXPECT_EQ(encode_checkpoint(back), bytes());
}

TEST_F(Checkpoint, ProviderSectionsRoundTripThroughTheirProviders) {
  // Each provider made from its section saves the same bytes again: every
  // field it keeps (bond arrays and types, K^pp, skin, build positions and
  // count, walls, g) survives bit for bit.
  ForceField field = load_providers(state().providers, state().particles, state().reorder_on_rebuild);
  // Saved before the deferred list build (finish_restore) and after it: the same bytes.
  const std::vector<ProviderSection> pending = save_providers(field);
  field.update_records(state().particles);  // builds the restored neighbour list
  const std::vector<ProviderSection> again = save_providers(field);
  ASSERT_EQ(pending.size(), again.size());
  for (std::size_t k = 0; k < again.size(); ++k) EXPECT_TRUE(pending[k].bytes == again[k].bytes) << again[k].name;
  ASSERT_EQ(again.size(), state().providers.size());
  for (std::size_t k = 0; k < again.size(); ++k) {
    EXPECT_EQ(again[k].name, state().providers[k].name);
    EXPECT_TRUE(again[k].bytes == state().providers[k].bytes) << again[k].name;
  }
  // The sections hold what the providers were built with.
  EXPECT_TRUE(bonds_section(bonds_of(state())) == section_of(state(), "bonds").bytes);
  EXPECT_TRUE(contact_section(contact_of(state())) == section_of(state(), "contact").bytes);
  EXPECT_TRUE(walls_section(walls_of(state())) == section_of(state(), "walls").bytes);
  expect_same_array(field.neighbours().build_positions(), contact_of(state()).built, "build positions");
  EXPECT_EQ(field.neighbours().rebuild_count(), contact_of(state()).rebuilds);
  EXPECT_TRUE(same_bits_vec(dynamic_cast<const GravityProvider&>(*field.find("gravity")).gravity(), gravity_of(state())));
  EXPECT_EQ(field.reorder_on_rebuild(), state().reorder_on_rebuild);
}

TEST_F(Checkpoint, RoundTripKeepsSpecialValues) {
  CheckpointState s = state();
  s.particles.force[0] =
      Vec3(std::numeric_limits<double>::quiet_NaN(), -0.0, std::numeric_limits<double>::infinity());
  s.particles.moment[1] = Vec3(std::numeric_limits<double>::denorm_min(), -0.0, 1e308);
  section_of(s, "gravity") = gravity_section(Vec3(-0.0, 0.0, -0.0));
  s.map = IntegratorMap::rrp23;
  s.step_count = std::numeric_limits<std::uint64_t>::max();
  s.end_step = std::numeric_limits<std::uint64_t>::max();
  s.reorder_on_rebuild = false;
  s.scene_path.clear();
  s.scene_text.clear();
  s.frame_times = {0.0, 0.0, 1e-300, 5.0};
  const CheckpointState back = decode_checkpoint(encode_checkpoint(s));
  expect_identical(s, back);
  EXPECT_TRUE(same_bits_vec(gravity_of(back), Vec3(-0.0, 0.0, -0.0)));
}

TEST_F(Checkpoint, EmptySceneRoundTrips) {
  CheckpointState s;
  s.time_step = 1e-3;
  s.map = IntegratorMap::rrp27;
  expect_identical(s, decode_checkpoint(encode_checkpoint(s)));
  // No particles, but every provider.
  ForceField field(ParticleStore{}, BondList{}, ContactSettings{1.0, 0.1, false}, {}, Vec3(0.0, 0.0, -1.0));
  CheckpointState t = capture_simulation(Simulation(ParticleStore{}, std::move(field), IntegratorMap::rrp23, 0.5));
  EXPECT_EQ(t.providers.size(), 4u);
  expect_identical(t, decode_checkpoint(encode_checkpoint(t)));
}

TEST_F(Checkpoint, ClumpsRoundTripBitForBit) {
  const CheckpointState& s = clump_state();
  ASSERT_EQ(s.clumps.size(), 2u);
  bool reordered = false;
  for (std::size_t i = 0; i < s.particles.size(); ++i) reordered |= s.particles.id[i] != i;
  EXPECT_TRUE(reordered) << "the clump scene was never re-ordered";
  for (const Clump& c : s.clumps) {
    EXPECT_EQ(c.members.size(), 4u);
    EXPECT_FALSE(same_bits_mat(c.body.attitude, Mat3::Identity())) << "the clump never turned";
    EXPECT_GT(c.body.force.norm(), 0.0);
  }
  const CheckpointState back = decode_checkpoint(clump_bytes());
  expect_identical(s, back);
  expect_same_clumps(s.clumps, back.clumps);
  EXPECT_EQ(encode_checkpoint(back), clump_bytes());
}

TEST_F(Checkpoint, DecodedBondListAcceptsFurtherBonds) {
  const CheckpointState s = decode_checkpoint(bytes());
  BondList bonds = bonds_of(s);
  const std::size_t types = bonds.stiffness_types.size();
  const BondStiffness old = bonds.stiffness_types[1];
  const std::size_t b = bonds.add(s.particles, 1, 5, old);
  EXPECT_EQ(bonds.type[b], 1u) << "an existing stiffness triple must reuse its type";
  EXPECT_EQ(bonds.stiffness_types.size(), types);
  const std::size_t c = bonds.add(s.particles, 2, 7, BondStiffness{4.0, 5.0, 6.0});
  EXPECT_EQ(bonds.type[c], types);
  EXPECT_EQ(bonds.stiffness_types.size(), types + 1);
}

// A simulation rebuilt from a decoded checkpoint continues exactly as the
// one that wrote it: ring torus (bonds, contact, wall, gravity, re-ordering)
// for every map, and clumps.
TEST_F(Checkpoint, ARestartedSimulationContinuesBitForBit) {
  const auto check = [](Simulation original, const std::string& what) {
    Simulation restarted = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(original))));
    EXPECT_EQ(restarted.step_count(), original.step_count()) << what;
    EXPECT_TRUE(same_bits(restarted.time(), original.time())) << what;
    for (int k = 0; k < 80; ++k) {
      original.step();
      restarted.step();
    }
    const CheckpointState a = capture_simulation(original), b = capture_simulation(restarted);
    expect_identical(a, b);
    EXPECT_TRUE(encode_checkpoint(a) == encode_checkpoint(b)) << what;
    EXPECT_TRUE(same_bits(original.energy_report().total(), restarted.energy_report().total())) << what;
  };
  for (IntegratorMap map : {IntegratorMap::rrp23, IntegratorMap::rrp25, IntegratorMap::rrp27})
    check(ring_simulation(12, 57, nullptr, map), "ring torus, map " + std::to_string(static_cast<int>(map)));
  check(clump_simulation(57), "clumps");
}

TEST_F(Checkpoint, FileRoundTripLeavesNoTemporaryFile) {
  TempDir dir;
  const fs::path path = dir.path() / "run.ckpt";
  write_checkpoint(path, state());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"run.ckpt"});
  EXPECT_EQ(file_bytes(path), bytes());
  expect_identical(state(), read_checkpoint(path));
}

// ---------------------------------------------------------------- header

TEST_F(Checkpoint, TruncatedFilesAreRefused) {
  for (const std::vector<std::byte>* file : {&bytes(), &clump_bytes()}) {
    const auto& b = *file;
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n <= checkpoint_header_size + 64; ++n) lengths.push_back(n);
    for (std::size_t n = checkpoint_header_size + 64; n < b.size(); n += 1 + b.size() / 300) lengths.push_back(n);
    for (std::size_t n = b.size() - 16; n < b.size(); ++n) lengths.push_back(n);
    for (std::size_t n : lengths) {
      const std::string message = decode_error(std::span(b).first(n));
      EXPECT_FALSE(message.empty()) << "a file cut at " << n << " of " << b.size() << " bytes was accepted";
      if (n >= checkpoint_header_size) {
        EXPECT_EQ(message, "truncated: the header announces " + std::to_string(b.size()) +
                               " bytes, the file has " + std::to_string(n));
      } else if (n >= 8) {
        EXPECT_EQ(message, "truncated: the file has " + std::to_string(n) + " bytes, less than the 32-byte header");
      }
    }
  }
}

// A cut payload whose header was rewritten to match (as after a mistaken
// repair) is still refused, as truncated or corrupted, at every length.
TEST_F(Checkpoint, ResealedTruncatedPayloadsAreRefused) {
  const auto& b = clump_bytes();
  for (std::size_t n = checkpoint_header_size; n < b.size(); n += 1 + (n > 200 ? 7 : 0)) {
    std::vector<std::byte> cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    reseal(cut);
    const std::string message = decode_error(cut);
    EXPECT_TRUE(message.rfind("truncated: ", 0) == 0 || message.rfind("corrupted: ", 0) == 0 ||
                message.rfind("inconsistent: ", 0) == 0)
        << "cut at " << n << ": '" << message << "'";
  }
}

TEST_F(Checkpoint, EverySampledSingleByteFlipIsRefused) {
  const auto& b = bytes();
  std::vector<std::size_t> offsets;
  for (std::size_t i = 0; i < checkpoint_header_size + 64; ++i) offsets.push_back(i);
  for (std::size_t i = checkpoint_header_size + 64; i < b.size(); i += 1 + b.size() / 500) offsets.push_back(i);
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
  copy = bytes();
  copy[7] = std::byte{'!'};
  EXPECT_EQ(decode_error(copy), "not a DEM checkpoint (bad magic number)");
  const std::string text = "particles = 12\n# a scene file, not a checkpoint\n";
  std::vector<std::byte> junk(text.size());
  std::memcpy(junk.data(), text.data(), text.size());
  EXPECT_EQ(decode_error(junk), "not a DEM checkpoint (bad magic number)");
  EXPECT_EQ(decode_error(std::span(junk).first(3)), "not a DEM checkpoint (bad magic number)");
}

TEST_F(Checkpoint, VersionOneIsRefusedNamingItsVersion) {
  std::vector<std::byte> copy = bytes();
  poke<std::uint32_t>(copy, 8, 1);  // nothing else recomputed
  const std::string message = decode_error(copy);
  EXPECT_NE(message.find("version 1"), std::string::npos) << message;
  EXPECT_EQ(message, "checkpoint format version 1 is not supported; this build reads versions 2 to 15");
}

TEST_F(Checkpoint, FutureVersionIsRefused) {
  for (std::uint32_t version : {0u, 16u, 0xFFFFFFFFu}) {
    std::vector<std::byte> copy = bytes();
    poke<std::uint32_t>(copy, 8, version);
    EXPECT_EQ(decode_error(copy), "checkpoint format version " + std::to_string(version) +
                                      " is not supported; this build reads versions 2 to 15");
  }
  // Versions 7 and 9 are indexes of parts (run/checkpoint_parts.hpp): a
  // whole checkpoint labelled so is not one.
  for (std::uint32_t index : {7u, 9u, 11u, 13u, 15u}) {
    std::vector<std::byte> copy = bytes();
    poke<std::uint32_t>(copy, 8, index);
    EXPECT_NE(decode_error(copy).find("an index of parts has"), std::string::npos) << decode_error(copy);
  }
}

TEST_F(Checkpoint, ReservedHeaderFieldsMustBeZero) {
  for (std::size_t at : {std::size_t{12}, std::size_t{28}})
    for (std::uint32_t value : {1u, 0x80000000u}) {
      std::vector<std::byte> copy = bytes();
      poke<std::uint32_t>(copy, at, value);
      EXPECT_EQ(decode_error(copy), "corrupted: a reserved header field is not zero") << at;
    }
}

TEST_F(Checkpoint, ChecksumMismatchIsReported) {
  std::vector<std::byte> copy = bytes();
  copy[copy.size() / 2] ^= std::byte{0x10};
  EXPECT_EQ(decode_error(copy), "checksum mismatch: the file is corrupted");
  copy = bytes();
  poke<std::uint32_t>(copy, 24, peek<std::uint32_t>(copy, 24) ^ 1u);
  EXPECT_EQ(decode_error(copy), "checksum mismatch: the file is corrupted");
}

TEST_F(Checkpoint, ExtraBytesAfterThePayloadAreRefused) {
  std::vector<std::byte> copy = bytes();
  copy.push_back(std::byte{0});
  EXPECT_EQ(decode_error(copy), "corrupted: the header announces " + std::to_string(bytes().size()) +
                                    " bytes, the file has " + std::to_string(copy.size()));
  reseal(copy);
  EXPECT_EQ(decode_error(copy), "corrupted: 1 unexpected bytes after the end of the payload");
}

// ---------------------------------------------------------------- payload framing

// Payloads with a valid checksum but impossible counts: refused before
// allocating.
TEST_F(Checkpoint, CountsThatDoNotFitAreRefusedBeforeAllocating) {
  const auto refused = [](std::vector<std::byte> copy, std::size_t at, std::uint64_t count, const char* expect) {
    poke<std::uint64_t>(copy, at, count);
    reseal(copy);
    const std::string message = decode_error(copy);
    EXPECT_NE(message.find(expect), std::string::npos) << "count " << count << " at " << at << ": " << message;
  };
  const SectionAt particles = find_section(bytes(), "particles");
  const std::uint64_t just_too_many = (particles.length - 8) / 236 + 1;  // 236 bytes a particle
  for (std::uint64_t count : {std::uint64_t{1} << 62, std::numeric_limits<std::uint64_t>::max(), just_too_many})
    refused(bytes(), particles.body_at, count, "corrupted: particle item count");
  refused(bytes(), particles.body_at, peek<std::uint64_t>(bytes(), particles.body_at) + 1,
          "corrupted: particle item count 13");
  // Section lengths, the scene path and text, frame times.
  for (const char* tag : {"run", "particles", "clumps", "provider:walls"})
    for (std::uint64_t count : {std::uint64_t{1} << 62, std::numeric_limits<std::uint64_t>::max()})
      refused(bytes(), find_section(bytes(), tag).length_at, count, "does not fit");
  const std::size_t run = find_section(bytes(), "run").body_at;
  refused(bytes(), run, std::uint64_t{1} << 40, "corrupted: scene path is");
  refused(bytes(), run + 8 + state().scene_path.size(), std::uint64_t{1} << 20, "truncated: scene text");
  refused(bytes(), run + 8 + state().scene_path.size(), std::uint64_t{1} << 62, "corrupted: scene text is");
  refused(bytes(), reorder_flag_offset(bytes(), state()) + 1, std::uint64_t{1} << 61, "frame time count");
  // Clump count and clump member count.
  refused(clump_bytes(), find_section(clump_bytes(), "clumps").body_at, std::uint64_t{1} << 60,
          "corrupted: clump count");
  refused(clump_bytes(), find_section(clump_bytes(), "clumps").body_at, 3, "truncated: ");
  const std::size_t members = find_section(clump_bytes(), "clumps").body_at + 8 + 8 + 72 + 24 + 24 + 72 + 24 + 24 + 24;
  ASSERT_EQ(peek<std::uint64_t>(clump_bytes(), members), 4u);
  refused(clump_bytes(), members, std::uint64_t{1} << 60, "corrupted: clump member count");
  // Counts inside provider sections (bonds, walls, contact build positions).
  const auto provider_count = [](const char* name, std::size_t at, std::uint64_t count, const char* expect) {
    CheckpointState s = state();
    std::vector<std::byte>& b = section_of(s, name);
    ASSERT_LE(at + 8, b.size());
    std::memcpy(b.data() + at, &count, 8);
    const std::string message = decode_error(encode_checkpoint(s));
    EXPECT_EQ(message.rfind(std::string("provider '") + name + "': ", 0), 0u) << message;
    EXPECT_NE(message.find(expect), std::string::npos) << name << " count " << count << ": " << message;
  };
  provider_count("bonds", 0, std::uint64_t{1} << 62, "corrupted: bond item count");
  provider_count("bonds", 0, 14, "corrupted: field name");
  provider_count("walls", 0, std::uint64_t{1} << 62, "corrupted: wall count");
  provider_count("walls", 0, 2, "corrupted: wall count 2");
  provider_count("contact", 16, std::numeric_limits<std::uint64_t>::max(), "corrupted: neighbour build position count");
  provider_count("contact", 16, 13, "corrupted: neighbour build position count 13");
  // The bond stiffness type count, after the bond fields.
  {
    CheckpointState s = state();
    BondList b = bonds_of(s);
    std::vector<std::byte> fields;
    ByteWriter w(fields);
    save_fields(w, b, b.size(), "bond");
    provider_count("bonds", fields.size(), std::uint64_t{1} << 62, "corrupted: bond stiffness type count");
  }
}

TEST_F(Checkpoint, SectionFramingIsChecked) {
  const auto decode_edited = [](const std::function<void(std::vector<std::byte>&)>& edit) {
    std::vector<std::byte> copy = bytes();
    edit(copy);
    reseal(copy);
    return decode_error(copy);
  };
  // Section count.
  EXPECT_EQ(decode_edited([](auto& b) { poke<std::uint32_t>(b, checkpoint_header_size, 2); }),
            "inconsistent: 2 sections, at least 3 expected");
  EXPECT_EQ(decode_edited([](auto& b) { poke<std::uint32_t>(b, checkpoint_header_size, 0); }),
            "inconsistent: 0 sections, at least 3 expected");
  EXPECT_EQ(decode_edited([](auto& b) { poke<std::uint32_t>(b, checkpoint_header_size, 8); })
                .rfind("truncated: section tag", 0),
            0u);
  const std::size_t gravity = find_section(bytes(), "provider:gravity").tag_at;
  EXPECT_EQ(decode_edited([](auto& b) { poke<std::uint32_t>(b, checkpoint_header_size, 6); }),
            "corrupted: " + std::to_string(bytes().size() - gravity) + " unexpected bytes after the end of the payload");
  // Tags: misspelt, out of order, a provider section without its prefix.
  EXPECT_EQ(decode_edited([](auto& b) { b[find_section(b, "run").tag_at + 8 + 2] = std::byte{'m'}; }),
            "inconsistent: section 'rum' where 'run' was expected");
  EXPECT_EQ(decode_edited([](auto& b) { b[find_section(b, "clumps").tag_at + 8] = std::byte{'k'}; }),
            "inconsistent: section 'klumps' where 'clumps' was expected");
  EXPECT_EQ(decode_edited([](auto& b) { b[find_section(b, "provider:walls").tag_at + 8 + 8] = std::byte{'-'}; }),
            "inconsistent: section 'provider-walls' where 'provider:...' was expected");
  // A tag longer than its limit.
  EXPECT_NE(decode_edited([](auto& b) { poke<std::uint64_t>(b, find_section(b, "clumps").tag_at, 100000); })
                .find("corrupted: section tag is 100000 bytes long"),
            std::string::npos);
  // A section length that cuts into the next section.
  EXPECT_FALSE(decode_edited([](auto& b) {
                 const SectionAt s = find_section(b, "run");
                 poke<std::uint64_t>(b, s.length_at, s.length - 1);
               }).empty());
  EXPECT_FALSE(decode_edited([](auto& b) {
                 const SectionAt s = find_section(b, "particles");
                 poke<std::uint64_t>(b, s.length_at, s.length + 1);
               }).empty());
}

TEST_F(Checkpoint, TrailingBytesInASectionAreRefused) {
  const std::vector<std::byte> one{std::byte{0}};
  const std::vector<std::byte> three{std::byte{1}, std::byte{2}, std::byte{3}};
  EXPECT_EQ(decode_error(grow_section(bytes(), "run", one)),
            "corrupted: 1 unexpected bytes after the end of the 'run' section");
  EXPECT_EQ(decode_error(grow_section(bytes(), "particles", three)),
            "corrupted: 3 unexpected bytes after the end of the 'particles' section");
  EXPECT_EQ(decode_error(grow_section(clump_bytes(), "clumps", one)),
            "corrupted: 1 unexpected bytes after the end of the 'clumps' section");
  // A provider section with bytes its loader does not read.
  for (const char* name : {"bonds", "contact", "walls", "gravity"}) {
    EXPECT_EQ(decode_error(grow_section(bytes(), std::string("provider:") + name, three)),
              std::string("provider '") + name + "': corrupted: 3 unexpected bytes after the end of the '" + name +
                  "' section");
    CheckpointState s = state();
    section_of(s, name).push_back(std::byte{0});
    EXPECT_EQ(decode_error(encode_checkpoint(s)),
              std::string("provider '") + name + "': corrupted: 1 unexpected bytes after the end of the '" + name +
                  "' section");
  }
}

TEST_F(Checkpoint, UnknownOrRepeatedProviderSectionsAreRefused) {
  CheckpointState s = state();
  s.providers.push_back(ProviderSection{"springs", {}});
  EXPECT_EQ(decode_error(encode_checkpoint(s)),
            "inconsistent: no force provider named 'springs' is known to this build");
  s = state();
  s.providers.insert(s.providers.begin() + 1, ProviderSection{"magnetism", {std::byte{1}, std::byte{2}}});
  EXPECT_EQ(decode_error(encode_checkpoint(s)),
            "inconsistent: no force provider named 'magnetism' is known to this build");
  s = state();
  s.providers.push_back(ProviderSection{"", {}});
  EXPECT_EQ(decode_error(encode_checkpoint(s)), "inconsistent: no force provider named '' is known to this build");
  s = state();
  s.providers.push_back(s.providers[3]);
  EXPECT_NE(decode_error(encode_checkpoint(s)).find("a provider named 'gravity' is already there"), std::string::npos);
  // Fewer providers are fine: a scene may have any of them.
  s = state();
  s.providers.erase(s.providers.begin() + 1);
  EXPECT_EQ(decode_error(encode_checkpoint(s)), "");
}

// ---------------------------------------------------------------- contents

TEST_F(Checkpoint, InconsistentRunFieldsAreRefused) {
  const std::string in = "inconsistent: ";
  expect_refused(state(), {
      {in, "time step must be finite and > 0", [](CheckpointState& s) { s.time_step = 0.0; }},
      {in, "time step must be finite and > 0", [](CheckpointState& s) { s.time_step = -1e-3; }},
      {in, "time step must be finite and > 0", [](CheckpointState& s) { s.time_step = std::nan(""); }},
      {in, "time step must be finite and > 0", [](CheckpointState& s) { s.time_step = INFINITY; }},
      {in, "frame time 2", [](CheckpointState& s) { s.frame_times[2] = 0.0; }},
      {in, "frame time 0", [](CheckpointState& s) { s.frame_times[0] = -1.0; }},
      {in, "frame time 1", [](CheckpointState& s) { s.frame_times[1] = std::nan(""); }},
      {in, "frame time 2", [](CheckpointState& s) { s.frame_times[2] = INFINITY; }},
  });
  // The map and the reorder flag cannot be encoded wrong: patch their bytes.
  {
    CheckpointState s = state();
    s.map = static_cast<IntegratorMap>(7);
    EXPECT_THROW(encode_checkpoint(s), std::invalid_argument);
  }
  for (std::uint32_t map : {0u, 24u, 26u, 0xFFFFFFFFu}) {
    std::vector<std::byte> copy = bytes();
    const std::size_t at = map_offset(copy, state());
    ASSERT_EQ(peek<std::uint32_t>(copy, at), 25u);
    poke<std::uint32_t>(copy, at, map);
    reseal(copy);
    EXPECT_EQ(decode_error(copy),
              "inconsistent: integrator map " + std::to_string(map) + " is not 23, 25, 27 or 100 (implicit)");
  }
  for (std::uint8_t flag : {std::uint8_t{2}, std::uint8_t{0xFF}}) {
    std::vector<std::byte> copy = bytes();
    const std::size_t at = reorder_flag_offset(copy, state());
    ASSERT_EQ(peek<std::uint8_t>(copy, at), 1u);
    poke<std::uint8_t>(copy, at, flag);
    reseal(copy);
    EXPECT_EQ(decode_error(copy), "inconsistent: reorder flag must be 0 or 1, got " + std::to_string(flag));
  }
}

TEST_F(Checkpoint, InconsistentParticlesAreRefused) {
  const std::string in = "inconsistent: ";
  const double nan = std::nan("");
  expect_refused(state(), {
      {in, "position of particle 1 is not finite", [](CheckpointState& s) { s.particles.position[1].y() = INFINITY; }},
      {in, "velocity of particle 2 is not finite", [=](CheckpointState& s) { s.particles.velocity[2].z() = nan; }},
      {in, "angular velocity of particle 3 is not finite",
       [](CheckpointState& s) { s.particles.angular_velocity[3].x() = -INFINITY; }},
      {in, "reference position of particle 4 is not finite",
       [=](CheckpointState& s) { s.particles.reference_position[4].x() = nan; }},
      {in, "attitude of particle 5 is not a unit quaternion",
       [](CheckpointState& s) { s.particles.attitude[5].coeffs() *= 2.0; }},
      {in, "attitude of particle 6 is not a unit quaternion",
       [](CheckpointState& s) { s.particles.attitude[6].coeffs() *= 0.4; }},
      {in, "attitude of particle 0 is not a unit quaternion",
       [=](CheckpointState& s) { s.particles.attitude[0].w() = nan; }},
      {in, "reference attitude of particle 7 is not a unit quaternion",
       [](CheckpointState& s) { s.particles.reference_attitude[7].coeffs().setZero(); }},
      {in, "mass of particle 4", [](CheckpointState& s) { s.particles.mass[4] = 0.0; }},
      {in, "mass of particle 4", [](CheckpointState& s) { s.particles.mass[4] = -1.0; }},
      {in, "mass of particle 4", [=](CheckpointState& s) { s.particles.mass[4] = nan; }},
      {in, "moment of inertia of particle 2", [](CheckpointState& s) { s.particles.inertia[2] = 0.0; }},
      {in, "moment of inertia of particle 2", [](CheckpointState& s) { s.particles.inertia[2] = INFINITY; }},
      {in, "radius of particle 11", [](CheckpointState& s) { s.particles.radius[11] = -0.5; }},
      {in, "radius of particle 11", [](CheckpointState& s) { s.particles.radius[11] = 0.0; }},
      {in, "not a permutation", [](CheckpointState& s) { s.particles.id[2] = s.particles.id[3]; }},
      {in, "not a permutation", [](CheckpointState& s) { s.particles.id[0] = 12; }},
      {in, "not a permutation", [](CheckpointState& s) { s.particles.id[0] = 0xFFFFFFFFu; }},
  });
  // Forces and moments are results: any value is kept.
  CheckpointState s = state();
  s.particles.force[3] = Vec3(INFINITY, nan, -INFINITY);
  s.particles.moment[3] = Vec3(nan, nan, nan);
  EXPECT_EQ(decode_error(encode_checkpoint(s)), "");
  // Arrays of different lengths cannot be encoded.
  s = state();
  s.particles.radius.pop_back();
  EXPECT_THROW(encode_checkpoint(s), std::invalid_argument);
}

// The particle section names and types every field: a build with another
// field list refuses it.
TEST_F(Checkpoint, ParticleFieldListIsChecked) {
  const SectionAt p = find_section(bytes(), "particles");
  const std::size_t fields_at = p.body_at + 8;
  ASSERT_EQ(peek<std::uint32_t>(bytes(), fields_at), 13u);
  const std::size_t name_at = fields_at + 4;  // the first field: "position", type 3 (vec3)
  ASSERT_EQ(peek<std::uint64_t>(bytes(), name_at), 8u);
  std::vector<std::byte> copy = bytes();
  poke<std::uint32_t>(copy, fields_at, 11);
  reseal(copy);
  EXPECT_EQ(decode_error(copy), "inconsistent: particle has 11 fields, this build expects 13");
  copy = bytes();
  copy[name_at + 8 + 2] = std::byte{'z'};
  reseal(copy);
  EXPECT_EQ(decode_error(copy), "inconsistent: particle field 'pozition' where this build expects 'position'");
  copy = bytes();
  ASSERT_EQ(peek<std::uint8_t>(copy, name_at + 8 + 8), 3u);
  poke<std::uint8_t>(copy, name_at + 8 + 8, 2);
  reseal(copy);
  EXPECT_EQ(decode_error(copy), "inconsistent: particle field 'position' has type 2, expected 3");
}

TEST_F(Checkpoint, InconsistentBondsAreRefused) {
  const std::string in = "provider 'bonds': inconsistent: ";
  const std::uint32_t n = static_cast<std::uint32_t>(state().particles.size());
  expect_refused(state(), {
      {in, "particle index out of range (12 particles)", [n](CheckpointState& s) {
         edit_bonds(s, [n](BondList& b) { b.second[3] = n; });
       }},
      {in, "particle index out of range", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.first[0] = 0xFFFFFFFFu; });
       }},
      {in, "bonded to itself", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.second[3] = b.first[3]; });
       }},
      {in, "rest length must be finite and > 0", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.rest_length[0] = -1.0; });
       }},
      {in, "rest length must be finite and > 0", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.rest_length[5] = 0.0; });
       }},
      {in, "rest length must be finite and > 0", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.rest_length[5] = std::nan(""); });
       }},
      {in, "rest direction is not a unit vector", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.rest_direction[2] *= 1.001; });
       }},
      {in, "rest direction is not a unit vector", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.rest_direction[2].x() = INFINITY; });
       }},
      {in, "stiffness type 2 out of range (2 types)", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.type[0] = 2; });
       }},
      {in, "bond stiffness type 1 repeats an earlier type", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.stiffness_types[1] = b.stiffness_types[0]; });
       }},
      {in, "bond stiffness type 0 has a stiffness that is negative or not finite", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.stiffness_types[0].axial = -1.0; });
       }},
      {in, "bond stiffness type 1 has a stiffness that is negative or not finite", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.stiffness_types[1].shear = std::nan(""); });
       }},
      {in, "bond stiffness type 1 has a stiffness that is negative or not finite", [](CheckpointState& s) {
         edit_bonds(s, [](BondList& b) { b.stiffness_types[1].bending = INFINITY; });
       }},
      {in, "bond has 4 fields, this build expects 5", [](CheckpointState& s) {
         std::vector<std::byte>& b = section_of(s, "bonds");
         const std::uint32_t four = 4;
         std::memcpy(b.data() + 8, &four, 4);
       }},
  });
}

TEST_F(Checkpoint, InconsistentContactWallsAndGravityAreRefused) {
  const std::string contact = "provider 'contact': inconsistent: ";
  const std::string walls = "provider 'walls': inconsistent: ";
  const std::string gravity = "provider 'gravity': inconsistent: ";
  expect_refused(state(), {
      {contact, "contact stiffness must be finite and >= 0",
       [](CheckpointState& s) { edit_contact(s, [](ContactSection& c) { c.stiffness = -1.0; }); }},
      {contact, "contact stiffness must be finite and >= 0",
       [](CheckpointState& s) { edit_contact(s, [](ContactSection& c) { c.stiffness = std::nan(""); }); }},
      {contact, "Verlet skin must be finite and >= 0",
       [](CheckpointState& s) { edit_contact(s, [](ContactSection& c) { c.skin = -0.1; }); }},
      {contact, "Verlet skin must be finite and >= 0",
       [](CheckpointState& s) { edit_contact(s, [](ContactSection& c) { c.skin = INFINITY; }); }},
      {contact, "11 neighbour build positions for 12 particles (expected 0 or 12)",
       [](CheckpointState& s) { edit_contact(s, [](ContactSection& c) { c.built.pop_back(); }); }},
      {contact, "13 neighbour build positions for 12 particles",
       [](CheckpointState& s) { edit_contact(s, [](ContactSection& c) { c.built.push_back(Vec3::Zero()); }); }},
      {contact, "neighbour build position 3 is not finite",
       [](CheckpointState& s) { edit_contact(s, [](ContactSection& c) { c.built[3].z() = std::nan(""); }); }},
      {walls, "wall 0: normal must be a unit vector",
       [](CheckpointState& s) { edit_walls(s, [](std::vector<Wall>& w) { w[0].normal *= 1.1; }); }},
      {walls, "wall 0: normal must be a unit vector",
       [](CheckpointState& s) { edit_walls(s, [](std::vector<Wall>& w) { w[0].normal = Vec3::Zero(); }); }},
      {walls, "wall 1: normal must be a unit vector", [](CheckpointState& s) {
         edit_walls(s, [](std::vector<Wall>& w) { w.push_back(Wall{Vec3::Zero(), Vec3(std::nan(""), 0, 0), 1.0}); });
       }},
      {walls, "wall 0: point is not finite",
       [](CheckpointState& s) { edit_walls(s, [](std::vector<Wall>& w) { w[0].point.y() = -INFINITY; }); }},
      {walls, "wall 0: stiffness K^pw must be finite and >= 0",
       [](CheckpointState& s) { edit_walls(s, [](std::vector<Wall>& w) { w[0].stiffness = -1.0; }); }},
      {walls, "wall 0: stiffness K^pw must be finite and >= 0",
       [](CheckpointState& s) { edit_walls(s, [](std::vector<Wall>& w) { w[0].stiffness = INFINITY; }); }},
      {walls, "wall law 7 (0 Hertz, 1 penalty)",  // the law byte follows the walls: 8 + 56 per wall
       [](CheckpointState& s) { section_of(s, "walls")[8 + 56 * walls_of(s).size()] = std::byte{7}; }},
      {gravity, "gravity is not finite",
       [](CheckpointState& s) { section_of(s, "gravity") = gravity_section(Vec3(0, std::nan(""), 0)); }},
      {gravity, "gravity is not finite",
       [](CheckpointState& s) { section_of(s, "gravity") = gravity_section(Vec3(INFINITY, 0, 0)); }},
  });
  // A contact section without build positions is valid (the list is built
  // at the start of the run).
  CheckpointState s = state();
  edit_contact(s, [](ContactSection& c) { c.built.clear(); });
  EXPECT_EQ(decode_error(encode_checkpoint(s)), "");
  // Sections too short for their loader (refused at the count that no
  // longer fits, or at the value cut short).
  for (const char* name : {"bonds", "contact", "walls", "gravity"}) {
    s = state();
    // (The walls' last byte, their law, may be absent: files before it read as Hertz.)
    section_of(s, name).resize(section_of(s, name).size() - (std::string(name) == "walls" ? 18 : 1));
    const std::string message = decode_error(encode_checkpoint(s));
    const std::string prefix = std::string("provider '") + name + "': ";
    EXPECT_TRUE(message.rfind(prefix + "truncated: ", 0) == 0 || message.rfind(prefix + "corrupted: ", 0) == 0)
        << message;
    s = state();
    section_of(s, name).clear();
    EXPECT_EQ(decode_error(encode_checkpoint(s)).rfind(prefix + "truncated: ", 0), 0u) << name;
  }
}

TEST_F(Checkpoint, InconsistentClumpsAreRefused) {
  const std::string in = "inconsistent: ";
  expect_refused(clump_state(), {
      {in, "clump 0: mass must be finite and > 0", [](CheckpointState& s) { s.clumps[0].body.mass = 0.0; }},
      {in, "clump 1: mass must be finite and > 0", [](CheckpointState& s) { s.clumps[1].body.mass = std::nan(""); }},
      {in, "clump 0: its state is not finite", [](CheckpointState& s) { s.clumps[0].body.position.x() = INFINITY; }},
      {in, "clump 1: its state is not finite", [](CheckpointState& s) { s.clumps[1].body.momentum.z() = std::nan(""); }},
      {in, "clump 0: its state is not finite", [](CheckpointState& s) { s.clumps[0].body.attitude(1, 2) = INFINITY; }},
      {in, "clump 0: member arrays are empty or of different lengths",
       [](CheckpointState& s) { s.clumps[0].offsets.pop_back(); }},
      {in, "clump 1: member arrays are empty or of different lengths",
       [](CheckpointState& s) { s.clumps[1].member_attitudes.push_back(Quat::Identity()); }},
      {in, "clump 0: member arrays are empty or of different lengths", [](CheckpointState& s) {
         s.clumps[0].members.clear();
         s.clumps[0].offsets.clear();
         s.clumps[0].member_attitudes.clear();
       }},
      {in, "clump 0: member id 11 is not a particle", [](CheckpointState& s) { s.clumps[0].members[2] = 11; }},
      {in, "clump 0: inertia tensor must be positive definite",
       [](CheckpointState& s) { s.clumps[0].body.inertia = -Mat3::Identity(); }},
      {in, "clump 1: inertia tensor must be finite and symmetric",
       [](CheckpointState& s) { s.clumps[1].body.inertia(0, 1) += 1.0; }},
      {in, "clump 0: inertia tensor is not that of a body", [](CheckpointState& s) {
         s.clumps[0].body.inertia = Vec3(1.0, 1.0, 3.0).asDiagonal();
       }},
      {in, "is in two clumps", [](CheckpointState& s) { s.clumps[1].members[0] = s.clumps[0].members[0]; }},
      {in, "clump 0: its attitude is not a rotation matrix",
       [](CheckpointState& s) { s.clumps[0].body.attitude = 2.0 * Mat3::Identity(); }},
      {in, "clump 1: its attitude is not a rotation matrix",
       [](CheckpointState& s) { s.clumps[1].body.attitude(0, 1) = 0.5; }},
      {in, "clump 0: offset of member 1 is not finite",
       [](CheckpointState& s) { s.clumps[0].offsets[1].y() = std::nan(""); }},
      {in, "clump 1: attitude of member 0 is not a unit quaternion",
       [](CheckpointState& s) { s.clumps[1].member_attitudes[0].coeffs().setZero(); }},
      {in, "clump 0: attitude of member 2 is not a unit quaternion",
       [](CheckpointState& s) { s.clumps[0].member_attitudes[2].w() = std::nan(""); }},
  });
}

// ---------------------------------------------------------------- fuzz seeds

// The seed corpus of fuzz/fuzz_checkpoint.cpp: valid checkpoints of the
// current format, so that the fuzzer starts deep in the payload parser.
// DEM_WRITE_CHECKPOINT_SEEDS=1 rewrites them from the current encoder.
TEST(CheckpointSeeds, TheFuzzSeedCorpusDecodes) {
  const fs::path dir = fs::path(DEM_SOURCE_DIR) / "tests" / "fuzz_corpus" / "checkpoint";
  if (std::getenv("DEM_WRITE_CHECKPOINT_SEEDS")) {
    const auto write = [&](const char* name, CheckpointState s, const char* scene) {
      s.scene_path = std::string("scenes/") + scene;
      s.scene_text = std::string("# ") + scene + "\n";
      write_checkpoint(dir / name, s);
    };
    CheckpointState empty;
    empty.time_step = 1e-3;
    write("empty.ckpt", empty, "empty.toml");
    const auto ring = [](std::size_t n, std::size_t steps, IntegratorMap map, bool two_types) {
      std::vector<double> frames;
      CheckpointState s = capture_simulation(ring_simulation(n, steps, &frames, map, two_types));
      s.frame_times = frames;
      s.energy_rows = steps / 5;
      s.vtk_every = 20;
      s.energy_every = 5;
      s.end_step = 2 * steps;
      return s;
    };
    write("ring3_map25.ckpt", ring(3, 10, IntegratorMap::rrp25, false), "ring3.toml");
    write("ring4_map23_two_types.ckpt", ring(4, 30, IntegratorMap::rrp23, true), "ring4.toml");
    write("ring8_map27.ckpt", ring(8, 60, IntegratorMap::rrp27, false), "ring8.toml");
    CheckpointState clumps = capture_simulation(clump_simulation(40));
    clumps.frame_times = {0.0, 0.1};
    write("clumps_map25.ckpt", clumps, "clumps.toml");
  }
  std::size_t seeds = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++seeds;
    EXPECT_NO_THROW(read_checkpoint(e.path())) << e.path();
  }
  EXPECT_GE(seeds, 5u);
}

// ---------------------------------------------------------------- files

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

// Version 8: the Hessian blocks, the event tolerance and the event
// control's step sizes (engine/fracture_events.hpp) survive a checkpoint,
// and values no run makes are refused.
TEST_F(Checkpoint, ImplicitBlocksEventToleranceAndStepSizesRoundTrip) {
  CheckpointState c = state();
  c.implicit.hessian_blocks = HessianBlocks::projected;
  c.implicit.event_tolerance = 2.5e-3;
  c.implicit_clock.next_step = 3e-7;
  c.implicit_clock.last_step = 1.5e-7;
  const CheckpointState d = decode_checkpoint(encode_checkpoint(c));
  EXPECT_EQ(d.implicit.hessian_blocks, HessianBlocks::projected);
  EXPECT_EQ(d.implicit.event_tolerance, 2.5e-3);
  EXPECT_EQ(d.implicit_clock.next_step, 3e-7);
  EXPECT_EQ(d.implicit_clock.last_step, 1.5e-7);
  CheckpointState bad = c;
  bad.implicit.event_tolerance = -1e-3;
  EXPECT_NE(decode_error(encode_checkpoint(bad)).find("event tolerance"), std::string::npos);
  bad = c;
  bad.implicit_clock.next_step = std::numeric_limits<double>::infinity();
  EXPECT_NE(decode_error(encode_checkpoint(bad)).find("implicit step sizes"), std::string::npos);
}

// Version 10: the preconditioner survives a checkpoint (a restart goes on
// with the one the run started with), and a code no run writes is refused.
TEST_F(Checkpoint, PreconditionerRoundTrips) {
  CheckpointState c = state();
  EXPECT_EQ(decode_checkpoint(encode_checkpoint(c)).implicit.preconditioner, CgPreconditioner::block_jacobi);
  c.implicit.preconditioner = CgPreconditioner::amg;
  std::vector<std::byte> bytes = encode_checkpoint(c);
  EXPECT_EQ(decode_checkpoint(bytes).implicit.preconditioner, CgPreconditioner::amg);
  // The code is the last byte but two of the "run" section.
  const SectionAt run = find_section(bytes, "run");
  c.implicit.preconditioner = CgPreconditioner::two_level;
  EXPECT_EQ(decode_checkpoint(encode_checkpoint(c)).implicit.preconditioner, CgPreconditioner::two_level);
  poke<std::uint8_t>(bytes, run.body_at + run.length - 3, 3);
  reseal(bytes);
  EXPECT_NE(decode_error(bytes).find("the preconditioner code must be below 3, got 3"), std::string::npos)
      << decode_error(bytes);
}

// Version 12: hessian_update survives a checkpoint (a restart goes on with
// the run's), and a code no run writes is refused.
TEST_F(Checkpoint, HessianUpdateRoundTrips) {
  CheckpointState c = state();
  EXPECT_EQ(decode_checkpoint(encode_checkpoint(c)).implicit.hessian_update, HessianUpdate::every_iteration);
  c.implicit.hessian_update = HessianUpdate::when_slow;
  std::vector<std::byte> bytes = encode_checkpoint(c);
  EXPECT_EQ(decode_checkpoint(bytes).implicit.hessian_update, HessianUpdate::when_slow);
  const SectionAt run = find_section(bytes, "run");  // the code is the run section's last byte but one
  poke<std::uint8_t>(bytes, run.body_at + run.length - 2, 2);
  reseal(bytes);
  EXPECT_NE(decode_error(bytes).find("the Hessian update code must be 0 or 1, got 2"), std::string::npos)
      << decode_error(bytes);
}

// Version 14: the implicit scheme survives a checkpoint (a restart goes on
// with the run's), and a code no run writes is refused.
TEST_F(Checkpoint, ImplicitSchemeRoundTrips) {
  CheckpointState c = state();
  EXPECT_EQ(decode_checkpoint(encode_checkpoint(c)).implicit.scheme, ImplicitScheme::backward_euler);
  c.implicit.scheme = ImplicitScheme::midpoint;
  std::vector<std::byte> bytes = encode_checkpoint(c);
  EXPECT_EQ(decode_checkpoint(bytes).implicit.scheme, ImplicitScheme::midpoint);
  const SectionAt run = find_section(bytes, "run");  // the code is the run section's last byte
  poke<std::uint8_t>(bytes, run.body_at + run.length - 1, 2);
  reseal(bytes);
  EXPECT_NE(decode_error(bytes).find("the implicit scheme code must be 0 or 1, got 2"), std::string::npos)
      << decode_error(bytes);
}
