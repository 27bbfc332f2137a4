#pragma once
/// \file event_tables.hpp
/// The run's CSV tables beside energy.csv: bond_failures.csv
/// (docs/model.md §10.4), groups.csv (engine/groups.hpp) and walls.csv
/// (the loads of walls and meshes, core/force_provider.hpp MovingBoundary).
///
///   bond_failures.csv  t,step,bond,i,j,mode,sigma,tau,sigma_ratio,tau_ratio,F_n,F_s,M_b,M_t,x,y,z,energy
///                      one row per failed bond in (step, time, bond) order
///   groups.csv         t,step,group,F_x,F_y,F_z,M_x,M_y,M_z,c_x,c_y,c_z,u_x,u_y,u_z
///                      one row per group at each row of energy.csv
///   stress.csv         t,step,volume,s_xx,s_yy,s_zz,s_yz,s_xz,s_xy,k_xx,k_yy,k_zz,k_yz,k_xz,k_xy,particles
///                      scenes with a [stress] box: one row at each row of energy.csv
///                      (engine/stress.hpp; s the whole stress, k its kinetic part, Pa, tension positive)
///   solver.csv         t,step,time_step,accepted,newton_iterations,cg_iterations,halvings,residual,stress_ratio
///                      implicit runs: one row per implicit step tried, rejected (accepted 0) or
///                      accepted (1), t at its end (docs/model.md §12.5 item 7, §12.8)
///
/// Numbers with 17 significant digits (%.16e), step, bond, i, j as integers.
/// A RowFile keeps its rows in memory and writes the whole table to
/// "NAME.tmp", renamed over NAME, whenever asked (at output intervals), so
/// a reader never sees a half-written table and a run that fails keeps the
/// last complete one.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/force_provider.hpp"
#include "engine/groups.hpp"
#include "engine/implicit_step.hpp"
#include "engine/stress.hpp"

namespace dem {

inline constexpr const char* kBondFailuresFile = "bond_failures.csv";
inline constexpr const char* kGroupsFile = "groups.csv";
inline constexpr const char* kSolverFile = "solver.csv";
inline constexpr const char* kStressFile = "stress.csv";
inline constexpr const char* kWallsFile = "walls.csv";

std::string bond_failures_header();
std::string bond_failure_row(const BondFailure& f);
std::string groups_header();
std::string group_row(double t, std::uint64_t step, const GroupReport& g);
std::string stress_header();
std::string stress_row(double t, std::uint64_t step, const StressMeasure& m);
/// walls.csv: t, step, then per boundary (core/force_provider.hpp
/// BoundaryLoad: walls, meshes) NAME_F_x, NAME_F_y, NAME_F_z (force on it,
/// N), NAME_M_x, NAME_M_y, NAME_M_z (moment about its centre, N m),
/// NAME_u_n (displacement along its normal since t = 0, m).
std::string walls_header(std::span<const BoundaryLoad> loads);
/// One row of walls.csv: the reduced loads (Simulation::boundary_loads).
std::string walls_row(double t, std::uint64_t step, std::span<const BoundaryLoad> loads);
std::string solver_header();
/// One implicit step tried within the run's step `step`, ending at time t:
/// its size, whether the event control accepted it (docs/model.md §12.8),
/// its Newton and CG iterations, line-search halvings, final residual e_k
/// and largest stress ratio (engine/implicit_step.hpp ImplicitStepStats).
std::string solver_row(double t, std::uint64_t step, const ImplicitStepStats& stats);

class RowFile {
 public:
  RowFile(std::filesystem::path path, std::string header);
  /// Continues the table of an earlier run: keeps its rows whose `step`
  /// column (the second) is at most `last_step` (a restart drops rows
  /// written after its checkpoint). A missing file starts empty. Throws
  /// std::runtime_error naming the file if it has another header or a
  /// malformed row.
  void resume(std::uint64_t last_step);
  void add(std::string row) {
    rows_.push_back(std::move(row));
    dirty_ = true;
  }
  /// Writes the table (temporary name, renamed) if rows were added since
  /// the last write, or if it was never written. Throws std::runtime_error
  /// naming the file on failure.
  void write();
  std::size_t size() const { return rows_.size(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::string header_;
  std::vector<std::string> rows_;
  bool dirty_ = true;
};

/// Copies the header and the rows of a RowFile table whose step is at most
/// last_step from `from` to `to` (a restart into a new folder). A missing
/// `from` copies nothing. Throws std::runtime_error naming the files.
void copy_rows_up_to_step(const std::filesystem::path& from, const std::filesystem::path& to,
                          std::uint64_t last_step);

}  // namespace dem
