#pragma once
/// \file scene_size.hpp
/// What a scene costs before it is built: the sizes that decide its memory,
/// the peak memory of `dem run` estimated from them, the memory limit a
/// scene is held to, and a counting pass over a cell grid that finds the
/// close pairs of built particles (contact candidates, pairs within a bond
/// distance, coincident particles) without storing any pair.
///
/// The estimate follows what the program allocates, phase by phase (bytes;
/// n particles, B bonds, P contact candidate pairs):
///
///   program      18 MiB: code, libraries, threads (dem run of 80 particles)
///   build        the generators' own temporaries (the solid torus's
///                lattice index, 4 per lattice cell, and sites, 24 n; a CSV
///                file's text and values) with the particles and bonds
///   state        particles 236 n (core/particle_store.hpp: 11 arrays);
///                bonds 44 B (bonds/bond_list.hpp) + 48 B force and moment
///                slots + 8 B incidence + 4 n offsets (bonds/bond_provider);
///                contact 12 P list and incidence + 24 P force slots + 4 P
///                search buffers + 8 n offsets + 24 n build positions +
///                about 12 n of kd-tree (contact/neighbour_search.hpp)
///   VTK          with [output] vtk_every > 0 the frame buffers, kept from
///                frame to frame: 172 n + 28 B (io/vtk_writer.hpp), and
///                while a frame is written VTK's cell map, 8 (n + B)
///   checkpoint   at every checkpoint (one at least, at the end of a run):
///                a copy of the state (particles 236 n, the bonds' section
///                44 B and the contact section 24 n, each grown by doubling)
///                and the encoded file, a byte vector grown by doubling from
///                32 bytes as io/checkpoint.cpp writes it (the old and the
///                new buffer both live while it grows)
///
///   peak = program + max(build, state + VTK + max(VTK cell map, checkpoint))
///
/// Measured peak RSS against it: docs/performance.md, "Memory of a run" (within 13%
/// on the shipped scenes and at 10^6 particles).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "core/types.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

/// Sizes that decide a scene's memory.
struct SceneSizes {
  std::uint64_t particles = 0;
  std::uint64_t bonds = 0;
  /// Candidate contact pairs of the first neighbour list (|x_i - x_j| <
  /// r_i + r_j + skin): estimated per generator before the particles exist,
  /// counted exactly after.
  std::uint64_t contact_pairs = 0;
  /// Bytes the generators and CSV tables hold while they build (their own
  /// temporaries, besides the particles and bonds).
  std::uint64_t build_scratch = 0;
  /// Contact pairs and distance bonds counted (after the particles were
  /// built), rather than estimated from the generators.
  bool counted = false;
  /// The run uses the implicit integrator (its Hessian blocks and solver
  /// vectors are part of the state).
  bool implicit = false;
};

/// Estimated peak memory (bytes) of `dem run` by part (see the file comment).
struct MemoryEstimate {
  std::uint64_t program = 0;  ///< code, libraries, threads
  std::uint64_t build = 0;    ///< while building the scene (without the program)
  std::uint64_t state = 0;    ///< particles, bonds, contact lists of the run
  std::uint64_t output = 0;   ///< VTK buffers and the checkpoint at their peak
  std::uint64_t peak = 0;     ///< program + max(build, state + output)
};

/// The estimate for these sizes; `files`: the run writes an output folder
/// (VTK frames if output.vtk_every > 0, and checkpoints), as dem run does.
/// Sizes over 1e15 count as 1e15 (the estimate stays below 2^64).
MemoryEstimate estimate_memory(const SceneSizes& sizes, const OutputSpec& output, bool files = true);

