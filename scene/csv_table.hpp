#pragma once
/// \file csv_table.hpp
/// A table of numbers with a header line, as scene files refer to (particle
/// positions, bond pairs): comma-separated, one row a line, '#' starts a
/// comment line, blank lines skipped.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace dem {

class CsvTable {
 public:
  std::size_t rows() const { return lines_.size(); }
  bool has(const std::string& column) const;
  /// Value of a column (which must exist) in row r.
  double at(std::size_t r, const std::string& column) const;
  /// Text of a text column (which must exist) in row r.
  const std::string& text_at(std::size_t r, const std::string& column) const;
  /// Line number (1-based) of row r in the file.
  std::size_t line_of(std::size_t r) const { return lines_[r]; }

 private:
  friend CsvTable parse_csv_table(const std::string&, const std::string&,
                                  std::initializer_list<const char*>,
                                  std::initializer_list<const char*>,
                                  std::initializer_list<const char*>);
  std::vector<std::string> columns_;
  std::vector<char> is_text_;        ///< per column
  std::vector<double> values_;       ///< row-major (0 in text columns)
  std::vector<std::string> texts_;   ///< row-major over the text columns
  std::vector<std::size_t> lines_;
};

/// Parses CSV text; `name` labels messages. Every `required` column must be
/// in the header, every header column must be required, `optional` or
/// `text`, and every field a finite number except in the (optional) `text`
/// columns, whose fields are non-empty words (a material's name). Throws
/// SceneError (scene_spec.hpp) naming the file and line.
CsvTable parse_csv_table(const std::string& text, const std::string& name,
                         std::initializer_list<const char*> required,
                         std::initializer_list<const char*> optional,
                         std::initializer_list<const char*> text_columns = {});

/// Reads a file (at most 2 GiB) and parses it. Throws SceneError naming the
/// file if it does not exist, is a directory or not a regular file (a
/// device, a pipe), cannot be read, or does not parse.
CsvTable read_csv_table(const std::filesystem::path& path, std::initializer_list<const char*> required,
                        std::initializer_list<const char*> optional,
                        std::initializer_list<const char*> text_columns = {});

/// The data rows of a CSV file (lines after the header that are neither
/// blank nor comments), counted line by line without keeping them, so a
/// table's size is known before it is read; its size in bytes into *bytes.
/// Throws SceneError as read_csv_table() does for a file it cannot read
/// (the fields are not checked: read_csv_table() does that).
std::size_t count_csv_rows(const std::filesystem::path& path, std::uint64_t* bytes = nullptr);

}  // namespace dem
