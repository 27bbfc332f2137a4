#include "io/energy_table.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <stdexcept>

namespace dem {

namespace {

/// Appends one value with 17 significant digits (%.16e), enough for strtod
/// to give back the same double bit for bit.
void append_value(std::string& out, double value) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.16e", value);
  if (!out.empty()) out += ',';
  out.append(buffer, static_cast<std::size_t>(n));
}

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int error) {
  throw std::runtime_error("energy table '" + path.string() + "': " + what + ": " +
                           std::strerror(error));
}

/// Writes all of `text` to fd; returns 0 or the errno of the failure.
int write_all(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return 0;
}

}  // namespace

std::string energy_table_header() {
  return "t,E_kin_trans,E_kin_rot,U_bend,U_axial,U_shear,U_contact,U_wall,U_gravity,"
         "E_total,P_x,P_y,P_z,L_x,L_y,L_z,"
         "W_fracture,W_contact,W_filter,E_balance,n_broken,n_fragments,W_boundary";
}

std::string energy_table_row(const EnergyReport& r) {
  const std::array<double, 16> values = {
      r.time,                 r.kinetic_translation,  r.kinetic_rotation,
      r.bending,              r.axial,                r.shear,
      r.contact,              r.wall,                 r.gravity,
      r.total(),
      r.linear_momentum.x(),  r.linear_momentum.y(),  r.linear_momentum.z(),
      r.angular_momentum.x(), r.angular_momentum.y(), r.angular_momentum.z()};
  std::string row;
  row.reserve(values.size() * 24);
  for (double v : values) append_value(row, v);
  // The dissipation ledger (docs/model.md §10.3, §11.3), then the counts as integers.
  append_value(row, r.fracture_work);
  append_value(row, r.contact_work);
  append_value(row, r.filter_work);
  append_value(row, r.balance());
  row += ',' + std::to_string(r.broken_bonds) + ',' + std::to_string(r.fragments);
  append_value(row, r.boundary_work);
  return row;
}

EnergyTable::EnergyTable(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, "cannot open for writing", errno);
  const std::string header = energy_table_header() + '\n';
  if (const int error = write_all(fd_, header)) {
    ::close(fd_);
    fd_ = -1;
    fail(path_, "cannot write the header", error);
  }
  complete_ = header.size();
}

EnergyTable::EnergyTable(const std::filesystem::path& path, std::size_t keep_rows) : path_(path) {
  std::ifstream in(path_);
  if (!in)
    throw std::runtime_error("energy table '" + path_.string() +
                             "': cannot open the table of the run to continue");
  std::string line, kept;
  std::size_t rows = 0;
  if (!std::getline(in, line) || line != energy_table_header())
    throw std::runtime_error("energy table '" + path_.string() +
                             "': its header is not this engine's, so it cannot be continued");
  kept = line + '\n';
  while (rows < keep_rows && std::getline(in, line)) {
    kept += line + '\n';
    ++rows;
  }
  if (rows < keep_rows)
    throw std::runtime_error("energy table '" + path_.string() + "': has " + std::to_string(rows) +
                             " rows, the checkpoint was taken after " + std::to_string(keep_rows));
  in.close();
  const std::filesystem::path temporary = path_.string() + ".tmp";
  errno = 0;
  std::FILE* f = std::fopen(temporary.c_str(), "w");
  if (f == nullptr) fail(temporary, "cannot open for writing", errno);
  const bool ok = std::fputs(kept.c_str(), f) != EOF && std::fflush(f) != EOF;
  const int error = errno;
  std::fclose(f);
  if (!ok) fail(temporary, "cannot write", error);
  std::error_code ec;
  std::filesystem::rename(temporary, path_, ec);
  if (ec) throw std::runtime_error("energy table '" + path_.string() + "': " + ec.message());
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) fail(path_, "cannot open for appending", errno);
  complete_ = kept.size();
}

EnergyTable::~EnergyTable() {
  if (fd_ >= 0) ::close(fd_);
}

void EnergyTable::write(const EnergyReport& report) {
  const std::string row = energy_table_row(report) + '\n';
  if (const int error = write_all(fd_, row)) {
    // Cut off what part of the row was written: the table stays whole.
    if (::ftruncate(fd_, static_cast<off_t>(complete_)) == 0) ::lseek(fd_, static_cast<off_t>(complete_), SEEK_SET);
    fail(path_, "cannot write a row", error);
  }
  complete_ += row.size();
}

}  // namespace dem
