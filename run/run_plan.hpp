#pragma once
/// \file run_plan.hpp
/// What a run is asked to do (RunPlan), how it ends (ExitStatus), what it
/// reports (RunSummary), and the bookkeeping a checkpoint keeps of it
/// (take_run_bookkeeping, checkpoint_of). Used by the run loop
/// (run/run_loop.hpp), its observers (run/observers.hpp) and the output
/// folder's restart planning (run/output_folder.hpp).

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "engine/partition.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint.hpp"
#include "run/energy_check.hpp"
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
  /// SIGINT and SIGTERM stop the run between steps with a checkpoint
  /// (run/observers.hpp SignalWatch); false leaves the signals to the
  /// caller (the Python module, where Ctrl-C is a KeyboardInterrupt).
  bool catch_signals = true;
  /// The caller decides where the run ends (the Python module steps as it
  /// is told): no step counts as the last one while stepping, end_step is
  /// only what checkpoints keep, and RunSession::close() writes the last
  /// step's rows and frame where the run stops.
  bool open_end = false;
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
  /// The energy check's limits and how they were set (run/energy_check.hpp),
  /// as fractions of the energy scale: beyond max_drift an explicit run stops
  /// (exit 2) with a message naming the step, the time and the drift; beyond
  /// warn_drift it warns once; an implicit run stops when E_balance rises
  /// above its largest earlier value by more than implicit_rise.
  EnergyLimits energy_limits;
  /// The energy check's state (a restart: from its checkpoint); not
  /// measured: its reference is taken at the start of this call.
  EnergyCheckState energy_check;
  /// Files the scene's build made, as (name, text), e.g. the packing report
  /// "packing.json": written into the output folder (through a temporary
  /// name) once it is prepared, by a fresh run (not a resumed one).
  std::vector<std::pair<std::string, std::string>> scene_files;
  /// A run decomposed over MPI ranks (mpi/domain.hpp), or nullptr: the
  /// Simulation passed to run_to_end() is then this rank's part. Every rank
  /// runs the same loop; rank 0 alone touches the output folder, its VTK
  /// frames and checkpoints made from the whole system gathered there.
  DecomposedRun* domain = nullptr;
};

/// What a finished (or stopped) run reports, besides the exit status.
struct RunSummary {
  std::uint64_t steps = 0;       ///< steps made by this call
  double seconds = 0.0;          ///< wall time of the stepping loop
  /// largest |E_balance - E_0| / S seen at energy rows (run/energy_check.hpp)
  double max_energy_deviation = 0.0;
  double e0 = 0.0;               ///< E_0: E_balance at the energy check's reference step
};

/// The first step count at or past time t of a clock t = time_origin +
/// (steps - step_origin) h (step_origin if t is not after time_origin).
/// Throws std::invalid_argument as steps_to_time() does.
std::uint64_t step_at_time(double t, double time_origin, std::uint64_t step_origin, double h);

/// The time at step `step` of a checkpoint's clock:
/// t = time_origin + (step - step_origin) h.
double checkpoint_time_at(const CheckpointState& c, std::uint64_t step);
/// step_at_time() on a checkpoint's clock.
std::uint64_t checkpoint_step_at(const CheckpointState& c, double t);

/// The last step up to `step` whose rows of groups.csv (written with the
/// energy rows, every `energy_every` steps) a continued run keeps: `step` if
/// an energy row is due there, else the step before (a run's last step
/// writes a row off the schedule, which the uninterrupted run does not have).
std::uint64_t last_scheduled_row(std::uint64_t step, std::uint64_t energy_every);

/// The run's identity, energy reference, drift limits and output bookkeeping
/// of checkpoint `c` into `plan` (what plan_restart_output() starts from;
/// with MPI, what ranks other than 0 take as they are).
void take_run_bookkeeping(const CheckpointState& c, RunPlan& plan);

/// The state of a running simulation with the run's output bookkeeping, as a
/// checkpoint keeps it: `frame_times` of the frames written on the schedule,
/// `energy_rows` rows of energy.csv on the schedule.
CheckpointState checkpoint_of(const Simulation& sim, const RunPlan& plan,
                              const std::vector<double>& frame_times, std::uint64_t energy_rows);

/// The run's output bookkeeping (scene path and text, frame times, energy
/// rows, intervals, end step, run identity, energy check and drift limits)
/// into `c`: checkpoint_of() less the simulation.
void add_run_bookkeeping(CheckpointState& c, const RunPlan& plan, const std::vector<double>& frame_times,
                         std::uint64_t energy_rows);

}  // namespace dem
