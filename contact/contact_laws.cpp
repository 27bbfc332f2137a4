#include "contact/contact_laws.hpp"

#include "contact/plane_wall_law.hpp"

#include <sstream>
#include <stdexcept>

namespace dem {

// Each law's entry, defined in the law's own file.
ContactLawEntry hertz_contact_law();          // contact/hertz_law.cpp
ContactLawEntry penalty_contact_law();        // contact/penalty_law.cpp
ContactLawEntry hertz_mindlin_contact_law();  // contact/hertz_mindlin.cpp
ContactLawEntry linear_contact_law();         // contact/linear_spring_dashpot.cpp
ContactLawEntry jkr_contact_law();            // contact/adhesive_contact.cpp
ContactLawEntry dmt_contact_law();            // contact/adhesive_contact.cpp

std::unique_ptr<ForceProvider> PreparedContactLaw::make_meshes(const ParticleStore&, std::vector<MeshWall>, double,
                                                               double) {
  throw std::invalid_argument("this contact law has no triangle-mesh walls");
}

const std::vector<ContactLawEntry>& contact_laws() {
  static const std::vector<ContactLawEntry> laws = {
      hertz_contact_law(),
      penalty_contact_law(),
      hertz_mindlin_contact_law(),
      linear_contact_law(),
      jkr_contact_law(),
      dmt_contact_law(),
  };
  return laws;
}

const ContactLawEntry* find_contact_law(std::string_view keyword) {
  for (const ContactLawEntry& e : contact_laws())
    if (e.keyword == keyword) return &e;
  return nullptr;
}

std::string contact_law_keywords(const std::function<bool(const ContactLawEntry&)>& which) {
  std::vector<std::string> names;
  for (const ContactLawEntry& e : contact_laws())
    if (!which || which(e)) names.push_back("\"" + e.keyword + "\"");
  std::string out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (k > 0) out += k + 1 == names.size() ? " or " : ", ";
    out += names[k];
  }
  return out;
}

const PlaneWallLaw* find_plane_wall_law(std::uint8_t code) {
  for (const ContactLawEntry& e : contact_laws())
    if (e.plane_walls && e.plane_walls->code() == code) return e.plane_walls;
  return nullptr;
}

std::string plane_wall_law_codes() {
  std::string out;
  for (const ContactLawEntry& e : contact_laws())
    if (e.plane_walls)
      out += (out.empty() ? "" : ", ") + std::to_string(e.plane_walls->code()) + " " + e.plane_walls->name();
  return out;
}

namespace {
std::string kind_text(const LawKey& k) {
  switch (k.kind) {
    case LawKeyKind::boolean: return "true/false";
    case LawKeyKind::number_or_auto: return "number or \"auto\"";
    case LawKeyKind::choice: return quoted_list(k.choices);
    case LawKeyKind::number: break;
  }
  return "number";
}
}  // namespace

std::string contact_law_tables() {
  std::ostringstream out;
  for (const ContactLawEntry& e : contact_laws()) {
    out << "#### law = \"" << e.keyword << "\"\n\n" << e.title << " (docs/model.md " << e.section << ").";
    if (e.needs_materials) out << " Needs [[material]] tables " << e.materials_note << ".";
    out << " Implicit integrator: " << (e.hessian ? "yes" : "no") << ".\n\n";
    out << "| table | key | value | unit | default | meaning |\n|---|---|---|---|---|---|\n";
    for (const LawKey& k : e.keys)
      out << "| " << (k.table == LawTable::contact ? "[contact]" : "[[wall]]") << " | `" << k.name << "` | "
          << kind_text(k) << " | " << k.unit << " | " << (k.required.empty() ? k.default_text : "required") << " | "
          << k.symbol << ": " << k.meaning << " |\n";
    if (e.keys.empty()) out << "| | (no keys of its own) | | | | |\n";
    out << "\n";
  }
  return out.str();
}

}  // namespace dem
