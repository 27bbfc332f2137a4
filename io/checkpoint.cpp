#include "io/checkpoint.hpp"
#include "engine/format.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <type_traits>
#include <utility>

namespace dem {

// Fields are copied with memcpy in host order; the format is little-endian.
static_assert(std::endian::native == std::endian::little,
              "the checkpoint format is little-endian; add byte swapping for this host");
static_assert(std::numeric_limits<double>::is_iec559 && sizeof(double) == 8);

namespace {

constexpr std::array<char, 8> kMagic{'D', 'E', 'M', 'C', 'K', 'P', 'T', '\0'};
constexpr std::size_t kMaxPathBytes = 64 * 1024;          // scene_path
constexpr std::size_t kMaxTextBytes = std::size_t{1} << 30;  // scene_text (1 GiB)
// Bytes of one particle in the payload: six vec3, two quat, three f64, one u32.
constexpr std::size_t kParticleBytes = 6 * 24 + 2 * 32 + 3 * 8 + 4;
// Bytes of one bond: two u32, f64, vec3, u32.
constexpr std::size_t kBondBytes = 4 + 4 + 8 + 24 + 4;


/// The map's number in the paper, as stored: 23, 25 or 27.
std::uint32_t map_code(IntegratorMap map) {
  switch (map) {
    case IntegratorMap::rrp23: return 23;
    case IntegratorMap::rrp25: return 25;
    case IntegratorMap::rrp27: return 27;
  }
  throw std::invalid_argument("encode_checkpoint: invalid integrator map");
}

std::uint32_t crc32_of(std::span<const std::byte> bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  std::size_t left = bytes.size();
  while (left > 0) {  // zlib's length is a uInt: feed large payloads in chunks
    const uInt chunk = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
    crc = crc32(crc, p, chunk);
    p += chunk;
    left -= chunk;
  }
  return static_cast<std::uint32_t>(crc);
}

// ---------------------------------------------------------------- encoding

class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) {}
  template <class T>
  void raw(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));
  }
  void u8(std::uint8_t v) { raw(v); }
  void u32(std::uint32_t v) { raw(v); }
  void u64(std::uint64_t v) { raw(v); }
  void f64(double v) { raw(v); }
  void vec3(const Vec3& v) {
    f64(v.x());
    f64(v.y());
    f64(v.z());
  }
  void quat(const Quat& q) {
    for (int k = 0; k < 4; ++k) f64(q.coeffs()[k]);  // x, y, z, w
  }
  void string(const std::string& s) {
    u64(s.size());
    const std::size_t at = out_.size();
    out_.resize(at + s.size());
    if (!s.empty()) std::memcpy(out_.data() + at, s.data(), s.size());
  }
  template <class T, class F>
  void items(const std::vector<T>& v, F put) {
    for (const T& x : v) (this->*put)(x);
  }

 private:
  std::vector<std::byte>& out_;
};

