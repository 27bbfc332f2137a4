#pragma once
/// \file run_loop.hpp
/// The one run loop, used by `dem run`, `dem restart`, `dem_torus` and
/// `dem_bench`: energy rows, VTK frames and checkpoints on their intervals,
/// progress on the terminal, SIGINT/SIGTERM caught between steps (a
/// checkpoint is written to continue from), divergence detection, failures
/// reported with what was kept. Works for every scene, clumps included.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

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
};

/// What a finished (or stopped) run reports, besides the exit status.
struct RunSummary {
  std::uint64_t steps = 0;       ///< steps made by this call
  double seconds = 0.0;          ///< wall time of the stepping loop
  double max_energy_deviation = 0.0;  ///< largest |E_total - E_0|/|E_0| seen at energy rows
  double e0 = 0.0;               ///< E_total at the start of this call
};

/// Name of the checkpoint file in the output folder.
inline constexpr const char* kCheckpointFile = "checkpoint.bin";

/// The state of a running simulation with the run's output bookkeeping, as a
/// checkpoint keeps it.
CheckpointState checkpoint_of(const Simulation& sim, const RunPlan& plan,
                              const std::vector<double>& frame_times, std::uint64_t energy_rows);

/// Runs `sim` to plan.end_step, writing into plan.output_dir: energy.csv
/// (a row every output.energy_every steps, at the start of a fresh run and at
/// the last step), VTK frames (every output.vtk_every steps and the last),
/// checkpoint.bin (every output.checkpoint_every steps, at the end, and when
/// interrupted; output.checkpoint_every = 0 and an empty output_dir write
/// none during the run). Reports on `log` (the closing summary only when it
/// writes files); returns an ExitStatus. Throws only for an output folder
/// that cannot be made (before any step).
int run_to_end(Simulation& sim, const RunPlan& plan, std::ostream& log, RunSummary* summary = nullptr);

}  // namespace dem
