#pragma once
/// \file energy_table.hpp
/// The energy table `energy.csv` (docs/model.md §5): one row per output
/// time with exactly the columns (docs/model.md §5, plus U_gravity,
/// zero in a scene without gravity)
/// t,E_kin_trans,E_kin_rot,U_bend,U_axial,U_shear,U_contact,U_wall,U_gravity,E_total,P_x,P_y,P_z,L_x,L_y,L_z,
/// W_fracture,W_contact,W_filter,E_balance,n_broken,n_fragments,W_boundary
/// every value written with 17 significant digits (%.16e), the counts
/// n_broken and n_fragments as integers. The last seven are the dissipation
/// ledger of docs/model.md §10.3 and §11.3 (E_balance = E_total + W_fracture +
/// W_contact + W_filter + W_boundary; W_boundary is the work of the forces
/// on fixed and prescribed-velocity groups, engine/groups.hpp); the first 16
/// columns are those of the tables before the ledger.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/diagnostics.hpp"

namespace dem {

/// The header line, without the newline.
std::string energy_table_header();
/// One row (without the newline) for a report.
std::string energy_table_row(const EnergyReport& report);

/// Appends rows to a CSV file. The file is created (truncated) with its
/// header on construction; every row goes to the file at once (no buffer in
/// the process), so a run that stops keeps the rows it wrote. A row that
/// cannot be written whole (a full disk) is cut off again, so the file always
/// ends with a complete row. Throws std::runtime_error naming the path and
/// the system's reason if the file cannot be opened or written.
class EnergyTable {
 public:
  explicit EnergyTable(const std::filesystem::path& path);

  /// Continues the table of an earlier run (a restart): keeps the header and
  /// the first `keep_rows` rows of the existing file (rows after them, written
  /// after the checkpoint, are dropped; the file is rewritten under a
  /// temporary name and renamed), then appends. Throws std::runtime_error
  /// naming the path if the file is missing, has another header or fewer rows.
  EnergyTable(const std::filesystem::path& path, std::size_t keep_rows);
  ~EnergyTable();
  EnergyTable(const EnergyTable&) = delete;
  EnergyTable& operator=(const EnergyTable&) = delete;

  void write(const EnergyReport& report);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;                 ///< open for writing (appending)
  std::uint64_t complete_ = 0;  ///< bytes of the file up to its last complete row
};

}  // namespace dem