void encode_payload(const CheckpointState& s, std::vector<std::byte>& out) {
  Writer w(out);
  const ParticleStore& p = s.scene.particles;
  const std::size_t n = p.size();
  const auto check = [n](std::size_t size, const char* what) {
    if (size != n)
      throw std::invalid_argument(std::string("encode_checkpoint: particle array '") + what +
                                  "' has " + std::to_string(size) + " entries for " +
                                  std::to_string(n) + " particles");
  };
  check(p.velocity.size(), "velocity");
  check(p.attitude.size(), "attitude");
  check(p.angular_velocity.size(), "angular_velocity");
  check(p.force.size(), "force");
  check(p.moment.size(), "moment");
  check(p.mass.size(), "mass");
  check(p.inertia.size(), "inertia");
  check(p.radius.size(), "radius");
  check(p.reference_position.size(), "reference_position");
  check(p.reference_attitude.size(), "reference_attitude");
  check(p.id.size(), "id");
  const BondList& b = s.scene.bonds;
  for (std::size_t size : {b.second.size(), b.rest_length.size(), b.rest_direction.size(),
                           b.type.size()})
    if (size != b.size())
      throw std::invalid_argument("encode_checkpoint: the bond arrays differ in size");

  w.string(s.scene_path);
  w.string(s.scene_text);
  w.u32(map_code(s.map));
  w.f64(s.time_step);
  w.u64(s.step_count);

  w.u64(n);
  w.items(p.position, &Writer::vec3);
  w.items(p.velocity, &Writer::vec3);
  w.items(p.attitude, &Writer::quat);
  w.items(p.angular_velocity, &Writer::vec3);
  w.items(p.force, &Writer::vec3);
  w.items(p.moment, &Writer::vec3);
  w.items(p.mass, &Writer::f64);
  w.items(p.inertia, &Writer::f64);
  w.items(p.radius, &Writer::f64);
  w.items(p.reference_position, &Writer::vec3);
  w.items(p.reference_attitude, &Writer::quat);
  w.items(p.id, &Writer::u32);

  w.u64(b.size());
  w.items(b.first, &Writer::u32);
  w.items(b.second, &Writer::u32);
  w.items(b.rest_length, &Writer::f64);
  w.items(b.rest_direction, &Writer::vec3);
  w.items(b.type, &Writer::u32);
  w.u64(b.stiffness_types.size());
  for (const BondStiffness& k : b.stiffness_types) {
    w.f64(k.bending);
    w.f64(k.axial);
    w.f64(k.shear);
  }

  w.f64(s.scene.contact.stiffness);
  w.f64(s.scene.contact.skin);
  w.u8(s.scene.contact.reorder_on_rebuild ? 1 : 0);
  w.u64(s.scene.walls.size());
  for (const Wall& wall : s.scene.walls) {
    w.vec3(wall.point);
    w.vec3(wall.normal);
    w.f64(wall.stiffness);
  }
  w.vec3(s.scene.gravity);

  w.u64(s.neighbour_build_positions.size());
  w.items(s.neighbour_build_positions, &Writer::vec3);
  w.u64(s.neighbour_rebuilds);
  w.u64(s.frame_times.size());
  w.items(s.frame_times, &Writer::f64);
  w.u64(s.energy_rows);
}

// ---------------------------------------------------------------- decoding

[[noreturn]] void fail(const std::string& message) { throw CheckpointError(message); }

/// Bounds-checked cursor over the payload.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::size_t remaining() const { return bytes_.size() - pos_; }
  std::size_t offset() const { return pos_; }

  template <class T>
  T raw(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::uint8_t u8(const char* what) { return raw<std::uint8_t>(what); }
  std::uint32_t u32(const char* what) { return raw<std::uint32_t>(what); }
  std::uint64_t u64(const char* what) { return raw<std::uint64_t>(what); }
  double f64(const char* what) { return raw<double>(what); }
  Vec3 vec3(const char* what) {
    need(24, what);
    Vec3 v;
    for (int k = 0; k < 3; ++k) v[k] = f64(what);
    return v;
  }
  Quat quat(const char* what) {
    need(32, what);
    Quat q;
    for (int k = 0; k < 4; ++k) q.coeffs()[k] = f64(what);
    return q;
  }

  /// A count of items of `item_bytes` each that must fit in what remains.
  std::size_t count(const char* what, std::size_t item_bytes) {
    const std::uint64_t c = u64(what);
    if (c > remaining() / item_bytes)
      fail(std::string("corrupted: ") + what + " count " + std::to_string(c) + " (" +
           std::to_string(item_bytes) + " bytes each) does not fit in the " +
           std::to_string(remaining()) + " bytes left at payload offset " +
           std::to_string(pos_));
    return static_cast<std::size_t>(c);
  }

  std::string string(const char* what, std::size_t limit) {
    const std::uint64_t size = u64(what);
    if (size > limit)
      fail(std::string("corrupted: ") + what + " is " + std::to_string(size) +
           " bytes long, more than the limit of " + std::to_string(limit));
    need(static_cast<std::size_t>(size), what);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_),
                  static_cast<std::size_t>(size));
    pos_ += static_cast<std::size_t>(size);
    return s;
  }

  /// n items read by `get` (the count was checked by count()).
  template <class T, class F>
  void items(std::vector<T>& v, std::size_t n, const char* what, F get) {
    v.clear();
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) v.push_back((this->*get)(what));
  }

 private:
  void need(std::size_t n, const char* what) {
    if (n > remaining())
      fail(std::string("truncated payload: ") + what + " needs " + std::to_string(n) +
           " bytes at payload offset " + std::to_string(pos_) + ", only " +
           std::to_string(remaining()) + " remain");
  }

  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

bool finite_positive(double x) { return std::isfinite(x) && x > 0.0; }
bool finite_nonnegative(double x) { return std::isfinite(x) && x >= 0.0; }

