#pragma once
/// \file law_schema.hpp
/// What the registries of interaction laws (contact/contact_laws.hpp,
/// bonds/bond_laws.hpp) describe a law with: its scene keys (LawKey) with
/// their checks, units, defaults and messages, the values a scene gave
/// (LawValues), a time-step limit with what sets it (StepLimit,
/// CriticalTimeStep), and the loader of a checkpoint section.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/byte_stream.hpp"
#include "core/force_provider.hpp"
#include "core/particle_store.hpp"

namespace dem {

/// The kinds of value a law key takes.
enum class LawKeyKind {
  number,          ///< a number, checked by LawKey::check
  number_or_auto,  ///< a number or the string "auto"
  boolean,         ///< true or false
  choice,          ///< one of LawKey::choices (a TOML string)
};
/// The scene table a law key is read from.
enum class LawTable { contact, wall, bonds };

/// One key of a law's schema.
struct LawKey {
  std::string name;  ///< the TOML key
  LawTable table = LawTable::contact;
  LawKeyKind kind = LawKeyKind::number;
  /// The parser's value check of a number: "finite", "positive", "nonnegative", "fraction".
  std::string check = "nonnegative";
  std::string symbol;   ///< the quantity, for docs and messages ("K^pp", "k_n")
  std::string unit;     ///< "energy", "force/length", "-"
  std::string meaning;  ///< one line for docs/scene-format.md
  /// Non-empty: the key is required, and a scene without it is refused with
  /// "is required: " + this.
  std::string required;
  /// Added to "only applies to law \"...\"" when another law's scene gives
  /// the key (e.g. "(k_c)").
  std::string note;
  std::string default_text;  ///< the default as docs say it ("false", "auto: E_max r_max")
  std::vector<std::string> choices;  ///< the values of a choice key, the default first
};

/// A key of another law that this law refuses with its own reason.
struct LawRefusal {
  std::string name;
  LawTable table = LawTable::contact;
  std::string message;  ///< e.g. "does not apply to law \"hertz-mindlin\" (its stiffness ...)"
};

/// The values a scene gave for a law's keys (absent keys are absent).
struct LawValues {
  std::map<std::string, double> numbers;
  std::map<std::string, bool> flags;
  std::set<std::string> automatic;  ///< number_or_auto keys given as "auto"
  std::map<std::string, std::string> words;  ///< choice keys
  /// The value of a choice key, or `fallback` when it is absent.
  std::string word(const std::string& key, const std::string& fallback) const {
    const auto it = words.find(key);
    return it == words.end() ? fallback : it->second;
  }

  std::optional<double> number(const std::string& key) const {
    const auto it = numbers.find(key);
    return it == numbers.end() ? std::nullopt : std::optional<double>(it->second);
  }
  bool flag(const std::string& key) const {
    const auto it = flags.find(key);
    return it != flags.end() && it->second;
  }
  bool is_auto(const std::string& key) const { return automatic.count(key) > 0; }
  bool given(const std::string& key) const {
    return numbers.count(key) + flags.count(key) + automatic.count(key) + words.count(key) > 0;
  }
};

/// A time-step limit and what sets it, for messages.
struct StepLimit {
  double h = 0.0;      ///< time
  std::string source;  ///< "penalty stiffness 1e7 for the smallest mass 0.2 ([contact] stiffness)"
};

/// A critical time step set by one particle's stiffness (engine/time_step.hpp).
struct CriticalTimeStep {
  double h = 0.0;            ///< h_crit (time); +infinity when nothing is stiff
  std::size_t particle = 0;  ///< slot of the particle that sets it
  bool rotation = false;     ///< set by sqrt(J_i / kr_i) rather than sqrt(m_i / k_i)
  double stiffness = 0.0;    ///< that particle's k_i (force/length) or kr_i (energy)
  /// The largest term of that stiffness: "bond axial" (K^a/r0^2), "bond
  /// shear" (c_t K^s/r0^2 or c_r K^s), "bond bending" (K^m), "contact" or
  /// "wall"; empty when nothing is stiff.
  std::string term;
  /// The value of that term (force/length, or energy for rotation).
  double term_stiffness = 0.0;
};

/// Makes a provider from its checkpoint section; throws StateError.
using SectionLoader = std::function<std::unique_ptr<ForceProvider>(ByteReader&, const ParticleStore&)>;

/// "\"a\", \"b\" or \"c\"": names quoted and joined, for messages.
inline std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k > 0) out += k + 1 == names.size() ? " or " : ", ";
    out += "\"" + names[k] + "\"";
  }
  return out;
}

}  // namespace dem
