#pragma once
/// \file output_folder.hpp
/// A run's output folder: who owns it, which of its files are the engine's,
/// preparing it before the first step, and planning where a restart writes.
///
/// Output folders belong to one run: `run.id` in the folder holds the run's
/// identity (16 hex digits and a newline; CheckpointState::run_id). A fresh
/// run refuses a folder that holds another run's files (unless told to
/// replace them, --overwrite), a restart continues only its own run's files,
/// and `dem restart --output-dir NEW` starts a folder that holds the whole
/// series (plan_restart_output). The engine's files in a folder, by name:
/// energy.csv, bond_failures.csv, groups.csv, walls.csv, solver.csv, particles.pvd,
/// bonds.pvd, particles_N.vtp, bonds_N.vtp (and parallel frames
/// particles_N.pvtp, bonds_N.pvtp with their pieces particles_N_K.vtp,
/// bonds_N_K.vtp), checkpoint.bin, run.id, packing.json, and "NAME.tmp" of each while it
/// is written (and .dem_write_probe); nothing else in a folder is ever
/// touched.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "run/run_plan.hpp"

namespace dem {

/// An output folder that a run may not use: it holds another run's files,
/// or not the files of the run to continue. Nothing was run or changed.
class OutputFolderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Name of the checkpoint file in the output folder.
inline constexpr const char* kCheckpointFile = "checkpoint.bin";
/// The folder of the part files of a checkpoint written in parts by the
/// ranks of an MPI run (run/checkpoint_parts.hpp).
inline constexpr const char* kCheckpointPartsFolder = "checkpoint_parts";
/// Name of the packing report a scene with packings writes (docs/model.md §21.4).
inline constexpr const char* kPackingReportFile = "packing.json";
/// Name of the file that holds the identity of the run that owns a folder.
inline constexpr const char* kRunIdFile = "run.id";

/// A new run identity: 64 random bits (std::random_device, mixed with the
/// time and the process id), never 0.
std::uint64_t new_run_id();
/// A run identity as 16 lower-case hex digits.
std::string run_id_text(std::uint64_t id);
/// The identity in folder/run.id; nullopt if there is none. Throws
/// OutputFolderError naming the file if it cannot be read or holds anything
/// but 16 hex digits.
std::optional<std::uint64_t> read_run_id(const std::filesystem::path& folder);
/// Whether a file of this name is one the engine writes into an output
/// folder (see the file comment), temporaries included.
bool is_engine_output_name(const std::string& name);

/// The engine's files in one output folder (see the file comment), and what
/// a run does to them before its first step and when a restart continues a
/// series there. Holds only the path; every call looks at the disk.
class OutputFolder {
 public:
  /// The engine's files found in the folder, each sorted by name.
  struct Files {
    std::vector<std::string> files;        ///< complete files
    std::vector<std::string> temporaries;  ///< NAME.tmp and .dem_write_probe
  };

  explicit OutputFolder(std::filesystem::path path) : path_(std::move(path)) {}
  const std::filesystem::path& path() const { return path_; }

  /// The engine's files in the folder (none if it does not exist). Throws
  /// OutputFolderError if the folder cannot be listed.
  Files engine_files() const;
  /// Removes the named files; throws OutputFolderError naming the first
  /// that cannot be removed.
  void remove(const std::vector<std::string>& names) const;
  /// Removes the temporaries of a stopped run, saying so on `log`.
  void remove_stale_temporaries(std::ostream& log) const;
  /// The folder's run.id (read_run_id).
  std::optional<std::uint64_t> run_id() const { return read_run_id(path_); }
  /// Writes run.id (through a temporary file, renamed); throws
  /// std::runtime_error naming the file on failure.
  void write_run_id(std::uint64_t id) const;

  /// Checks and prepares the (existing) folder before a run's first step
  /// and returns the run's identity: a fresh run (plan.resume false) refuses
  /// a folder that holds engine files of another run (unless plan.overwrite:
  /// they are removed, and said so on `log`) and writes run.id (a new
  /// identity if plan.run_id is 0); a resumed run requires the folder's
  /// run.id to be plan.run_id and removes the frames written after the
  /// checkpoint. Then stale temporaries are removed. Throws
  /// OutputFolderError for a folder the run may not use (nothing changed).
  std::uint64_t prepare(const RunPlan& plan, std::ostream& log) const;

  /// Continues the series that the checkpoint `c`'s run wrote into `from`
  /// in this folder (created if needed): energy.csv's first c.energy_rows
  /// rows, the event tables' rows up to the checkpoint (groups.csv's up to
  /// last_scheduled_row of `energy_every`), every frame up to the
  /// checkpoint hard-linked (or copied), then run.id; said on `log`.
  /// Throws std::runtime_error naming the file that cannot be copied.
  void continue_series(const std::filesystem::path& from, const CheckpointState& c,
                       std::uint64_t energy_every, std::ostream& log) const;

 private:
  std::filesystem::path path_;
};

/// Prepares `dem restart` of the checkpoint `c`, read from `checkpoint_path`
/// (whose folder is "checkpoint_folder" below), into plan.output_dir (set by
/// the caller, with plan.overwrite): sets plan's run identity, energy
/// reference, drift limits and output bookkeeping from the checkpoint, and
/// chooses how to continue:
///  - the folder's run.id is the checkpoint's run: continue its files
///    (plan.resume; energy.csv is cut back to the checkpoint's rows);
///  - the folder holds no engine files (or another run's, with
///    plan.overwrite: they are removed first): a new folder for the series;
///    if checkpoint_folder holds the checkpoint's run, energy.csv's rows up to
///    the checkpoint are copied and its frames linked (or copied) into the
///    new folder, which then continues them; else the new folder's series
///    starts at the checkpoint (said on `log`);
///  - else (another run's files, or none of this run's) throws
///    OutputFolderError naming the folder and what to do.
/// The checkpoint file itself is not counted as another run's file.
/// A checkpoint of format version 2 (run_id 0) continues in any folder
/// without a run.id, as before run identities, with a note on `log`.
void plan_restart_output(const CheckpointState& c, const std::filesystem::path& checkpoint_path,
                         RunPlan& plan, std::ostream& log);

}  // namespace dem
