#include "apps/run_loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>

#include "apps/energy_check.hpp"
#include "core/format.hpp"
#include "engine/implicit_step.hpp"
#include "core/peak_memory.hpp"
#include "io/energy_table.hpp"
#include "io/event_tables.hpp"
#include "core/text_file.hpp"
#include "io/vtk_writer.hpp"

namespace dem {

namespace fs = std::filesystem;

namespace {

/// The last step up to `step` whose rows of groups.csv (written with the
/// energy rows) a continued run keeps: `step` if an energy row is due there,
/// else the step before (a run's last step writes a row off the schedule,
/// which the uninterrupted run does not have).
std::uint64_t last_scheduled_row(std::uint64_t step, std::uint64_t energy_every) {
  const bool scheduled = energy_every > 0 && step % energy_every == 0;
  return scheduled || step == 0 ? step : step - 1;
}

/// What to tell the user after the run failed with `e`: the energy check's
/// own hint, nothing more for an implicit step (its message says what
/// stopped it), else that the time step is the usual cause.
std::string failure_hint(const std::exception& e, const std::string& time_step_hint) {
  if (const auto* c = dynamic_cast<const EnergyCheckError*>(&e)) {
    std::string h = c->hint();
    if (!h.empty()) h[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(h[0])));
    return "  " + h + ".\n";
  }
  if (dynamic_cast<const ImplicitSolveError*>(&e) != nullptr) return "";
  return "  The time step is probably too large: " + time_step_hint + ".\n";
}

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int signum) { g_signal = signum; }

