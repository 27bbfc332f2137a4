#pragma once
/// \file table_reader.hpp
/// Internal to the scene parser (scene_parser.cpp and the files that read
/// one kind of table, such as packing_keys.cpp): TableReader reads one TOML
/// table's keys with their types and ranges checked, and refuses the keys it
/// did not read, every error a SceneError naming the file, line and key
/// (docs/scene-format.md). Not part of the scene layer's public interface.
#include <toml++/toml.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/format.hpp"
#include "scene/scene_spec.hpp"

namespace dem::scene_reading {

/// Every key a parse looked up, with its table (scene_key_variants).
struct KeyLookup {
  const toml::table* table;
  std::string section, key;
};
inline thread_local std::vector<KeyLookup>* g_key_log = nullptr;

/// The shortest of 15 or 17 significant digits that reads back as v.
inline std::string format_number(double v) {
  const std::string short_form = format_g(v, 15);
  return std::stod(short_form) == v ? short_form : format_g(v, 17);
}

inline std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "the string \"" + std::string(*n.value<std::string_view>()) + "\"";
    case toml::node_type::integer: return std::to_string(*n.value<std::int64_t>());
    case toml::node_type::floating_point: return format_number(*n.value<double>());
    case toml::node_type::boolean: return *n.value<bool>() ? "true" : "false";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

inline SourcePlace place_of(const std::string& file, const toml::source_region& r) {
  return SourcePlace{file, r.begin.line, r.begin.column};
}

/// Reads one table's keys, remembering which were read, so that finish()
/// can refuse the rest by name.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string section, const std::string& file)
      : table_(table), section_(std::move(section)), file_(file) {}

  [[noreturn]] void fail(const toml::node* at, const std::string& key, const std::string& what) const {
    fail_at(at != nullptr ? at->source() : table_.source(), key, what);
  }

  [[noreturn]] void fail_at(const toml::source_region& where, const std::string& key,
                            const std::string& what) const {
    const SourcePlace p = place_of(file_, where);
    std::string msg = p.text() + ": [" + section_ + "]";
    if (!key.empty()) msg += " " + key;
    throw SceneError(msg + ": " + what);
  }

  const toml::node* find(const std::string& key) {
    used_.insert(key);
    if (g_key_log != nullptr) g_key_log->push_back({&table_, section_, key});
    return table_.get(key);
  }
  bool has(const std::string& key) const { return table_.contains(key); }
  SourcePlace place() const { return place_of(file_, table_.source()); }

  std::optional<double> number(const std::string& key, const char* range = "finite") {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (!(n->is_integer() || n->is_floating_point()))
      fail(n, key, std::string("expected a number, got ") + describe(*n));
    const double v = *n->value<double>();
    const std::string r = range;
    bool ok = std::isfinite(v) || (r == "positive_or_inf" && v == INFINITY);
    if (r == "positive") ok = ok && v > 0.0;
    if (r == "nonnegative") ok = ok && v >= 0.0;
    if (r == "fraction") ok = ok && v > 0.0 && v <= 1.0;
    if (r == "poisson") ok = ok && v > -1.0 && v < 0.5;
    if (r == "poisson_closed") ok = ok && v > -1.0 && v <= 0.5;
    if (r == "positive_or_inf") ok = (std::isfinite(v) || v == INFINITY) && v > 0.0;
    if (!ok) {
      std::string expected = "a finite number";
      if (r == "positive") expected = "a finite number > 0";
      if (r == "nonnegative") expected = "a finite number >= 0";
      if (r == "fraction") expected = "a number in (0, 1]";
      if (r == "poisson") expected = "Poisson's ratio in (-1, 0.5)";
      if (r == "poisson_closed") expected = "Poisson's ratio in (-1, 0.5]";
      if (r == "positive_or_inf") expected = "a number > 0 (inf: never fails)";
      fail(n, key, "expected " + expected + ", got " + describe(*n));
    }
    return v;
  }

  double required_number(const std::string& key, const char* range = "finite") {
    const std::optional<double> v = number(key, range);
    if (!v) fail(nullptr, key, "is required (a number)");
    return *v;
  }

  /// A number, or the string "auto" (returned as nullopt, with *automatic set).
  std::optional<double> number_or_auto(const std::string& key, const char* range, bool& automatic) {
    automatic = false;
    const toml::node* n = table_.get(key);
    if (n != nullptr && n->is_string()) {
      used_.insert(key);
      if (*n->value<std::string_view>() != "auto")
        fail(n, key, "expected a number or \"auto\", got " + describe(*n));
      automatic = true;
      return std::nullopt;
    }
    return number(key, range);
  }

