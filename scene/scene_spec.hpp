#pragma once
/// \file scene_spec.hpp
/// A simulation as a scene file describes it (docs/scene-format.md): plain
/// data, validated but not yet built. parse_scene_text() fills it from TOML;
/// build_scene() (scene_builder.hpp) turns it into particles and bonds.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bonds/bond_list.hpp"
#include "contact/pair_table.hpp"
#include "engine/implicit_step.hpp"
#include "engine/integrator.hpp"
#include "engine/scene.hpp"
#include "engine/stress.hpp"
#include "scene/fcc_block.hpp"
#include "scene/lattice_scene.hpp"
#include "scene/packing_spec.hpp"
#include "scene/ring_torus.hpp"
#include "scene/solid_torus.hpp"
#include "core/diagnostics.hpp"
#include "core/types.hpp"

namespace dem {

/// A bad scene: the message names the file, the line and the key, and says
/// what is expected ("scene.toml:12:1: [run] time_step: expected ...").
class SceneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where a value came from, for error messages: "file:line:column".
struct SourcePlace {
  std::string file;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::string text() const;
};

/// Material of the particles and the binder (docs/model.md §7). Each value
/// is optional; what needs one says so when it is missing.
struct MaterialSpec {
  std::optional<double> density;            ///< rho (mass/length^3)
  std::optional<double> particle_modulus;   ///< E_p (pressure)
  std::optional<double> particle_poisson;   ///< nu, in (-1, 0.5)
  std::optional<double> binder_modulus;     ///< E_b (pressure)
  std::optional<double> bond_radius_ratio;  ///< beta: r_b = beta d/2
  SourcePlace place;
};

/// One [[material]] table (docs/model.md Part II materials, SI units).
struct NamedMaterialSpec {
  SceneMaterial material;
  SourcePlace place;
};

enum class SourceKind { ring_torus, solid_torus, box_lattice, csv, fcc_block, chain, packing };

/// One [[particles]] table.
struct ParticleSourceSpec {
  SourceKind kind = SourceKind::ring_torus;
  SourcePlace place;
  RingTorusParameters ring;    ///< kind ring_torus (wall always false: walls are [[wall]])
  SolidTorusParameters solid;  ///< kind solid_torus (material from [material])
  std::optional<std::uint64_t> target_particles;  ///< solid_torus: choose d for about N
  LatticeParameters lattice;   ///< kind box_lattice (density from [material])
  Vec3 origin = Vec3::Zero();  ///< box_lattice: centre of the first sphere
  std::filesystem::path file;  ///< kind csv: resolved against the scene file's folder
  FccBlockParameters fcc;      ///< kind fcc_block (density from its material)
  ChainParameters chain;       ///< kind chain (density from its material)
  PackingParameters packing;   ///< kind packing (density from its material; docs/model.md §21)
  /// The source's [[material]] by name (empty: the first); resolved to
  /// `material_index` by the parser.
  std::string material_name;
  std::uint32_t material_index = 0;
};

enum class BondPairs { generator, distance, gap, csv, none };

/// The [bonds] table: which pairs are bonded, and their stiffnesses.
struct BondSpec {
  BondPairs pairs = BondPairs::generator;
  double distance = 0.0;       ///< pairs = distance: bond every pair closer than this
  /// pairs = gap: bond every pair whose surface gap |x_i - x_j| - r_i - r_j
  /// is at most max_gap (length), or at most max_gap_ratio times the smaller
  /// radius, or at the max_gap_ratio that makes the binder bridges of the
  /// bonds binder_volume_fraction of the binder and particles' volume
  /// (exactly one of the three is set; docs/scene-format.md [bonds],
  /// docs/model.md §21.5).
  std::optional<double> max_gap;
  std::optional<double> max_gap_ratio;
  std::optional<double> binder_volume_fraction;
  /// Per-bond stiffnesses of listed bonds (pairs = distance, gap or csv;
  /// laws with stiffnesses per bond) from the binder's Young's modulus
  /// (pressure) and the bond radius r_b = bond_radius_ratio min(r_i, r_j)
  /// (docs/model.md §21.5); both or neither.
  std::optional<double> binder_modulus;
  std::optional<double> bond_radius_ratio;
  std::filesystem::path file;  ///< pairs = csv: columns i,j (creation indices)
  std::optional<BondStiffness> stiffness;  ///< direct constants; else from the material
  std::string law = "baker-gonzalez";  ///< the bond law's keyword (bonds/bond_laws.hpp)
  SourcePlace place;
};

/// The [contact] table.
struct ContactSpec {
  bool given = false;               ///< the table exists
  std::optional<double> skin;       ///< length; nullopt: skin_fraction of the smallest diameter
  double skin_fraction = 0.1;
  bool reorder_on_rebuild = true;
  /// The law's keyword (contact/contact_laws.hpp) and the values of its keys.
  std::string law = "hertz";
  LawValues values;
  SourcePlace place;
};

/// One [[group]] table: particles selected by a box (initial centres) or
/// an inclusive id range, held fixed, moved at a velocity, or loaded.
struct GroupSpec {
  std::string name;
  std::optional<std::pair<Vec3, Vec3>> box;                     ///< min, max corners
  std::optional<std::pair<std::uint64_t, std::uint64_t>> ids;  ///< first, last
  ParticleGroup::Motion motion = ParticleGroup::Motion::free;
  Vec3 velocity = Vec3::Zero();
  Vec3 force = Vec3::Zero();  ///< total, split equally among the members
  SourcePlace place;
};

/// One [[wall]] table.
struct WallSpec {
  Vec3 point = Vec3::Zero();
  Vec3 normal = Vec3::UnitX();  ///< unit (normalised when read)
  LawValues values;             ///< the contact law's [[wall]] keys (stiffness)
  /// Its [[material]] (laws with materials, docs/model.md §11.2), resolved
  /// by the parser; Wall::kParticleMaterial: each particle's own.
  std::uint32_t material = Wall::kParticleMaterial;
  /// name, velocity or servo (contact/wall_motion.hpp); the name is empty
  /// where not given ("wall<k>").
  WallMotion motion;
  SourcePlace place;
};

/// One [[mesh]] table: a triangle mesh from an STL or OBJ file as a wall
/// (docs/model.md §11.9), placed by x = R (scale p) + translate (R: the
/// rotation by rotation_angle about rotation_axis), optionally moving at a
/// prescribed velocity and angular velocity about rotation_centre.
struct MeshSpec {
  std::string name;                 ///< walls.csv and messages; default "mesh<k>"
  std::filesystem::path file;       ///< resolved against the scene file's folder
  std::string file_text;            ///< the path as the scene gives it
  double scale = 1.0;               ///< > 0, applied first
  Vec3 rotation_axis = Vec3::UnitZ();
  double rotation_angle_deg = 0.0;
  Vec3 translate = Vec3::Zero();    ///< length
  Vec3 velocity = Vec3::Zero();     ///< length/time
  Vec3 angular_velocity = Vec3::Zero();  ///< rad/time
  std::optional<Vec3> rotation_centre;   ///< length; default: the placed mesh's centroid
  LawValues values;                 ///< the contact law's [[wall]] keys (stiffness)
  std::uint32_t material = Wall::kParticleMaterial;  ///< as WallSpec::material
  SourcePlace place;
};

/// One [[interaction]] table: e, mu_s, mu_r of one unordered pair of
/// [[material]]s in place of the mixing rule (contact/pair_table.hpp),
/// with the materials' indices resolved by the parser.
struct InteractionSpec {
  PairCoefficients pair;
  SourcePlace place;
};

/// One [[clump]] table: a rigid clump of spheres integrated by the LGVI
/// (docs/model.md §8, engine/clump.hpp).
struct ClumpSpec {
  std::vector<Vec3> centres;       ///< member centres at the start (length)
  std::vector<double> diameters;   ///< one per member, or one for all (length)
  std::optional<double> member_mass;  ///< mass of each member; else from [material] density
  Vec3 velocity = Vec3::Zero();    ///< of the centre of mass (length/time)
  Vec3 angular_velocity = Vec3::Zero();  ///< spatial (1/time)
  SourcePlace place;
};

/// The [run] table.
struct RunSpec {
  IntegratorMap map = IntegratorMap::rrp25;
  std::optional<double> time_step;  ///< nullopt = "auto"
  double time_step_fraction = 0.1;  ///< with "auto": h = fraction h_crit
  bool time_step_fraction_given = false;  ///< else BDEM scenes take 0.2 (docs/model.md §9.6)
  std::optional<double> end_time;   ///< exactly one of end_time and steps
  std::optional<std::uint64_t> steps;
  /// Stop an explicit run (exit 2) when |E_balance - E_0| passes this
  /// fraction of the energy scale (run/energy_check.hpp); warn once past
  /// warn_energy_drift. Stop an implicit run when E_balance rises above its
  /// largest earlier value by more than implicit_energy_rise of the scale.
  double max_energy_drift = kDefaultMaxEnergyDrift;
  double warn_energy_drift = kDefaultWarnEnergyDrift;
  double implicit_energy_rise = kDefaultImplicitEnergyRise;
  /// integrator = "implicit": newton_tolerance, cg_tolerance_max,
  /// max_newton_iterations, max_cg_iterations, hessian_blocks.
  ImplicitSettings implicit;
  SourcePlace place;
};

/// The [output] table; intervals in steps, 0 = never.
struct OutputSpec {
  std::uint64_t vtk_every = 0;
  std::uint64_t energy_every = 100;
  std::uint64_t checkpoint_every = 0;
  /// The [stress] table: the box whose Love-Weber stress stress.csv
  /// records on the energy table's schedule (engine/stress.hpp); none: no
  /// stress.csv.
  std::optional<StressBox> stress_box;
};

/// The [domain] table (docs/scene-format.md, docs/model.md §20): the box
/// [lower, upper) the particles start in, its periodic axes, and the
/// velocity gradient that deforms a periodic cell.
struct DomainSpec {
  Vec3 lower = Vec3::Zero();  ///< length
  Vec3 upper = Vec3::Zero();  ///< length, > lower on every axis
  std::array<bool, 3> periodic{false, false, false};
  /// L (1/time), rows [L_x., L_y., L_z.]: the cell's edges move at L H0;
  /// non-zero only between periodic axes.
  Mat3 velocity_gradient = Mat3::Zero();
  /// Add the cell's homogeneous velocity L (x - lower) to every particle's
  /// velocity at the start, so that the material starts streaming with the
  /// cell instead of being set in motion by its faces.
  bool affine_velocity = false;
  /// The periodic-cell servo (docs/model.md §20.6): target_stress (pressure,
  /// tension positive) on servo_axes (default: every periodic axis), with
  /// servo_gain (1/(pressure time)) and max_strain_rate (1/time).
  std::optional<Vec3> target_stress;
  std::array<bool, 3> servo_axes{false, false, false};
  double servo_gain = 0.0;
  double max_strain_rate = 0.0;
  SourcePlace place;
  bool any_periodic() const { return periodic[0] || periodic[1] || periodic[2]; }
};

struct SceneSpec {
  std::string file;  ///< the scene file's name as given (for messages)
  RunSpec run;
  OutputSpec output;
  MaterialSpec material;
  std::vector<ParticleSourceSpec> sources;
  BondSpec bonds;
  ContactSpec contact;
  std::vector<WallSpec> walls;
  std::vector<MeshSpec> meshes;              ///< [[mesh]] tables
  std::vector<ClumpSpec> clumps;
  Vec3 gravity = Vec3::Zero();
  double viscous_damping = 0.0;              ///< [damping] viscous (1/time; 0: none)
  std::vector<NamedMaterialSpec> materials;  ///< [[material]] tables (Part II)
  std::vector<InteractionSpec> interactions;  ///< [[interaction]] tables
  std::vector<GroupSpec> groups;             ///< [[group]] tables
  std::optional<DomainSpec> domain;          ///< [domain]
};

/// Parses and validates a scene from TOML text. `file` names it in messages;
/// relative CSV paths are resolved against `base_folder`. Throws SceneError
/// for malformed TOML, an unknown key or table, a wrong type, a missing
/// required value or a non-physical value. Never builds particles, so any
/// input is parsed in bounded time and memory.
SceneSpec parse_scene_text(std::string_view text, const std::string& file,
                           const std::filesystem::path& base_folder);

/// A scene with one key set to another value (tests/test_scene_keys.cpp).
struct SceneKeyVariant {
  std::string section;  ///< the key's table as messages name it ("run", "[particles]", "top level")
  std::string key;
  std::string value;    ///< the TOML literal it was set to
  std::string text;     ///< the whole scene, as TOML
};

/// For every key that parsing `text` looks up (the keys the parser knows for
/// this scene's tables, given or not), and for each TOML literal of
/// `values`: the scene with that key set to it. So a table-driven test
/// covers a new key without being written for it. Throws SceneError if
/// `text` itself does not parse.
std::vector<SceneKeyVariant> scene_key_variants(std::string_view text, const std::string& file,
                                                const std::filesystem::path& base_folder,
                                                const std::vector<std::string>& values);

/// Reads and parses a scene file (UTF-8 TOML, at most 16 MiB); throws
/// SceneError, naming the file, if it cannot be read or does not validate.
SceneSpec read_scene_file(const std::filesystem::path& path);

/// Reads a whole text file (at most 16 MiB); throws SceneError naming it.
/// Errors as regular_file_size().
std::string read_text_file(const std::filesystem::path& path);

/// The size (bytes) of a file that a scene reads (the scene itself, CSV
/// tables). Throws SceneError naming the path: "no such file", "is a
/// directory", "is not a regular file" (a device such as /dev/zero, a pipe,
/// a socket), or "cannot read: REASON".
std::uint64_t regular_file_size(const std::filesystem::path& path);

}  // namespace dem
