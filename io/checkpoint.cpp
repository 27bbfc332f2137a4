#include "io/checkpoint.hpp"
#include "core/field_io.hpp"
#include "core/format.hpp"

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

namespace {

constexpr std::array<char, 8> kMagic{'D', 'E', 'M', 'C', 'K', 'P', 'T', '\0'};
constexpr std::size_t kMaxPathBytes = 64 * 1024;          // scene_path
constexpr std::size_t kMaxTextBytes = std::size_t{1} << 30;  // scene_text (1 GiB)


/// The map's number in the paper, as stored: 23, 25 or 27.
std::uint32_t map_code(IntegratorMap map) {
  switch (map) {
    case IntegratorMap::rrp23: return 23;
    case IntegratorMap::rrp25: return 25;
    case IntegratorMap::rrp27: return 27;
    case IntegratorMap::implicit: return 100;
  }
  throw std::invalid_argument("encode_checkpoint: invalid integrator map");
}

// ---------------------------------------------------------------- encoding

/// Appends a section: string tag, u64 length, the bytes body(writer) writes.
template <class Body>
void put_section(ByteWriter& w, std::vector<std::byte>& out, const std::string& tag, Body body) {
  w.string(tag);
  const std::size_t length_at = out.size();
  w.u64(0);
  const std::size_t start = out.size();
  body(w);
  const std::uint64_t length = out.size() - start;
  std::memcpy(out.data() + length_at, &length, 8);
}

void encode_run(ByteWriter& r, const CheckpointState& s) {
  r.string(s.scene_path);
  r.string(s.scene_text);
  r.u32(map_code(s.map));
  r.f64(s.time_step);
  r.u64(s.step_count);
  r.u8(s.reorder_on_rebuild ? 1 : 0);
  r.array(s.frame_times, [](ByteWriter& ww, double t) { ww.f64(t); });
  r.u64(s.energy_rows);
  r.u64(s.vtk_every);
  r.u64(s.energy_every);
  r.u64(s.checkpoint_every);
  r.u64(s.end_step);
  r.u64(s.run_id);
  r.f64(s.energy_check.initial_energy);
  r.f64(s.energy_check.scale);
  r.f64(s.max_energy_drift);
  r.f64(s.warn_energy_drift);
  r.f64(s.ledger.fracture);
  r.f64(s.ledger.contact);
  r.f64(s.ledger.filter);
  r.f64(s.ledger.boundary);
  r.u64(s.groups.size());
  for (const ParticleGroup& g : s.groups) {
    r.string(g.name);
    r.u8(static_cast<std::uint8_t>(g.motion));
    r.vec3(g.velocity);
    r.vec3(g.force);
    r.array(g.ids, [](ByteWriter& ww, std::uint32_t id) { ww.u32(id); });
  }
  r.f64(s.implicit.newton_tolerance);
  r.f64(s.implicit.cg_tolerance_max);
  r.u64(s.implicit.max_newton_iterations);
  r.u64(s.implicit.max_cg_iterations);
  r.f64(s.time_origin);
  r.u64(s.step_origin);
  r.u8(s.energy_check.measured ? 1 : 0);
  r.f64(s.energy_check.initial_gravity);
  r.f64(s.energy_check.highest);
  r.u64(s.energy_check.reference_step);
  r.u8(static_cast<std::uint8_t>(s.implicit.hessian_blocks));
  r.f64(s.implicit.event_tolerance);
  r.f64(s.implicit_clock.next_step);
  r.f64(s.implicit_clock.last_step);
  r.u8(static_cast<std::uint8_t>(s.implicit.preconditioner));
  r.u8(static_cast<std::uint8_t>(s.implicit.hessian_update));
  r.u8(static_cast<std::uint8_t>(s.implicit.scheme));
}

/// The "parts" section of an index (versions 7 and 9).
void encode_parts(ByteWriter& r, const CheckpointParts& p) {
  r.u64(p.particle_count);
  r.u64(p.bond_count);
  r.u64(p.bond_digest);
  r.u64(p.rebuild_count);
  r.u8(p.build_edges ? 1 : 0);
  r.mat3(p.build_edges ? *p.build_edges : Mat3::Zero());
  r.array(p.failed_bonds, [](ByteWriter& ww, std::uint32_t b) { ww.u32(b); });
  r.u64(p.parts.size());
  for (const CheckpointPart& part : p.parts) {
    r.string(part.file);
    r.u64(part.bytes);
    r.u32(part.crc);
    r.u64(part.particles);
  }
}

void encode_payload(const CheckpointState& s, std::vector<std::byte>& out) {
  ByteWriter w(out);
  if (s.parts) {
    w.u32(2);
    put_section(w, out, "run", [&](ByteWriter& r) { encode_run(r, s); });
    put_section(w, out, "parts", [&](ByteWriter& r) { encode_parts(r, *s.parts); });
    return;
  }
  w.u32(static_cast<std::uint32_t>(3 + s.providers.size()));
  put_section(w, out, "run", [&](ByteWriter& r) { encode_run(r, s); });
  put_section(w, out, "particles",
              [&](ByteWriter& r) { save_fields(r, s.particles, s.particles.size(), "encode_checkpoint: particle"); });
  put_section(w, out, "clumps", [&](ByteWriter& r) { save_clumps(r, s.clumps); });
  for (const ProviderSection& p : s.providers)
    put_section(w, out, "provider:" + p.name, [&](ByteWriter& r) { r.bytes(p.bytes); });
}

// ---------------------------------------------------------------- decoding

[[noreturn]] void fail(const std::string& message) { throw CheckpointError(message); }

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

void validate_particles(const ParticleStore& p) {
  const std::size_t n = p.size();
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

/// The next section, whose tag must be `expected` (or start with it when
/// `prefix`); returns its bytes and sets `tag`.
std::span<const std::byte> take_section(ByteReader& r, const std::string& expected, bool prefix, std::string& tag) {
  tag = r.string("section tag", 256);
  const bool ok = prefix ? tag.rfind(expected, 0) == 0 : tag == expected;
  if (!ok) fail("inconsistent: section '" + tag + "' where '" + expected + (prefix ? "...'" : "'") + " was expected");
  const std::size_t length = r.count(("section '" + tag + "' byte").c_str(), 1);
  return r.bytes(length, tag.c_str());
}

/// What the "run" section must hold, checked when it is read and before it
/// is written (validate_checkpoint_state).
void validate_run(const CheckpointState& s) {
  if (!finite_positive(s.time_step))
    fail("inconsistent: time step must be finite and > 0, got " + format_g(s.time_step, 17));
  for (std::size_t i = 0; i < s.frame_times.size(); ++i)
    if (!finite_nonnegative(s.frame_times[i]) || (i > 0 && s.frame_times[i] < s.frame_times[i - 1]))
      fail("inconsistent: frame time " + std::to_string(i) + " (" + format_g(s.frame_times[i], 17) +
           ") is negative, not finite or earlier than the one before");
  const EnergyCheckState& e = s.energy_check;
  if (!std::isfinite(e.initial_energy))
    fail("inconsistent: the initial energy must be finite, got " + format_g(e.initial_energy, 17));
  if (!finite_nonnegative(e.scale))
    fail("inconsistent: the energy scale must be finite and >= 0, got " + format_g(e.scale, 17));
  if (!std::isfinite(e.initial_gravity) || !std::isfinite(e.highest))
    fail("inconsistent: the energy check's reference must be finite, got U_gravity " +
         format_g(e.initial_gravity, 17) + " and highest E_balance " + format_g(e.highest, 17));
  if (e.reference_step > s.step_count)
    fail("inconsistent: the energy reference step " + std::to_string(e.reference_step) + " is after the step count " +
         std::to_string(s.step_count));
  if (!finite_positive(s.max_energy_drift) || !finite_positive(s.warn_energy_drift))
    fail("inconsistent: the energy drift limits must be finite and > 0, got " + format_g(s.max_energy_drift, 17) +
         " and " + format_g(s.warn_energy_drift, 17));
  for (const double w : {s.ledger.fracture, s.ledger.contact, s.ledger.filter, s.ledger.boundary})
    if (!std::isfinite(w))
      fail("inconsistent: the dissipation ledger must be finite, got W_fracture " + format_g(s.ledger.fracture) +
           ", W_contact " + format_g(s.ledger.contact) + ", W_filter " + format_g(s.ledger.filter) +
           ", W_boundary " + format_g(s.ledger.boundary));
  for (std::size_t k = 0; k < s.groups.size(); ++k)
    if (!s.groups[k].velocity.allFinite() || !s.groups[k].force.allFinite())
      fail("inconsistent: group " + std::to_string(k) + " has a velocity or force that is not finite");
  const ImplicitSettings& im = s.implicit;
  if (!finite_positive(im.newton_tolerance) || !finite_positive(im.cg_tolerance_max) || im.cg_tolerance_max > 1.0 ||
      im.max_newton_iterations == 0 || im.max_cg_iterations == 0)
    fail("inconsistent: implicit settings (tolerances finite in (0, 1], iteration limits > 0)");
  if (!std::isfinite(s.time_origin) || s.step_origin > s.step_count)
    fail("inconsistent: the clock origin must be finite and at most the step count");
  if (!(im.event_tolerance >= 0.0 && im.event_tolerance < 1.0))
    fail("inconsistent: the event tolerance must be in [0, 1), got " + format_g(im.event_tolerance, 17));
  for (const double dt : {s.implicit_clock.next_step, s.implicit_clock.last_step})
    if (!(dt >= 0.0) || !std::isfinite(dt))
      fail("inconsistent: the implicit step sizes must be finite and >= 0, got " + format_g(dt, 17));
}

void decode_run(std::span<const std::byte> bytes, std::uint32_t file_version, CheckpointState& s) {
  // An index of parts has the "run" section of the whole format before it.
  const std::uint32_t version = file_version == checkpoint_index_version     ? checkpoint_format_version
                                : file_version == checkpoint_index_version_13 ? 12u
                                : file_version == checkpoint_index_version_11 ? 10u
                                : file_version == checkpoint_index_version_9 ? 8u
                                : file_version == checkpoint_index_version_7 ? 6u
                                                                             : file_version;
  ByteReader r(bytes);
  s.scene_path = r.string("scene path", kMaxPathBytes);
  s.scene_text = r.string("scene text", kMaxTextBytes);
  const std::uint32_t map = r.u32("integrator map");
  switch (map) {
    case 23: s.map = IntegratorMap::rrp23; break;
    case 25: s.map = IntegratorMap::rrp25; break;
    case 27: s.map = IntegratorMap::rrp27; break;
    case 100: s.map = IntegratorMap::implicit; break;
    default:
      fail("inconsistent: integrator map " + std::to_string(map) + " is not 23, 25, 27 or 100 (implicit)");
  }
  s.time_step = r.f64("time step");
  s.step_count = r.u64("step count");
  const std::uint8_t reorder = r.u8("reorder flag");
  if (reorder > 1) fail("inconsistent: reorder flag must be 0 or 1, got " + std::to_string(reorder));
  s.reorder_on_rebuild = reorder == 1;
  r.array(s.frame_times, 8, "frame time", [](ByteReader& rr) { return rr.f64("frame times"); });
  s.energy_rows = r.u64("energy row count");
  s.vtk_every = r.u64("vtk interval");
  s.energy_every = r.u64("energy interval");
  s.checkpoint_every = r.u64("checkpoint interval");
  s.end_step = r.u64("end step");
  if (version >= 3) {
    s.run_id = r.u64("run id");
    s.energy_check.initial_energy = r.f64("initial energy");
    s.energy_check.scale = r.f64("energy scale");
    s.max_energy_drift = r.f64("max energy drift");
    s.warn_energy_drift = r.f64("warn energy drift");
  }
  if (version >= 4) {
    s.ledger.fracture = r.f64("W_fracture");
    s.ledger.contact = r.f64("W_contact");
    s.ledger.filter = r.f64("W_filter");
    s.ledger.boundary = r.f64("W_boundary");
    const std::size_t groups = r.count("particle group", 60);
    for (std::size_t k = 0; k < groups; ++k) {
      ParticleGroup g;
      g.name = r.string("group name", 4096);
      const std::uint8_t motion = r.u8("group motion");
      if (motion > 2) fail("inconsistent: group " + std::to_string(k) + " has motion " + std::to_string(motion));
      g.motion = static_cast<ParticleGroup::Motion>(motion);
      g.velocity = r.vec3("group velocity");
      g.force = r.vec3("group force");
      r.array(g.ids, 4, "group member id", [](ByteReader& rr) { return rr.u32("group member id"); });
      s.groups.push_back(std::move(g));
    }
  }
  if (version >= 5) {
    s.implicit.newton_tolerance = r.f64("newton tolerance");
    s.implicit.cg_tolerance_max = r.f64("CG tolerance");
    s.implicit.max_newton_iterations = r.u64("Newton iteration limit");
    s.implicit.max_cg_iterations = r.u64("CG iteration limit");
    s.time_origin = r.f64("time origin");
    s.step_origin = r.u64("step origin");
  }
  if (version >= 6) {
    const std::uint8_t measured = r.u8("energy check flag");
    if (measured > 1) fail("inconsistent: the energy check flag must be 0 or 1, got " + std::to_string(measured));
    s.energy_check.measured = measured == 1;
    s.energy_check.initial_gravity = r.f64("gravity at the energy reference");
    s.energy_check.highest = r.f64("highest E_balance");
    s.energy_check.reference_step = r.u64("energy reference step");
  }
  if (version >= 8) {
    const std::uint8_t blocks = r.u8("Hessian blocks");
    if (blocks > static_cast<std::uint8_t>(HessianBlocks::gauss_newton))
      fail("inconsistent: the Hessian blocks code must be 0, 1 or 2, got " + std::to_string(blocks));
    s.implicit.hessian_blocks = static_cast<HessianBlocks>(blocks);
    s.implicit.event_tolerance = r.f64("event tolerance");
    s.implicit_clock.next_step = r.f64("implicit next step");
    s.implicit_clock.last_step = r.f64("implicit last step");
  } else {
    s.implicit.event_tolerance = 0.0;  // (no event control before version 8)
  }
  if (version >= 10) {
    const std::uint8_t p = r.u8("preconditioner");
    if (p >= preconditioners().size())
      fail("inconsistent: the preconditioner code must be below " + std::to_string(preconditioners().size()) +
           ", got " + std::to_string(p));
    s.implicit.preconditioner = static_cast<CgPreconditioner>(p);
  }
  if (version >= 12) {
    const std::uint8_t u = r.u8("Hessian update");
    if (u > static_cast<std::uint8_t>(HessianUpdate::when_slow))
      fail("inconsistent: the Hessian update code must be 0 or 1, got " + std::to_string(u));
    s.implicit.hessian_update = static_cast<HessianUpdate>(u);
  }
  if (version >= 14) {
    const std::uint8_t m = r.u8("implicit scheme");
    if (m > static_cast<std::uint8_t>(ImplicitScheme::midpoint))
      fail("inconsistent: the implicit scheme code must be 0 or 1, got " + std::to_string(m));
    s.implicit.scheme = static_cast<ImplicitScheme>(m);
  }
  r.expect_end("the 'run' section");
  validate_run(s);
}

/// What the "parts" section of an index must hold.
void validate_parts(const CheckpointParts& p) {
  if (p.parts.empty()) fail("inconsistent: a checkpoint in parts lists no parts");
  std::uint64_t held = 0;
  for (std::size_t k = 0; k < p.parts.size(); ++k) {
    const CheckpointPart& part = p.parts[k];
    const std::filesystem::path f(part.file);
    if (part.file.empty() || f.is_absolute() || part.file.find("..") != std::string::npos)
      fail("inconsistent: part " + std::to_string(k) + " has the file name '" + part.file +
           "' (a path inside the index's folder expected)");
    if (part.particles > p.particle_count - held)
      fail("inconsistent: the parts hold more than the " + std::to_string(p.particle_count) + " particles");
    held += part.particles;
  }
  if (held != p.particle_count)
    fail("inconsistent: the parts hold " + std::to_string(held) + " particles, the index announces " +
         std::to_string(p.particle_count));
  for (std::size_t k = 0; k < p.failed_bonds.size(); ++k)
    if (p.failed_bonds[k] >= p.bond_count || (k > 0 && p.failed_bonds[k] <= p.failed_bonds[k - 1]))
      fail("inconsistent: failed bond " + std::to_string(p.failed_bonds[k]) +
           " is not below the bond count or not ascending");
  if (p.build_edges && !p.build_edges->allFinite()) fail("inconsistent: the list's build edges are not finite");
}

void decode_parts(std::span<const std::byte> bytes, CheckpointParts& p) {
  ByteReader r(bytes);
  p.particle_count = r.u64("particle count");
  p.bond_count = r.u64("bond count");
  p.bond_digest = r.u64("bond digest");
  p.rebuild_count = r.u64("list builds");
  const std::uint8_t edges = r.u8("build edges flag");
  if (edges > 1) fail("inconsistent: the build edges flag must be 0 or 1, got " + std::to_string(edges));
  const Mat3 m = r.mat3("build edges");
  if (edges == 1) p.build_edges = m;
  r.array(p.failed_bonds, 4, "failed bond", [](ByteReader& rr) { return rr.u32("failed bond"); });
  const std::size_t parts = r.count("part", 28);
  for (std::size_t k = 0; k < parts; ++k) {
    CheckpointPart part;
    part.file = r.string("part file", 4096);
    part.bytes = r.u64("part length");
    part.crc = r.u32("part CRC");
    part.particles = r.u64("part particles");
    p.parts.push_back(std::move(part));
  }
  r.expect_end("the 'parts' section");
  validate_parts(p);
}

void decode_payload(std::span<const std::byte> payload, std::uint32_t version, CheckpointState& s) {
  ByteReader r(payload);
  const std::uint32_t sections = r.u32("section count");
  if (version == checkpoint_index_version || version == checkpoint_index_version_13 ||
      version == checkpoint_index_version_11 ||
      version == checkpoint_index_version_9 || version == checkpoint_index_version_7) {
    if (sections != 2) fail("inconsistent: an index of parts has " + std::to_string(sections) + " sections, not 2");
    std::string tag;
    decode_run(take_section(r, "run", false, tag), version, s);
    s.parts.emplace();
    decode_parts(take_section(r, "parts", false, tag), *s.parts);
    if (r.remaining() != 0)
      fail("corrupted: " + std::to_string(r.remaining()) + " unexpected bytes after the end of the payload");
    return;
  }
  if (sections < 3) fail("inconsistent: " + std::to_string(sections) + " sections, at least 3 expected");
  std::string tag;
  decode_run(take_section(r, "run", false, tag), version, s);
  {
    ByteReader pr(take_section(r, "particles", false, tag));
    load_fields(pr, s.particles, "particle", /*optional_tail: material, new in format 4*/ 1);
    pr.expect_end("the 'particles' section");
    validate_particles(s.particles);
  }
  {
    ByteReader cr(take_section(r, "clumps", false, tag));
    s.clumps = load_clumps(cr, s.particles.size());
    cr.expect_end("the 'clumps' section");
  }
  for (std::uint32_t k = 3; k < sections; ++k) {
    const std::span<const std::byte> bytes = take_section(r, "provider:", true, tag);
    ProviderSection p;
    p.name = tag.substr(9);
    p.bytes.assign(bytes.begin(), bytes.end());
    s.providers.push_back(std::move(p));
  }
  if (r.remaining() != 0)
    fail("corrupted: " + std::to_string(r.remaining()) + " unexpected bytes after the end of the payload");
  // Every provider section must load (parsing and checks only: lists are
  // built when a simulation is made from the state), and every particle
  // belongs to at most one clump.
  (void)load_providers(s.providers, s.particles, s.reorder_on_rebuild);
  std::vector<char> in_clump(s.particles.size(), 0);
  for (std::size_t k = 0; k < s.clumps.size(); ++k)
    for (const std::uint32_t id : s.clumps[k].members) {
      if (in_clump[id]) fail("inconsistent: particle " + std::to_string(id) + " is in two clumps");
      in_clump[id] = 1;
    }
}

template <class T>
T load(std::span<const std::byte> bytes, std::size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

std::string errno_text(int err) { return std::strerror(err); }

/// Runs `f`; whatever it throws leaves as a CheckpointError (a provider's
/// StateError with its message, other errors as "inconsistent: ...").
template <class F>
void as_checkpoint_errors(F&& f) {
  try {
    f();
  } catch (const CheckpointError&) {
    throw;
  } catch (const StateError& e) {
    fail(e.what());
  } catch (const std::invalid_argument& e) {
    fail(std::string("inconsistent: ") + e.what());
  } catch (const std::runtime_error& e) {
    fail(std::string("inconsistent: ") + e.what());
  }
}

}  // namespace

CheckpointState capture_run_state(const Simulation& sim) {
  CheckpointState c;
  c.map = sim.map();
  c.time_step = sim.time_step();
  c.step_count = sim.step_count();
  c.reorder_on_rebuild = sim.forces().reorder_on_rebuild();
  c.ledger = sim.ledger();
  c.groups = sim.groups();
  c.implicit = sim.implicit_settings();
  c.time_origin = sim.time_origin();
  c.step_origin = sim.step_origin();
  c.implicit_clock = sim.implicit_clock();
  return c;
}

CheckpointState capture_simulation(const Simulation& sim) {
  CheckpointState c = capture_run_state(sim);
  c.particles = sim.particles();
  c.clumps = sim.clumps();
  c.providers = save_providers(sim.forces());
  return c;
}

namespace {

/// simulation_from() of `c`'s run state with `particles` and `field` made
/// from it.
Simulation restored_simulation(const CheckpointState& c, ParticleStore particles, ForceField field,
                               std::vector<Clump> clumps, Simulation::Start start) {
  Simulation sim(std::move(particles), std::move(field), std::move(clumps), c.map, c.time_step, c.step_count, start);
  if (!c.groups.empty()) sim.set_groups(c.groups);
  sim.set_ledger(c.ledger);
  sim.set_implicit_settings(c.implicit);
  sim.set_time_origin(c.time_origin, c.step_origin);
  sim.set_implicit_clock(c.implicit_clock);
  return sim;
}

}  // namespace

Simulation simulation_from(const CheckpointState& c) {
  ParticleStore particles = c.particles;
  ForceField field = load_providers(c.providers, particles, c.reorder_on_rebuild);
  return restored_simulation(c, std::move(particles), std::move(field), c.clumps, Simulation::Start{});
}

Simulation simulation_from(CheckpointState&& c, Simulation::Start start) {
  ParticleStore particles = std::move(c.particles);
  ForceField field = load_providers(c.providers, particles, c.reorder_on_rebuild);
  std::vector<ProviderSection>().swap(c.providers);
  return restored_simulation(c, std::move(particles), std::move(field), std::move(c.clumps), start);
}

std::vector<std::byte> encode_checkpoint(const CheckpointState& state) {
  std::vector<std::byte> out(checkpoint_header_size);
  encode_payload(state, out);
  const std::span<const std::byte> payload(out.data() + checkpoint_header_size,
                                           out.size() - checkpoint_header_size);
  const std::uint32_t version = state.parts ? checkpoint_index_version : checkpoint_format_version;
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
  if (version < checkpoint_oldest_version || version > checkpoint_index_version)
    fail("checkpoint format version " + std::to_string(version) +
         " is not supported; this build reads versions " + std::to_string(checkpoint_oldest_version) +
         " to " + std::to_string(checkpoint_index_version));
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
  as_checkpoint_errors([&] { decode_payload(payload, version, state); });
  return state;
}

void validate_checkpoint_state(const CheckpointState& state) {
  as_checkpoint_errors([&] {
    validate_run(state);
    if (state.parts) return validate_parts(*state.parts);
    validate_particles(state.particles);
    (void)load_providers(state.providers, state.particles, state.reorder_on_rebuild);
  });
}

void write_checkpoint(const std::filesystem::path& path, const CheckpointState& state) {
  // A state the reader refuses never replaces a checkpoint that it reads.
  try {
    validate_checkpoint_state(state);
  } catch (const CheckpointError& e) {
    throw CheckpointError("not writing checkpoint '" + path.string() + "' (the last one written is kept): the state " +
                          "cannot be continued from: " + e.what());
  }
  write_file_durably(path, encode_checkpoint(state), "checkpoint");
}

void write_file_durably(const std::filesystem::path& path, std::span<const std::byte> bytes, const std::string& what) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  const auto failure = [&](const std::string& step, int err) {
    return std::runtime_error("cannot write " + what + " '" + path.string() + "': " + step +
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

std::vector<std::byte> read_file_bytes(const std::filesystem::path& path, const std::string& what) {
  const std::string name = what + " '" + path.string() + "'";
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
  return bytes;
}

CheckpointState read_checkpoint(const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_file_bytes(path, "checkpoint");
  try {
    return decode_checkpoint(bytes);
  } catch (const CheckpointError& e) {
    fail("checkpoint '" + path.string() + "': " + e.what());
  }
}

}  // namespace dem
