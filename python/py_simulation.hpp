#pragma once
/// \file py_simulation.hpp
/// The simulation behind dem_rrp.Simulation (docs/python.md): a Simulation
/// with the run of run/run_session.hpp around its steps, so that a run
/// stepped from Python writes what `dem run` writes, through the same code.
///
/// Output: open_output() starts a RunSession into a folder (the plan `dem
/// run` makes for the scene, open-ended: RunPlan::open_end), close_output()
/// ends it as `dem run` ends its run. Without an output folder the steps run
/// in a session that writes nothing (it still collects the failed bonds).
/// Signals are left to Python (RunPlan::catch_signals = false).
///
/// Errors: scene and checkpoint errors are thrown as the engine throws them
/// (SceneError, CheckpointError; the module turns them into
/// dem_rrp.SceneError and dem_rrp.CheckpointError), a failed run as
/// RunFailed with the message `dem run` prints, bad arguments as
/// std::invalid_argument (ValueError).

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/vtk_writer.hpp"
#include "run/run_session.hpp"

namespace dem::python {

/// A run failed (a step, the energy check or the output): the message is
/// what `dem run` prints after "error: ", hint included.
struct RunFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Where a scene comes from: a file (path; its text is read), or TOML text
/// with the folder its relative paths are resolved against.
struct SceneSource {
  std::string path;      ///< the file, or a name for messages ("<string>")
  std::string text;      ///< the TOML text (read from path if empty and from_file)
  std::filesystem::path base_dir;
};

class PySimulation {
 public:
  /// Builds a scene as `dem run` does (read_scene_file or parse_scene_text,
  /// build_scene, make_simulation): throws SceneError with the CLI's message.
  /// threads: worker threads for this simulation's steps (0: all cores);
  /// simd: the SIMD target ("" keeps the current one; else as --simd).
  static std::unique_ptr<PySimulation> from_scene(const SceneSource& source, bool from_file, std::size_t threads,
                                                  const std::string& simd);
  /// A simulation continued from a checkpoint as `dem restart` continues it
  /// (to the scene's end, its output intervals and energy limits); its
  /// open_output() into the run's folder continues the run's files. Throws
  /// CheckpointError.
  static std::unique_ptr<PySimulation> restart(const std::filesystem::path& checkpoint, std::size_t threads);

  PySimulation(Simulation sim, RunPlan plan, std::size_t threads);
  /// Closes the output, if open (errors are printed on stderr).
  ~PySimulation();
  PySimulation(const PySimulation&) = delete;
  PySimulation& operator=(const PySimulation&) = delete;

  /// One step, with the session's rows, frames and checkpoints. Call
  /// without the GIL. Throws RunFailed (the output is then closed).
  void advance();
  /// The step count at which a run to time t ends (the step whose end is
  /// at or past t; the step count now if t is not later than now). Throws
  /// std::invalid_argument for a non-finite t.
  std::uint64_t step_at_time(double t) const;
  /// The scene's end step (as `dem run` without --steps or --t-end).
  std::uint64_t end_step() const { return plan_.end_step; }
  /// Worker threads for the steps (0: all cores).
  std::size_t threads() const { return threads_; }

  /// Opens the run's output in `dir` as `dem run --output-dir dir
  /// [--overwrite]` does (a restarted simulation that has not stepped
  /// continues its run's files as `dem restart` does); writes the first
  /// rows and frame of a fresh run. Closes an open output first. Throws
  /// OutputFolderError or std::runtime_error naming the folder.
  void open_output(const std::filesystem::path& dir, bool overwrite);
  /// Ends the output as `dem run` ends its run at the step now: the last
  /// step's rows and frame, the tables, the closing checkpoint. Nothing if
  /// no output is open. Throws RunFailed.
  void close_output();
  bool output_open() const { return session_ && session_->context().files; }
  /// The log of the run so far (warnings, folder notes, summaries) since
  /// the last call, which empties it.
  std::string take_log();

  /// One VTK frame of the state now into `dir` (a series per folder, kept
  /// from call to call), as the run's frames. Throws std::runtime_error.
  void write_frame(const std::filesystem::path& dir);
  /// A checkpoint of the state now at `path`, with the open run's
  /// bookkeeping (RunSession::checkpoint_state: its tables written first,
  /// the energy check's state), else the scene's plan. Throws
  /// CheckpointError, EnergyCheckError or std::runtime_error.
  void write_checkpoint(const std::filesystem::path& path);

  /// energy.csv's header and the row of the state now, exactly as written.
  std::pair<std::string, std::string> energy_row();
  /// bond_failures.csv's header and its rows so far (since the simulation
  /// was made).
  std::pair<std::string, std::vector<std::string>> failure_rows() const;
  /// groups.csv's header and the rows of the state now.
  std::pair<std::string, std::vector<std::string>> group_rows() const;
  /// The stress.csv row of the state now for the box [lower, upper)
  /// (engine/stress.hpp); throws std::invalid_argument for a box without volume.
  std::pair<std::string, std::string> stress_row(const Vec3& lower, const Vec3& upper) const;
  /// The scene's [stress] box, if it has one.
  const std::optional<StressBox>& stress_box() const { return plan_.output.stress_box; }
  /// walls.csv's header and the row of the state now (empty strings for a
  /// scene without walls).
  std::pair<std::string, std::string> wall_row() const;

  /// Counts re-orderings and reallocations of the particle arrays: views
  /// taken before a change of it are stale.
  std::uint64_t layout_version() const { return layout_version_; }
  /// The slot of each particle id (for the setters), checked: throws
  /// std::invalid_argument naming the first id that is not a particle.
  std::vector<std::uint32_t> slots_of(std::span<const std::int64_t> ids);
  /// The number of failed bonds so far.
  std::size_t broken_count() const;

  Simulation& sim() { return sim_; }
  const Simulation& sim() const { return sim_; }

  /// A run() in progress (refused a second one from another thread:
  /// std::runtime_error), and whether it is inside a step, without the GIL
  /// (require_idle() then refuses what would read or change the state,
  /// std::runtime_error; between steps, in callbacks, all is allowed).
  void begin_run();
  void end_run() { running_ = false; }
  void set_stepping(bool on) { stepping_ = on; }
  void require_idle() const;

 private:
  /// A session that writes nothing, if none is open.
  void ensure_session();
  /// Ends the session (RunSession::close) and drops it.
  void end_session();
  /// Reports a failure of the session as dem run does, drops the session,
  /// throws RunFailed with the report.
  [[noreturn]] void fail_session(const std::exception& e);
  /// The failed bonds of the step the session last collected.
  void keep_failures();
  void note_layout();

  Simulation sim_;
  RunPlan plan_;  ///< `dem run`'s plan for the scene (or `dem restart`'s)
  std::size_t threads_;
  std::ostringstream log_;
  std::unique_ptr<RunSession> session_;
  /// A restarted simulation's checkpoint (without its particle state), for
  /// open_output() to continue its run's files; dropped at the first step.
  std::optional<CheckpointState> restored_;
  std::filesystem::path checkpoint_path_;
  std::vector<BondFailure> failures_;
  std::map<std::filesystem::path, std::unique_ptr<VtkSeriesWriter>> frame_writers_;
  std::uint64_t layout_version_ = 0;
  std::size_t reorders_seen_ = 0;
  const void* layout_data_ = nullptr;
  std::vector<std::uint32_t> slot_of_id_;
  std::uint64_t slot_version_ = UINT64_MAX;
  bool running_ = false;
  bool stepping_ = false;
};

}  // namespace dem::python
