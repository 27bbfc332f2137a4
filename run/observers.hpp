#pragma once
/// \file observers.hpp
/// The standard observers of a run (run/observer.hpp), as run_to_end()
/// (run/run_loop.hpp) uses them, in this order:
///
///   EnergyTableWriter   energy.csv: a row at the start of a fresh run, every
///                       output.energy_every steps and at the last step
///   EventTableWriter    bond_failures.csv, groups.csv (a row per group with
///                       each energy row), solver.csv (implicit runs, a row
///                       per step); the tables are rewritten with each energy
///                       row and before each checkpoint
///   EnergyCheckWatch    the energy check (run/energy_check.hpp) at each
///                       energy row: stops a run that drifts
///   FrameWriter         VTK frames: at the start of a fresh run, every
///                       output.vtk_every steps and at the last step
///   CheckpointWriter    checkpoint.bin every output.checkpoint_every steps,
///                       at the end and when interrupted
///   SignalWatch         SIGINT/SIGTERM between steps: stops the run
///   ProgressReporter    the progress line (or log lines)
///
/// Without an output folder (RunPlan::output_dir empty) none writes a file.
/// With MPI ranks every rank has the same observers acting at the same
/// steps (their collective calls in the same order); rank 0 writes the
/// files, every rank its piece of each VTK frame.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "io/energy_table.hpp"
#include "io/event_tables.hpp"
#include "io/mesh_series.hpp"
#include "io/vtk_writer.hpp"
#include "run/energy_check.hpp"
#include "run/observer.hpp"

namespace dem {

/// energy.csv (io/energy_table.hpp), continued on a resumed run; counts the
/// rows on the schedule (RunContext::energy_rows).
class EnergyTableWriter : public RunObserver {
 public:
  explicit EnergyTableWriter(const RunContext& ctx);
  void open(RunContext& ctx) override;
  void after_step(RunContext& ctx) override;

 private:
  std::optional<EnergyTable> table_;
};

/// The event tables (io/event_tables.hpp) of what the run has: failed bonds
/// (bonds that can break), groups, implicit solver counts; with the solver
/// counts' totals for the run's summary. after_step() at the energy rows.
class EventTableWriter : public RunObserver {
 public:
  explicit EventTableWriter(const RunContext& ctx);
  void open(RunContext& ctx) override;
  void collect(RunContext& ctx) override;
  void after_step(RunContext& ctx) override;
  void interrupt(RunContext& ctx) override;
  void fail(RunContext& ctx) override;

  /// Writes the tables that have new rows (none on ranks that do not
  /// write); throws OutputFailure.
  void write();
  /// "bond_failures.csv, groups.csv, walls.csv, " as far as this rank writes them.
  std::string names() const;
  bool can_break() const { return can_break_; }
  bool implicit() const { return implicit_; }
  /// The bonds that failed at the step last collected (in (step, bond)
  /// order), whether or not this rank writes the table.
  const std::vector<BondFailure>& last_failures() const { return last_failures_; }
  /// Totals over this run's steps (implicit runs).
  std::size_t newton_total() const { return newton_; }
  std::size_t cg_total() const { return cg_; }
  std::size_t halvings_total() const { return halvings_; }
  /// Implicit steps the event control rejected (docs/model.md §12.8).
  std::size_t rejected_total() const { return rejected_; }

 private:
  bool can_break_, implicit_, has_groups_;
  std::optional<StressBox> stress_box_;
  std::string walls_header_;  ///< walls.csv's header; empty: the scene has no walls or meshes
  bool cell_stress_ = false;  ///< no [stress] box in a periodic cell: stress.csv of the whole cell
  std::optional<RowFile> failures_, groups_, solver_, stress_, walls_;
  std::vector<BondFailure> last_failures_;
  std::size_t newton_ = 0, cg_ = 0, halvings_ = 0, rejected_ = 0;
};

/// The energy check (run/energy_check.hpp): its reference taken at the
/// start (unless the plan's state has one), judged at every energy row; a
/// warning once on the log, EnergyCheckError past a stop limit.
class EnergyCheckWatch : public RunObserver {
 public:
  explicit EnergyCheckWatch(const RunContext& ctx);
  void start(RunContext& ctx) override;
  void after_step(RunContext& ctx) override;

  /// Before a checkpoint: judges the state (unless an energy row just did)
  /// without changing the check, so that a diverged state never replaces a
  /// good checkpoint, and puts the check's state into ctx.plan.
  void before_checkpoint(RunContext& ctx);
  const EnergyCheck& check() const { return check_; }
  /// "E_balance" or "E_total": what the run reports and checks.
  const std::string& energy_name() const { return energy_name_; }

