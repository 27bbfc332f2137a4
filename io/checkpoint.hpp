#pragma once
/// \file checkpoint.hpp
/// Binary checkpoints: everything a run needs to continue bit for bit.
///
/// File layout (all fields little-endian, doubles stored as their IEEE-754
/// bits, so a round trip is exact; core/byte_stream.hpp):
///
///     offset  size  field
///          0     8  magic "DEMCKPT\0"
///          8     4  format version (uint32, 6 for a whole checkpoint, 7
///                   for the index of a checkpoint in parts; versions 2 to
///                   5 are read too)
///         12     4  reserved (uint32, 0)
///         16     8  payload length L in bytes (uint64)
///         24     4  CRC-32 of the payload (zlib crc32, uint32)
///         28     4  reserved (uint32, 0)
///         32     L  payload
///
/// The payload is a u32 section count and the tagged sections, each a
/// string tag, a u64 byte length and its bytes, in this order:
///
///     "run"        string scene_path, string scene_text, u32 integrator map
///                  (23, 25 or 27; 100: implicit), f64 time_step, u64 step_count,
///                  u8 reorder_on_rebuild, array of f64 frame_times,
///                  u64 energy_rows, u64 vtk_every, u64 energy_every,
///                  u64 checkpoint_every, u64 end_step, then (version 3)
///                  u64 run_id, f64 initial_energy, f64 energy_scale,
///                  f64 max_energy_drift, f64 warn_energy_drift, then
///                  (version 4) f64 W_fracture, W_contact, W_filter,
///                  W_boundary (the ledger), u64 group count and per group:
///                  string name, u8 motion (0 free, 1 fixed, 2 velocity),
///                  vec3 velocity, vec3 force, array of u32 ids, then
///                  (version 5) the implicit integrator's settings: f64
///                  newton_tolerance, f64 cg_tolerance_max, u64
///                  max_newton_iterations, u64 max_cg_iterations, and the
///                  clock origin: f64 time_origin, u64 step_origin
///                  (t = time_origin + (step_count - step_origin) h), then
///                  (version 6) the energy check: u8 measured, f64
///                  gravity at the reference, f64 highest E_balance, u64
///                  reference step (initial_energy and energy_scale above
///                  are its E_0 and its scale so far), then (version 8)
///                  the rest of the implicit settings and the event
///                  control's state: u8 hessian_blocks (0 exact, 1
///                  projected, 2 Gauss-Newton), f64 event_tolerance, f64
///                  next_step, f64 last_step (engine/fracture_events.hpp
///                  ImplicitClock), then (version 10) u8 preconditioner
///                  (0 block Jacobi, 1 AMG, 2 two-level), then (version
///                  12) u8 hessian_update (0 every iteration, 1 when slow),
///                  then (version 14) u8 implicit_scheme (0 backward
///                  Euler, 1 midpoint rule)
///     "particles"  the particle store by its field list
///                  (ParticleStore::for_each_field, core/field_io.hpp:
///                  every field named and typed)
///     "clumps"     engine/clump.hpp save_clumps
///     "provider:NAME", one per force provider in gather order, each
///                  written by the provider itself (ForceProvider::save):
///                  "provider:bonds" (the BondList fields and stiffness
///                  types), "provider:contact" (K^pp, skin, the neighbour
///                  list's build positions and build count, per-pair state
///                  for laws that keep it), "provider:walls",
///                  "provider:gravity"
///
/// A version-15 file is the index of a checkpoint written in parts by the
/// ranks of an MPI run (io/checkpoint_parts.hpp): the "run" section as in
/// version 14, then one section
///
///     "parts"      u64 particle count, u64 bond count, u64 bond digest
///                  (engine/partition.hpp bond_digest: the bonds' id
///                  pairs, to tell the scene it was made from), u64 list builds, u8 build edges given
///                  and mat3 build edges, array of u32 failed bond indices
///                  (ascending), then per part (u64 count): string file
///                  (relative to the index's folder), u64 byte length,
///                  u32 CRC-32 of the whole file, u64 particles owned
///
/// in place of "particles", "clumps" and the providers' sections; the
/// particles, their clumps and their providers' histories are in the part
/// files, and the providers' static records come from the scene text.
///
/// A version-13 file is such an index with the "run" section of version 12,
/// a version-11 file one with the "run" section of version 10,
/// a version-9 file one with that of version 8, a version-7 file one with
/// that of version 6. A version-12 file is a whole checkpoint without the
/// version-14 field (read as implicit_scheme "backward-euler", as it ran), a
/// version-10 file one without the version-12 field either (read as
/// hessian_update "every-iteration", as it ran).
/// A version-6 file is the same without the version-8 fields: it is read
/// with the default Hessian blocks and without the event control (which
/// its build did not have). A version-5 file is the same without the version-6 fields: its energy
/// check is read as not measured (the restart measures its own reference).
/// A version-4 file is the same without the version-5 fields (the default
/// implicit settings). A version-3 file is the same without the version-4 fields of "run" (a
/// zero ledger, no groups) and without the particles' `material` field
/// (read as 0). A version-2 file is the same without the five version-3 fields of "run"
/// (it reads as run_id 0, energy_scale 0 and the default drift limits). A
/// version-1 file (the fixed positional layout before force providers) is
/// refused with a message naming its version.
///
/// decode_checkpoint never reads out of bounds and never allocates more than
/// a small multiple of its input, whatever the input: it checks the header
/// (magic, version, reserved fields zero, payload length, CRC-32), every
/// count against the bytes left before allocating, the string limits (path
/// 64 KiB, text 1 GiB), the section tags and order, and the consistency of
/// the result: map 23/25/27, h finite and > 0; positions, velocities,
/// angular velocities and reference positions finite, initial energy finite,
/// energy scale finite and >= 0, drift limits finite and > 0, attitudes finite and
/// of norm within 0.5 of 1, mass, inertia and radius finite and > 0, ids a
/// permutation of 0..N-1; clumps (engine/clump.hpp load_clumps); every
/// provider section as its loader checks it (bond ends < N and distinct,
/// rest lengths, unit rest directions, types, stiffnesses; contact
/// stiffness and skin; wall points, unit normals, stiffnesses; gravity
/// finite; 0 or N finite neighbour build positions); frame times finite,
/// >= 0 and non-decreasing; no bytes left over. Forces and moments are kept
/// as stored. Provider sections are parsed and checked but their neighbour
/// lists are built only by simulation_from() (so decoding allocates no more
/// than a small multiple of the input). It throws CheckpointError with a
/// message saying what is wrong ("truncated: ...", "corrupted: ...",
/// "inconsistent: ...", "provider 'NAME': " followed by one of those for a
/// provider section, or the header messages).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/byte_stream.hpp"
#include "core/diagnostics.hpp"
#include "engine/clump.hpp"
#include "engine/integrator.hpp"
#include "engine/provider_registry.hpp"
#include "engine/simulation.hpp"

