#include "bonds/bond_laws.hpp"

#include <sstream>

namespace dem {

// Each law's entry, defined in the law's own file.
BondLawEntry baker_gonzalez_bond_law();  // bonds/bond_provider.cpp
BondLawEntry bdem_bond_law();            // bonds/bdem_provider.cpp

const std::vector<BondLawEntry>& bond_laws() {
  static const std::vector<BondLawEntry> laws = {
      baker_gonzalez_bond_law(),
      bdem_bond_law(),
  };
  return laws;
}

const BondLawEntry* find_bond_law(std::string_view keyword) {
  for (const BondLawEntry& e : bond_laws())
    if (e.keyword == keyword) return &e;
  return nullptr;
}

std::string bond_law_keywords() {
  std::string out;
  const std::vector<BondLawEntry>& laws = bond_laws();
  for (std::size_t k = 0; k < laws.size(); ++k) {
    if (k > 0) out += k + 1 == laws.size() ? " or " : ", ";
    out += "\"" + laws[k].keyword + "\" (docs/model.md " + laws[k].section + ")";
  }
  return out;
}

std::string bond_law_tables() {
  std::ostringstream out;
  out << "| `[bonds] law` | model | [[material]] tables | stiffness per bond | implicit integrator |\n"
      << "|---|---|---|---|---|\n";
  for (const BondLawEntry& e : bond_laws())
    out << "| \"" << e.keyword << "\" | " << e.title << " (docs/model.md " << e.section << ") | "
        << (e.needs_materials ? "required " + e.materials_note : std::string("-")) << " | "
        << (e.stiffness_per_bond ? "[bonds] bending, axial, shear or [material] binder" : "from [[material]]")
        << " | " << (e.hessian ? "yes" : "no") << " |\n";
  return out.str();
}

}  // namespace dem