 private:
  std::string energy_name_;
  EnergyCheck check_;
  std::uint64_t checked_step_ = UINT64_MAX;  ///< the step an energy row last judged
};

/// The triangle surfaces of the simulation's providers (mesh walls) at
/// their current place, in provider order (SurfaceSource).
std::vector<SurfaceFrame> simulation_surfaces(const Simulation& sim);

/// Writes the frame of `sim` now into `vtk` as the run's frames show it:
/// particles and bonds, with the fracture data (failed bonds left out,
/// n_broken, fragment labels) where bonds can fail (`can_break`); with MPI
/// ranks (`domain` not null) this rank's piece, its own particles and the
/// bonds it books (fragment labels are then collective). Throws as
/// VtkSeriesWriter::write_frame().
void write_simulation_frame(VtkSeriesWriter& vtk, const Simulation& sim, bool can_break,
                            DecomposedRun* domain = nullptr);

/// The VTK series (io/vtk_writer.hpp): with MPI ranks each rank writes its
/// piece of each frame (the particles it owns, the bonds it books).
class FrameWriter : public RunObserver {
 public:
  explicit FrameWriter(const RunContext& ctx);
  /// Makes this rank's writer (which creates the output folder, or throws
  /// naming it) and continues the earlier frames of a resumed run; once.
  void open(RunContext& ctx) override;
  void after_step(RunContext& ctx) override;
  void interrupt(RunContext& ctx) override;
  /// Every rank's pieces on disk, then the collections list them all.
  void finish(RunContext& ctx) override;
  void fail(RunContext& ctx) override;

  /// Only the writer that creates the folder (the first part of open()).
  void make_folder(RunContext& ctx);
  /// With MPI ranks: this rank's frame in flight on disk (before the
  /// whole system is gathered for a checkpoint).
  void flush_for_checkpoint(RunContext& ctx);
  /// With MPI ranks, rank 0: the collections list every frame whose pieces
  /// every rank has flushed.
  void relist_for_checkpoint(RunContext& ctx);
  /// Frames in the series, earlier runs' and the one in flight included.
  std::size_t frame_count() const { return vtk_ ? vtk_->frame_count() : 0; }

 private:
  bool can_break_;
  bool resumed_ = false;
  std::optional<VtkSeriesWriter> vtk_;
  std::optional<MeshSeriesWriter> meshes_;  ///< meshes.pvd, where the scene has mesh walls
};

/// checkpoint.bin (io/checkpoint.hpp), made from the whole system (gathered
/// on rank 0 with MPI ranks), after the event tables are brought up to date.
class CheckpointWriter : public RunObserver {
 public:
  CheckpointWriter(const RunContext& ctx, EventTableWriter& tables, EnergyCheckWatch& check, FrameWriter& frames);
  void after_step(RunContext& ctx) override;
  /// Writes the checkpoint to continue from; its time in
  /// ctx.interrupt_checkpoint_seconds.
  void interrupt(RunContext& ctx) override;
  void finish(RunContext& ctx) override;

 private:
  /// Writes the checkpoint (collective with MPI ranks); returns its seconds.
  double save(RunContext& ctx);
  EventTableWriter& tables_;
  EnergyCheckWatch& check_;
  FrameWriter& frames_;
};

/// SIGINT and SIGTERM, caught from start() until destroyed (the earlier
/// handlers are then restored), looked at after every step (with MPI ranks:
/// a signal to any rank stops all); a signal sets ctx.stop. interrupt()
/// says on the log where the run stopped and how to continue it.
class SignalWatch : public RunObserver {
 public:
  SignalWatch();
  ~SignalWatch() override;
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;
  void start(RunContext& ctx) override;
  void after_step(RunContext& ctx) override;
  void interrupt(RunContext& ctx) override;

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

/// The progress of the run (plan.progress): a \r line on a terminal twice a
/// second, else a log line every 10 s (and always on the log with
/// plan.progress_on_log): the time reached, the steps per second, the time
/// left.
class ProgressReporter : public RunObserver {
 public:
  ProgressReporter();
  void start(RunContext& ctx) override;
  void after_step(RunContext& ctx) override;

 private:
  bool terminal_ = false;
  std::optional<std::chrono::steady_clock::time_point> last_report_;
};

/// The standard observers of run_to_end() for `ctx`, in their order, with
/// typed references for the loop's summary.
struct StandardObservers {
  explicit StandardObservers(const RunContext& ctx);
  /// Opens the run's output before its first step (instead of
  /// list.open()): rank 0 makes the folder (the frame writer creates it, or
  /// throws naming it), checks and prepares it (OutputFolder::prepare, which
  /// sets ctx.plan.run_id) and opens its files before the other ranks open
  /// theirs. Throws, having run nothing, for a folder that cannot be made or
  /// may not be used (std::runtime_error, OutputFolderError).
  void open(RunContext& ctx);
  ObserverList list;
  EnergyTableWriter& energy_table;
  EventTableWriter& events;
  EnergyCheckWatch& energy_check;
  FrameWriter& frames;
  CheckpointWriter& checkpoints;
  SignalWatch& signals;
  ProgressReporter& progress;
};

}  // namespace dem