void require_all_finite(const std::vector<Vec3>& v, const char* what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!v[i].allFinite())
      fail(std::string("inconsistent: ") + what + " " + std::to_string(i) + " is not finite");
}

void require_attitudes(const std::vector<Quat>& v, const char* what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!v[i].coeffs().allFinite() || !(std::abs(v[i].norm() - 1.0) < 0.5))
      fail(std::string("inconsistent: ") + what + " of particle " + std::to_string(i) +
           " is not a unit quaternion");
}

void require_positive(const std::vector<double>& v, const char* what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!finite_positive(v[i]))
      fail(std::string("inconsistent: ") + what + " of particle " + std::to_string(i) +
           " must be finite and > 0, got " + format_g(v[i], 17));
}

void decode_particles(Reader& r, ParticleStore& p) {
  const std::size_t n = r.count("particle", kParticleBytes);
  r.items(p.position, n, "particle positions", &Reader::vec3);
  r.items(p.velocity, n, "particle velocities", &Reader::vec3);
  r.items(p.attitude, n, "particle attitudes", &Reader::quat);
  r.items(p.angular_velocity, n, "particle angular velocities", &Reader::vec3);
  r.items(p.force, n, "particle forces", &Reader::vec3);
  r.items(p.moment, n, "particle moments", &Reader::vec3);
  r.items(p.mass, n, "particle masses", &Reader::f64);
  r.items(p.inertia, n, "particle inertias", &Reader::f64);
  r.items(p.radius, n, "particle radii", &Reader::f64);
  r.items(p.reference_position, n, "particle reference positions", &Reader::vec3);
  r.items(p.reference_attitude, n, "particle reference attitudes", &Reader::quat);
  r.items(p.id, n, "particle ids", &Reader::u32);

  // Forces and moments are results, not state: any value is kept as it is.
  require_all_finite(p.position, "position of particle");
  require_all_finite(p.velocity, "velocity of particle");
  require_all_finite(p.angular_velocity, "angular velocity of particle");
  require_all_finite(p.reference_position, "reference position of particle");
  require_attitudes(p.attitude, "attitude");
  require_attitudes(p.reference_attitude, "reference attitude");
  require_positive(p.mass, "mass");
  require_positive(p.inertia, "moment of inertia");
  require_positive(p.radius, "radius");
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t id = p.id[i];
    if (id >= n || seen[id])
      fail("inconsistent: particle ids are not a permutation of 0.." + std::to_string(n) +
           "-1 (slot " + std::to_string(i) + " has id " + std::to_string(id) + ")");
    seen[id] = true;
  }
}

void decode_bonds(Reader& r, BondList& b, std::size_t particles) {
  const std::size_t n = r.count("bond", kBondBytes);
  r.items(b.first, n, "bond first ends", &Reader::u32);
  r.items(b.second, n, "bond second ends", &Reader::u32);
  r.items(b.rest_length, n, "bond rest lengths", &Reader::f64);
  r.items(b.rest_direction, n, "bond rest directions", &Reader::vec3);
  r.items(b.type, n, "bond types", &Reader::u32);
  const std::size_t types = r.count("bond stiffness type", 24);
  b.stiffness_types.reserve(types);
  for (std::size_t t = 0; t < types; ++t) {
    BondStiffness k;
    k.bending = r.f64("bond stiffness types");
    k.axial = r.f64("bond stiffness types");
    k.shear = r.f64("bond stiffness types");
    if (!(finite_nonnegative(k.bending) && finite_nonnegative(k.axial) &&
          finite_nonnegative(k.shear)))
      fail("inconsistent: bond stiffness type " + std::to_string(t) +
           " has a stiffness that is negative or not finite");
    b.stiffness_types.push_back(k);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::string name = "inconsistent: bond " + std::to_string(i) + " (" +
                             std::to_string(b.first[i]) + ", " + std::to_string(b.second[i]) +
                             ")";
    if (b.first[i] >= particles || b.second[i] >= particles)
      fail(name + ": particle index out of range (" + std::to_string(particles) + " particles)");
    if (b.first[i] == b.second[i]) fail(name + ": a particle bonded to itself");
    if (!finite_positive(b.rest_length[i]))
      fail(name + ": rest length must be finite and > 0, got " + format_g(b.rest_length[i], 17));
    if (!b.rest_direction[i].allFinite() ||
        !(std::abs(b.rest_direction[i].norm() - 1.0) < 1e-9))
      fail(name + ": rest direction is not a unit vector");
    if (b.type[i] >= types)
      fail(name + ": stiffness type " + std::to_string(b.type[i]) + " out of range (" +
           std::to_string(types) + " types)");
  }
  try {
    b.rebuild_type_index();
  } catch (const std::invalid_argument& e) {
    fail(std::string("inconsistent: ") + e.what());
  }
}

