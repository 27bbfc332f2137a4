#pragma once
/// \file checkpoint_parts.hpp
/// Checkpoints of a run split over MPI ranks, written in parts (issue 28):
/// every rank writes the particles it owns, with their providers' histories
/// and its clumps, into a part file of its own; rank 0 writes the index,
/// `checkpoint.bin` (io/checkpoint.hpp format version 7), naming every part
/// with its length and CRC-32. No rank gathers the whole system to write.
///
///     OUT/checkpoint.bin                                 the index
///     OUT/checkpoint_parts/step_S_of_P/part_K.bin        rank K's part (io/checkpoint_part.hpp)
///
/// One file per rank and an index, rather than one MPI-IO file: each part
/// is written atomically (a temporary name, fsync, rename) like every other
/// output of the engine, a part can be checked and named on its own, and
/// the files need no collective I/O layer (any shared file system does).
/// The parts of a checkpoint are in a folder of their own, named by its
/// step and rank count: the index is replaced only once every part of the
/// new checkpoint is on disk, and the folders it does not name are removed
/// after it, so a run stopped at any point keeps a complete checkpoint.
///
/// Reading (read_whole_checkpoint): the parts are put together into the
/// whole system's state, the static records (bonds, walls, meshes) are
/// built again from the scene text the index keeps, and the result is the
/// checkpoint that the undivided run writes at that step: it restarts on
/// any rank count, or on one process without MPI, bit for bit.
/// A restart on several MPI ranks (read_checkpoint_parts) does not put a
/// whole checkpoint together: the scene is set up again only as the
/// template of the parts, without its first forces, and the ranks make
/// their parts from the parts' state. (For now every rank still reads
/// every part and holds the whole system's state once, as every rank sets
/// a scene up whole: docs/mpi.md.)

#include <cstdint>
#include <filesystem>
#include <optional>

#include "engine/partition.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint.hpp"
#include "run/output_folder.hpp"

namespace dem {

/// Collective over the ranks of `domain`: this rank's part of the checkpoint
/// at `part`'s step, written atomically to
/// `out`/checkpoint_parts/step_S_of_P/part_K.bin. Returns, on rank 0, the
/// index's "parts" section (every rank's file, length, CRC and particle
/// count, and the shared scalars); nullopt on the other ranks. If any rank
/// cannot write its part, throws std::runtime_error on every rank (the
/// index is not replaced), naming the rank and the reason.
std::optional<CheckpointParts> write_checkpoint_part(const std::filesystem::path& out, DecomposedRun& domain,
                                                     const Simulation& part, std::uint64_t run_id);

/// Rank 0, after write_checkpoint_part(): writes `index` (its `parts` set)
/// to `index_path` (write_checkpoint: validated, atomic), then removes the
/// folders of checkpoint_parts/ that the index does not name.
void write_checkpoint_index(const std::filesystem::path& index_path, const CheckpointState& index);

/// A whole checkpoint from the index `index` read from `index_path`: each
/// part read and checked against the index (length, CRC-32, its header's
/// part, step and run), the scene built again from the index's scene text,
/// and the whole state put together, encoded and decoded as a whole
/// checkpoint (so it is what the undivided run writes). Throws
/// CheckpointError naming the part ("checkpoint part 2 of 4
/// ('checkpoint_parts/step_160_of_4/part_2.bin'): truncated: ...") or the
/// scene (its bonds or particles no longer those of the checkpoint).
CheckpointState assemble_checkpoint(const CheckpointState& index, const std::filesystem::path& index_path);

/// What a restart on several MPI ranks needs of the index `index` (read
/// from `index_path`, its run fields as the restart continues them: time
/// step, integrator): the template of the parts, its scene set up again at
/// that integrator and step without first forces (Simulation::Start), with
/// the index's groups and implicit settings; and the whole state of the
/// parts, each read and checked as assemble_checkpoint() does (its errors
/// too). No whole checkpoint is put together and no rank sets up the
/// whole system with its forces (mpi/domain.hpp Domain(comm, whole, state)).
struct CheckpointPartsStart {
  Simulation whole;
  GlobalState state;
};
CheckpointPartsStart read_checkpoint_parts(const CheckpointState& index, const std::filesystem::path& index_path);

/// read_checkpoint(), with an index of parts put together by
/// assemble_checkpoint(): the whole state either way.
CheckpointState read_whole_checkpoint(const std::filesystem::path& path);

}  // namespace dem
