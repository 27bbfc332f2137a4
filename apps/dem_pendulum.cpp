/// \file dem_pendulum.cpp
/// Convergence study of the three-dimensional pendulum (docs/model.md §6,
/// Baker & Gonzalez 2021 section 3 and Figure 1) for maps (23), (25), (27).
///
/// Writes <output-dir>/pendulum_convergence.csv with the columns
///     integrator,h,E_error,q_error,attitude_error,axis_momentum_error,norm_error
/// (integrator as 23, 25 or 27; numbers with %.16e) and prints the
/// least-squares log-log slopes of E_error, q_error and attitude_error
/// against h for each map.

#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/pendulum.hpp"
#include "core/parallel.hpp"

namespace {

namespace fs = std::filesystem;

std::string format_value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// Writes the table to `file` through a temporary file in the same folder,
/// renamed into place once complete. Throws std::runtime_error naming the path.
void write_table(const fs::path& file, const std::vector<dem::PendulumConvergenceRow>& rows) {
  const fs::path tmp = fs::path(file).concat(".tmp");
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) throw std::runtime_error("cannot open " + tmp.string() + " for writing");
  bool ok =
      std::fputs("integrator,h,E_error,q_error,attitude_error,axis_momentum_error,norm_error\n",
                 f) >= 0;
  for (const auto& r : rows) {
    const auto& e = r.errors;
    ok = ok && std::fprintf(f, "%s,%.16e,%.16e,%.16e,%.16e,%.16e,%.16e\n",
                            dem::integrator_map_name(r.map).c_str(), r.h, e.energy_error,
                            e.q_error, e.attitude_error, e.axis_momentum_error,
                            e.norm_error) > 0;
  }
  ok = (std::fclose(f) == 0) && ok;
  std::error_code ec;
  if (!ok) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + file.string() + ": " +
                             ec.message());
  }
}

void print_slope(const char* what, const std::vector<double>& h, const std::vector<double>& err) {
  if (h.size() < 2) {
    std::printf("  %-16s n/a (one step only)\n", what);
    return;
  }
  const double s = dem::loglog_slope(h, err);
  if (std::isfinite(s))
    std::printf("  %-16s %8.4f\n", what, s);
  else
    std::printf("  %-16s n/a (an error is zero or not finite)\n", what);
}

/// The convergence rows of maps (23), (25) and (27), in that order; the maps
/// run side by side, each into its own slot, so the rows do not depend on the
/// thread count. Throws std::runtime_error naming the map that failed.
std::vector<dem::PendulumConvergenceRow> run_maps(const std::vector<double>& steps, double t_end,
                                                  long long refinement) {
  const dem::PendulumParameters params;
  const dem::IntegratorMap maps[] = {dem::IntegratorMap::rrp23, dem::IntegratorMap::rrp25,
                                     dem::IntegratorMap::rrp27};
  std::vector<std::vector<dem::PendulumConvergenceRow>> per_map(3);
  std::vector<std::string> failures(3);
  dem::parallel_for_each(
      3,
      [&](std::size_t i) {
        try {
          per_map[i] = dem::pendulum_convergence(params, maps[i], steps, t_end,
                                                 static_cast<std::size_t>(refinement));
        } catch (const std::exception& e) {
          failures[i] = "map (" + dem::integrator_map_name(maps[i]) + "): " + e.what();
        }
      },
      1);
  for (const auto& f : failures)
    if (!f.empty()) throw std::runtime_error(f);
  std::vector<dem::PendulumConvergenceRow> rows;
  for (const auto& r : per_map) rows.insert(rows.end(), r.begin(), r.end());
  return rows;
}

/// The table of errors and the log-log slopes of each map.
void print_results(const std::vector<dem::PendulumConvergenceRow>& rows) {
  std::printf("%-3s %-12s %-12s %-12s %-12s %-12s %-12s\n", "map", "h", "E_error", "q_error",
              "attitude", "axis_mom", "norm");
  for (const auto& r : rows)
    std::printf("%-3s %-12.5g %-12.4e %-12.4e %-12.4e %-12.4e %-12.4e\n",
                dem::integrator_map_name(r.map).c_str(), r.h, r.errors.energy_error,
                r.errors.q_error, r.errors.attitude_error, r.errors.axis_momentum_error,
                r.errors.norm_error);
  std::printf("least-squares slopes of log(error) against log(h):\n");
  for (auto map : {dem::IntegratorMap::rrp23, dem::IntegratorMap::rrp25,
                   dem::IntegratorMap::rrp27}) {
    std::vector<double> h, e_err, q_err, a_err;
    for (const auto& r : rows) {
      if (r.map != map) continue;
      h.push_back(r.h);
      e_err.push_back(r.errors.energy_error);
      q_err.push_back(r.errors.q_error);
      a_err.push_back(r.errors.attitude_error);
    }
    std::printf("map (%s)\n", dem::integrator_map_name(map).c_str());
    print_slope("E_error", h, e_err);
    print_slope("q_error", h, q_err);
    print_slope("attitude_error", h, a_err);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Convergence study of the three-dimensional pendulum (docs/model.md §6; Baker & "
      "Gonzalez 2021, section 3). Runs maps (23), (25) and (27) with each step h to t_N and "
      "compares them with a reference run of the same map at step min(h)/refinement. Writes "
      "<output-dir>/pendulum_convergence.csv (integrator,h,E_error,q_error,attitude_error,"
      "axis_momentum_error,norm_error) and prints the log-log slopes of the errors against h."};
  std::string output_dir = "pendulum_output";
  double t_end = 10.0;
  std::vector<double> steps{0.1, 0.05, 0.025, 0.0125};
  long long refinement = 100;
  std::size_t threads = 0;
  app.add_option("-o,--output-dir", output_dir, "Folder for pendulum_convergence.csv (created if missing)")
      ->capture_default_str();
  app.add_option("--t-end", t_end, "End time t_N (> 0, a whole number of every step)")
      ->capture_default_str();
  app.add_option("--steps", steps,
                 "Time steps h (> 0); each must be a whole multiple of min(h)/refinement")
      ->capture_default_str()
      ->expected(1, 1000);
  app.add_option("--refinement", refinement,
                 "Reference step = min(h) / refinement (>= 100, docs/model.md §5)")
      ->capture_default_str();
  app.add_option("--threads", threads,
                 "Worker threads (0: all cores); the three maps run side by side")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    if (!(std::isfinite(t_end) && t_end > 0.0))
      throw std::invalid_argument("--t-end must be a finite positive number, got " +
                                  format_value(t_end));
    for (double h : steps)
      if (!(std::isfinite(h) && h > 0.0))
        throw std::invalid_argument("--steps: every step must be a finite positive number, got " +
                                    format_value(h));
    if (refinement < 100)
      throw std::invalid_argument("--refinement must be at least 100, got " +
                                  std::to_string(refinement));

    const fs::path dir(output_dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      throw std::runtime_error("cannot create the output folder '" + output_dir +
                               "'" + (ec ? ": " + ec.message() : std::string(": not a folder")));

    dem::ThreadLimit thread_limit(threads);
    const std::vector<dem::PendulumConvergenceRow> rows = run_maps(steps, t_end, refinement);
    const fs::path file = dir / "pendulum_convergence.csv";
    write_table(file, rows);

    std::printf("wrote %s\n", file.string().c_str());
    print_results(rows);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dem_pendulum: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