void decode_payload(std::span<const std::byte> payload, CheckpointState& s) {
  Reader r(payload);
  s.scene_path = r.string("scene path", kMaxPathBytes);
  s.scene_text = r.string("scene text", kMaxTextBytes);
  const std::uint32_t map = r.u32("integrator map");
  switch (map) {
    case 23: s.map = IntegratorMap::rrp23; break;
    case 25: s.map = IntegratorMap::rrp25; break;
    case 27: s.map = IntegratorMap::rrp27; break;
    default:
      fail("inconsistent: integrator map " + std::to_string(map) + " is not 23, 25 or 27");
  }
  s.time_step = r.f64("time step");
  if (!finite_positive(s.time_step))
    fail("inconsistent: time step must be finite and > 0, got " + format_g(s.time_step, 17));
  s.step_count = r.u64("step count");

  decode_particles(r, s.scene.particles);
  const std::size_t n = s.scene.particles.size();
  decode_bonds(r, s.scene.bonds, n);

  ContactSettings& c = s.scene.contact;
  c.stiffness = r.f64("contact stiffness");
  c.skin = r.f64("contact skin");
  const std::uint8_t reorder = r.u8("contact reorder flag");
  if (!finite_nonnegative(c.stiffness))
    fail("inconsistent: contact stiffness must be finite and >= 0, got " + format_g(c.stiffness, 17));
  if (!finite_nonnegative(c.skin))
    fail("inconsistent: Verlet skin must be finite and >= 0, got " + format_g(c.skin, 17));
  if (reorder > 1)
    fail("inconsistent: reorder flag must be 0 or 1, got " + std::to_string(reorder));
  c.reorder_on_rebuild = reorder == 1;

  const std::size_t walls = r.count("wall", 56);
  s.scene.walls.reserve(walls);
  for (std::size_t i = 0; i < walls; ++i) {
    Wall w;
    w.point = r.vec3("walls");
    w.normal = r.vec3("walls");
    w.stiffness = r.f64("walls");
    const std::string name = "inconsistent: wall " + std::to_string(i);
    if (!w.point.allFinite()) fail(name + ": point is not finite");
    // Same tolerance as ForceField's check.
    if (!w.normal.allFinite() || !(std::abs(w.normal.norm() - 1.0) < 1e-12))
      fail(name + ": normal is not a unit vector");
    if (!finite_nonnegative(w.stiffness))
      fail(name + ": stiffness must be finite and >= 0, got " + format_g(w.stiffness, 17));
    s.scene.walls.push_back(w);
  }
  s.scene.gravity = r.vec3("gravity");
  if (!s.scene.gravity.allFinite()) fail("inconsistent: gravity is not finite");

  const std::size_t built = r.count("neighbour build position", 24);
  if (built != 0 && built != n)
    fail("inconsistent: " + std::to_string(built) + " neighbour build positions for " +
         std::to_string(n) + " particles (expected 0 or " + std::to_string(n) + ")");
  r.items(s.neighbour_build_positions, built, "neighbour build positions", &Reader::vec3);
  require_all_finite(s.neighbour_build_positions, "neighbour build position");
  s.neighbour_rebuilds = r.u64("neighbour rebuild count");

  const std::size_t frames = r.count("frame time", 8);
  r.items(s.frame_times, frames, "frame times", &Reader::f64);
  for (std::size_t i = 0; i < frames; ++i)
    if (!finite_nonnegative(s.frame_times[i]) || (i > 0 && s.frame_times[i] < s.frame_times[i - 1]))
      fail("inconsistent: frame time " + std::to_string(i) + " (" + format_g(s.frame_times[i], 17) +
           ") is negative, not finite or earlier than the one before");
  s.energy_rows = r.u64("energy row count");

  if (r.remaining() != 0)
    fail("corrupted: " + std::to_string(r.remaining()) +
         " unexpected bytes after the end of the payload");
}