/// Installs the SIGINT/SIGTERM handlers for its lifetime.
class SignalGuard {
 public:
  SignalGuard() {
    g_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};


std::string duration_text(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  if (seconds < 120) return format_g(seconds, 3) + " s";
  if (seconds < 7200) return format_g(seconds / 60, 3) + " min";
  return format_g(seconds / 3600, 3) + " h";
}

/// Writing an output file failed (full disk, permissions, ...).
struct OutputFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs `write`, turning any exception into an OutputFailure.
template <class F>
void output(F&& write) {
  try {
    write();
  } catch (const OutputFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw OutputFailure(e.what());
  }
}

/// The index of a frame file: particles_N.vtp or bonds_N.vtp, their
/// parallel frames particles_N.pvtp and bonds_N.pvtp, and those frames'
/// pieces particles_N_K.vtp and bonds_N_K.vtp; nullopt for any other name.
std::optional<std::size_t> frame_index(const std::string& name) {
  const auto is_number = [](const std::string& d) {
    return !d.empty() && d.size() <= 18 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  for (const std::string stem : {"particles_", "bonds_"}) {
    if (name.compare(0, stem.size(), stem) != 0) continue;
    std::string rest = name.substr(stem.size());
    if (rest.size() > 5 && rest.compare(rest.size() - 5, 5, ".pvtp") == 0) {
      rest.erase(rest.size() - 5);  // a parallel frame
    } else if (rest.size() > 4 && rest.compare(rest.size() - 4, 4, ".vtp") == 0) {
      rest.erase(rest.size() - 4);
      const std::size_t piece = rest.find('_');  // a piece of one: NNNNNN_K
      if (piece != std::string::npos) {
        if (!is_number(rest.substr(piece + 1))) return std::nullopt;
        rest.erase(piece);
      }
    } else {
      continue;
    }
    if (!is_number(rest)) return std::nullopt;
    return static_cast<std::size_t>(std::stoull(rest));
  }
  return std::nullopt;
}

bool is_final_name(const std::string& name) {
  return name == "energy.csv" || name == kBondFailuresFile || name == kGroupsFile || name == kSolverFile ||
         name == "particles.pvd" ||
         name == "bonds.pvd" || name == kCheckpointFile ||
         name == kRunIdFile || frame_index(name).has_value();
}

bool is_temporary_name(const std::string& name) {
  return name == ".dem_write_probe" ||
         (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 &&
          is_final_name(name.substr(0, name.size() - 4)));
}

/// The engine's files in a folder (none if it does not exist): complete
/// files and temporaries, sorted by name.
struct EngineFiles {
  std::vector<std::string> files, temporaries;
};

EngineFiles engine_files_in(const fs::path& folder) {
  EngineFiles found;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return found;
  fs::directory_iterator it(folder, ec);
  if (ec) throw OutputFolderError("output folder '" + folder.string() + "': cannot list it: " + ec.message());
  for (const fs::directory_entry& e : it) {
    std::error_code sec;
    if (e.symlink_status(sec).type() == fs::file_type::directory) continue;
    const std::string name = e.path().filename().string();
    if (is_final_name(name)) found.files.push_back(name);
    else if (is_temporary_name(name)) found.temporaries.push_back(name);
  }
  std::sort(found.files.begin(), found.files.end());
  std::sort(found.temporaries.begin(), found.temporaries.end());
  return found;
}

/// "energy.csv, particles.pvd, 31 frame files, ...": what a list of engine
/// files holds, frames counted.
std::string describe_files(const std::vector<std::string>& names) {
  std::string text;
  std::size_t frames = 0;
  for (const std::string& n : names) {
    if (frame_index(n)) {
      ++frames;
      continue;
    }
    text += (text.empty() ? "" : ", ") + n;
  }
  if (frames > 0)
    text += (text.empty() ? "" : ", ") + std::to_string(frames) +
            " frame files (particles_N.vtp, bonds_N.vtp, or parallel frames and their pieces)";
  return text;
}

/// Removes the named files from the folder; throws OutputFolderError naming
/// the first that cannot be removed.
void remove_files(const fs::path& folder, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    std::error_code ec;
    fs::remove(folder / n, ec);
    if (ec) throw OutputFolderError("cannot remove '" + (folder / n).string() + "': " + ec.message());
  }
}

/// Removes the stale temporaries of a stopped run, saying so.
void remove_stale_temporaries(const fs::path& folder, std::ostream& log) {
  const EngineFiles found = engine_files_in(folder);
  if (found.temporaries.empty()) return;
  remove_files(folder, found.temporaries);
  log << "removed " << found.temporaries.size() << " stale temporary file"
      << (found.temporaries.size() == 1 ? "" : "s") << " of a stopped run from " << folder.string() << ": "
      << describe_files(found.temporaries) << "\n";
}

/// Writes folder/run.id (through a temporary file, renamed).
void write_run_id(const fs::path& folder, std::uint64_t id) {
  write_text_file(folder / kRunIdFile, run_id_text(id) + "\n");
}

/// Checks (and prepares) the output folder of a run before its first step;
/// returns the run's identity.
std::uint64_t prepare_folder(const fs::path& out, const RunPlan& plan, std::ostream& log) {
  std::uint64_t id = plan.run_id;
  const std::optional<std::uint64_t> found = read_run_id(out);
  if (plan.resume) {
    if (id != 0 && found != id)
      throw OutputFolderError(
          "output folder '" + out.string() + "' " +
          (found ? "holds the files of run " + run_id_text(*found) : std::string("has no ") + kRunIdFile) +
          ", not of the run to continue (" + run_id_text(id) + ")");
    if (id == 0) {
      if (found)
        throw OutputFolderError("output folder '" + out.string() + "' holds the files of run " +
                                run_id_text(*found) +
                                ", and the checkpoint (of an older version) does not say which run it is of");
      id = new_run_id();
      write_run_id(out, id);
    }
    // Frames an earlier attempt wrote after the checkpoint are not part of
    // the series any more (the .pvd files are rewritten without them).
    std::vector<std::string> later;
    for (const std::string& n : engine_files_in(out).files)
      if (const auto k = frame_index(n); k && *k >= plan.frame_times.size()) later.push_back(n);
    if (!later.empty()) {
      remove_files(out, later);
      log << "removed " << later.size() << " frame files written after the checkpoint from " << out.string()
          << "\n";
    }
  } else {
    EngineFiles existing = engine_files_in(out);
    if (found && *found == id && id != 0) {
      // The run's own folder, its series started anew from a checkpoint
      // (plan_restart_output): only the checkpoint and run.id are there.
      std::erase_if(existing.files, [](const std::string& n) { return n == kCheckpointFile || n == kRunIdFile; });
    }
    if (!existing.files.empty()) {
      if (!plan.overwrite)
        throw OutputFolderError("output folder '" + out.string() + "' holds the files of another run (" +
                                describe_files(existing.files) + "): give " + plan.overwrite_option +
                                " to replace them, or choose another folder");
      remove_files(out, existing.files);
      log << "removed the files of an earlier run from " << out.string() << " (" << plan.overwrite_option
          << "): " << describe_files(existing.files) << "\n";
    }
    if (id == 0) id = new_run_id();
  }
  remove_stale_temporaries(out, log);
  if (!plan.resume) write_run_id(out, id);
  return id;
}

/// Copies the header and the first `rows` rows of from/energy.csv to
/// to/energy.csv (through a temporary file); throws naming the file.
void copy_energy_rows(const fs::path& from, const fs::path& to, std::uint64_t rows) {
  std::ifstream in(from);
  if (!in) throw std::runtime_error("cannot open '" + from.string() + "'");
  std::string line, kept;
  if (!std::getline(in, line) || line != energy_table_header())
    throw std::runtime_error("'" + from.string() + "': its header is not this engine's energy table");
  kept = line + '\n';
  std::uint64_t n = 0;
  while (n < rows && std::getline(in, line)) {
    kept += line + '\n';
    ++n;
  }
  if (n < rows)
    throw std::runtime_error("'" + from.string() + "' has " + std::to_string(n) +
                             " rows, the checkpoint was taken after " + std::to_string(rows));
  write_text_file(to, kept);
}

/// A hard link to `from` at `to` (the engine never changes a complete file
/// in place, so the two folders cannot disturb each other), else a copy
/// through a temporary file.
void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (!ec) return;
  fs::path tmp = to;
  tmp += ".tmp";
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(tmp, to, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("cannot copy '" + from.string() + "' to '" + to.string() + "': " + ec.message());
  }
}

}  // namespace

