#include "run/observers.hpp"

#include <chrono>
#include <optional>
#include <ostream>
#include <span>
#include <vector>

#include "core/format.hpp"
#include "engine/implicit_step.hpp"
#include "io/checkpoint.hpp"
#include "run/checkpoint_parts.hpp"
#include "run/output_folder.hpp"

namespace dem {

namespace fs = std::filesystem;

namespace {

/// walls.csv's header for the boundaries of `whole` (empty: none).
std::string walls_header_of(const Simulation& whole) {
  std::vector<BoundaryLoad> loads;
  whole.forces().boundary_loads(whole.particles(), loads);
  return loads.empty() ? std::string() : walls_header(loads);
}

/// The energy rows: at the start of a fresh run, on the schedule, at the last step.
Trigger energy_rows(const RunContext& ctx) {
  if (!ctx.files) return Trigger();
  return Trigger::every(ctx.plan.output.energy_every).or_at_start().or_at_last();
}

/// Whether a scheduled (or first) row or frame: counted in the run's
/// bookkeeping, unlike one at the last step off the schedule.
bool on_schedule(const RunContext& ctx, const Trigger& t) { return ctx.at_start || t.scheduled(ctx); }

}  // namespace

// ---------------------------------------------------------------- energy.csv

EnergyTableWriter::EnergyTableWriter(const RunContext& ctx) : RunObserver(energy_rows(ctx)) {}

void EnergyTableWriter::open(RunContext& ctx) {
  if (!ctx.writes || table_) return;
  if (ctx.plan.resume)
    table_.emplace(ctx.out / "energy.csv", ctx.plan.energy_rows);
  else
    table_.emplace(ctx.out / "energy.csv");
}

void EnergyTableWriter::after_step(RunContext& ctx) {
  const EnergyReport& r = ctx.energy();
  if (table_) output([&] { table_->write(r); });
  if (on_schedule(ctx, trigger())) ++ctx.energy_rows;
}

// ------------------------------------------------------------- event tables

EventTableWriter::EventTableWriter(const RunContext& ctx)
    : RunObserver(energy_rows(ctx)),
      can_break_(!ctx.whole.forces().bond_live().empty()),
      implicit_(ctx.sim.map() == IntegratorMap::implicit),
      has_groups_(!ctx.whole.groups().empty()),
      stress_box_(ctx.plan.output.stress_box),
      walls_header_(walls_header_of(ctx.whole)),
      cell_stress_(!stress_box_ && ctx.whole.cell() != nullptr) {}

void EventTableWriter::open(RunContext& ctx) {
  if (!ctx.writes || failures_ || groups_ || solver_ || stress_ || walls_) return;
  if (can_break_) failures_.emplace(ctx.out / kBondFailuresFile, bond_failures_header());
  if (has_groups_) groups_.emplace(ctx.out / kGroupsFile, groups_header());
  if (!walls_header_.empty()) walls_.emplace(ctx.out / kWallsFile, walls_header_);
  if (implicit_) solver_.emplace(ctx.out / kSolverFile, solver_header());
  if (stress_box_ || cell_stress_) stress_.emplace(ctx.out / kStressFile, stress_header());
  if (ctx.plan.resume) {
    if (failures_) failures_->resume(ctx.first_step);
    if (groups_) groups_->resume(last_scheduled_row(ctx.first_step, ctx.plan.output.energy_every));
    if (walls_) walls_->resume(last_scheduled_row(ctx.first_step, ctx.plan.output.energy_every));
    if (solver_) solver_->resume(ctx.first_step);
    if (stress_) stress_->resume(last_scheduled_row(ctx.first_step, ctx.plan.output.energy_every));
  }
}

void EventTableWriter::collect(RunContext& ctx) {
  // (Collective with MPI ranks: the failures are gathered on rank 0.)
  last_failures_ = ctx.sim.take_failures();
  if (failures_)
    for (const BondFailure& x : last_failures_) failures_->add(bond_failure_row(x));
  if (!implicit_ || ctx.at_start) return;
  // Every implicit step tried (docs/model.md §12.8), each ending at its own time.
  const std::vector<ImplicitStepStats>& tried = ctx.sim.last_implicit_attempts();
  double t = ctx.sim.time() - ctx.sim.time_step();
  for (std::size_t k = 0; k < tried.size(); ++k) {
    const ImplicitStepStats& st = tried[k];
    newton_ += st.newton_iterations;
    cg_ += st.cg_iterations;
    halvings_ += st.halvings;
    if (!st.accepted) ++rejected_;
    if (solver_) solver_->add(solver_row(k + 1 == tried.size() ? ctx.sim.time() : t + st.time_step, ctx.step, st));
    if (st.accepted) t += st.time_step;
  }
}

void EventTableWriter::after_step(RunContext& ctx) {
  // (group_reports() sums over every rank's members: all ranks call it.)
  if (has_groups_) {
    const std::vector<GroupReport> reports = ctx.sim.group_reports();
    if (groups_)
      for (const GroupReport& g : reports) groups_->add(group_row(ctx.sim.time(), ctx.sim.step_count(), g));
  }
  // (A collective too.)
  if (stress_box_ || cell_stress_) {
    // The [stress] box, else the whole periodic cell at its current volume.
    const StressMeasure m = stress_box_ ? ctx.sim.stress(*stress_box_) : ctx.sim.cell_stress();
    if (stress_) stress_->add(stress_row(ctx.sim.time(), ctx.sim.step_count(), m));
  }
  // (boundary_loads() too.)
  if (!walls_header_.empty()) {
    const std::vector<BoundaryLoad> loads = ctx.sim.boundary_loads();
    if (walls_) walls_->add(walls_row(ctx.sim.time(), ctx.sim.step_count(), loads));
  }
  write();
}

void EventTableWriter::interrupt(RunContext&) { write(); }

void EventTableWriter::fail(RunContext&) { write(); }

void EventTableWriter::write() {
  if (failures_) output([&] { failures_->write(); });
  if (groups_) output([&] { groups_->write(); });
  if (solver_) output([&] { solver_->write(); });
  if (stress_) output([&] { stress_->write(); });
  if (walls_) output([&] { walls_->write(); });
}

std::string EventTableWriter::names() const {
  std::string written;
  if (failures_) written += std::string(kBondFailuresFile) + ", ";
  if (groups_) written += std::string(kGroupsFile) + ", ";
  if (solver_) written += std::string(kSolverFile) + ", ";
  if (stress_) written += std::string(kStressFile) + ", ";
  if (walls_) written += std::string(kWallsFile) + ", ";
  return written;
}

// ------------------------------------------------------------- energy check

namespace {

/// E_balance (E_total plus the work dissipated so far, docs/model.md §11.3) where
/// anything dissipates or does work, else E_total (the same number).
std::string energy_name_of(const Simulation& whole) {
  const bool ledger = !whole.forces().bond_live().empty() || whole.forces().dissipative() ||
                      whole.forces().applies_filter() || !whole.groups().empty() || whole.forces().boundaries_move();
  return ledger ? "E_balance" : "E_total";
}

}  // namespace

EnergyCheckWatch::EnergyCheckWatch(const RunContext& ctx)
    : RunObserver(energy_rows(ctx)),
      energy_name_(energy_name_of(ctx.whole)),
      // Backward Euler only dissipates: its check is on rises. The midpoint
      // rule (docs/model.md §12.9) conserves, and is checked for drift as
      // the explicit maps are.
      check_(ctx.plan.energy_check, ctx.plan.energy_limits,
             ctx.sim.map() == IntegratorMap::implicit &&
                 ctx.sim.implicit_settings().scheme == ImplicitScheme::backward_euler,
             energy_name_, ctx.plan.time_step_hint) {}

void EnergyCheckWatch::start(RunContext& ctx) {
  // The reference is taken at the run's first step unless the checkpoint
  // has one.
  const EnergyReport& first = ctx.energy();
  const bool new_reference = check_.start(first, ctx.first_step);
  if (new_reference && ctx.first_step > 0 && ctx.writes)
    ctx.log << "energy check: its reference E_0 = " << format_g(first.balance(), 10) << " is taken at step "
            << ctx.first_step << ", where this run's integration starts\n";
}

void EnergyCheckWatch::after_step(RunContext& ctx) {
  const EnergyReport& r = ctx.energy();
  // The check's state follows the rows on the schedule only (the same for a
  // run continued from a checkpoint); the last row is checked. (A warning at
  // the first row of a fresh run is not shown.)
  if (ctx.at_start) {
    (void)check_.row(r, ctx.step, ctx.sim.time());
  } else if (trigger().scheduled(ctx)) {
    const std::string warning = check_.row(r, ctx.step, ctx.sim.time());
    if (!warning.empty() && ctx.writes) {
      ctx.end_progress_line();
      ctx.log << warning << std::endl;
    }
  } else {
    check_.verify(r, ctx.step, ctx.sim.time());
  }
  checked_step_ = ctx.step;
}

void EnergyCheckWatch::before_checkpoint(RunContext& ctx) {
  if (checked_step_ != ctx.sim.step_count())
    check_.verify(ctx.sim.energy_report(), ctx.sim.step_count(), ctx.sim.time());
  ctx.plan.energy_check = check_.state();
}

// --------------------------------------------------------------- VTK frames

FrameWriter::FrameWriter(const RunContext& ctx)
    : RunObserver(ctx.files && ctx.plan.output.vtk_every > 0
                      ? Trigger::every(ctx.plan.output.vtk_every).or_at_start().or_at_last()
                      : Trigger()),
      can_break_(!ctx.whole.forces().bond_live().empty()) {}

void FrameWriter::make_folder(RunContext& ctx) {
  if (vtk_ || !ctx.files) return;
  // With MPI ranks every rank writes its piece of each VTK frame.
  const VtkPieces pieces = ctx.domain != nullptr ? VtkPieces{ctx.domain->rank(), ctx.domain->ranks()} : VtkPieces{};
  vtk_.emplace(ctx.out, VtkSeriesWriter::kDefaultCompressionLevel, pieces);
  // The mesh walls (replicated on every rank): written by the rank that writes files.
  if (ctx.writes && !simulation_surfaces(ctx.sim).empty()) meshes_.emplace(ctx.out);
}

std::vector<SurfaceFrame> simulation_surfaces(const Simulation& sim) {
  std::vector<SurfaceFrame> out;
  const ForceField& f = sim.forces();
  for (std::size_t k = 0; k < f.providers().size(); ++k)
    if (const SurfaceSource* s = f.capabilities(k).surfaces) s->surfaces(out);
  return out;
}

void FrameWriter::open(RunContext& ctx) {
  make_folder(ctx);
  if (vtk_ && ctx.plan.resume && !resumed_) vtk_->resume(ctx.plan.frame_times);
  if (meshes_ && ctx.plan.resume && !resumed_) meshes_->resume(ctx.plan.frame_times);
  resumed_ = true;
}

void FrameWriter::after_step(RunContext& ctx) {
  output([&] { write_simulation_frame(*vtk_, ctx.sim, can_break_, ctx.domain); });
  if (meshes_) output([&] { meshes_->write_frame(ctx.sim.time(), simulation_surfaces(ctx.sim)); });
  if (on_schedule(ctx, trigger())) ctx.frame_times.push_back(ctx.sim.time());
}

void write_simulation_frame(VtkSeriesWriter& vtk, const Simulation& sim, bool can_break, DecomposedRun* domain) {
  // With MPI ranks each rank's piece: the particles it owns, the bonds it
  // books (VtkSeriesWriter's parallel series).
  const ParticleStore& s = sim.particles();
  const BondList& bonds = sim.forces().bonds();
  const std::span<const std::uint8_t> live = sim.forces().bond_live();
  FrameExtras extras;
  std::vector<std::uint32_t> broken, fragment;
  std::vector<std::uint8_t> shown, shown_bonds;
  if (can_break) {
    extras.bond_live = live;
    broken = sim.forces().broken_per_particle(s);
    fragment = domain != nullptr ? domain->fragment_labels(s) : sim.forces().fragment_labels(s);
    extras.broken = broken;
    extras.fragment = fragment;
    extras.fracture = true;
  }
  if (domain != nullptr) {
    shown.resize(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) shown[i] = s.owns(i) ? 1 : 0;
    shown_bonds.resize(bonds.size());
    for (std::size_t b = 0; b < bonds.size(); ++b)
      shown_bonds[b] = (live.empty() || live[b] != 0) && s.books(bonds.first[b], bonds.second[b]) ? 1 : 0;
    extras.shown = shown;
    extras.bond_live = shown_bonds;
  }
  vtk.write_frame(sim.time(), s, bonds, extras);
}

void FrameWriter::interrupt(RunContext&) {
  if (vtk_) output([&] { vtk_->flush(); });
}

void FrameWriter::finish(RunContext& ctx) {
  if (vtk_) output([&] { vtk_->flush(); });
  if (ctx.domain != nullptr) (void)ctx.domain->any(false);  // every rank's pieces are on disk
  if (vtk_ && ctx.writes && ctx.domain != nullptr) output([&] { vtk_->relist(); });
}

void FrameWriter::fail(RunContext&) {
  if (vtk_) vtk_->flush();
}

void FrameWriter::flush_for_checkpoint(RunContext& ctx) {
  if (vtk_ && ctx.domain != nullptr) output([&] { vtk_->flush(); });
}

void FrameWriter::relist_for_checkpoint(RunContext& ctx) {
  if (vtk_ && ctx.writes && ctx.domain != nullptr) output([&] { vtk_->relist(); });
}

// -------------------------------------------------------------- checkpoints

CheckpointWriter::CheckpointWriter(const RunContext& ctx, EventTableWriter& tables, EnergyCheckWatch& check,
                                   FrameWriter& frames)
    : RunObserver(ctx.files ? Trigger::every(ctx.plan.output.checkpoint_every).but_not_last() : Trigger()),
      tables_(tables),
      check_(check),
      frames_(frames) {}

void CheckpointWriter::after_step(RunContext& ctx) {
  tables_.write();
  save(ctx);
}

void CheckpointWriter::interrupt(RunContext& ctx) {
  if (ctx.files) ctx.interrupt_checkpoint_seconds = save(ctx);
}

void CheckpointWriter::finish(RunContext& ctx) {
  tables_.write();
  if (ctx.files) save(ctx);
}

double CheckpointWriter::save(RunContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  // A diverged state never replaces a good checkpoint (write_checkpoint
  // refuses one the reader would refuse).
  check_.before_checkpoint(ctx);
  // Every rank's pieces of the frames the checkpoint lists are on disk
  // before it is written (the gather below waits for every rank).
  frames_.flush_for_checkpoint(ctx);
  if (ctx.domain == nullptr) {
    if (ctx.writes)
      output([&] {
        write_checkpoint(ctx.out / kCheckpointFile, checkpoint_of(ctx.sim, ctx.plan, ctx.frame_times, ctx.energy_rows));
        // (The parts of a checkpoint an MPI run wrote here, continued on one process.)
        std::error_code ignored;
        std::filesystem::remove_all(ctx.out / kCheckpointPartsFolder, ignored);
      });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  // With MPI ranks: every rank writes its part, rank 0 the index naming
  // them (run/checkpoint_parts.hpp); nothing is gathered.
  std::optional<CheckpointParts> parts;
  output([&] { parts = write_checkpoint_part(ctx.out, *ctx.domain, ctx.sim, ctx.plan.run_id); });
  // (Every rank has flushed: the collections list every piece's frame.)
  frames_.relist_for_checkpoint(ctx);
  if (ctx.writes && parts)
    output([&] {
      CheckpointState index = capture_run_state(ctx.sim);
      add_run_bookkeeping(index, ctx.plan, ctx.frame_times, ctx.energy_rows);
      index.groups = ctx.whole.groups();  // (the whole system's members)
      index.parts = std::move(parts);
      write_checkpoint_index(ctx.out / kCheckpointFile, index);
    });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace dem
