#pragma once
/// \file run_loop.hpp
/// The one run loop, used by `dem run`, `dem restart`, `dem_torus` and
/// `dem_bench`: the standard observers (run/observers.hpp: energy rows,
/// event tables, VTK frames and checkpoints on their intervals, the energy
/// check, SIGINT/SIGTERM caught between steps, progress on the terminal)
/// around Simulation::step(), failures reported with what was kept, and the
/// closing summary. Works for every scene, clumps included. The output
/// folder's rules (who owns it, which files are the engine's, restarts) are
/// in run/output_folder.hpp; a caller that steps the Simulation itself uses
/// the observers directly (run/observer.hpp).

#include <iosfwd>

#include "engine/simulation.hpp"
#include "run/energy_check.hpp"
#include "run/output_folder.hpp"
#include "run/run_plan.hpp"

namespace dem {

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
/// failed step. SIGINT or SIGTERM stops the run after the step it arrives
/// in, with a checkpoint to continue from (kExitInterrupted). Reports on
/// `log` (the closing summary only when it writes files); returns an
/// ExitStatus, and what the run did in `summary` if given. Throws before any
/// step, changing nothing, for bad energy limits (std::invalid_argument), an
/// output folder that cannot be made or opened (std::runtime_error) or may
/// not be used (OutputFolderError).
int run_to_end(Simulation& sim, const RunPlan& plan, std::ostream& log, RunSummary* summary = nullptr);

}  // namespace dem
