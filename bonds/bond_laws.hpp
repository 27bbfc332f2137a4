#pragma once
/// \file bond_laws.hpp
/// The registry of bond laws, as contact/contact_laws.hpp is for contact:
/// each law describes itself once, in its own file, as a BondLawEntry: its
/// scene keyword (`[bonds] law = "..."`), whether it needs [[material]]
/// tables, takes a stiffness per bond ([bonds] bending/axial/shear or the
/// [material] binder), has Hessian blocks and joins the combined time-step
/// estimate, its own time-step limit and overflow check, its provider and
/// its checkpoint section. The scene parser and builder, `dem laws` and
/// the checkpoint reader read it; bond_laws.cpp holds the list.

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bonds/bond_list.hpp"
#include "core/law_schema.hpp"

namespace dem {

/// The bond properties of one [[material]] (SI units).
struct BondLawMaterial {
  std::string name;
  double density = 0.0;             ///< rho (kg/m^3)
  double youngs_modulus = 0.0;      ///< E (Pa)
  double poisson_ratio = 0.3;       ///< nu
  double bond_radius_factor = 1.0;  ///< beta
  double tensile_strength = std::numeric_limits<double>::infinity();  ///< sigma_c (Pa)
  double shear_strength = std::numeric_limits<double>::infinity();    ///< tau_c (Pa)
  bool tension_only = false;
};

/// A scene's bonds as the builder hands them to a law.
struct BondLawInput {
  std::vector<BondLawMaterial> materials;  ///< the [[material]] tables, by index
  double r_max = 0.0;                      ///< the largest radius (length)
};

/// A law with its constants resolved for one scene (BondLawEntry::prepare).
class PreparedBondLaw {
 public:
  virtual ~PreparedBondLaw() = default;
  /// The law's own critical time step for these bonds (laws outside the
  /// combined estimate of docs/model.md §7); nullopt: nothing sets one.
  virtual std::optional<StepLimit> time_step_limit(const ParticleStore&, const BondList&) const {
    return std::nullopt;
  }
  /// A value that would overflow during the run, as (material index, message); nullopt: none.
  virtual std::optional<std::pair<std::size_t, std::string>> overflow() const { return std::nullopt; }
  /// The provider of these bonds. Throws std::invalid_argument naming what it refuses.
  virtual std::unique_ptr<ForceProvider> make(const ParticleStore& particles, BondList bonds) const = 0;
};

/// One bond law (see the file comment).
struct BondLawEntry {
  std::string keyword;  ///< [bonds] law = "..."
  std::string title;    ///< one line: the model and its source
  std::string section;  ///< its docs/model.md section, "§9"
  bool needs_materials = false;
  std::string materials_note;  ///< "(E, nu, beta, strengths)"
  bool hessian = false;        ///< Hessian blocks for the implicit integrator (docs/model.md §12.4)
  /// Joins the per-particle estimate of docs/model.md §7 (default step 0.1 of it).
  bool combined_estimate = false;
  /// Takes a stiffness type per bond ([bonds] bending, axial, shear or the
  /// [material] binder); else those keys are refused with stiffness_refusal.
  bool stiffness_per_bond = false;
  std::string stiffness_refusal;
  std::function<std::unique_ptr<PreparedBondLaw>(const BondLawInput&)> prepare;
  std::vector<std::pair<std::string, SectionLoader>> sections;
};

/// Every bond law, in registry order.
const std::vector<BondLawEntry>& bond_laws();
/// The law of this keyword, or nullptr.
const BondLawEntry* find_bond_law(std::string_view keyword);
/// "\"baker-gonzalez\" (docs/model.md §4) or \"bdem\" (docs/model.md §9)", for messages.
std::string bond_law_keywords();
/// The bond laws as Markdown (`dem laws`).
std::string bond_law_tables();

}  // namespace dem
