#include "run/output_folder.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <random>

#include "core/format.hpp"
#include "core/text_file.hpp"
#include "io/energy_table.hpp"
#include "io/event_tables.hpp"
#include "io/vtk_writer.hpp"

namespace dem {

namespace fs = std::filesystem;

namespace {

/// The index of a frame file: particles_N.vtp or bonds_N.vtp, their
/// parallel frames particles_N.pvtp and bonds_N.pvtp, and those frames'
/// pieces particles_N_K.vtp and bonds_N_K.vtp; nullopt for any other name.
std::optional<std::size_t> frame_index(const std::string& name) {
  const auto is_number = [](const std::string& d) {
    return !d.empty() && d.size() <= 18 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  for (const std::string stem : {"particles_", "bonds_", "meshes_"}) {
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
         name == kStressFile || name == kWallsFile ||
         name == "particles.pvd" || name == kPackingReportFile ||
         name == "bonds.pvd" || name == "meshes.pvd" || name == kCheckpointFile || name == kCheckpointPartsFolder ||
         name == kRunIdFile || frame_index(name).has_value();
}

bool is_temporary_name(const std::string& name) {
  return name == ".dem_write_probe" ||
         (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 &&
          is_final_name(name.substr(0, name.size() - 4)));
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

/// The identity of a resumed run in `folder` (OutputFolder::prepare): the
/// plan's, which the folder must hold; a new one (written) for a checkpoint
/// of an older version, into a folder without run.id.
std::uint64_t resumed_run_id(const OutputFolder& folder, std::uint64_t id, std::optional<std::uint64_t> found) {
  const std::string out = folder.path().string();
  if (id != 0 && found != id)
    throw OutputFolderError(
        "output folder '" + out + "' " +
        (found ? "holds the files of run " + run_id_text(*found) : std::string("has no ") + kRunIdFile) +
        ", not of the run to continue (" + run_id_text(id) + ")");
  if (id == 0) {
    if (found)
      throw OutputFolderError("output folder '" + out + "' holds the files of run " + run_id_text(*found) +
                              ", and the checkpoint (of an older version) does not say which run it is of");
    id = new_run_id();
    folder.write_run_id(id);
  }
  return id;
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

OutputFolder::Files OutputFolder::engine_files() const {
  Files found;
  std::error_code ec;
  if (!fs::is_directory(path_, ec)) return found;
  fs::directory_iterator it(path_, ec);
  if (ec) throw OutputFolderError("output folder '" + path_.string() + "': cannot list it: " + ec.message());
  for (const fs::directory_entry& e : it) {
    std::error_code sec;
    const std::string name = e.path().filename().string();
    // (The one folder the engine writes: a checkpoint's parts.)
    if (e.symlink_status(sec).type() == fs::file_type::directory && name != kCheckpointPartsFolder) continue;
    if (is_final_name(name)) found.files.push_back(name);
    else if (is_temporary_name(name)) found.temporaries.push_back(name);
  }
  std::sort(found.files.begin(), found.files.end());
  std::sort(found.temporaries.begin(), found.temporaries.end());
  return found;
}

void OutputFolder::remove(const std::vector<std::string>& names) const {
  for (const std::string& n : names) {
    std::error_code ec;
    fs::remove_all(path_ / n, ec);  // (checkpoint_parts/ is a folder)
    if (ec) throw OutputFolderError("cannot remove '" + (path_ / n).string() + "': " + ec.message());
  }
}

void OutputFolder::remove_stale_temporaries(std::ostream& log) const {
  const Files found = engine_files();
  if (found.temporaries.empty()) return;
  remove(found.temporaries);
  log << "removed " << found.temporaries.size() << " stale temporary file"
      << (found.temporaries.size() == 1 ? "" : "s") << " of a stopped run from " << path_.string() << ": "
      << describe_files(found.temporaries) << "\n";
}

void OutputFolder::write_run_id(std::uint64_t id) const {
  write_text_file(path_ / kRunIdFile, run_id_text(id) + "\n");
}

std::uint64_t OutputFolder::prepare(const RunPlan& plan, std::ostream& log) const {
  const fs::path& out = path_;
  std::uint64_t id = plan.run_id;
  const std::optional<std::uint64_t> found = run_id();
  if (plan.resume) {
    id = resumed_run_id(*this, id, found);
    // Frames an earlier attempt wrote after the checkpoint are not part of
    // the series any more (the .pvd files are rewritten without them).
    std::vector<std::string> later;
    for (const std::string& n : engine_files().files)
      if (const auto k = frame_index(n); k && *k >= plan.frame_times.size()) later.push_back(n);
    if (!later.empty()) {
      remove(later);
      log << "removed " << later.size() << " frame files written after the checkpoint from " << out.string()
          << "\n";
    }
  } else {
    Files existing = engine_files();
    if (found && *found == id && id != 0) {
      // The run's own folder, its series started anew from a checkpoint
      // (plan_restart_output): only the checkpoint and run.id are there.
      std::erase_if(existing.files, [](const std::string& n) {
        return n == kCheckpointFile || n == kCheckpointPartsFolder || n == kRunIdFile;
      });
    }
    if (!existing.files.empty()) {
      if (!plan.overwrite)
        throw OutputFolderError("output folder '" + out.string() + "' holds the files of another run (" +
                                describe_files(existing.files) + "): give " + plan.overwrite_option +
                                " to replace them, or choose another folder");
      remove(existing.files);
      log << "removed the files of an earlier run from " << out.string() << " (" << plan.overwrite_option
          << "): " << describe_files(existing.files) << "\n";
    }
    if (id == 0) id = new_run_id();
  }
  remove_stale_temporaries(log);
  if (!plan.resume) write_run_id(id);
  return id;
}

void OutputFolder::continue_series(const fs::path& from, const CheckpointState& c, std::uint64_t energy_every,
                                   std::ostream& log) const {
  const fs::path& out = path_;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw std::runtime_error("output folder '" + out.string() + "': cannot create it: " + ec.message());
  // Each frame as written: a .vtp, or a parallel frame and its pieces.
  std::vector<std::string> frame_files;
  for (std::size_t k = 0; k < c.frame_times.size(); ++k)
    for (const char* stem : {"particles", "bonds"}) {
      try {
        for (std::string& f : vtk_frame_files(from, stem, k)) frame_files.push_back(std::move(f));
      } catch (const std::runtime_error& e) {
        throw std::runtime_error("cannot continue the series in '" + out.string() + "': " + e.what());
      }
    }
  // The mesh walls' frames (io/mesh_series.hpp), where the run has them.
  for (std::size_t k = 0; k < c.frame_times.size(); ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "meshes_%06zu.vtp", k);
    if (fs::exists(from / name, ec)) frame_files.push_back(name);
  }
  copy_energy_rows(from / "energy.csv", out / "energy.csv", c.energy_rows);
  for (const char* table : {kBondFailuresFile, kSolverFile})
    copy_rows_up_to_step(from / table, out / table, c.step_count);
  for (const char* table : {kGroupsFile, kStressFile, kWallsFile})
    copy_rows_up_to_step(from / table, out / table, last_scheduled_row(c.step_count, energy_every));
  for (const std::string& name : frame_files) link_or_copy(from / name, out / name);
  // The scene's reports written when the run began (packing.json).
  if (fs::exists(from / kPackingReportFile, ec)) link_or_copy(from / kPackingReportFile, out / kPackingReportFile);
  write_run_id(c.run_id);  // last: the folder is the run's once complete
  log << "continuing the series of " << from.string() << " in " << out.string() << ": " << c.energy_rows
      << " energy rows and " << c.frame_times.size() << " frames up to the checkpoint\n";
}

void plan_restart_output(const CheckpointState& c, const fs::path& checkpoint_path, RunPlan& plan,
                         std::ostream& log) {
  const OutputFolder folder(plan.output_dir);
  const fs::path& out = folder.path();
  const fs::path checkpoint_folder =
      checkpoint_path.parent_path().empty() ? fs::path(".") : checkpoint_path.parent_path();
  std::error_code ec;
  const bool in_place = fs::equivalent(out, checkpoint_folder, ec);
  take_run_bookkeeping(c, plan);
  plan.resume = true;
  const std::optional<std::uint64_t> owner = folder.run_id();
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
  OutputFolder::Files existing = folder.engine_files();
  // The checkpoint being continued is not in the way (it was read, and the
  // run writes its own).
  const auto own = std::find(existing.files.begin(), existing.files.end(), checkpoint_path.filename().string());
  const bool own_checkpoint = in_place && own != existing.files.end();
  if (own_checkpoint) {
    existing.files.erase(own);
    std::erase(existing.files, std::string(kCheckpointPartsFolder));  // (its parts, if it is an index)
  }
  if (!existing.files.empty()) {
    const std::string whose = owner ? "the files of run " + run_id_text(*owner)
                                    : "files of another run (no " + std::string(kRunIdFile) + ")";
    if (!plan.overwrite)
      throw OutputFolderError("output folder '" + out.string() + "' holds " + whose + " (" +
                              describe_files(existing.files) + "), not of the checkpoint's run " +
                              run_id_text(c.run_id) + ": give --output-dir a new folder to continue the series "
                              "there, or --overwrite to replace these files");
    folder.remove(existing.files);
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
    if (own_checkpoint) folder.write_run_id(c.run_id);
    return;
  }
  folder.continue_series(checkpoint_folder, c, plan.output.energy_every, log);
}

}  // namespace dem
