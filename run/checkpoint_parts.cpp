#include "run/checkpoint_parts.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/byte_stream.hpp"
#include "engine/provider_registry.hpp"
#include "io/checkpoint_part.hpp"
#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

namespace fs = std::filesystem;

namespace {

/// checkpoint_parts/step_S_of_P: the folder of one checkpoint's parts.
std::string parts_folder(std::uint64_t step, std::size_t ranks) {
  return std::string(kCheckpointPartsFolder) + "/step_" + std::to_string(step) + "_of_" + std::to_string(ranks);
}

/// What each rank tells rank 0 of its part: written or why not, its file,
/// length, CRC and particles.
struct PartReport {
  std::string error;
  CheckpointPart part;
};

std::vector<std::byte> encode_report(const PartReport& r) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.string(r.error);
  w.string(r.part.file);
  w.u64(r.part.bytes);
  w.u32(r.part.crc);
  w.u64(r.part.particles);
  return out;
}

PartReport decode_report(std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  PartReport p;
  p.error = r.string("error", 1 << 20);
  p.part.file = r.string("file", 4096);
  p.part.bytes = r.u64("length");
  p.part.crc = r.u32("CRC");
  p.part.particles = r.u64("particles");
  return p;
}

std::size_t owned_count(const ParticleStore& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) n += s.owns(i) ? 1 : 0;
  return n;
}