/// Estimated peak memory (bytes) of one rank of `mpirun -np P dem run`
/// (mpi/domain.hpp), by phase, for a scene of n particles, B bonds and C
/// contact pairs. Every rank still sets the whole scene up
/// (docs/scaling.md): it builds it, holds the whole set up without its
/// first forces (particles and bonds, no contact list or result slots:
/// engine/simulation.hpp Start), moves its particles into the captured state (engine/partition.hpp
/// capture_and_release: 260 n with the build positions, held until the
/// first part's particles are selected from it), keeps a template (ids 4 n, the bond list 44 B and
/// the bonds' id keys 8 B) and runs its part: n/P owned
/// particles and g ghosts, g = min(n - n/P, 14.8 (n/P)^(2/3)) (the shell of
/// a bulk cube, docs/scaling.md; a slender body cut across holds far
/// fewer), with its share of the bonds and pairs, its VTK piece and its
/// checkpoint part.
struct RankMemoryEstimate {
  std::uint64_t program = 0;         ///< code, libraries, Open MPI's buffers
  std::uint64_t setup = 0;           ///< the whole scene's set-up, on every rank
  std::uint64_t part = 0;            ///< the template and the part's run
  std::uint64_t part_particles = 0;  ///< owned and ghosts (estimated)
  std::uint64_t peak = 0;            ///< program + max(setup, part)
};

/// The estimate for one of `ranks` ranks (ranks >= 1; 1: one rank under
/// mpirun, which also sets up, captures and makes its one part).
RankMemoryEstimate estimate_rank_memory(const SceneSizes& sizes, const OutputSpec& output, std::size_t ranks);

/// Bytes of state per bond, per contact pair and per particle in the run
/// (the "state" part of the estimate), for caps on counting passes.
inline constexpr std::uint64_t kStateBytesPerBond = 44 + 48 + 8;
inline constexpr std::uint64_t kStateBytesPerPair = 12 + 24 + 4;
/// The implicit integrator's extra state (engine/implicit_step.hpp,
/// engine/block_hessian.hpp): per record a 6x6 coupling block, and one
/// 12x12 element block per record of the largest provider (scratch); per
/// particle three 6x6 blocks, eight 6-vectors, three positions and three
/// quaternions.
inline constexpr std::uint64_t kImplicitBytesPerRecord = 288;
inline constexpr std::uint64_t kImplicitScratchBytesPerRecord = 1152;
inline constexpr std::uint64_t kImplicitBytesPerParticle = 3 * 288 + 8 * 48 + 3 * 24 + 3 * 32;

/// A limit on the estimated peak memory, and where it came from.
struct MemoryLimit {
  std::uint64_t bytes = 0;  ///< 0: no limit
  /// For messages: "MemAvailable in /proc/meminfo", "--max-memory", ...
  std::string source;
};

/// MemAvailable of /proc/meminfo; no limit (bytes = 0) where it cannot be read.
MemoryLimit available_memory();

/// Bytes from "BYTES" or a number with a suffix K, M, G or T (powers of
/// 1024; KiB, MiB, GiB, TiB and KB, MB, GB, TB mean the same), e.g. "512M",
/// "4G", "1.5GiB". Throws std::invalid_argument naming the text if it is not
/// such a size, is not positive or is over 2^63.
std::uint64_t parse_byte_size(const std::string& text);

/// n bytes as "512 MiB", "3.2 GiB" (binary units, 3 significant digits).
std::string format_bytes(std::uint64_t n);

/// Close pairs of a set of particles, found with a cell grid (no pair stored).
struct ClosePairs {
  /// Pairs i < j with |x_i - x_j| < r_i + r_j + skin, compared on squares as
  /// contact/neighbour_search.hpp does (its first list has exactly these).
  std::uint64_t contact = 0;
  /// Pairs with |x_i - x_j| < distance (the neighbour search of bonds
  /// "distance"); 0 when no distance was given.
  std::uint64_t within = 0;
  /// The counting stopped because `contact` or `within` passed its cap; the
  /// counts are then lower bounds.
  bool over_cap = false;
  /// The lowest pair (i < j, then j) whose centres are closer than
  /// coincidence (r_i + r_j).
  std::optional<std::pair<std::uint32_t, std::uint32_t>> coincident;
};

/// Counts the close pairs of `positions` (length) with `radii` (length):
/// time about 27 times the pairs within the grid's cell size, plus n log n;
/// memory 16 bytes per particle. Stops once `contact` passes contact_cap or
/// `within` passes within_cap. Positions must be finite.
ClosePairs count_close_pairs(std::span<const Vec3> positions, std::span<const double> radii, double skin,
                             double distance, std::uint64_t contact_cap, std::uint64_t within_cap,
                             double coincidence = 1e-6);

}  // namespace dem
