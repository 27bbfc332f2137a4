#pragma once
/// \file run_loop.hpp
/// The one run loop, used by `dem run`, `dem restart`, `dem_torus` and
/// `dem_bench`: energy rows, VTK frames and checkpoints on their intervals,
/// progress on the terminal, SIGINT/SIGTERM caught between steps (a
/// checkpoint is written to continue from), divergence detection, failures
/// reported with what was kept. Works for every scene, clumps included.
///
/// Output folders belong to one run: `run.id` in the folder holds the run's
/// identity (16 hex digits and a newline; CheckpointState::run_id). A fresh
/// run refuses a folder that holds another run's files (unless told to
/// replace them, --overwrite), a restart continues only its own run's files,
/// and `dem restart --output-dir NEW` starts a folder that holds the whole
/// series (plan_restart_output). The engine's files in a folder, by name:
/// energy.csv, particles.pvd, bonds.pvd, particles_N.vtp, bonds_N.vtp,
/// checkpoint.bin, run.id, and "NAME.tmp" of each while it is written (and
/// .dem_write_probe); nothing else in a folder is ever touched.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/energy_check.hpp"
#include "engine/partition.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

/// Exit statuses of the dem programs.
enum ExitStatus : int {
  kExitOk = 0,
  kExitBadInput = 1,     ///< bad scene, options or checkpoint: nothing was run
  kExitRunFailed = 2,    ///< the run or its output failed; what was written is kept
  kExitInterrupted = 3,  ///< SIGINT/SIGTERM: a checkpoint was written to continue from
};

struct RunPlan {
  /// Output folder; empty: no files at all (benchmarks), only the summary.
  std::filesystem::path output_dir;
  std::uint64_t end_step = 0;  ///< run until the step count reaches it
  OutputSpec output;
  std::string scene_path;  ///< kept in checkpoints
  std::string scene_text;
  std::vector<double> frame_times;  ///< frames written before (a restart)
  std::uint64_t energy_rows = 0;    ///< rows of energy.csv written before on the schedule
  bool resume = false;              ///< continue the output files in output_dir
  bool progress = true;             ///< progress line / log lines
  /// Progress as log lines every 10 s even on a terminal (never a \r line
  /// on stdout): for programs whose stdout is data (dem_bench).
  bool progress_on_log = false;
  /// What to tell the user when a step fails (the time step is the usual cause).
  std::string time_step_hint = "try a smaller [run] time_step_fraction or time_step";
  /// The run's identity (CheckpointState::run_id, written into
  /// output_dir/run.id): 0 makes a new one. A resumed run (resume = true)
  /// requires the folder's run.id to hold it.
  std::uint64_t run_id = 0;
  /// A fresh run (resume = false) into a folder that holds another run's
  /// files first removes them (the engine's files only, by name) instead of
  /// refusing the folder.
  bool overwrite = false;
  /// The option that sets `overwrite`, named when a folder is refused.
  std::string overwrite_option = "--overwrite";
  /// The energy check's limits and how they were set (apps/energy_check.hpp),
  /// as fractions of the energy scale: beyond max_drift an explicit run stops
  /// (exit 2) with a message naming the step, the time and the drift; beyond
  /// warn_drift it warns once; an implicit run stops when E_balance rises
  /// above its largest earlier value by more than implicit_rise.
  EnergyLimits energy_limits;
  /// The energy check's state (a restart: from its checkpoint); not
  /// measured: its reference is taken at the start of this call.
  EnergyCheckState energy_check;
  /// A run decomposed over MPI ranks (mpi/domain.hpp), or nullptr: the
  /// Simulation passed to run_to_end() is then this rank's part. Every rank
  /// runs the same loop; rank 0 alone touches the output folder, its VTK
  /// frames and checkpoints made from the whole system gathered there.
  DecomposedRun* domain = nullptr;
};

/// An output folder that a run may not use: it holds another run's files,
/// or not the files of the run to continue. Nothing was run or changed.
class OutputFolderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a finished (or stopped) run reports, besides the exit status.
struct RunSummary {
  std::uint64_t steps = 0;       ///< steps made by this call
  double seconds = 0.0;          ///< wall time of the stepping loop
  /// largest |E_balance - E_0| / S seen at energy rows (apps/energy_check.hpp)
  double max_energy_deviation = 0.0;
  double e0 = 0.0;               ///< E_0: E_balance at the energy check's reference step
};

/// Name of the checkpoint file in the output folder.
inline constexpr const char* kCheckpointFile = "checkpoint.bin";
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

/// Prepares `dem restart` of the checkpoint `c`, read from `checkpoint_path`
/// (whose folder is "checkpoint_folder" below), into plan.output_dir (set by the caller, with
/// plan.overwrite): sets plan's run identity, energy reference, drift limits
/// and output bookkeeping from the checkpoint, and chooses how to continue:
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

/// The run's identity, energy reference, drift limits and output bookkeeping
/// of checkpoint `c` into `plan` (what plan_restart_output() starts from;
/// with MPI, what ranks other than 0 take as they are).
void take_run_bookkeeping(const CheckpointState& c, RunPlan& plan);

/// The state of a running simulation with the run's output bookkeeping, as a
/// checkpoint keeps it.
CheckpointState checkpoint_of(const Simulation& sim, const RunPlan& plan,
                              const std::vector<double>& frame_times, std::uint64_t energy_rows);

/// Runs `sim` to plan.end_step, writing into plan.output_dir: run.id,
/// energy.csv
/// (a row every output.energy_every steps, at the start of a fresh run and at
/// the last step), VTK frames (every output.vtk_every steps and the last),
/// checkpoint.bin (every output.checkpoint_every steps, at the end, and when
/// interrupted; output.checkpoint_every = 0 and an empty output_dir write
/// none during the run). First it checks the folder: a fresh run refuses one
/// that holds engine files (unless plan.overwrite: they are removed, and
/// said so), a resumed run requires the folder's run.id to be plan.run_id;
/// then stale temporaries of the engine's files (a killed run's) are removed
/// (and said so). A run that fails its energy check (plan.energy_limits; or whose energy
/// becomes non-finite) stops with kExitRunFailed; a failure to write any
/// output is reported as an output failure (kExitRunFailed), never as a
/// failed step. Reports on `log` (the closing summary only when it writes
/// files); returns an ExitStatus. Throws before any step, changing nothing,
/// for an output folder that cannot be made or opened (std::runtime_error)
/// or may not be used (OutputFolderError).
int run_to_end(Simulation& sim, const RunPlan& plan, std::ostream& log, RunSummary* summary = nullptr);

}  // namespace dem
