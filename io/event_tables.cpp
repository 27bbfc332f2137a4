#include "io/event_tables.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace dem {

namespace fs = std::filesystem;

namespace {

void put(std::string& out, double v) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.16e", v);
  out += ',';
  out.append(buffer, static_cast<std::size_t>(n));
}

void put(std::string& out, const Vec3& v) {
  put(out, v.x());
  put(out, v.y());
  put(out, v.z());
}

std::string first_value(double t) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.16e", t);
  return std::string(buffer, static_cast<std::size_t>(n));
}

/// The step column (second) of a row; false if it is not a whole number.
bool step_of(const std::string& row, std::uint64_t& step) {
  const std::size_t a = row.find(',');
  if (a == std::string::npos) return false;
  const std::size_t b = row.find(',', a + 1);
  const std::string s = row.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  step = std::stoull(s);
  return true;
}

std::vector<std::string> read_rows(const fs::path& path, const std::string& header, std::uint64_t last_step,
                                   bool& found) {
  std::vector<std::string> rows;
  std::ifstream in(path);
  found = static_cast<bool>(in);
  if (!found) return rows;
  std::string line;
  if (!std::getline(in, line) || line != header)
    throw std::runtime_error("table '" + path.string() + "': its header is not '" + header + "'");
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::uint64_t step = 0;
    if (!step_of(line, step)) throw std::runtime_error("table '" + path.string() + "': malformed row '" + line.substr(0, 80) + "'");
    if (step <= last_step) rows.push_back(line);
  }
  return rows;
}

void write_table(const fs::path& path, const std::string& header, const std::vector<std::string>& rows) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr)
      throw std::runtime_error("table '" + path.string() + "': cannot open '" + tmp.string() +
                               "' for writing: " + std::strerror(errno));
    errno = 0;
    bool ok = std::fputs(header.c_str(), f) >= 0 && std::fputc('\n', f) != EOF;
    for (const std::string& r : rows) ok = ok && std::fwrite(r.data(), 1, r.size(), f) == r.size() && std::fputc('\n', f) != EOF;
    // The error of the write that failed, or else of the flush at fclose
    // (a full disk usually shows only there).
    int error = ok ? 0 : errno;
    if (std::fclose(f) != 0) {
      if (ok) error = errno;
      ok = false;
    }
    if (!ok) {
      std::remove(tmp.c_str());
      throw std::runtime_error("table '" + path.string() + "': cannot write it: " + std::strerror(error));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("table '" + path.string() + "': cannot rename the temporary file: " + ec.message());
}

}  // namespace

std::string bond_failures_header() {
  return "t,step,bond,i,j,mode,sigma,tau,sigma_ratio,tau_ratio,F_n,F_s,M_b,M_t,x,y,z,energy";
}

std::string bond_failure_row(const BondFailure& f) {
  std::string r = first_value(f.time);
  r += ',' + std::to_string(f.step) + ',' + std::to_string(f.bond) + ',' + std::to_string(f.id_i) + ',' +
       std::to_string(f.id_j) + ',' + (f.tensile ? "tensile" : "shear");
  for (const double v : {f.sigma, f.tau, f.sigma_ratio, f.tau_ratio, f.axial_force, f.shear_force,
                         f.bending_moment, f.twist_moment})
    put(r, v);
  put(r, f.midpoint);
  put(r, f.energy);
  return r;
}

std::string groups_header() { return "t,step,group,F_x,F_y,F_z,M_x,M_y,M_z,c_x,c_y,c_z,u_x,u_y,u_z"; }

std::string group_row(double t, std::uint64_t step, const GroupReport& g) {
  std::string r = first_value(t);
  r += ',' + std::to_string(step) + ',' + g.name;
  put(r, g.force);
  put(r, g.moment);
  put(r, g.centroid);
  put(r, g.displacement);
  return r;
}

std::string stress_header() {
  return "t,step,volume,s_xx,s_yy,s_zz,s_yz,s_xz,s_xy,k_xx,k_yy,k_zz,k_yz,k_xz,k_xy,particles";
}

std::string stress_row(double t, std::uint64_t step, const StressMeasure& m) {
  std::string r = first_value(t);
  r += ',' + std::to_string(step);
  put(r, m.volume);
  for (const double s : m.sigma) put(r, s);
  for (const double s : m.kinetic) put(r, s);
  r += ',' + std::to_string(static_cast<std::uint64_t>(m.particles));
  return r;
}

std::string walls_header(std::span<const BoundaryLoad> loads) {
  std::string h = "t,step";
  for (const BoundaryLoad& l : loads)
    for (const char* c : {"F_x", "F_y", "F_z", "M_x", "M_y", "M_z", "u_n"}) h += ',' + l.name + '_' + c;
  return h;
}

std::string walls_row(double t, std::uint64_t step, std::span<const BoundaryLoad> loads) {
  std::string r = first_value(t);
  r += ',' + std::to_string(step);
  for (const BoundaryLoad& l : loads) {
    put(r, l.force());
    put(r, l.moment());
    put(r, l.displacement);
  }
  return r;
}

std::string solver_header() {
  return "t,step,time_step,accepted,newton_iterations,cg_iterations,halvings,residual,stress_ratio";
}

std::string solver_row(double t, std::uint64_t step, const ImplicitStepStats& st) {
  std::string r = first_value(t);
  r += ',' + std::to_string(step);
  put(r, st.time_step);
  r += st.accepted ? ",1," : ",0,";
  r += std::to_string(st.newton_iterations) + ',' + std::to_string(st.cg_iterations) + ',' +
       std::to_string(st.halvings);
  put(r, st.residual);
  put(r, st.stress_ratio);
  return r;
}

RowFile::RowFile(fs::path path, std::string header) : path_(std::move(path)), header_(std::move(header)) {}

void RowFile::resume(std::uint64_t last_step) {
  bool found = false;
  rows_ = read_rows(path_, header_, last_step, found);
  dirty_ = true;
}

void RowFile::write() {
  if (!dirty_) return;
  write_table(path_, header_, rows_);
  dirty_ = false;
}

void copy_rows_up_to_step(const fs::path& from, const fs::path& to, std::uint64_t last_step) {
  std::ifstream in(from);
  if (!in) return;
  std::string header;
  std::getline(in, header);
  in.close();
  bool found = false;
  const std::vector<std::string> rows = read_rows(from, header, last_step, found);
  write_table(to, header, rows);
}

}  // namespace dem