/// This rank's part file, written; its report (the error instead, if any).
PartReport write_own_part(const fs::path& out, const DecomposedRun& domain, const Simulation& part,
                          std::uint64_t run_id) {
  PartReport r;
  const auto rank = static_cast<std::uint32_t>(domain.rank());
  const auto ranks = static_cast<std::uint32_t>(domain.ranks());
  r.part.file = parts_folder(part.step_count(), ranks) + "/part_" + std::to_string(rank) + ".bin";
  r.part.particles = owned_count(part.particles());
  try {
    std::error_code ec;
    fs::create_directories(out / parts_folder(part.step_count(), ranks), ec);
    if (ec) throw std::runtime_error("cannot make the folder '" + (out / parts_folder(part.step_count(), ranks)).string() +
                                     "': " + ec.message());
    const std::vector<std::byte> bytes =
        encode_checkpoint_part(PartLabel{rank, ranks, part.step_count(), run_id}, pack_owned(part));
    r.part.bytes = bytes.size();
    r.part.crc = crc32_of(bytes);
    write_file_durably(out / r.part.file, bytes, "checkpoint part " + std::to_string(rank));
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace

std::optional<CheckpointParts> write_checkpoint_part(const fs::path& out, DecomposedRun& domain,
                                                     const Simulation& part, std::uint64_t run_id) {
  const PartReport mine = write_own_part(out, domain, part, run_id);
  const std::vector<std::vector<std::byte>> reports = domain.gather_to_root(encode_report(mine));
  if (domain.any(!mine.error.empty())) {
    std::string why;
    for (std::size_t k = 0; k < reports.size(); ++k)
      if (const PartReport r = decode_report(reports[k]); !r.error.empty())
        why += (why.empty() ? "" : "; ") + std::string("rank ") + std::to_string(k) + ": " + r.error;
    if (why.empty()) why = mine.error.empty() ? "another rank could not write its part (rank 0 says which)" : mine.error;
    throw std::runtime_error("the checkpoint was not written (the last one is kept): " + why);
  }
  if (domain.rank() != 0) return std::nullopt;
  CheckpointParts p;
  const GlobalState shared = shared_state(part, domain.failed_bonds());
  p.particle_count = domain.particle_count();
  p.bond_count = domain.reference().forces().bonds().size();
  p.bond_digest = bond_digest(domain.reference());
  p.rebuild_count = shared.rebuild_count;
  p.build_edges = shared.build_edges;
  p.failed_bonds = shared.failed_bonds;
  for (const std::vector<std::byte>& bytes : reports) p.parts.push_back(decode_report(bytes).part);
  return p;
}

void write_checkpoint_index(const fs::path& index_path, const CheckpointState& index) {
  write_checkpoint(index_path, index);
  // The parts of earlier checkpoints (and of any that stopped half-way).
  const fs::path kept = fs::path(index.parts->parts.front().file).parent_path().filename();
  const fs::path folder = index_path.parent_path() / kCheckpointPartsFolder;
  std::error_code ec;
  std::vector<fs::path> old;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kept && it->path().filename().string().rfind("step_", 0) == 0) old.push_back(it->path());
  for (const fs::path& p : old) fs::remove_all(p, ec);
}

namespace {

[[noreturn]] void fail(const std::string& message) { throw CheckpointError(message); }

/// Every part's payload, read and checked against the index.
std::vector<std::vector<std::byte>> read_parts(const CheckpointState& index, const fs::path& folder) {
  const CheckpointParts& p = *index.parts;
  std::vector<std::vector<std::byte>> pieces;
  const auto count = static_cast<std::uint32_t>(p.parts.size());
  for (std::uint32_t k = 0; k < count; ++k) {
    const CheckpointPart& part = p.parts[k];
    const std::string name =
        "checkpoint part " + std::to_string(k) + " of " + std::to_string(count) + " ('" + part.file + "')";
    const std::vector<std::byte> bytes = read_file_bytes(folder / part.file, name);
    if (bytes.size() != part.bytes)
      fail(name + ": " + (bytes.size() < part.bytes ? "truncated" : "corrupted") + ": the index lists " +
           std::to_string(part.bytes) + " bytes, the file has " + std::to_string(bytes.size()));
    if (crc32_of(bytes) != part.crc) fail(name + ": checksum mismatch: the part is corrupted");
    try {
      const std::span<const std::byte> payload =
          decode_checkpoint_part(bytes, PartLabel{k, count, index.step_count, index.run_id});
      pieces.emplace_back(payload.begin(), payload.end());
    } catch (const CheckpointError& e) {
      fail(name + ": " + e.what());
    }
  }
  return pieces;
}

/// The scene the index keeps, built again at the run's integrator and
/// time step: the template of the parts (engine/partition.hpp PartFactory),
/// set up without its first forces (only its records and settings serve).
Simulation scene_template(const CheckpointState& index) {
  const std::string name = "the scene '" + index.scene_path + "' the checkpoint keeps";
  if (index.scene_text.empty()) fail("a checkpoint in parts without its scene text cannot be put together");
  try {
    const SceneSpec spec =
        parse_scene_text(index.scene_text, index.scene_path, fs::path(index.scene_path).parent_path());
    BuildOptions options;
    options.memory_limit = MemoryLimit{0, "none"};  // (the run was built once: no estimate refuses it now)
    BuiltScene built = build_scene(spec, options);
    built.map = index.map;
    built.time_step = index.time_step;
    built.implicit = index.implicit;
    Simulation t = make_simulation(std::move(built), Simulation::Start{nullptr, false});
    if (!index.groups.empty()) t.set_groups(index.groups);
    return t;
  } catch (const std::exception& e) {
    fail(name + " does not build: " + e.what());
  }
}

}  // namespace

namespace {

/// The whole state of the parts `pieces` (their payloads) with the
/// index's scalars, checked against the scene's template `t`.
GlobalState whole_state(const CheckpointState& index, const Simulation& t, std::vector<std::vector<std::byte>> pieces) {
  const CheckpointParts& p = *index.parts;
  const std::size_t n = t.particles().id.size();  // (a released template keeps its ids)
  if (n != p.particle_count || t.forces().bonds().size() != p.bond_count || bond_digest(t) != p.bond_digest)
    fail("the scene '" + index.scene_path + "' now gives " + std::to_string(n) + " particles and " +
         std::to_string(t.forces().bonds().size()) + " bonds" +
         (n == p.particle_count && t.forces().bonds().size() == p.bond_count ? " between other particles" : "") +
         ", the checkpoint has " + std::to_string(p.particle_count) + " and " + std::to_string(p.bond_count) +
         ": the files it reads (particles, bonds, meshes) changed since the run");
  GlobalState shared;
  shared.rebuild_count = p.rebuild_count;
  shared.build_edges = p.build_edges;
  shared.failed_bonds = p.failed_bonds;
  shared.steps = index.step_count;
  shared.time_origin = index.time_origin;
  shared.step_origin = index.step_origin;
  shared.ledger = index.ledger;
  shared.implicit_clock = index.implicit_clock;
  GlobalState state;
  try {
    state = unpack_state(std::move(pieces), t.forces().providers().size(), std::move(shared));
  } catch (const std::exception& e) {
    fail("the checkpoint's parts do not fit together: " + std::string(e.what()));
  }
  if (state.particles.size() != p.particle_count)
    fail("the checkpoint's parts hold " + std::to_string(state.particles.size()) + " particles, the index " +
         std::to_string(p.particle_count));
  return state;
}

/// The periodic cell of the parts of `state` (none without one), as each
/// part's constructor sets it from the step (Simulation::start): the
/// bisection and the ghost shell put the positions back into it.
std::optional<PeriodicCell> parts_cell(const Simulation& t, const GlobalState& state) {
  if (t.forces().cell() == nullptr) return std::nullopt;
  ParticleStore none;
  none.decomposed = true;
  const std::vector<std::uint32_t> slots(t.particles().id.size(), PartMap::kNotInPart);
  ForceField f = t.forces().make_part(none, PartMap{slots, state.failed_bonds, {}}, state.histories);
  f.set_cell_time(0.0 + static_cast<double>(state.steps) * t.time_step());
  return *f.cell();
}

}  // namespace

CheckpointState assemble_checkpoint(const CheckpointState& index, const fs::path& index_path) {
  std::vector<std::byte> bytes;
  {
    // (Each copy of the whole system is let go as soon as the next is made.)
    PartFactory factory(scene_template(index));
    const GlobalState state = whole_state(index, factory.whole(), read_parts(index, index_path.parent_path()));
    PartLayout all;
    all.members.resize(state.particles.size());
    std::iota(all.members.begin(), all.members.end(), 0u);
    all.ghost.assign(all.members.size(), 0);
    CheckpointState whole = index;
    whole.parts.reset();
    {
      const Simulation made = factory.make(state, all);
      whole.particles = made.particles();
      whole.clumps = made.clumps();
      whole.providers = save_providers(made.forces());
    }
    bytes = encode_checkpoint(whole);
  }
  // As the undivided run writes it (the fields a checkpoint keeps, and nothing else).
  return decode_checkpoint(bytes);
}

CheckpointPartsStart read_checkpoint_parts(const CheckpointState& index, const fs::path& index_path) {
  if (!index.parts) throw std::invalid_argument("read_checkpoint_parts: '" + index_path.string() + "' is a whole checkpoint");
  try {
    Simulation t = scene_template(index);
    t.release_work();  // (its particles go before the parts' state is read; ids and records stay)
    GlobalState state = whole_state(index, t, read_parts(index, index_path.parent_path()));
    state.cell = parts_cell(t, state);
    return CheckpointPartsStart{std::move(t), std::move(state)};
  } catch (const CheckpointError& e) {
    throw CheckpointError("checkpoint '" + index_path.string() + "': " + e.what());
  }
}

CheckpointState read_whole_checkpoint(const fs::path& path) {
  CheckpointState c = read_checkpoint(path);
  if (!c.parts) return c;
  try {
    return assemble_checkpoint(c, path);
  } catch (const CheckpointError& e) {
    throw CheckpointError("checkpoint '" + path.string() + "': " + e.what());
  }
}

}  // namespace dem
