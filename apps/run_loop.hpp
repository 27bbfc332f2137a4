#pragma once
/// \file run_loop.hpp
/// The time-stepping loop of `dem run` and `dem restart`: energy rows, VTK
/// frames and checkpoints on their intervals, progress on the terminal,
/// SIGINT/SIGTERM caught between steps, failures reported with what was kept.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/clump.hpp"
#include "engine/simulation.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

/// Exit statuses of the dem program.
enum ExitStatus : int {
  kExitOk = 0,
  kExitBadInput = 1,     ///< bad scene, options or checkpoint: nothing was run
  kExitRunFailed = 2,    ///< the run or its output failed; what was written is kept
  kExitInterrupted = 3,  ///< SIGINT/SIGTERM: a checkpoint was written to continue from
};

struct RunPlan {
  std::filesystem::path output_dir;
  std::uint64_t end_step = 0;  ///< run until the step count reaches it
  OutputSpec output;
  std::string scene_path;  ///< kept in checkpoints
  std::string scene_text;
  std::vector<double> frame_times;  ///< frames written before (a restart)
  std::uint64_t energy_rows = 0;    ///< rows of energy.csv written before on the schedule
  bool resume = false;              ///< continue the output files in output_dir
  bool progress = true;             ///< progress line / log lines
};

/// Name of the checkpoint file in the output folder.
inline constexpr const char* kCheckpointFile = "checkpoint.bin";

/// The state of a running simulation, as a checkpoint keeps it.
CheckpointState checkpoint_of(const Simulation& sim, const RunPlan& plan,
                              const std::vector<double>& frame_times, std::uint64_t energy_rows);

/// A simulation rebuilt from a checkpoint, ready to continue bit for bit.
Simulation simulation_from(const CheckpointState& state);

/// Runs `sim` to plan.end_step, writing into plan.output_dir: energy.csv
/// (a row every output.energy_every steps, at the start of a fresh run and at
/// the last step), VTK frames (every output.vtk_every steps and the last),
/// checkpoint.bin (every output.checkpoint_every steps, at the end, and when
/// interrupted). Reports on `log`; returns an ExitStatus. Throws only for an
/// output folder that cannot be made (before any step).
int run_to_end(Simulation& sim, const RunPlan& plan, std::ostream& log);

/// The same for a scene with clumps (engine/clump.hpp). Checkpoints of such
/// runs are not written yet: checkpoint_every is ignored, and SIGINT/SIGTERM
/// stop the run (status 3) with its output kept but no checkpoint.
int run_to_end(ClumpSimulation& sim, const RunPlan& plan, std::ostream& log);

}  // namespace dem
