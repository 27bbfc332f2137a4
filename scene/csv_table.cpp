#include "scene/csv_table.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "scene/scene_spec.hpp"

namespace dem {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(trim(field));
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

}  // namespace

bool CsvTable::has(const std::string& column) const {
  return std::find(columns_.begin(), columns_.end(), column) != columns_.end();
}

double CsvTable::at(std::size_t r, const std::string& column) const {
  const auto it = std::find(columns_.begin(), columns_.end(), column);
  return values_[r * columns_.size() + static_cast<std::size_t>(it - columns_.begin())];
}

const std::string& CsvTable::text_at(std::size_t r, const std::string& column) const {
  const auto k = static_cast<std::size_t>(std::find(columns_.begin(), columns_.end(), column) - columns_.begin());
  const std::size_t texts = static_cast<std::size_t>(std::count(is_text_.begin(), is_text_.end(), 1));
  const std::size_t before = static_cast<std::size_t>(std::count(is_text_.begin(), is_text_.begin() + k, 1));
  return texts_[r * texts + before];
}

CsvTable parse_csv_table(const std::string& text, const std::string& name,
                         std::initializer_list<const char*> required,
                         std::initializer_list<const char*> optional,
                         std::initializer_list<const char*> text_columns) {
  CsvTable t;
  std::istringstream in(text);
  std::string line;
  std::size_t number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string s = trim(line);
    if (s.empty() || s[0] == '#') continue;
    const std::string where = name + ":" + std::to_string(number);
    std::vector<std::string> fields = split(s);
    if (!header) {
      header = true;
      for (const std::string& f : fields) {
        const auto is = [&](std::initializer_list<const char*> list) {
          return std::any_of(list.begin(), list.end(), [&](const char* c) { return f == c; });
        };
        const bool known = is(required) || is(optional) || is(text_columns);
        t.is_text_.push_back(is(text_columns) ? 1 : 0);
        if (!known) {
          std::string all;
          for (const char* c : required) all += std::string(all.empty() ? "" : ", ") + c;
          for (const char* c : optional) all += std::string(", ") + c;
          for (const char* c : text_columns) all += std::string(", ") + c;
          throw SceneError(where + ": unknown column \"" + f + "\" (columns: " + all + ")");
        }
        if (std::count(fields.begin(), fields.end(), f) > 1)
          throw SceneError(where + ": column \"" + f + "\" appears twice");
      }
      t.columns_ = fields;
      for (const char* c : required)
        if (!t.has(c)) throw SceneError(where + ": the header lacks the required column \"" + c + "\"");
      continue;
    }
    if (fields.size() != t.columns_.size())
      throw SceneError(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                       std::to_string(t.columns_.size()));
    for (std::size_t k = 0; k < fields.size(); ++k) {
      if (t.is_text_[k]) {
        if (fields[k].empty())
          throw SceneError(where + ": column \"" + t.columns_[k] + "\": expected a name, got an empty field");
        t.texts_.push_back(fields[k]);
        t.values_.push_back(0.0);
        continue;
      }
      const char* begin = fields[k].c_str();
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(begin, &end);
      if (fields[k].empty() || *end != '\0' || !std::isfinite(v))
        throw SceneError(where + ": column \"" + t.columns_[k] + "\": expected a finite number, got \"" +
                         fields[k] + "\"");
      t.values_.push_back(v);
    }
    t.lines_.push_back(number);
  }
  if (!header) throw SceneError(name + ": empty file (a header line is required)");
  return t;
}

namespace {

constexpr std::uint64_t kMaxCsvBytes = 2ull << 30;

/// The size of a CSV file that can be read; throws SceneError naming it.
std::uint64_t readable_csv_size(const std::filesystem::path& path) {
  const std::uint64_t size = regular_file_size(path);
  if (size > kMaxCsvBytes) throw SceneError(path.string() + ": larger than 2 GiB");
  return size;
}

}  // namespace

CsvTable read_csv_table(const std::filesystem::path& path, std::initializer_list<const char*> required,
                        std::initializer_list<const char*> optional, std::initializer_list<const char*> text_columns) {
  const std::uint64_t size = readable_csv_size(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError(path.string() + ": cannot open for reading");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (!in) throw SceneError(path.string() + ": cannot read");
  return parse_csv_table(text, path.string(), required, optional, text_columns);
}

std::size_t count_csv_rows(const std::filesystem::path& path, std::uint64_t* bytes) {
  const std::uint64_t size = readable_csv_size(path);
  if (bytes != nullptr) *bytes = size;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError(path.string() + ": cannot open for reading");
  std::string line;
  std::size_t rows = 0;
  bool header = false;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    if (header) ++rows;
    header = true;
  }
  return rows;
}

}  // namespace dem