std::uint64_t new_run_id() {
  std::uint64_t id = 0;
  try {
    std::random_device device;
    id = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  } catch (const std::exception&) {
  }
  // Mixed with the time and the process id (splitmix64), in case the random
  // device is weak or missing.
  std::uint64_t z = id ^ static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) ^
                    (static_cast<std::uint64_t>(::getpid()) << 40);
  for (;;) {
    z += 0x9e3779b97f4a7c15ull;
    std::uint64_t x = z;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    if (x != 0) return x;
  }
}

std::string run_id_text(std::uint64_t id) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(id));
  return buffer;
}

std::optional<std::uint64_t> read_run_id(const fs::path& folder) {
  const fs::path path = folder / kRunIdFile;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return std::nullopt;
  std::ifstream in(path);
  std::string text;
  if (!in || !std::getline(in, text))
    throw OutputFolderError("'" + path.string() + "': cannot read the run identity");
  const bool hex = text.size() == 16 && std::all_of(text.begin(), text.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (!hex)
    throw OutputFolderError("'" + path.string() + "' is not a run identity (16 hex digits), got '" +
                            text.substr(0, 40) + "'");
  return std::stoull(text, nullptr, 16);
}

bool is_engine_output_name(const std::string& name) { return is_final_name(name) || is_temporary_name(name); }

void plan_restart_output(const CheckpointState& c, const fs::path& checkpoint_path, RunPlan& plan,
                         std::ostream& log) {
  const fs::path out = plan.output_dir;
  const fs::path checkpoint_folder =
      checkpoint_path.parent_path().empty() ? fs::path(".") : checkpoint_path.parent_path();
  std::error_code ec;
  const bool in_place = fs::equivalent(out, checkpoint_folder, ec);
  take_run_bookkeeping(c, plan);
  plan.resume = true;
  const std::optional<std::uint64_t> owner = read_run_id(out);
  if (c.run_id == 0) {  // a version-2 checkpoint: nothing to check against
    if (owner)
      throw OutputFolderError("output folder '" + out.string() + "' holds the files of run " + run_id_text(*owner) +
                              "; the checkpoint (of an older version) does not say which run it is of: give "
                              "--output-dir a folder of its own");
    log << "note: the checkpoint is of an older version without a run identity: the files in " << out.string()
        << " are taken to be its run's\n";
    return;
  }
  if (owner == c.run_id) return;  // the run's own folder
  EngineFiles existing = engine_files_in(out);
  // The checkpoint being continued is not in the way (it was read, and the
  // run writes its own).
  const auto own = std::find(existing.files.begin(), existing.files.end(), checkpoint_path.filename().string());
  const bool own_checkpoint = in_place && own != existing.files.end();
  if (own_checkpoint) existing.files.erase(own);
  if (!existing.files.empty()) {
    const std::string whose = owner ? "the files of run " + run_id_text(*owner)
                                    : "files of another run (no " + std::string(kRunIdFile) + ")";
    if (!plan.overwrite)
      throw OutputFolderError("output folder '" + out.string() + "' holds " + whose + " (" +
                              describe_files(existing.files) + "), not of the checkpoint's run " +
                              run_id_text(c.run_id) + ": give --output-dir a new folder to continue the series "
                              "there, or --overwrite to replace these files");
    remove_files(out, existing.files);
    log << "removed the files of an earlier run from " << out.string() << " (--overwrite): "
        << describe_files(existing.files) << "\n";
  }
  // A new folder for the series: copy the run's series up to the checkpoint.
  const bool source_ok = read_run_id(checkpoint_folder) == c.run_id &&
                         fs::exists(checkpoint_folder / "energy.csv", ec);
  if (!source_ok) {
    log << "note: " << checkpoint_folder.string() << " does not hold the output of the checkpoint's run "
        << run_id_text(c.run_id) << ", so the series in " << out.string() << " starts at the checkpoint (t = "
        << format_g(static_cast<double>(c.step_count) * c.time_step) << ")\n";
    plan.resume = false;
    plan.frame_times.clear();
    plan.energy_rows = 0;
    // The checkpoint's own folder becomes the run's again (run_to_end keeps
    // the checkpoint until it writes the next).
    if (own_checkpoint) write_run_id(out, c.run_id);
    return;
  }
  fs::create_directories(out, ec);
  if (ec) throw std::runtime_error("output folder '" + out.string() + "': cannot create it: " + ec.message());
  // Each frame as written: a .vtp, or a parallel frame and its pieces.
  std::vector<std::string> frame_files;
  for (std::size_t k = 0; k < c.frame_times.size(); ++k)
    for (const char* stem : {"particles", "bonds"}) {
      try {
        for (std::string& f : vtk_frame_files(checkpoint_folder, stem, k)) frame_files.push_back(std::move(f));
      } catch (const std::runtime_error& e) {
        throw std::runtime_error("cannot continue the series in '" + out.string() + "': " + e.what());
      }
    }
  copy_energy_rows(checkpoint_folder / "energy.csv", out / "energy.csv", c.energy_rows);
  for (const char* table : {kBondFailuresFile, kSolverFile})
    copy_rows_up_to_step(checkpoint_folder / table, out / table, c.step_count);
  copy_rows_up_to_step(checkpoint_folder / kGroupsFile, out / kGroupsFile,
                       last_scheduled_row(c.step_count, plan.output.energy_every));
  for (const std::string& name : frame_files) link_or_copy(checkpoint_folder / name, out / name);
  write_run_id(out, c.run_id);  // last: the folder is the run's once complete
  log << "continuing the series of " << checkpoint_folder.string() << " in " << out.string() << ": "
      << c.energy_rows << " energy rows and " << c.frame_times.size() << " frames up to the checkpoint\n";
}

void take_run_bookkeeping(const CheckpointState& c, RunPlan& plan) {
  plan.run_id = c.run_id;
  plan.energy_check = c.energy_check;
  plan.energy_limits.max_drift = c.max_energy_drift;
  plan.energy_limits.warn_drift = c.warn_energy_drift;
  plan.frame_times = c.frame_times;
  plan.energy_rows = c.energy_rows;
}

CheckpointState checkpoint_of(const Simulation& sim, const RunPlan& plan,
                              const std::vector<double>& frame_times, std::uint64_t energy_rows) {
  CheckpointState c = capture_simulation(sim);
  c.scene_path = plan.scene_path;
  c.scene_text = plan.scene_text;
  c.frame_times = frame_times;
  c.energy_rows = energy_rows;
  c.vtk_every = plan.output.vtk_every;
  c.energy_every = plan.output.energy_every;
  c.checkpoint_every = plan.output.checkpoint_every;
  c.end_step = plan.end_step;
  c.run_id = plan.run_id;
  c.energy_check = plan.energy_check;
  c.max_energy_drift = plan.energy_limits.max_drift;
  c.warn_energy_drift = plan.energy_limits.warn_drift;
  return c;
}

int run_to_end(Simulation& sim, const RunPlan& given, std::ostream& log, RunSummary* summary) {
  RunPlan plan = given;  // with the run's identity and energy reference filled in
  check_energy_limits(plan.energy_limits);  // before the folder is touched
  // With MPI ranks every rank keeps the schedule (files), rank 0 writes.
  DecomposedRun* const domain = plan.domain;
  const bool files = !plan.output_dir.empty();
  const bool writes = files && (domain == nullptr || domain->rank() == 0);
  const bool checkpoints = files;
  // The whole system's set-up (what can break, groups): the same on every rank.
  const Simulation& whole = domain != nullptr ? domain->reference() : sim;
  const fs::path out = plan.output_dir;
  std::optional<VtkSeriesWriter> vtk;
  std::optional<EnergyTable> table;
  // With MPI ranks every rank writes its piece of each VTK frame.
  const VtkPieces pieces = domain != nullptr ? VtkPieces{domain->rank(), domain->ranks()} : VtkPieces{};
  if (writes) {
    vtk.emplace(out, VtkSeriesWriter::kDefaultCompressionLevel, pieces);  // creates the folder, or throws naming it
    plan.run_id = prepare_folder(out, plan, log);
    if (plan.resume) vtk->resume(plan.frame_times);
    if (plan.resume)
      table.emplace(out / "energy.csv", plan.energy_rows);
    else
      table.emplace(out / "energy.csv");
  }
  if (domain != nullptr && files) {
    (void)domain->any(false);  // the other ranks write into the folder once rank 0 has prepared it
    if (!writes) {
      vtk.emplace(out, VtkSeriesWriter::kDefaultCompressionLevel, pieces);
      if (plan.resume) vtk->resume(plan.frame_times);
    }
  }
  OutputSpec o = plan.output;
  if (!files) o.vtk_every = o.energy_every = o.checkpoint_every = 0;
  const std::uint64_t first_step = sim.step_count();
  // bond_failures.csv where bonds can fail, groups.csv where there are groups.
  const bool can_break = !whole.forces().bond_live().empty();
  const bool implicit = sim.map() == IntegratorMap::implicit;
  std::optional<RowFile> failures, groups, solver;
  if (writes && can_break) failures.emplace(out / kBondFailuresFile, bond_failures_header());
  if (writes && !whole.groups().empty()) groups.emplace(out / kGroupsFile, groups_header());
  if (writes && implicit) solver.emplace(out / kSolverFile, solver_header());
  if (plan.resume) {
    if (failures) failures->resume(first_step);
    if (groups) groups->resume(last_scheduled_row(first_step, o.energy_every));
    if (solver) solver->resume(first_step);
  }
  std::size_t newton_total = 0, cg_total = 0, halvings_total = 0;
  const auto take_failures = [&] {
    std::vector<BondFailure> f = sim.take_failures();
    if (failures)
      for (const BondFailure& x : f) failures->add(bond_failure_row(x));
  };
  const auto write_tables = [&](const EnergyReport* r) {
    // (group_reports() sums over every rank's members: all ranks call it.)
    if (r != nullptr && !whole.groups().empty()) {
      const std::vector<GroupReport> reports = sim.group_reports();
      if (groups)
        for (const GroupReport& g : reports) groups->add(group_row(sim.time(), sim.step_count(), g));
    }
    if (failures) output([&] { failures->write(); });
    if (groups) output([&] { groups->write(); });
    if (solver) output([&] { solver->write(); });
  };
  const auto write_frame = [&] {
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
    vtk->write_frame(sim.time(), s, bonds, extras);
  };
  std::vector<double> frame_times = plan.frame_times;  // on the schedule only
  std::uint64_t energy_rows = plan.energy_rows;
  const fs::path checkpoint_path = out / kCheckpointFile;
  const std::size_t n = domain != nullptr ? domain->particle_count() : sim.particles().size();

  const auto on = [](std::uint64_t k, std::uint64_t every) { return every > 0 && k % every == 0; };

  // The energy check (apps/energy_check.hpp), its reference taken at the
  // run's first step unless the checkpoint has one. E_balance (E_total plus
  // the work dissipated so far, MODEL.md 11.3) is what is conserved; it
  // equals E_total in a scene without dissipation.
  const EnergyReport first = sim.energy_report();
  const bool ledger = can_break || whole.forces().dissipative() || whole.forces().applies_filter() || !whole.groups().empty();
  const std::string energy_name = ledger ? "E_balance" : "E_total";
  EnergyCheck check(plan.energy_check, plan.energy_limits, implicit, energy_name, plan.time_step_hint);
  const bool new_reference = check.start(first, first_step);
  // The step whose state the check last judged (an energy row): a
  // checkpoint of that step needs no second report.
  std::uint64_t checked_step = UINT64_MAX;
  if (new_reference && first_step > 0 && writes)
    log << "energy check: its reference E_0 = " << format_g(first.balance(), 10) << " is taken at step "
        << first_step << ", where this run's integration starts\n";

  const auto save_checkpoint = [&]() {
    const auto t0 = std::chrono::steady_clock::now();
    if (checkpoints) {
      // A diverged state never replaces a good checkpoint (write_checkpoint
      // refuses one the reader would refuse).
      if (checked_step != sim.step_count()) check.verify(sim.energy_report(), sim.step_count(), sim.time());
      plan.energy_check = check.state();
      // Every rank's pieces of the frames the checkpoint lists are on disk
      // before it is written (the gather below waits for every rank).
      if (vtk && domain != nullptr) output([&] { vtk->flush(); });
      const Simulation* view = domain != nullptr ? domain->whole_view() : &sim;
      // (Every rank has flushed: the collections list every piece's frame.)
      if (vtk && writes && domain != nullptr) output([&] { vtk->relist(); });
      if (writes && view != nullptr)
        output([&] { write_checkpoint(checkpoint_path, checkpoint_of(*view, plan, frame_times, energy_rows)); });
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return secs;
  };

  SignalGuard signals;
  const bool terminal = !plan.progress_on_log && isatty(fileno(stdout)) != 0;
  bool progress_line = false;  // a \r progress line is open on stdout
  const auto end_progress_line = [&] {
    if (progress_line) std::cout << "\n" << std::flush;
    progress_line = false;
  };
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last_report = start;
  std::uint64_t k = first_step;
  const auto elapsed = [&]() { return std::chrono::duration<double>(clock::now() - start).count(); };
  try {
    take_failures();
    if (!plan.resume && files) {
      if (writes) output([&] { table->write(first); });
      ++energy_rows;
      write_tables(&first);
      (void)check.row(first, k, sim.time());
      checked_step = k;
      if (o.vtk_every > 0) {
        output(write_frame);
        frame_times.push_back(sim.time());
      }
    }
    while (k < plan.end_step) {
      sim.step();
      k = sim.step_count();
      take_failures();
      if (implicit) {
        const ImplicitStepStats& st = sim.last_implicit_step();
        newton_total += st.newton_iterations;
        cg_total += st.cg_iterations;
        halvings_total += st.halvings;
        if (solver) solver->add(solver_row(sim.time(), k, st.newton_iterations, st.cg_iterations, st.halvings, st.residual));
      }
      // New parts, if due, once this step's failures (the bonds the new
      // parts leave out) and solver counts are taken from the old ones.
      if (domain != nullptr) domain->after_step();
      const bool last = k == plan.end_step;
      if (files && (on(k, o.energy_every) || last)) {
        const EnergyReport r = sim.energy_report();
        if (writes) output([&] { table->write(r); });
        if (on(k, o.energy_every)) ++energy_rows;
        write_tables(&r);
        // The check's state follows the scheduled rows only (the same for
        // a run continued from a checkpoint); the last row is checked.
        if (on(k, o.energy_every)) {
          const std::string warning = check.row(r, k, sim.time());
          if (!warning.empty() && writes) {
            end_progress_line();
            log << warning << std::endl;
          }
        } else {
          check.verify(r, k, sim.time());
        }
        checked_step = k;
      }
      if (o.vtk_every > 0 && (on(k, o.vtk_every) || last)) {
        output(write_frame);
        if (on(k, o.vtk_every)) frame_times.push_back(sim.time());
      }
      if (checkpoints && on(k, o.checkpoint_every) && !last) {
        write_tables(nullptr);
        save_checkpoint();
      }
      if (domain != nullptr ? domain->any(g_signal != 0) : g_signal != 0) {
        end_progress_line();
        if (writes) write_tables(nullptr);
        if (vtk) output([&] { vtk->flush(); });
        if (!checkpoints) {
          log << "interrupted by " << (g_signal == SIGINT ? "SIGINT" : "SIGTERM") << " after step " << k
              << " (t = " << format_g(sim.time()) << "); no output folder, so no checkpoint\n";
          return kExitInterrupted;
        }
        const double secs = save_checkpoint();
        log << "interrupted by " << (g_signal == SIGINT ? "SIGINT" : "SIGTERM") << " after step " << k
            << " (t = " << format_g(sim.time()) << "); checkpoint written in " << format_g(secs, 3) << " s: "
            << checkpoint_path.string() << "\n  continue with: dem restart " << checkpoint_path.string()
            << "\n";
        return kExitInterrupted;
      }
      const auto now = clock::now();
      const double since = std::chrono::duration<double>(now - last_report).count();
      if (plan.progress && (terminal ? since > 0.5 : since > 10.0)) {
        last_report = now;
        const double rate = static_cast<double>(k - first_step) / elapsed();
        const double left = static_cast<double>(plan.end_step - k) / rate;
        std::ostringstream line;
        line << "t = " << format_g(sim.time(), 5) << " of " << format_g(plan.end_step * sim.time_step(), 5) << " ("
             << (100 * k / plan.end_step) << "%), " << format_g(rate, 4) << " steps/s, about "
             << duration_text(left) << " left";
        if (terminal) {
          std::cout << "\r  " << line.str() << "     " << std::flush;
          progress_line = true;
        } else {
          log << "  " << line.str() << std::endl;
        }
      }
    }
    end_progress_line();
    if (vtk) output([&] { vtk->flush(); });
    if (domain != nullptr) (void)domain->any(false);  // every rank's pieces are on disk
    if (vtk && writes && domain != nullptr) output([&] { vtk->relist(); });
    if (writes) write_tables(nullptr);
    if (checkpoints) save_checkpoint();
  } catch (const OutputFailure& e) {
    end_progress_line();
    // (With MPI ranks only rank 0 prints to log; another rank's own failure,
    // a VTK piece it could not write, goes to its standard error.)
    std::ostream& err = domain != nullptr && domain->rank() != 0 ? std::cerr : log;
    if (&err != &log) err << "rank " << domain->rank() << ": ";
    err << "error: writing the output failed near step " << k << " (t = " << format_g(sim.time())
        << "): " << e.what() << "\n  The run stopped there; files written before are kept in " << out.string()
        << "\n";
    if (domain != nullptr) domain->abort(kExitRunFailed);
    return kExitRunFailed;
  } catch (const std::exception& e) {
    end_progress_line();
    try {
      if (vtk) vtk->flush();
      if (writes) write_tables(nullptr);
    } catch (const std::exception& w) {
      log << "error: writing the output failed too: " << w.what() << "\n";
    }
    std::ostream& err = domain != nullptr && domain->rank() != 0 ? std::cerr : log;
    if (&err != &log) err << "rank " << domain->rank() << ": ";
    err << "error: the run failed at step " << k << " (t = " << format_g(sim.time()) << "): " << e.what() << "\n"
        << failure_hint(e, plan.time_step_hint);
    if (files) err << "  Files written so far are kept in " << out.string() << "\n";
    // Other ranks may wait in a collective call: stop them all.
    if (domain != nullptr) domain->abort(kExitRunFailed);
    return kExitRunFailed;
  }
  const double secs = elapsed();
  const double steps = static_cast<double>(k - first_step);
  if (summary != nullptr) {
    summary->steps = k - first_step;
    summary->seconds = secs;
    summary->max_energy_deviation = check.largest_drift();
    summary->e0 = check.state().initial_energy;
  }
  if (!files) return kExitOk;  // a benchmark reports for itself
  // Whole-system reports (collective with MPI ranks), then rank 0 writes.
  const EnergyReport closing = sim.energy_report();
  if (!writes) return kExitOk;
  const double peak = static_cast<double>(peak_resident_bytes());
  log << "done: " << (k - first_step) << " steps in " << format_g(secs, 4) << " s, " << format_g(steps / secs, 4)
      << " steps/s, " << format_g(static_cast<double>(n) * steps / secs, 4) << " particle-steps/s\n"
      << "  neighbour-list builds: " << sim.forces().neighbours().rebuild_count() << "\n"
      << "  peak memory: " << format_g(peak / 1048576.0, 4) << " MiB ("
      << format_g(peak / static_cast<double>(std::max<std::size_t>(n, 1)), 4) << " bytes per particle)\n"
      << "  " << check.summary(first_step) << "\n";
  if (implicit) {
    const EnergyReport& r = closing;
    log << "  implicit: D_num = E_0 - " << energy_name << " = " << format_g(check.state().initial_energy - r.balance(), 6)
        << " (the scheme's numerical dissipation, MODEL.md 12.6; not checked); per step "
        << format_g(static_cast<double>(newton_total) / std::max<double>(steps, 1), 4) << " Newton iterations, "
        << format_g(static_cast<double>(cg_total) / std::max<double>(steps, 1), 4) << " CG iterations, "
        << format_g(static_cast<double>(halvings_total) / std::max<double>(steps, 1), 4) << " line-search halvings\n";
  }
  if (can_break) {
    const EnergyReport& r = closing;
    log << "  broken bonds: " << r.broken_bonds << " of " << whole.forces().bonds().size() << ", fragments: "
        << r.fragments << ", live bonds turned past 2pi/3: " << sim.forces().overturned_bonds()
        << " (expected 0)\n";
  }
  // Name only the files this run's folder holds.
  std::string written = "energy.csv, ";
  if (failures) written += std::string(kBondFailuresFile) + ", ";
  if (groups) written += std::string(kGroupsFile) + ", ";
  if (solver) written += std::string(kSolverFile) + ", ";
  if (vtk->frame_count() > 0) written = "particles.pvd and bonds.pvd for ParaView, " + written;
  log << "  output: " << fs::absolute(out).string() << " (" << written << kCheckpointFile << ", " << kRunIdFile
      << ")\n";
  return kExitOk;
}

}  // namespace dem