template <class T>
T load(std::span<const std::byte> bytes, std::size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

std::vector<std::byte> encode_checkpoint(const CheckpointState& state) {
  std::vector<std::byte> out(checkpoint_header_size);
  encode_payload(state, out);
  const std::span<const std::byte> payload(out.data() + checkpoint_header_size,
                                           out.size() - checkpoint_header_size);
  const std::uint32_t version = checkpoint_format_version;
  const std::uint32_t reserved = 0;
  const std::uint64_t length = payload.size();
  const std::uint32_t crc = crc32_of(payload);
  std::memcpy(out.data() + 0, kMagic.data(), 8);
  std::memcpy(out.data() + 8, &version, 4);
  std::memcpy(out.data() + 12, &reserved, 4);
  std::memcpy(out.data() + 16, &length, 8);
  std::memcpy(out.data() + 24, &crc, 4);
  std::memcpy(out.data() + 28, &reserved, 4);
  return out;
}

CheckpointState decode_checkpoint(std::span<const std::byte> bytes) {
  const std::size_t size = bytes.size();
  const std::size_t magic_seen = std::min<std::size_t>(size, kMagic.size());
  if (magic_seen > 0 && std::memcmp(bytes.data(), kMagic.data(), magic_seen) != 0)
    fail("not a DEM checkpoint (bad magic number)");
  if (size < checkpoint_header_size)
    fail("truncated: the file has " + std::to_string(size) + " bytes, less than the " +
         std::to_string(checkpoint_header_size) + "-byte header");
  const auto version = load<std::uint32_t>(bytes, 8);
  if (version != checkpoint_format_version)
    fail("checkpoint format version " + std::to_string(version) +
         " is not supported; this build reads version " +
         std::to_string(checkpoint_format_version));
  if (load<std::uint32_t>(bytes, 12) != 0 || load<std::uint32_t>(bytes, 28) != 0)
    fail("corrupted: a reserved header field is not zero");
  const auto length = load<std::uint64_t>(bytes, 16);
  const std::size_t available = size - checkpoint_header_size;
  if (length != available) {
    const std::string announced =
        length <= std::numeric_limits<std::uint64_t>::max() - checkpoint_header_size
            ? std::to_string(length + checkpoint_header_size)
            : std::to_string(checkpoint_header_size) + " + " + std::to_string(length);
    fail(std::string(length > available ? "truncated" : "corrupted") +
         ": the header announces " + announced + " bytes, the file has " +
         std::to_string(size));
  }
  const std::span<const std::byte> payload = bytes.subspan(checkpoint_header_size);
  if (crc32_of(payload) != load<std::uint32_t>(bytes, 24))
    fail("checksum mismatch: the file is corrupted");
  CheckpointState state;
  decode_payload(payload, state);
  return state;
}

void write_checkpoint(const std::filesystem::path& path, const CheckpointState& state) {
  const std::vector<std::byte> bytes = encode_checkpoint(state);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  const auto failure = [&](const std::string& step, int err) {
    return std::runtime_error("cannot write checkpoint '" + path.string() + "': " + step +
                              " '" + tmp.string() + "' failed: " + errno_text(err));
  };

  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw failure("creating", errno);
  // From here on the temporary file is ours: remove it on any failure.
  const auto abandon = [&](const std::string& step, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return failure(step, err);
  };
  const char* p = reinterpret_cast<const char*>(bytes.data());
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw abandon("writing", errno);
    }
    if (w == 0) throw abandon("writing", EIO);
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0) throw abandon("flushing (fsync)", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw failure("closing", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw failure("renaming", err);
  }
  // Make the rename itself durable (best effort: some file systems refuse
  // to fsync a directory, and the checkpoint is complete either way).
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

CheckpointState read_checkpoint(const std::filesystem::path& path) {
  const std::string name = "checkpoint '" + path.string() + "'";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(name + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(name + ": cannot open: " + errno_text(errno));
  std::vector<std::byte> bytes;
  std::array<char, 1 << 16> buf;
  while (in) {
    in.read(buf.data(), buf.size());
    const auto got = static_cast<std::size_t>(in.gcount());
    const std::size_t at = bytes.size();
    bytes.resize(at + got);
    std::memcpy(bytes.data() + at, buf.data(), got);
  }
  if (in.bad()) fail(name + ": read error");
  try {
    return decode_checkpoint(bytes);
  } catch (const CheckpointError& e) {
    fail(name + ": " + e.what());
  }
}

}  // namespace dem