  std::optional<std::uint64_t> count(const std::string& key, std::uint64_t max = UINT32_MAX) {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_integer()) fail(n, key, "expected a whole number, got " + describe(*n));
    const std::int64_t v = *n->value<std::int64_t>();
    if (v < 0 || static_cast<std::uint64_t>(v) > max)
      fail(n, key, "expected a whole number in [0, " + std::to_string(max) + "], got " + describe(*n));
    return static_cast<std::uint64_t>(v);
  }

  /// An array of [x, y, z] arrays (at most `max` of them).
  std::optional<std::vector<Vec3>> vectors(const std::string& key, std::size_t max) {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    const toml::array* a = n->as_array();
    if (a == nullptr || a->empty() || a->size() > max)
      fail(n, key, "expected an array of 1 to " + std::to_string(max) + " points [x, y, z]");
    std::vector<Vec3> out;
    for (const toml::node& e : *a) {
      const toml::array* p = e.as_array();
      if (p == nullptr || p->size() != 3) fail(&e, key, "expected a point [x, y, z], got " + describe(e));
      Vec3 v;
      for (std::size_t k = 0; k < 3; ++k) {
        const toml::node& c = *p->get(k);
        if (!(c.is_integer() || c.is_floating_point()) || !std::isfinite(*c.value<double>()))
          fail(&e, key, "expected a point of three finite numbers");
        v[static_cast<int>(k)] = *c.value<double>();
      }
      out.push_back(v);
    }
    return out;
  }

  /// A positive number, or an array of `count` positive numbers.
  std::optional<std::vector<double>> numbers(const std::string& key, std::size_t count) {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    std::vector<double> out;
    if (const toml::array* a = n->as_array()) {
      if (a->size() != count)
        fail(n, key, "expected one number or " + std::to_string(count) + " numbers, got " +
                         std::to_string(a->size()));
      for (const toml::node& e : *a) {
        if (!(e.is_integer() || e.is_floating_point()) || !(*e.value<double>() > 0.0) ||
            !std::isfinite(*e.value<double>()))
          fail(&e, key, "expected a finite number > 0, got " + describe(e));
        out.push_back(*e.value<double>());
      }
      return out;
    }
    if (!(n->is_integer() || n->is_floating_point()) || !(*n->value<double>() > 0.0) ||
        !std::isfinite(*n->value<double>()))
      fail(n, key, "expected a finite number > 0 or an array of them, got " + describe(*n));
    out.assign(count, *n->value<double>());
    return out;
  }

  std::optional<bool> boolean(const std::string& key) {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_boolean()) fail(n, key, "expected true or false, got " + describe(*n));
    return *n->value<bool>();
  }

  std::optional<std::string> string(const std::string& key) {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_string()) fail(n, key, "expected a string, got " + describe(*n));
    return std::string(*n->value<std::string_view>());
  }

  std::optional<Vec3> vector(const std::string& key) {
    const toml::node* n = find(key);
    if (n == nullptr) return std::nullopt;
    const toml::array* a = n->as_array();
    if (a == nullptr || a->size() != 3)
      fail(n, key, "expected an array of three numbers, got " + describe(*n));
    Vec3 v;
    for (std::size_t k = 0; k < 3; ++k) {
      const toml::node& e = *a->get(k);
      if (!(e.is_integer() || e.is_floating_point()) || !std::isfinite(*e.value<double>()))
        fail(n, key, "expected an array of three finite numbers");
      v[static_cast<int>(k)] = *e.value<double>();
    }
    return v;
  }

  /// Refuses every key that was not read.
  void finish() const {
    for (auto&& [k, v] : table_) {
      const std::string key(k.str());
      if (used_.count(key) == 0) {
        const toml::array* a = v.as_array();
        const char* what = v.is_table() ? "unknown table"
                           : (a != nullptr && a->is_array_of_tables()) ? "unknown array of tables"
                                                                       : "unknown key";
        fail_at(k.source(), key, std::string(what) + " (see docs/scene-format.md for the keys of [" + section_ + "])");
      }
    }
  }

 private:
  const toml::table& table_;
  std::string section_;
  const std::string& file_;
  std::set<std::string> used_;
};

}  // namespace dem::scene_reading