namespace dem {

/// One part file of a checkpoint in parts (io/checkpoint_parts.hpp).
struct CheckpointPart {
  std::string file;             ///< path relative to the index file's folder
  std::uint64_t bytes = 0;      ///< the file's length
  std::uint32_t crc = 0;        ///< CRC-32 of the whole file
  std::uint64_t particles = 0;  ///< particles it holds (owned by its rank)
};

/// What the index of a checkpoint in parts holds beyond the "run" section:
/// the parts, and the whole system's scalars that the parts share
/// (engine/partition.hpp GlobalState).
struct CheckpointParts {
  std::uint64_t particle_count = 0;  ///< the whole system's
  std::uint64_t bond_count = 0;      ///< bonds of the scene (live or failed)
  std::uint64_t bond_digest = 0;     ///< engine/partition.hpp bond_digest() of the scene
  std::uint64_t rebuild_count = 0;   ///< the contact list's builds so far
  std::optional<Mat3> build_edges;   ///< a periodic cell's edges at the last build
  std::vector<std::uint32_t> failed_bonds;  ///< scene indices, ascending
  std::vector<CheckpointPart> parts;         ///< one per rank that wrote it
};

/// Everything a run needs to continue exactly.
struct CheckpointState {
  std::string scene_path;  ///< the scene file the run came from, as given
  std::string scene_text;  ///< that file's whole text
  IntegratorMap map = IntegratorMap::rrp25;
  double time_step = 0.0;        ///< h (time), finite and > 0
  std::uint64_t step_count = 0;  ///< steps taken so far (t = step_count h)
  bool reorder_on_rebuild = true;  ///< the stepper's re-ordering setting
  ParticleStore particles;        ///< all arrays, forces and moments included
  std::vector<Clump> clumps;      ///< rigid clumps (members by id)
  std::vector<ProviderSection> providers;  ///< each force provider's own section, in order
  std::vector<double> frame_times;  ///< times of the VTK frames written so far
  std::uint64_t energy_rows = 0;    ///< rows written to energy.csv so far
  /// The run's output intervals (steps; 0: none) and its planned last step,
  /// for runs without a scene file (dem_torus) to continue with.
  std::uint64_t vtk_every = 0, energy_every = 0, checkpoint_every = 0, end_step = 0;
  /// The run's identity: a random non-zero number made when the run started,
  /// kept by its restarts and written into its output folder (run.id,
  /// run/output_folder.hpp), so that a restart continues only its own run's
  /// files. 0: unknown (a version-2 checkpoint).
  std::uint64_t run_id = 0;
  /// The run's energy check (run/energy_check.hpp): its reference E_0, the
  /// energy scale so far, the largest E_balance so far. Not `measured` (a
  /// checkpoint of format 2 to 5): the restart measures it at its start.
  EnergyCheckState energy_check;
  /// The run's drift limits, as fractions of energy_scale: stop beyond
  /// max_energy_drift, warn once beyond warn_energy_drift.
  double max_energy_drift = kDefaultMaxEnergyDrift, warn_energy_drift = kDefaultWarnEnergyDrift;
  /// The dissipation ledger so far (version 4).
  Simulation::Ledger ledger;
  /// The scene's particle groups (version 4).
  std::vector<ParticleGroup> groups;
  /// The implicit integrator's settings (version 5).
  ImplicitSettings implicit;
  /// The clock after a change of time step (version 5; Simulation::set_time_origin).
  double time_origin = 0.0;
  std::uint64_t step_origin = 0;
  /// The implicit event control's step sizes (version 8; engine/fracture_events.hpp).
  ImplicitClock implicit_clock;
  /// Set for the index of a checkpoint in parts (version 7): then
  /// `particles`, `clumps` and `providers` are empty, and
  /// run/checkpoint_parts.hpp assembles the whole state from the parts.
  std::optional<CheckpointParts> parts;
};

/// The simulation's part of a checkpoint (map, h, steps, particles, clumps,
/// providers); the run's output fields are left for the caller.
CheckpointState capture_simulation(const Simulation& sim);

/// capture_simulation() less the particles, clumps and providers: map, h,
/// steps, re-ordering, ledger, groups, implicit settings and clock.
CheckpointState capture_run_state(const Simulation& sim);

/// A simulation rebuilt from a checkpoint, ready to continue bit for bit.
/// Throws CheckpointError if a provider section cannot be loaded.
Simulation simulation_from(const CheckpointState& state);
/// The same from a state that is let go on the way (its particles moved
/// into the simulation, its provider sections freed once loaded), started
/// as `start` says: Simulation::Start{nullptr, false, true} makes the
/// template of an MPI run's parts without building the whole system's
/// contact list or evaluating anything (engine/simulation.hpp).
Simulation simulation_from(CheckpointState&& state, Simulation::Start start);

/// A checkpoint that cannot be read: bad header, corrupted or inconsistent
/// contents, or an unreadable file.
class CheckpointError : public StateError {
 public:
  using StateError::StateError;
};

/// Current format version of a whole checkpoint, written by encode_checkpoint.
inline constexpr std::uint32_t checkpoint_format_version = 14;
/// Format version of the index of a checkpoint in parts.
inline constexpr std::uint32_t checkpoint_index_version = 15;
/// The earlier versions of an index of parts: version 13's "run" section is
/// that of version 12, version 11's that of version 10, version 9's that of
/// version 8, version 7's that of version 6 (the whole format skips the
/// index's numbers).
inline constexpr std::uint32_t checkpoint_index_version_13 = 13;
inline constexpr std::uint32_t checkpoint_index_version_11 = 11;
inline constexpr std::uint32_t checkpoint_index_version_9 = 9;
inline constexpr std::uint32_t checkpoint_index_version_7 = 7;
/// The oldest format version decode_checkpoint still reads.
inline constexpr std::uint32_t checkpoint_oldest_version = 2;
/// Size of the fixed header before the payload (bytes).
inline constexpr std::size_t checkpoint_header_size = 32;

/// The checkpoint file's bytes (header and payload).
std::vector<std::byte> encode_checkpoint(const CheckpointState& state);

/// Parses and validates a checkpoint; throws CheckpointError on any defect.
CheckpointState decode_checkpoint(std::span<const std::byte> bytes);

/// Throws CheckpointError, saying what, if `state` holds anything that
/// decode_checkpoint() refuses (a non-finite position or ledger, a bad
/// attitude, a provider section that does not load, ...): what the writer
/// checks before it replaces a good checkpoint.
void validate_checkpoint_state(const CheckpointState& state);

/// Writes the checkpoint atomically (after validate_checkpoint_state(), so
/// that a state the reader would refuse never replaces a good checkpoint): to `path` + ".tmp" in the same folder,
/// flushed to disk (fsync), then renamed over `path`, so an existing
/// checkpoint stays intact until the new one is complete. On failure removes
/// the temporary file and throws std::runtime_error naming the path and the
/// system's reason.
void write_checkpoint(const std::filesystem::path& path, const CheckpointState& state);

/// Reads and decodes a checkpoint file; throws CheckpointError naming the
/// path if it cannot be read or is not a valid checkpoint. An index of a
/// checkpoint in parts is returned as it is (`parts` set): see
/// run/checkpoint_parts.hpp read_whole_checkpoint() for the whole state.
CheckpointState read_checkpoint(const std::filesystem::path& path);

/// The bytes of a file, whole; throws CheckpointError naming `what` (and
/// the path) if it cannot be read.
std::vector<std::byte> read_file_bytes(const std::filesystem::path& path, const std::string& what);

/// Writes `bytes` to `path` atomically and durably: to `path` + ".tmp",
/// flushed (fsync), renamed over `path`, the folder flushed (best effort).
/// On failure removes the temporary file and throws std::runtime_error
/// naming `what`, the path and the system's reason.
void write_file_durably(const std::filesystem::path& path, std::span<const std::byte> bytes, const std::string& what);

/// CRC-32 (zlib's) of `bytes`.
std::uint32_t crc32_of(std::span<const std::byte> bytes);

}  // namespace dem
