#pragma once
/// \file contact_laws.hpp
/// The registry of contact laws. Each law describes itself once, in its own
/// file, as a ContactLawEntry: its scene keyword (`[contact] law = "..."`),
/// its keys in [contact] and [[wall]] with their checks, units, defaults
/// and messages, whether it needs [[material]] tables and has Hessian
/// blocks, how its constants are resolved from a scene, its critical time
/// step, its providers for pairs and walls, and the loaders of its
/// checkpoint sections. The scene parser and builder, `dem laws`, the
/// implicit integrator's support check, the checkpoint reader and the key
/// tables of docs/scene-format.md all read this registry; no other list of
/// contact laws exists. contact_laws.cpp holds the list, one line a law
/// (docs/extending.md).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/mesh_contact.hpp"
#include "contact/pair_table.hpp"
#include "core/byte_stream.hpp"
#include "core/force_provider.hpp"
#include "core/law_schema.hpp"
#include "core/particle_store.hpp"

namespace dem {

class PlaneWallLaw;  // contact/plane_wall_law.hpp

/// The contact properties of one [[material]] (SI units), as laws take them.
struct LawMaterial {
  std::string name;
  double density = 0.0;           ///< rho (kg/m^3)
  double youngs_modulus = 0.0;    ///< E (Pa)
  double poisson_ratio = 0.3;     ///< nu
  double restitution = 0.5;       ///< e in (0, 1]
  double sliding_friction = 0.5;  ///< mu_s >= 0
  double rolling_friction = 0.0;  ///< mu_r >= 0
};

/// A scene's contact as the builder hands it to a law.
struct ContactLawInput {
  const ParticleStore* particles = nullptr;  ///< every particle, with masses and materials
  std::vector<LawMaterial> materials;        ///< the [[material]] tables, by index
  /// The [[interaction]] tables: e, mu_s, mu_r of pairs of materials in
  /// place of the mixing rule (only for laws with pair_keys).
  PairTable pairs;
  LawValues values;                          ///< the [contact] keys
  std::vector<LawValues> wall_values;        ///< per [[wall]], its keys
  std::vector<LawValues> mesh_values;        ///< per [[mesh]], its keys (the [[wall]] keys)
  bool contact_given = false;                ///< the scene has a [contact] table
  double r_min = 0.0, r_max = 0.0;           ///< smallest and largest radius (length)
  double e_max = 0.0;                        ///< largest E of the [[material]] tables (Pa)
  /// K^pp and K^pw of wall w "auto" from the [material] table (Hertz
  /// constants, docs/model.md §7); they throw the scene's error naming the
  /// key when that table cannot give them.
  std::function<double()> material_pair_stiffness;
  std::function<double(std::size_t)> material_wall_stiffness;
  /// K^pw of mesh m "auto", as material_wall_stiffness.
  std::function<double(std::size_t)> material_mesh_stiffness;
};

/// The providers a law makes, in gather order; `walls` may be null.
struct ContactLawProviders {
  std::unique_ptr<ForceProvider> pairs, walls;
};

/// A law with its constants resolved for one scene (ContactLawEntry::prepare).
class PreparedContactLaw {
 public:
  virtual ~PreparedContactLaw() = default;
  /// The law's pair stiffness as the scene reports it (K^pp, k_ec, k_n),
  /// or 0 where it has none.
  virtual double pair_stiffness() const { return 0.0; }
  /// Wall w's stiffness (K^pw, k_c), or 0 where the law takes none.
  virtual double wall_stiffness(std::size_t /*w*/) const { return 0.0; }
  /// The law's own critical time step (laws outside the combined estimate
  /// of docs/model.md §7); nullopt: nothing sets one.
  virtual std::optional<StepLimit> time_step_limit(const ParticleStore&) const { return std::nullopt; }
  /// A value that would overflow during the run, as (index, message): an
  /// index below the material count names that [[material]], material
  /// count + k the pair table's row k ([[interaction]] k); nullopt: none.
  virtual std::optional<std::pair<std::size_t, std::string>> overflow(const ParticleStore&) const { return std::nullopt; }
  /// Non-empty: why the scene may not hold a [[clump]] with this law.
  virtual std::string clump_conflict() const { return ""; }
  /// The pair and wall providers, for these walls (points, normals and,
  /// for laws with pair_keys, Wall::material) and Verlet skin, with the
  /// run's time step h. Called once.
  virtual ContactLawProviders make(const ParticleStore& particles, std::vector<Wall> walls, double skin,
                                   double h) = 0;
  /// Mesh m's stiffness (K^pw, k_c of its [[mesh]] keys, as wall_stiffness),
  /// or 0 where the law takes none.
  virtual double mesh_stiffness(std::size_t /*m*/) const { return 0.0; }
  /// The provider of the triangle-mesh walls (contact/mesh_contact_provider.hpp:
  /// each mesh with its material or, for the stiffness laws, its
  /// stiffness), with the Verlet skin (> 0) and the run's time step h.
  /// Throws std::invalid_argument where the law has no mesh walls (the
  /// default).
  virtual std::unique_ptr<ForceProvider> make_meshes(const ParticleStore& particles, std::vector<MeshWall> meshes,
                                                     double skin, double h);
};

/// One contact law (see the file comment).
struct ContactLawEntry {
  std::string keyword;  ///< [contact] law = "..."
  std::string title;    ///< one line: the model and its source
  std::string section;  ///< its docs/model.md section, "§11.4"
  /// The scene needs [[material]] tables; the parenthesis of the message
  /// that says so ("(E, nu, ...)").
  bool needs_materials = false;
  std::string materials_note;
  /// The [[interaction]] keys of the pair coefficients it uses, among "e",
  /// "mu_s", "mu_r" (the [[material]] keys). A law with them also takes
  /// [[wall]] material (Wall::material, docs/model.md §11.2); empty: neither
  /// (stiffness laws, whose walls take a stiffness: hertz, penalty).
  std::vector<std::string> pair_keys;
  /// The implicit integrator can use it (Hessian blocks, docs/model.md §12.4).
  bool hessian = false;
  /// Its stiffness joins the bonds' in the combined per-particle estimate of
  /// docs/model.md §7 (default step 0.1 of it); else the scene takes the
  /// smallest of every law's own limit (default step 0.2 of it).
  bool combined_estimate = false;
  std::vector<LawKey> keys;
  std::vector<LawRefusal> refusals;
  /// Its constants for a scene. Throws std::invalid_argument or the scene's
  /// own error, naming the key.
  std::function<std::unique_ptr<PreparedContactLaw>(const ContactLawInput&)> prepare;
  /// Its checkpoint sections: provider name and loader.
  std::vector<std::pair<std::string, SectionLoader>> sections;
  /// Its stateless plane-wall law, evaluated by WallProvider
  /// (contact/plane_wall_law.hpp), or nullptr where its walls keep history.
  const PlaneWallLaw* plane_walls = nullptr;
};

/// Every contact law, in registry order.
const std::vector<ContactLawEntry>& contact_laws();
/// The law of this keyword, or nullptr.
const ContactLawEntry* find_contact_law(std::string_view keyword);
/// "\"hertz\", \"penalty\" or \"linear\"": the keywords, for messages.
std::string contact_law_keywords(const std::function<bool(const ContactLawEntry&)>& which = {});

/// The stateless plane-wall law of this checkpoint code (PlaneWallLaw::code)
/// among the registry's entries, or nullptr.
const PlaneWallLaw* find_plane_wall_law(std::uint8_t code);
/// "0 Hertz, 1 penalty": the codes, for messages.
std::string plane_wall_law_codes();

/// docs/scene-format.md's key tables of every law, as Markdown (`dem laws`).
std::string contact_law_tables();

}  // namespace dem
