#include "python/py_simulation.hpp"

#include <cmath>
#include <iostream>

#include "core/parallel.hpp"
#include "core/simd.hpp"
#include "io/energy_table.hpp"
#include "io/event_tables.hpp"
#include "run/checkpoint_parts.hpp"
#include "run/output_folder.hpp"
#include "run/scene_run.hpp"
#include "scene/scene_builder.hpp"

namespace dem::python {

std::unique_ptr<PySimulation> PySimulation::from_scene(const SceneSource& source, bool from_file,
                                                       std::size_t threads, const std::string& simd) {
  const SceneSpec spec =
      from_file ? read_scene_file(source.path) : parse_scene_text(source.text, source.path, source.base_dir);
  const std::string text = from_file ? read_text_file(source.path) : source.text;
  ThreadLimit limit(threads);
  if (!simd.empty()) set_simd_target(simd);
  BuiltScene built = build_scene(spec);
  RunPlan plan = scene_run_plan(spec, built, source.path, text);
  return std::make_unique<PySimulation>(make_simulation(std::move(built)), std::move(plan), threads);
}

std::unique_ptr<PySimulation> PySimulation::restart(const std::filesystem::path& checkpoint, std::size_t threads) {
  CheckpointState c = read_whole_checkpoint(checkpoint);
  ThreadLimit limit(threads);
  RunPlan plan = checkpoint_run_plan(c, c.end_step);
  auto p = std::make_unique<PySimulation>(simulation_from(c), std::move(plan), threads);
  // Only the run's bookkeeping is needed from here on.
  c.particles = ParticleStore();
  c.providers.clear();
  c.clumps.clear();
  p->restored_ = std::move(c);
  p->checkpoint_path_ = checkpoint;
  return p;
}

PySimulation::PySimulation(Simulation sim, RunPlan plan, std::size_t threads)
    : sim_(std::move(sim)), plan_(std::move(plan)), threads_(threads) {
  plan_.progress = false;
  plan_.catch_signals = false;  // Ctrl-C is Python's KeyboardInterrupt
  plan_.open_end = true;        // the script decides where the run ends
  note_layout();
  layout_version_ = 0;
}

PySimulation::~PySimulation() {
  try {
    close_output();
  } catch (const std::exception& e) {
    std::cerr << "dem_rrp: closing the output failed: " << e.what() << "\n";
  }
}

void PySimulation::ensure_session() {
  if (session_) return;
  RunPlan plan = plan_;
  plan.output_dir.clear();  // writes nothing
  session_ = std::make_unique<RunSession>(sim_, plan, log_);
  session_->start();
  session_->begin();
  keep_failures();
}

void PySimulation::end_session() {
  if (!session_) return;
  try {
    session_->close();
  } catch (const std::exception& e) {
    fail_session(e);
  }
  session_.reset();
}

void PySimulation::fail_session(const std::exception& e) {
  // As dem run reports it; the session (and any output) ends here.
  const std::streamoff from = log_.tellp();
  session_->fail(e);
  session_.reset();
  const std::string text = log_.str();
  std::string message = text.substr(static_cast<std::size_t>(from));
  log_.str(text.substr(0, static_cast<std::size_t>(from)));  // the report goes with the exception
  log_.seekp(0, std::ios_base::end);
  if (message.rfind("error: ", 0) == 0) message.erase(0, 7);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  throw RunFailed(message);
}

void PySimulation::advance() {
  ensure_session();
  try {
    sim_.step();
    session_->stepped();
  } catch (const std::exception& e) {
    fail_session(e);
  }
  restored_.reset();
  keep_failures();
  note_layout();
}

void PySimulation::keep_failures() {
  const std::vector<BondFailure>& f = session_->observers().events.last_failures();
  failures_.insert(failures_.end(), f.begin(), f.end());
}

void PySimulation::note_layout() {
  const void* data = sim_.particles().position.data();
  if (sim_.reorder_count() != reorders_seen_ || data != layout_data_) {
    ++layout_version_;
    reorders_seen_ = sim_.reorder_count();
    layout_data_ = data;
  }
}

std::uint64_t PySimulation::step_at_time(double t) const {
  if (!std::isfinite(t)) throw std::invalid_argument("t_end must be a finite time");
  const std::uint64_t k = dem::step_at_time(t, sim_.time_origin(), sim_.step_origin(), sim_.time_step());
  return std::max<std::uint64_t>(k, sim_.step_count());
}

void PySimulation::open_output(const std::filesystem::path& dir, bool overwrite) {
  if (dir.empty()) throw std::invalid_argument("open_output: the output folder is empty");
  end_session();
  RunPlan plan = plan_;
  plan.output_dir = dir;
  plan.overwrite = overwrite;
  plan.overwrite_option = "overwrite=True";
  // A restarted simulation continues its run's files, as dem restart does.
  if (restored_ && restored_->step_count == sim_.step_count())
    plan_restart_output(*restored_, checkpoint_path_, plan, log_);
  session_ = std::make_unique<RunSession>(sim_, plan, log_);
  session_->start();
  try {
    session_->begin();
  } catch (const std::exception& e) {
    fail_session(e);
  }
  keep_failures();
}

void PySimulation::close_output() {
  if (output_open()) end_session();
}

std::string PySimulation::take_log() {
  std::string s = log_.str();
  log_.str("");
  log_.clear();
  return s;
}

void PySimulation::write_frame(const std::filesystem::path& dir) {
  std::unique_ptr<VtkSeriesWriter>& w = frame_writers_[dir];
  if (!w) w = std::make_unique<VtkSeriesWriter>(dir);
  write_simulation_frame(*w, sim_, !sim_.forces().bond_live().empty());
  w->flush();
}

void PySimulation::write_checkpoint(const std::filesystem::path& path) {
  if (output_open()) {
    dem::write_checkpoint(path, session_->checkpoint_state());
  } else {
    dem::write_checkpoint(path, checkpoint_of(sim_, plan_, {}, 0));
  }
}

std::pair<std::string, std::string> PySimulation::energy_row() {
  return {energy_table_header(), energy_table_row(sim_.energy_report())};
}

std::pair<std::string, std::vector<std::string>> PySimulation::failure_rows() const {
  std::vector<std::string> rows;
  rows.reserve(failures_.size());
  for (const BondFailure& f : failures_) rows.push_back(bond_failure_row(f));
  return {bond_failures_header(), rows};
}

std::pair<std::string, std::vector<std::string>> PySimulation::group_rows() const {
  std::vector<std::string> rows;
  for (const GroupReport& g : sim_.group_reports()) rows.push_back(group_row(sim_.time(), sim_.step_count(), g));
  return {groups_header(), rows};
}

std::pair<std::string, std::string> PySimulation::stress_row(const Vec3& lower, const Vec3& upper) const {
  if (!(lower.allFinite() && upper.allFinite() && (upper.array() > lower.array()).all()))
    throw std::invalid_argument("stress: upper must exceed lower on every axis");
  return {stress_header(), dem::stress_row(sim_.time(), sim_.step_count(), sim_.stress(StressBox{lower, upper}))};
}

std::pair<std::string, std::string> PySimulation::wall_row() const {
  const std::vector<BoundaryLoad> loads = sim_.boundary_loads();
  if (loads.empty()) return {};
  return {walls_header(loads), walls_row(sim_.time(), sim_.step_count(), loads)};
}

std::vector<std::uint32_t> PySimulation::slots_of(std::span<const std::int64_t> ids) {
  const ParticleStore& s = sim_.particles();
  const std::size_t n = s.size();
  if (slot_version_ != layout_version_ || slot_of_id_.size() != n) {
    slot_of_id_.assign(n, 0);
    for (std::size_t k = 0; k < n; ++k) slot_of_id_[s.id[k]] = static_cast<std::uint32_t>(k);
    slot_version_ = layout_version_;
  }
  std::vector<std::uint32_t> slots(ids.size());
  std::vector<char> seen(n, 0);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const std::int64_t id = ids[k];
    if (id < 0 || static_cast<std::uint64_t>(id) >= n)
      throw std::invalid_argument("particle id " + std::to_string(id) +
                                  " is not a particle of this simulation (ids are 0 to " + std::to_string(n) +
                                  " - 1)");
    if (seen[static_cast<std::size_t>(id)]++ != 0)
      throw std::invalid_argument("particle id " + std::to_string(id) + " is given twice");
    slots[k] = slot_of_id_[static_cast<std::size_t>(id)];
  }
  return slots;
}

void PySimulation::begin_run() {
  if (running_)
    throw std::runtime_error("the simulation is running already (run() in another thread): wait for it to return");
  running_ = true;
}

void PySimulation::require_idle() const {
  if (stepping_)
    throw std::runtime_error("the simulation is stepping (run() in another thread): wait for it to return");
}

std::size_t PySimulation::broken_count() const {
  std::size_t n = 0;
  for (const std::uint8_t live : sim_.forces().bond_live()) n += live == 0 ? 1 : 0;
  return n;
}

}  // namespace dem::python
