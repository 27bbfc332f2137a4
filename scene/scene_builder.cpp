// Builds a scene file's particles, bonds, walls and time step
// (scene_builder.hpp).
#include "scene/scene_builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <numbers>
#include <optional>
#include <tuple>

#include "contact/neighbour_search.hpp"
#include "core/format.hpp"
#include "engine/cell_provider.hpp"
#include "engine/clump.hpp"
#include "engine/reorder.hpp"
#include "engine/time_step.hpp"
#include "bonds/bdem_bond.hpp"
#include "bonds/bdem_provider.hpp"
#include "bonds/bond_provider.hpp"
#include "fields/gravity_provider.hpp"
#include "fields/load_provider.hpp"
#include "fields/viscous_damping_provider.hpp"
#include "scene/csv_table.hpp"
#include "scene/gap_bonds.hpp"
#include "scene/mesh_file.hpp"
#include "scene/packing_genesis.hpp"

namespace dem {

namespace {

/// Lengths are at most this, so that their squares and sums of squares stay
/// finite.
constexpr double kMaxLength = 1e100;
/// A coordinate over this many radii from the origin moves in steps of more
/// than 1e-6 of the radius (doubles near |x| are 2^-52 |x| apart).
constexpr double kMaxPositionInRadii = 1e-6 / 0x1p-52;
/// Centres closer than this fraction of r_i + r_j are one place.
constexpr double kCoincidence = 1e-6;
/// The neighbour list holds at most 2^32 - 1 pairs (contact/neighbour_search.hpp).
constexpr std::uint64_t kMaxPairs = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void fail(const SourcePlace& at, const std::string& what) { throw SceneError(at.text() + ": " + what); }

double need(const std::optional<double>& v, const MaterialSpec& m, const char* key, const SourcePlace& user,
            const std::string& why) {
  if (!v)
    fail(user, why + " needs [material] " + key +
                   (m.place.line > 0 ? " (the [material] table at " + m.place.text() + " lacks it)" : ""));
  return *v;
}

std::string point_text(const Vec3& x) {
  std::string out = "(";
  out += format_g(x.x());
  out += ", ";
  out += format_g(x.y());
  out += ", ";
  out += format_g(x.z());
  out += ")";
  return out;
}

/// The binder radius r_b of a listed bond between radii r_i, r_j: [bonds]
/// bond_radius_ratio min(r_i, r_j) (docs/model.md §21.5), else beta (r_i +
/// r_j)/2 (§7).
double listed_bond_radius(const BondSpec& bonds, double beta, double r_i, double r_j) {
  return bonds.bond_radius_ratio ? *bonds.bond_radius_ratio * std::min(r_i, r_j) : 0.5 * beta * (r_i + r_j);
}

/// docs/model.md §7 bond stiffnesses of a binder cylinder of Young's modulus
/// e_b, radius rb and rest length r0.
BondStiffness binder_stiffness(double e_b, double rb, double r0) {
  const double pi = std::numbers::pi;
  const double area = pi * rb * rb;
  BondStiffness k;
  k.axial = e_b * area * r0;
  k.shear = k.axial;
  k.bending = e_b * 0.25 * pi * rb * rb * rb * rb / r0;
  return k;
}

/// Where each particle came from, for messages.
struct Origin {
  std::size_t first = 0;  ///< id of its first particle
  std::size_t count = 0;
  bool clump = false;  ///< a [[clump]] table, else a [[particles]] table
  SourceKind kind = SourceKind::csv;
  SourcePlace place;
  std::filesystem::path csv;       ///< CSV source: the file
  std::vector<std::size_t> lines;  ///< CSV source: the line of each row
};

class Origins {
 public:
  void add(Origin o) { list_.push_back(std::move(o)); }
  /// The table of particle `id` (tables are added in id order).
  const Origin& of(std::size_t id) const {
    const auto after =
        std::upper_bound(list_.begin(), list_.end(), id, [](std::size_t i, const Origin& o) { return i < o.first; });
    return after == list_.begin() ? list_.front() : *(after - 1);
  }
  /// "grains.csv:4", "particle 3 of the [[particles]] table at s.toml:9:1", ...
  std::string describe(std::size_t id) const {
    const Origin& o = of(id);
    const std::size_t k = id - o.first;
    if (!o.clump && o.kind == SourceKind::csv && k < o.lines.size())
      return o.csv.string() + ":" + std::to_string(o.lines[k]) + " (particle " + std::to_string(id) + ")";
    return "particle " + std::to_string(id) + " (" + (o.clump ? "member " : "particle ") + std::to_string(k) +
           " of the " + (o.clump ? "[[clump]]" : "[[particles]]") + " table at " + o.place.text() + ")";
  }
  /// The keys that set the masses and motion of `id`'s table.
  std::string motion_keys(std::size_t id) const {
    const Origin& o = of(id);
    if (o.clump) return "[[clump]] member_mass, velocity, angular_velocity";
    switch (o.kind) {
      case SourceKind::ring_torus:
        return "[[particles]] mass, speed";
      case SourceKind::solid_torus:
        return "[[particles]] speed, spin";
      case SourceKind::box_lattice:
        return "[[particles]] temperature";
      case SourceKind::csv:
        return "[[particles]] file (columns mass, vx, vy, vz, wx, wy, wz)";
      case SourceKind::fcc_block:
        return "[[particles]] velocity, angular_velocity, [[material]] density";
      case SourceKind::chain:
        return "[[particles]] velocity, [[material]] density";
      case SourceKind::packing:
        return "[[particles]] size_distribution, [[material]] density";
    }
    return "[[particles]]";
  }
  /// The keys that place the particles of `id`'s table.
  std::string position_keys(std::size_t id) const {
    const Origin& o = of(id);
    if (o.clump) return "[[clump]] centres";
    switch (o.kind) {
      case SourceKind::ring_torus:
        return "[[particles]] gap, torus_diameter";
      case SourceKind::solid_torus:
        return "[[particles]] gap, major_diameter";
      case SourceKind::box_lattice:
        return "[[particles]] origin";
      case SourceKind::csv:
        return "[[particles]] file (columns x, y, z)";
      case SourceKind::fcc_block:
        return "[[particles]] origin, lowest_z";
      case SourceKind::chain:
        return "[[particles]] origin";
      case SourceKind::packing:
        return "[[particles]] region, seed";
    }
    return "[[particles]]";
  }

 private:
  std::vector<Origin> list_;
};

/// Appends `part`'s particles (ids renumbered after those already there)
/// and, if `with_bonds`, its bonds with their own stiffnesses or `override`.
/// Moves rather than copies into an empty scene.
void append(Scene& into, Scene&& part, bool with_bonds, const std::optional<BondStiffness>& override) {
  if (with_bonds && override && !part.bonds.empty()) {
    part.bonds.type.assign(part.bonds.size(), 0);
    part.bonds.stiffness_types = {*override};
    part.bonds.rebuild_type_index();
  }
  if (!with_bonds) part.bonds = BondList();
  const std::uint32_t offset = static_cast<std::uint32_t>(into.particles.size());
  if (offset == 0 && into.bonds.empty()) {
    into.particles = std::move(part.particles);
    into.bonds = std::move(part.bonds);
    return;
  }
  into.particles.append(part.particles);
  for (std::size_t b = 0; b < part.bonds.size(); ++b)
    into.bonds.add(into.particles, offset + part.bonds.first[b], offset + part.bonds.second[b],
                   part.bonds.stiffness(b));
}

/// The [[material]] of each row of a CSV table: its `material` column (a
/// name), else the source's `material` key; empty without [[material]]s.
std::vector<std::uint32_t> csv_row_materials(const CsvTable& table, const ParticleSourceSpec& src,
                                             const SceneSpec& spec) {
  if (spec.materials.empty()) {
    if (table.has("material"))
      fail(src.place, src.file.string() + ": a \"material\" column needs [[material]] tables naming its values");
    return {};
  }
  std::vector<std::uint32_t> out(table.rows(), src.material_index);
  for (std::size_t r = 0; r < table.rows(); ++r) {
    const std::string where = src.file.string() + ":" + std::to_string(table.line_of(r)) + ": ";
    if (table.has("material")) {
      const std::string& name = table.text_at(r, "material");
      const auto it = std::find_if(spec.materials.begin(), spec.materials.end(),
                                   [&](const NamedMaterialSpec& m) { return m.material.name == name; });
      if (it == spec.materials.end())
        fail(src.place, where + "column \"material\": no [[material]] is named \"" + name + "\"");
      out[r] = static_cast<std::uint32_t>(it - spec.materials.begin());
    }
    // Only a material of walls alone may leave its density out.
    const NamedMaterialSpec& m = spec.materials[out[r]];
    if (!(m.material.density > 0.0))
      fail(m.place, "[[material]] density: is required: \"" + m.material.name +
                        "\" is the material of the particle at " + where +
                        "(only a material of [[wall]]s alone may leave it out)");
  }
  return out;
}

Scene read_csv_particles(const ParticleSourceSpec& src, const MaterialSpec& material, const SceneSpec& spec,
                         std::vector<std::size_t>& lines) {
  const CsvTable table =
      read_csv_table(src.file, {"x", "y", "z", "diameter"}, {"vx", "vy", "vz", "wx", "wy", "wz", "mass"}, {"material"});
  if (table.rows() == 0)
    fail(src.place, "[[particles]] file: " + src.file.string() +
                        ": no particle rows (after the header there are only blank or comment lines)");
  const bool has_v = table.has("vx") || table.has("vy") || table.has("vz");
  const bool has_w = table.has("wx") || table.has("wy") || table.has("wz");
  if (has_v && !(table.has("vx") && table.has("vy") && table.has("vz")))
    fail(src.place, src.file.string() + ": give all of vx, vy, vz or none");
  if (has_w && !(table.has("wx") && table.has("wy") && table.has("wz")))
    fail(src.place, src.file.string() + ": give all of wx, wy, wz or none");
  const bool has_mass = table.has("mass");
  // Masses from the mass column, else from the density of each row's
  // [[material]], else from [material] density.
  const std::vector<std::uint32_t> row_material = csv_row_materials(table, src, spec);
  if (!has_mass && row_material.empty())
    need(material.density, material, "density", src.place, "a CSV source without a mass column");
  Scene scene;
  scene.particles.reserve(table.rows());
  lines.resize(table.rows());
  for (std::size_t r = 0; r < table.rows(); ++r) {
    lines[r] = table.line_of(r);
    ParticleSpec p;
    p.position = Vec3(table.at(r, "x"), table.at(r, "y"), table.at(r, "z"));
    p.diameter = table.at(r, "diameter");
    if (has_v) p.velocity = Vec3(table.at(r, "vx"), table.at(r, "vy"), table.at(r, "vz"));
    if (has_w) p.angular_velocity = Vec3(table.at(r, "wx"), table.at(r, "wy"), table.at(r, "wz"));
    const double d = p.diameter;
    if (!(d > 0.0))
      fail(src.place, src.file.string() + ":" + std::to_string(table.line_of(r)) +
                          ": column \"diameter\": must be > 0, got " + format_g(d));
    const double density =
        row_material.empty() ? material.density.value_or(0.0) : spec.materials[row_material[r]].material.density;
    p.mass = has_mass ? table.at(r, "mass") : density * std::numbers::pi * d * d * d / 6.0;
    p.inertia = p.mass * d * d / 10.0;
    try {
      scene.particles.add(p);
    } catch (const std::invalid_argument& e) {
      fail(src.place, src.file.string() + ":" + std::to_string(table.line_of(r)) + ": " + e.what());
    }
    scene.particles.material.back() = row_material.empty() ? src.material_index : row_material[r];
  }
  return scene;
}

/// The solid torus of a source: the material's values, and d from
/// target_particles when given.
SolidTorusParameters solid_parameters(const ParticleSourceSpec& src, const MaterialSpec& material) {
  SolidTorusParameters p = src.solid;
  if (material.density) p.density = *material.density;
  if (material.particle_modulus) p.particle_modulus = *material.particle_modulus;
  if (material.particle_poisson) p.particle_poisson = *material.particle_poisson;
  if (material.binder_modulus) p.binder_modulus = *material.binder_modulus;
  if (material.bond_radius_ratio) p.bond_radius_ratio = *material.bond_radius_ratio;
  if (src.target_particles) p.particle_diameter = solid_torus_diameter_for(p, *src.target_particles);
  return p;
}

/// The periodic axes a packing fills: those of a periodic [domain], whose
/// cell its box region must equal on them (docs/model.md §21.3).
std::array<bool, 3> packing_periodic_axes(const ParticleSourceSpec& src, const SceneSpec& spec) {
  if (!spec.domain || !spec.domain->any_periodic()) return {false, false, false};
  const DomainSpec& d = *spec.domain;
  const PackingRegion& r = src.packing.region;
  bool fits = r.kind == PackingRegionKind::box;
  for (int a = 0; a < 3 && fits; ++a)
    fits = !d.periodic[a] || (r.lower[a] == d.lower[a] && r.upper[a] == d.upper[a]);
  if (!fits)
    fail(src.place, "[[particles]] region: with a periodic [domain], a packing's region must be \"box\" with lower "
                    "and upper equal to the [domain]'s on its periodic axes (the packing fills the periodic cell)");
  return d.periodic;
}

/// One source's particles (and its own neighbour bonds); a CSV source's
/// row lines into `lines`.
Scene generate(const ParticleSourceSpec& src, const MaterialSpec& material, const SceneSpec& spec,
               std::vector<std::size_t>& lines, BuiltScene& out, const GenesisProgress& progress) {
  try {
    switch (src.kind) {
      case SourceKind::fcc_block: {
        FccBlockParameters p = src.fcc;
        p.density = spec.materials.at(src.material_index).material.density;
        return make_fcc_block(p);
      }
      case SourceKind::chain: {
        ChainParameters p = src.chain;
        p.density = spec.materials.at(src.material_index).material.density;
        return make_chain(p);
      }
      case SourceKind::packing: {
        PackingReport report;
        Scene s = make_packing(src.packing, spec.materials.at(src.material_index).material.density,
                               packing_periodic_axes(src, spec), &report, progress);
        add_packing_report(report, out.notes, out.packing_json);
        return s;
      }
      case SourceKind::ring_torus:
        return make_ring_torus(src.ring);
      case SourceKind::solid_torus:
        return make_solid_torus(solid_parameters(src, material));
      case SourceKind::box_lattice: {
        LatticeParameters p = src.lattice;
        if (material.density) p.density = *material.density;
        Scene s = make_lattice(p);
        for (std::size_t i = 0; i < s.particles.size(); ++i) {
          s.particles.position[i] += src.origin;
          s.particles.reference_position[i] += src.origin;
        }
        return s;
      }
      case SourceKind::csv:
        return read_csv_particles(src, material, spec, lines);
    }
  } catch (const SceneError&) {
    throw;
  } catch (const std::exception& e) {
    fail(src.place, e.what());
  }
  fail(src.place, "unknown particle source");
}

/// Hertz stiffnesses of docs/model.md §7 for radius r.
SolidTorusConstants hertz_constants(const MaterialSpec& m, double r, const SourcePlace& user, const std::string& what) {
  SolidTorusParameters p;
  p.particle_modulus = need(m.particle_modulus, m, "particle_modulus", user, what);
  p.particle_poisson = need(m.particle_poisson, m, "particle_poisson", user, what);
  p.particle_diameter = 2.0 * r;
  return solid_torus_constants(p);
}

// ------------------------------------------------------------- sizes

/// count_scene with each source's particle count, for messages.
struct SourceCounts {
  SceneSizes sizes;
  std::vector<std::uint64_t> particles;  ///< per [[particles]] table
  std::uint64_t clump_particles = 0;
};

/// Ring neighbours within r_i + r_j + skin: chords D_t sin(pi k/N) < D_p +
/// skin, for k up to N/2 (an estimate: the exact count comes once built).
std::uint64_t ring_pairs(const RingTorusParameters& p, double skin) {
  const std::uint64_t n = p.particles;
  const double pi = std::numbers::pi;
  const double dp = p.torus_diameter * std::sin(pi / static_cast<double>(n));
  const double ratio = (dp + skin) / p.torus_diameter;
  if (!(ratio < 1.0)) return n * (n - 1) / 2;
  // The largest k with sin(pi k/n) < ratio, k <= n/2.
  const auto k = std::min<std::uint64_t>(
      n / 2, static_cast<std::uint64_t>(std::floor(std::asin(ratio) * static_cast<double>(n) / pi)));
  return k * n - (2 * k == n ? n / 2 : 0);
}

/// Pairs of the simple cubic lattice closer than d + skin (exact up to 64
/// spacings, a volume estimate beyond).
std::uint64_t lattice_pairs(const LatticeParameters& p, double skin) {
  const double spacing = p.spacing_ratio * p.diameter, cutoff = p.diameter + skin;
  const std::int64_t n = static_cast<std::int64_t>(p.per_side);
  const double reach = cutoff / spacing;
  const double all = 0.5 * static_cast<double>(n * n * n) * static_cast<double>(n * n * n - 1);
  if (!(reach <= 64.0))
    return static_cast<std::uint64_t>(
        std::min(all, 0.5 * static_cast<double>(n * n * n) * 4.19 * reach * reach * reach));
  const std::int64_t m = std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(std::ceil(reach)));
  std::uint64_t pairs = 0;
  for (std::int64_t a = 0; a <= m; ++a)
    for (std::int64_t b = -m; b <= m; ++b)
      for (std::int64_t c = -m; c <= m; ++c) {
        if (a == 0 && (b < 0 || (b == 0 && c <= 0))) continue;  // each pair once
        const double d2 = static_cast<double>(a * a + b * b + c * c) * spacing * spacing;
        if (!(d2 < cutoff * cutoff)) continue;
        pairs += static_cast<std::uint64_t>((n - a) * (n - std::abs(b)) * (n - std::abs(c)));
      }
  return pairs;
}

/// Lattice vectors of the FCC lattice of nearest-neighbour distance d shorter
/// than d + skin (12 for a skin below (sqrt(2) - 1) d).
std::uint64_t fcc_shell(double d, double skin) {
  const double s = d / std::sqrt(2.0), cutoff = d + skin;
  const int m = static_cast<int>(std::min(50.0, std::ceil(cutoff / s)));
  std::uint64_t count = 0;
  for (int i = -m; i <= m; ++i)
    for (int j = -m; j <= m; ++j)
      for (int k = -m; k <= m; ++k)
        if (((i + j + k) & 1) == 0 && (i || j || k) && (i * i + j * j + k * k) * s * s < cutoff * cutoff) ++count;
  return count;
}

/// The solid torus of a source when it is far too large for the memory
/// (max_particles, 0: no limit) to be worth counting site by site row: its
/// parameters with d from the volume (target_particles), and its counts
/// from the volume 2 pi^2 (D_t/2) ((D_tube - d)/2)^2 at sqrt(2)/d^3 sites per
/// volume, 6 bonds a site. nullopt when it may fit: count it exactly.
std::optional<std::pair<SolidTorusParameters, SolidTorusCounts>> solid_far_too_large(const ParticleSourceSpec& src,
                                                                                     std::uint64_t max_particles) {
  if (max_particles == 0) return std::nullopt;
  SolidTorusParameters p = src.solid;
  const auto volume = [&](double d) {
    return 2.0 * std::numbers::pi * std::numbers::pi * 0.5 * p.major_diameter *
           std::pow(0.5 * (p.tube_diameter - d), 2);
  };
  double sites = 0.0;
  if (src.target_particles) {
    if (static_cast<double>(*src.target_particles) <= 2.0 * static_cast<double>(max_particles)) return std::nullopt;
    p.particle_diameter = std::cbrt(volume(0.0) * std::sqrt(2.0) / static_cast<double>(*src.target_particles));
    sites = static_cast<double>(*src.target_particles);
  } else {
    validate(p);
    sites = volume(p.particle_diameter) * std::sqrt(2.0) / std::pow(p.particle_diameter, 3);
    if (!(sites > 2.0 * static_cast<double>(max_particles))) return std::nullopt;
  }
  SolidTorusCounts c;
  c.sites = static_cast<std::uint64_t>(std::min(sites, 1e18));
  c.bonds = 6 * c.sites;
  c.lattice_cells = 7 * c.sites;
  return std::pair{p, c};
}

SourceCounts count_sources(const SceneSpec& spec, std::uint64_t max_particles) {
  SourceCounts out;
  SceneSizes& s = out.sizes;
  s.implicit = spec.run.map == IntegratorMap::implicit;
  const MaterialSpec& material = spec.material;
  const bool generator_bonds = spec.bonds.pairs == BondPairs::generator;
  // The skin as the contact settings will have it, from the smallest
  // diameter the generators and clumps give (CSV diameters are read later).
  double d_min = std::numeric_limits<double>::infinity();
  std::vector<double> diameters(spec.sources.size(), 0.0);
  for (std::size_t k = 0; k < spec.sources.size(); ++k) {
    const ParticleSourceSpec& src = spec.sources[k];
    try {
      if (src.kind == SourceKind::ring_torus)
        diameters[k] = src.ring.torus_diameter * std::sin(std::numbers::pi / static_cast<double>(src.ring.particles));
      if (src.kind == SourceKind::solid_torus) {
        const auto rough = solid_far_too_large(src, max_particles);
        diameters[k] = rough ? rough->first.particle_diameter : solid_parameters(src, material).particle_diameter;
      }
      if (src.kind == SourceKind::box_lattice) diameters[k] = src.lattice.diameter;
      if (src.kind == SourceKind::fcc_block) diameters[k] = src.fcc.spacing;
      if (src.kind == SourceKind::chain) diameters[k] = src.chain.diameter;
      if (src.kind == SourceKind::packing) diameters[k] = SizeSampler(src.packing.sizes).smallest();
    } catch (const std::exception& e) {
      fail(src.place, e.what());
    }
    if (diameters[k] > 0.0) d_min = std::min(d_min, diameters[k]);
  }
  for (const ClumpSpec& c : spec.clumps)
    for (const double d : c.diameters) d_min = std::min(d_min, d);
  const double skin = !spec.contact.given    ? 0.0
                      : spec.contact.skin    ? *spec.contact.skin
                      : std::isfinite(d_min) ? spec.contact.skin_fraction * d_min
                                             : 0.0;
  const auto contact_pairs = [&](std::uint64_t pairs) { return spec.contact.given ? pairs : 0; };
  for (std::size_t k = 0; k < spec.sources.size(); ++k) {
    const ParticleSourceSpec& src = spec.sources[k];
    std::uint64_t n = 0;
    try {
      switch (src.kind) {
        case SourceKind::ring_torus:
          n = src.ring.particles;
          if (generator_bonds) s.bonds += n;
          s.contact_pairs += contact_pairs(ring_pairs(src.ring, skin));
          break;
        case SourceKind::solid_torus: {
          const auto rough = solid_far_too_large(src, max_particles);
          const SolidTorusCounts c = rough ? rough->second : solid_torus_counts(solid_parameters(src, material));
          n = c.sites;
          if (generator_bonds) s.bonds += c.bonds;
          s.contact_pairs += contact_pairs(c.bonds * fcc_shell(diameters[k], skin) / 12);
          // The lattice index, and the sites before the particles are made.
          s.build_scratch = std::max(s.build_scratch, 4 * c.lattice_cells + 24 * c.sites);
          break;
        }
        case SourceKind::box_lattice: {
          if (src.lattice.per_side > 1625)
            throw std::invalid_argument("lattice scene: per_side must keep per_side^3 below 2^32");
          n = static_cast<std::uint64_t>(src.lattice.per_side) * src.lattice.per_side * src.lattice.per_side;
          s.contact_pairs += contact_pairs(lattice_pairs(src.lattice, skin));
          s.build_scratch = std::max(s.build_scratch, 24 * n);  // the velocities
          break;
        }
        case SourceKind::fcc_block: {
          n = fcc_block_count(src.fcc);
          if (generator_bonds) s.bonds += fcc_block_bond_count(src.fcc);
          // Touching neighbours (12 a site, shared) plus the shell of the skin.
          s.contact_pairs += contact_pairs(6 * n * fcc_shell(diameters[k], skin) / 12);
          s.build_scratch = std::max(s.build_scratch, 24 * n + 8 * 6 * n);  // sites, then the bond search
          break;
        }
        case SourceKind::chain:
          n = src.chain.count;
          if (generator_bonds) s.bonds += n - 1;
          s.contact_pairs += contact_pairs(n);
          break;
        case SourceKind::packing:
          n = packing_count(src.packing, max_particles == 0 ? (1ull << 31) : 2 * max_particles);
          s.contact_pairs += contact_pairs(4 * n);  // a dense packing: about 6 contacts a particle, and the skin
          s.build_scratch = std::max(s.build_scratch, packing_scratch_bytes(n));
          break;
        case SourceKind::csv: {
          std::uint64_t bytes = 0;
          n = count_csv_rows(src.file, &bytes);
          // The file's text and its values (up to 11 columns) and lines.
          s.build_scratch = std::max(s.build_scratch, bytes + n * (11 * 8 + 8 + 8));
          break;
        }
      }
    } catch (const SceneError&) {
      throw;
    } catch (const std::exception& e) {
      fail(src.place, e.what());
    }
    out.particles.push_back(n);
    s.particles += n;
  }
  for (const ClumpSpec& c : spec.clumps) out.clump_particles += c.centres.size();
  s.particles += out.clump_particles;
  if (spec.bonds.pairs == BondPairs::csv) {
    std::uint64_t bytes = 0;
    const std::uint64_t rows = count_csv_rows(spec.bonds.file, &bytes);
    s.bonds += rows;
    s.build_scratch = std::max(s.build_scratch, bytes + rows * (2 * 8 + 8 + 16));
  }
  return out;
}

/// Which counting pass stopped at the room the memory limit leaves.
enum class Stopped { none, contact, distance };

/// Refuses the scene if its estimated peak memory is over the limit (or a
/// counting pass stopped: its count is then a lower bound of what does not
/// fit), naming the key that sizes it.
void check_memory(const SceneSpec& spec, const SourceCounts& counts, const SceneSizes& sizes, const MemoryLimit& limit,
                  bool files, std::uint64_t distance_bonds, Stopped stopped) {
  const MemoryEstimate e = estimate_memory(sizes, spec.output, files);
  if (stopped == Stopped::none && (limit.bytes == 0 || e.peak <= limit.bytes)) return;
  // What to change: bonds by distance or the contact skin if they weigh
  // more than the particles, else the largest source.
  const MemoryEstimate without_pairs = [&] {
    SceneSizes t = sizes;
    t.contact_pairs = 0;
    t.bonds -= distance_bonds;
    return estimate_memory(t, spec.output, files);
  }();
  const std::uint64_t extra = e.peak - std::min(e.peak, without_pairs.peak);
  const bool pairs_weigh = extra > without_pairs.peak;
  const bool distance_weighs = distance_bonds * kStateBytesPerBond > sizes.contact_pairs * kStateBytesPerPair;
  SourcePlace place;
  std::string key, advice;
  if (stopped == Stopped::distance || (stopped == Stopped::none && pairs_weigh && distance_weighs)) {
    place = spec.bonds.place;
    const bool gap = spec.bonds.pairs == BondPairs::gap;
    key = gap ? (spec.bonds.max_gap                  ? "[bonds] max_gap"
                 : spec.bonds.binder_volume_fraction ? "[bonds] binder_volume_fraction"
                                                     : "[bonds] max_gap_ratio")
              : "[bonds] distance";
    advice = gap ? "use a smaller gap" : "use a smaller distance";
  } else if (stopped == Stopped::contact || pairs_weigh) {
    place = spec.contact.place;
    key = spec.contact.skin ? "[contact] skin" : "[contact] skin_fraction";
    advice = "use a smaller skin, or particles that overlap less";
  } else {
    std::size_t big = 0;
    for (std::size_t k = 0; k < counts.particles.size(); ++k)
      if (counts.particles[k] > counts.particles[big]) big = k;
    if (counts.clump_particles > counts.particles[big]) {
      place = spec.clumps.front().place;
      key = "[[clump]] centres";
      advice = "use fewer clump members";
    } else {
      const ParticleSourceSpec& src = spec.sources[big];
      place = src.place;
      switch (src.kind) {
        case SourceKind::ring_torus:
          key = "[[particles]] count", advice = "use a smaller count";
          break;
        case SourceKind::solid_torus:
          if (src.target_particles)
            key = "[[particles]] target_particles", advice = "use a smaller target_particles";
          else
            key = "[[particles]] particle_diameter", advice = "use a larger particle_diameter";
          break;
        case SourceKind::box_lattice:
          key = "[[particles]] per_side", advice = "use a smaller per_side";
          break;
        case SourceKind::fcc_block:
          key = "[[particles]] cells", advice = "use fewer cells or a larger spacing";
          break;
        case SourceKind::chain:
          key = "[[particles]] count", advice = "use a smaller count";
          break;
        case SourceKind::packing:
          key = "[[particles]] region", advice = "use a smaller region or larger particles";
          break;
        case SourceKind::csv:
          key = "[[particles]] file", advice = "use a file with fewer rows";
          break;
      }
    }
  }
  const auto count = [](std::uint64_t v) { return format_g(static_cast<double>(v), 3); };
  const std::string allowed =
      format_bytes(limit.bytes) + " allowed (" + limit.source + "; dem --max-memory sets the limit)";
  if (stopped != Stopped::none) {
    const std::string what = stopped == Stopped::distance
                                 ? count(distance_bonds) + (spec.bonds.pairs == BondPairs::gap
                                                                ? std::string(" pairs within the bonding gap")
                                                                : " pairs closer than " + format_g(spec.bonds.distance))
                                 : count(sizes.contact_pairs) + " candidate contact pairs";
    fail(place, key + ": counting stopped at " + what + ", all that the memory limit leaves room for beside " +
                    count(sizes.particles) + " particles: the scene needs more than the " + allowed + "; " + advice);
  }
  fail(place, key + ": the scene needs about " + format_bytes(e.peak) +
                  " of memory (the estimated peak of dem run for " + count(sizes.particles) + " particles, " +
                  count(sizes.bonds) + " bonds and " + count(sizes.contact_pairs) + " contact pairs), more than the " +
                  allowed + ": " + advice);
}

// ------------------------------------------------------- validation

/// Lengths, the precision of positions, and overflow of the initial
/// kinetic energy, momenta and gravitational energy.
void check_particles(const ParticleStore& p, const Origins& origins, const Vec3& gravity, const SceneSpec& spec) {
  const std::size_t n = p.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto at = [&]() -> const SourcePlace& { return origins.of(i).place; };
    const double d = 2.0 * p.radius[i];
    if (!(d <= kMaxLength))
      fail(at(),
           origins.describe(i) + ": diameter " + format_g(d) + " is over 1e100 (squares of lengths would overflow)");
    const double x = p.position[i].cwiseAbs().maxCoeff();
    if (!(x <= kMaxLength))
      fail(at(), origins.position_keys(i) + ": " + origins.describe(i) + " is at " + point_text(p.position[i]) +
                     ", a coordinate over 1e100 (squares of lengths would overflow)");
    if (!(x <= kMaxPositionInRadii * p.radius[i]))
      fail(at(), origins.position_keys(i) + ": " + origins.describe(i) + " is at " + point_text(p.position[i]) + ", " +
                     format_g(x / p.radius[i], 3) + " radii from the origin: doubles there are " +
                     format_g(x * 0x1p-52, 3) + " apart, more than 1e-6 of its radius " + format_g(p.radius[i]) +
                     ", so its motion is lost to rounding; keep coordinates within " +
                     format_g(kMaxPositionInRadii, 2) + " radii of the origin");
  }
  // The sums of core/diagnostics.hpp, in plain double as the run makes them.
  double e_trans = 0.0, e_rot = 0.0, u_gravity = 0.0;
  Vec3 momentum = Vec3::Zero(), angular = Vec3::Zero();
  std::size_t worst = 0;
  double worst_size = -1.0;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 mv = p.mass[i] * p.velocity[i];
    const Vec3 jw = p.inertia[i] * p.angular_velocity[i];
    const double et = 0.5 * p.mass[i] * p.velocity[i].squaredNorm(),
                 er = 0.5 * p.inertia[i] * p.angular_velocity[i].squaredNorm();
    const double ug = -p.mass[i] * gravity.dot(p.position[i]);
    const Vec3 l = p.position[i].cross(mv) + jw;
    e_trans += et;
    e_rot += er;
    u_gravity += ug;
    momentum += mv;
    angular += l;
    const double size = std::max({et, er, std::abs(ug), mv.norm(), l.norm()});
    if (!(size <= worst_size)) worst = i, worst_size = std::isnan(size) ? INFINITY : size;
  }
  const char* what = !std::isfinite(e_trans)                       ? "the translational kinetic energy sum m|v|^2/2"
                     : !std::isfinite(e_rot)                       ? "the rotational kinetic energy sum J|w|^2/2"
                     : !momentum.allFinite()                       ? "the momentum sum m v"
                     : !angular.allFinite()                        ? "the angular momentum sum x cross m v + J w"
                     : !std::isfinite(u_gravity)                   ? "the gravitational energy -sum m g.x"
                     : !std::isfinite(e_trans + e_rot + u_gravity) ? "the total energy"
                                                                   : nullptr;
  if (what == nullptr) return;
  const std::size_t i = worst;
  fail(origins.of(i).place, origins.motion_keys(i) + ": " + what + " overflows at the start: " + origins.describe(i) +
                                " has mass " + format_g(p.mass[i]) + ", speed " + format_g(p.velocity[i].norm()) +
                                ", inertia " + format_g(p.inertia[i]) + ", spin " +
                                format_g(p.angular_velocity[i].norm()) +
                                (gravity.isZero() ? "" : ", gravity " + format_g(gravity.norm())) +
                                "; values this large cannot be integrated in double precision" +
                                (spec.gravity.isZero() ? "" : " (see also [gravity] acceleration)"));
}

/// Refuses, naming the key, values that overflow although each is in its
/// range (e.g. beta = 1e200, mu_r = 1e300, a temperature of 1e300):
///  - the particles' kinetic energy, sum m |v|^2 / 2 + J |w|^2 / 2;
///  - BDEM bond stiffnesses, E pi r_b^4 / (4 l0) at r_b = beta r_max, l0 = r_max;
///  - Hertz-Mindlin rolling: the spring 2.25 k_n mu_r^2 R*^2 at R* = r_max.
void check_overflowing_values(const SceneSpec& spec, const Scene& scene, const ParticleStore& particles) {
  const std::size_t n = particles.size();
  double total = 0.0, r_max = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    r_max = std::max(r_max, particles.radius[i]);
    total += 0.5 * particles.mass[i] * particles.velocity[i].squaredNorm() +
             0.5 * particles.inertia[i] * particles.angular_velocity[i].squaredNorm();
    if (!std::isfinite(total))
      fail(spec.sources.front().place, "the kinetic energy of the particles overflows (at particle " +
                                           std::to_string(particles.id[i]) +
                                           "): their velocity, speed, spin or temperature is too large");
  }
  // The contact laws' effective mass m_i m_j / (m_i + m_j) (effective_mass,
  // core/particle_store.hpp): the product of two masses must be finite.
  if (scene.contact_setup)
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(particles.mass[i] * particles.mass[i])) {
        const std::size_t m = particles.material.empty() ? spec.materials.size() : particles.material[i];
        fail(m < spec.materials.size() ? spec.materials[m].place : spec.sources.front().place,
             "density: the mass " + format_g(particles.mass[i]) + " of particle " + std::to_string(particles.id[i]) +
                 " overflows the contact's effective mass m_i m_j / (m_i + m_j) (a product of masses over 1e308); "
                 "use a smaller density");
      }
  if (scene.bond_setup)
    if (const auto over = scene.bond_setup->overflow())
      fail(over->first < spec.materials.size() ? spec.materials[over->first].place : spec.bonds.place, over->second);
  if (scene.contact_setup)
    if (const auto over = scene.contact_setup->overflow(particles)) {
      const std::size_t k = over->first, materials = spec.materials.size();
      fail(k < materials                               ? spec.materials[k].place
           : k - materials < spec.interactions.size() ? spec.interactions[k - materials].place
                                                      : spec.contact.place,
           over->second);
    }
}

/// Refuses, naming the key, what makes the first step of length h overflow:
///  - a particle's displacement |v| h past 1e100 (the coordinates' limit);
///  - group velocities: m |v|^2 / 2 and |v| h;
///  - group loads: the acceleration |f|/m and the work of a step of free
///    acceleration, |f|^2 h^2 / m (e.g. a group force of 1e300).
void check_first_step(const SceneSpec& spec, const Scene& scene, const ParticleStore& particles, double h) {
  const std::size_t n = particles.size();
  for (std::size_t i = 0; i < n; ++i)
    if (!(particles.velocity[i].norm() * h <= kMaxLength))
      fail(spec.sources.front().place, "particle " + std::to_string(particles.id[i]) +
                                           " moves past 1e100 in one step: its velocity, speed or temperature is "
                                           "too large");
  // A moving wall crosses at most a tenth of the smallest radius a step, so
  // that contacts build up over several steps (docs/model.md §11.8).
  double r_min = std::numeric_limits<double>::infinity();
  for (const double r : particles.radius) r_min = std::min(r_min, r);
  for (std::size_t k = 0; k < scene.wall_motions.size() && n > 0; ++k) {
    const WallMotion& m = scene.wall_motions[k];
    const bool servo = m.kind == WallMotion::Kind::servo;
    const double speed = servo ? m.servo_max_speed : m.velocity.norm();
    if (m.kind != WallMotion::Kind::fixed && !(speed * h <= 0.1 * r_min))
      fail(spec.walls[k].place, std::string("[[wall]] ") + (servo ? "servo_max_speed" : "velocity") + ": the wall moves " +
                                    format_g(speed * h) + " in one step of " + format_g(h) +
                                    ", more than a tenth of the smallest particle radius " + format_g(r_min) +
                                    "; give a smaller speed or time step");
  }
  std::vector<std::uint32_t> slot_of(n);
  for (std::size_t i = 0; i < n; ++i) slot_of[particles.id[i]] = static_cast<std::uint32_t>(i);
  for (std::size_t k = 0; k < scene.groups.size(); ++k) {
    const ParticleGroup& g = scene.groups[k];
    const double f = (g.force / static_cast<double>(g.ids.size())).norm();
    for (const std::uint32_t id : g.ids) {
      const double m = particles.mass[slot_of[id]];
      if (g.motion == ParticleGroup::Motion::velocity &&
          !(std::isfinite(0.5 * m * g.velocity.squaredNorm()) && std::isfinite(g.velocity.norm() * h)))
        fail(spec.groups[k].place, "[[group]] \"" + g.name + "\" velocity: " + point_text(g.velocity) +
                                       " makes the kinetic energy of particle " + std::to_string(id) +
                                       " overflow; give a smaller velocity");
      if (f > 0.0 && !(std::isfinite(f / m) && std::isfinite(f * f * h * h / m)))
        fail(spec.groups[k].place, "[[group]] \"" + g.name + "\" force: " + point_text(g.force) +
                                       " makes the acceleration of particle " + std::to_string(id) +
                                       " or the work of one step overflow; give a smaller force");
    }
  }
}

/// The scene key that sets a stiffness term of critical_time_step_of().
std::string stiffness_key(const std::string& term, const SceneSpec& spec, SourcePlace& place) {
  const bool direct = spec.bonds.stiffness.has_value();
  if (term == "contact") {
    place = spec.contact.place;
    return spec.contact.values.number("stiffness") ? "[contact] stiffness"
                                                   : "[material] particle_modulus (contact stiffness \"auto\")";
  }
  if (term == "wall") {
    place = spec.walls.empty() ? SourcePlace{spec.file} : spec.walls.front().place;
    for (const WallSpec& w : spec.walls)
      if (!w.values.number("stiffness")) return "[material] particle_modulus (wall stiffness \"auto\")";
    return "[[wall]] stiffness";
  }
  place = direct ? spec.bonds.place : spec.material.place.line > 0 ? spec.material.place : spec.bonds.place;
  if (place.line == 0 && !spec.sources.empty()) place = spec.sources.front().place;
  const std::string which = term == "bond axial" ? "axial" : term == "bond shear" ? "shear" : "bending";
  return direct ? "[bonds] " + which : "[material] binder_modulus (" + which + " stiffness)";
}

/// The largest radius of the particles (0 for none).
double r_max_of(const ParticleStore& particles) {
  double r = 0.0;
  for (const double x : particles.radius) r = std::max(r, x);
  return r;
}

/// The bond law of the scene with its constants (bonds/bond_laws.hpp).
std::shared_ptr<PreparedBondLaw> prepare_bond_law(const BondLawEntry& law, const SceneSpec& spec, double r_max) {
  BondLawInput in;
  for (const NamedMaterialSpec& m : spec.materials) {
    const SceneMaterial& x = m.material;
    in.materials.push_back({x.name, x.density, x.youngs_modulus, x.poisson_ratio, x.bond_radius_factor,
                            x.tensile_strength, x.shear_strength, x.tension_only});
  }
  in.r_max = r_max;
  try {
    return law.prepare(in);
  } catch (const std::invalid_argument& e) {
    fail(spec.bonds.place, std::string("[bonds] law = \"") + law.keyword + "\": " + e.what());
  }
}

/// The contact law of the scene with its constants (contact/contact_laws.hpp).
std::shared_ptr<PreparedContactLaw> prepare_contact_law(const ContactLawEntry& law, const SceneSpec& spec,
                                                        const ParticleStore& particles, double r_min, double r_max) {
  ContactLawInput in;
  in.particles = &particles;
  for (const NamedMaterialSpec& m : spec.materials) {
    const SceneMaterial& x = m.material;
    in.materials.push_back(
        {x.name, x.density, x.youngs_modulus, x.poisson_ratio, x.restitution, x.sliding_friction, x.rolling_friction});
    in.e_max = std::max(in.e_max, x.youngs_modulus);
  }
  for (const InteractionSpec& x : spec.interactions) in.pairs.push_back(x.pair);
  in.values = spec.contact.values;
  for (const WallSpec& w : spec.walls) in.wall_values.push_back(w.values);
  for (const MeshSpec& m : spec.meshes) in.mesh_values.push_back(m.values);
  in.contact_given = spec.contact.given;
  in.r_min = r_min;
  in.r_max = r_max;
  in.material_pair_stiffness = [&spec, r_min] {
    return hertz_constants(spec.material, r_min, spec.contact.place, "contact stiffness \"auto\"").k_contact;
  };
  in.material_wall_stiffness = [&spec, r_min](std::size_t w) {
    return hertz_constants(spec.material, r_min, spec.walls.at(w).place, "wall stiffness \"auto\"").k_wall;
  };
  in.material_mesh_stiffness = [&spec, r_min](std::size_t m) {
    return hertz_constants(spec.material, r_min, spec.meshes.at(m).place, "mesh stiffness \"auto\"").k_wall;
  };
  try {
    return law.prepare(in);
  } catch (const std::invalid_argument& e) {
    fail(spec.contact.place, std::string("[contact] law = \"") + law.keyword + "\": " + e.what());
  }
}

/// The symbol of a law's "stiffness" key in a table (K^pp, k_n), for messages.
std::string law_symbol(const ContactLawEntry& law, LawTable table, const std::string& otherwise) {
  for (const LawKey& k : law.keys)
    if (k.table == table && k.name == "stiffness") return k.symbol;
  return otherwise;
}

/// What the stages of build_scene() share: the scene file, the scene being
/// built (out.scene) and the sizes, origins and settings found so far.
struct SceneBuild {
  SceneBuild(const SceneSpec& s, const BuildOptions& o, BuiltScene& built) : spec(s), options(o), out(built) {}
  const SceneSpec& spec;
  const BuildOptions& options;
  BuiltScene& out;
  MemoryLimit limit;
  SourceCounts counts;
  SceneSizes sizes;
  Origins origins;
  /// Bond stiffness for bonds that do not keep their generator's.
  std::optional<BondStiffness> direct;
  bool from_material = false;
  std::size_t n = 0;        ///< particles of the [[particles]] sources (clump members follow)
  double r_min = 0.0;       ///< the smallest radius
  std::uint64_t distance_bonds = 0;
  double fraction = 0.1;    ///< of the critical step, with time_step = "auto"
};

/// Sizes first, and the limit they are held to: nothing is built that the limit has no room for.
void count_and_limit(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  const BuildOptions& options = b.options;
  const MaterialSpec& material = b.spec.material;
  const BondSpec& bonds = b.spec.bonds;
  const MemoryLimit& limit = b.limit;
  // Sizes first: nothing is built that the limit has no room for.
  // (A solid torus with 2 times more particles than the limit holds, at 236
  // bytes each, is not counted site row by site row: see solid_far_too_large.)
  b.counts = count_sources(spec, limit.bytes / 236);
  b.sizes = b.counts.sizes;
  check_memory(spec, b.counts, b.sizes, limit, options.output_files, 0, Stopped::none);

  // Bond stiffness for bonds that do not keep their generator's.
  b.direct = bonds.stiffness;
  b.from_material = !b.direct && (material.binder_modulus || material.bond_radius_ratio || bonds.binder_modulus);
  if (b.direct && bonds.binder_modulus)
    fail(bonds.place, "[bonds] binder_modulus: sets each bond's stiffnesses; it cannot be given with bending, axial "
                      "and shear");
}

/// Each [[particles]] source, its particles and (pairs = "generator") its own bonds.
void add_particle_sources(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  Scene& scene = b.out.scene;
  const MaterialSpec& material = b.spec.material;
  const BondSpec& bonds = b.spec.bonds;
  Origins& origins = b.origins;
  const std::optional<BondStiffness>& direct = b.direct;
  const bool from_material = b.from_material;
  for (const ParticleSourceSpec& src : spec.sources) {
    Origin origin;
    origin.first = scene.particles.size();
    origin.kind = src.kind;
    origin.place = src.place;
    origin.csv = src.file;
    Scene part = generate(src, material, spec, origin.lines, b.out, b.options.progress);
    // (A CSV source sets each row's own, from its material column.)
    if (src.kind != SourceKind::csv)
      std::fill(part.particles.material.begin(), part.particles.material.end(), src.material_index);
    origin.count = part.particles.size();
    if (scene.particles.size() + part.particles.size() > (1ull << 31))
      fail(src.place, "the scene has more than 2^31 particles");
    bool own_bonds = bonds.pairs == BondPairs::generator;
    // Laws without a stiffness per bond take their constants from [[material]].
    const bool bdem = !find_bond_law(bonds.law)->stiffness_per_bond;
    if (own_bonds && !bdem && (src.kind == SourceKind::fcc_block || src.kind == SourceKind::chain) && !direct)
      fail(bonds.place.line > 0 ? bonds.place : src.place,
           "Baker-Gonzalez bonds of an fcc_block or chain need stiffnesses: give bending, axial and shear in "
           "[bonds], or law = \"bdem\" to take them from the [[material]]");
    if (own_bonds && !bdem && src.kind == SourceKind::ring_torus && !direct && !from_material)
      fail(bonds.place.line > 0 ? bonds.place : src.place,
           "the ring's bonds need stiffnesses: give bending, axial and shear in [bonds], or "
           "binder_modulus and bond_radius_ratio in [material]");
    std::optional<BondStiffness> override = direct;
    if (own_bonds && !direct && from_material && src.kind == SourceKind::ring_torus) {
      const double r = part.particles.radius[0];
      const double beta = need(material.bond_radius_ratio, material, "bond_radius_ratio", bonds.place, "bond stiffness");
      override = binder_stiffness(
          need(material.binder_modulus, material, "binder_modulus", bonds.place, "bond stiffness"),
          0.5 * beta * (r + r), part.bonds.rest_length.empty() ? 2 * r : part.bonds.rest_length[0]);
    }
    try {
      append(scene, std::move(part), own_bonds, override);
    } catch (const std::invalid_argument& e) {
      fail(src.place, e.what());
    }
    origins.add(std::move(origin));
  }
  b.n = scene.particles.size();
}

/// Clumps: members appended after every source, so no bond reaches them.
void add_clumps(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  BuiltScene& out = b.out;
  const MaterialSpec& material = b.spec.material;
  Origins& origins = b.origins;
  ParticleStore& particles = b.out.scene.particles;
  // Clumps: members appended after every source, so no bond reaches them.
  for (const ClumpSpec& c : spec.clumps) {
    ClumpStart start;
    start.velocity = c.velocity;
    start.angular_velocity = c.angular_velocity;
    if (!c.member_mass) need(material.density, material, "density", c.place, "a [[clump]] without member_mass");
    Origin origin;
    origin.first = particles.size();
    origin.count = c.centres.size();
    origin.clump = true;
    origin.place = c.place;
    for (std::size_t k = 0; k < c.centres.size(); ++k) {
      ParticleSpec p;
      p.position = c.centres[k];
      p.diameter = c.diameters[k];
      const double d = p.diameter;
      p.mass = c.member_mass ? *c.member_mass : *material.density * std::numbers::pi * d * d * d / 6.0;
      p.inertia = p.mass * d * d / 10.0;
      const auto slot = static_cast<std::uint32_t>(particles.size());
      try {
        particles.add(p);
      } catch (const std::invalid_argument& e) {
        fail(c.place, e.what());
      }
      start.ids.push_back(slot);  // = the id: nothing is re-ordered yet
    }
    out.clumps.push_back(std::move(start));
    origins.add(std::move(origin));
  }
  if (particles.size() == 0) throw SceneError(spec.file + ": the scene has no particles");
}

/// Every particle: lengths, precision, energies that overflow.
void check_all_particles(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  Origins& origins = b.origins;
  ParticleStore& particles = b.out.scene.particles;
  // Every particle: lengths, precision, energies that overflow.
  check_particles(particles, origins, spec.gravity, spec);
}

/// The [[material]]s, the bond and contact laws with their constants, and the contact settings.
void prepare_laws(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  Scene& scene = b.out.scene;
  const BondSpec& bonds = b.spec.bonds;
  ParticleStore& particles = b.out.scene.particles;
  const std::size_t n_all = b.out.scene.particles.size();
  const ContactLawEntry& law = *find_contact_law(b.spec.contact.law);
  // Contact settings (the skin decides the contact pairs).
  b.r_min = *std::min_element(particles.radius.begin(), particles.radius.end());
  const double r_min = b.r_min;
  if (!spec.contact.given && n_all > 1)
    throw SceneError(spec.file +
                     ": the [contact] table is required: stiffness = K^pp (energy), "
                     "\"auto\" (Hertz, from [material]) or 0 (no contact)");
  // Part II: materials, laws, iBDEM's default penalty stiffness E_max r_max.
  for (const NamedMaterialSpec& m : spec.materials) scene.materials.push_back(m.material);
  scene.bond_law = bonds.law;
  scene.bond_setup = prepare_bond_law(*find_bond_law(bonds.law), spec, r_max_of(particles));
  scene.contact_law = spec.contact.law;
  const double r_max = *std::max_element(particles.radius.begin(), particles.radius.end());
  scene.contact_setup = prepare_contact_law(law, spec, particles, r_min, r_max);
  if (!spec.clumps.empty())
    if (const std::string conflict = scene.contact_setup->clump_conflict(); !conflict.empty())
      fail(spec.clumps.front().place, conflict);
  // The combined estimate of docs/model.md §7 (and the Part I providers) take K^pp.
  scene.contact.stiffness = law.combined_estimate ? scene.contact_setup->pair_stiffness() : 0.0;
  scene.contact.skin = spec.contact.skin ? *spec.contact.skin : spec.contact.skin_fraction * (2.0 * r_min);
  scene.contact.reorder_on_rebuild = spec.contact.reorder_on_rebuild;
  if (!(scene.contact.skin <= kMaxLength))
    fail(spec.contact.place, std::string(spec.contact.skin ? "[contact] skin" : "[contact] skin_fraction") +
                                 ": the skin " + format_g(scene.contact.skin) +
                                 " is over 1e100 (squares of lengths would overflow)");
  if (bonds.pairs == BondPairs::distance && !(bonds.distance <= kMaxLength))
    fail(bonds.place,
         "[bonds] distance: " + format_g(bonds.distance) + " is over 1e100 (squares of lengths would overflow)");
  if (bonds.pairs == BondPairs::gap && bonds.max_gap && !(*bonds.max_gap <= kMaxLength))
    fail(bonds.place,
         "[bonds] max_gap: " + format_g(*bonds.max_gap) + " is over 1e100 (squares of lengths would overflow)");
  if (const double k = scene.contact_setup->pair_stiffness(); !std::isfinite(k))
    fail(spec.contact.place, "[contact] stiffness: " + law_symbol(law, LawTable::contact, "K^pp") + " = " +
                                 format_g(k) + " is not finite");
}

/// [domain]: every particle starts in [lower, upper); a periodic cell is at
/// least two interaction ranges 2 r_max + skin wide across each periodic
/// axis (so that a particle meets at most one image of another), and
/// gravity has no component along a periodic axis (docs/model.md §20).
void check_domain(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  if (!spec.domain) return;
  const DomainSpec& d = *spec.domain;
  Scene& scene = b.out.scene;
  const ParticleStore& particles = scene.particles;
  static const char* const kAxis[3] = {"x", "y", "z"};
  for (std::size_t i = 0; i < particles.size(); ++i) {
    const Vec3& x = particles.position[i];
    if (!((x.array() >= d.lower.array()).all() && (x.array() < d.upper.array()).all()))
      fail(d.place, "[domain] lower, upper: " + b.origins.describe(particles.id[i]) + " at " + point_text(x) + " lies outside the domain [" + point_text(d.lower) + ", " +
                        point_text(d.upper) + ")");
  }
  if (!d.any_periodic()) return;
  const double r_max = r_max_of(particles);
  const double range = 2.0 * r_max + scene.contact.skin;
  for (int a = 0; a < 3; ++a) {
    if (!d.periodic[a]) continue;
    const double width = d.upper[a] - d.lower[a];
    if (!(width >= 2.0 * range))
      fail(d.place, std::string("[domain] periodic: the cell is ") + format_g(width) + " wide along " + kAxis[a] +
                        ", less than two interaction ranges 2 (2 r_max + skin) = " + format_g(2.0 * range) +
                        " (r_max " + format_g(r_max) + ", skin " + format_g(scene.contact.skin) +
                        "): make the cell wider or the skin smaller");
    if (spec.gravity[a] != 0.0)
      fail(d.place, std::string("[domain] periodic: gravity has a component along the periodic axis ") + kAxis[a] +
                        " (U_gravity would jump where particles cross the face); make that axis not periodic");
  }
  scene.cell = PeriodicCell::box(d.lower, d.upper, d.periodic);
  scene.velocity_gradient = d.velocity_gradient;
  if (d.target_stress)
    scene.cell_servo = CellServo{.axes = d.servo_axes,
                                 .target = *d.target_stress,
                                 .gain = d.servo_gain,
                                 .max_strain_rate = d.max_strain_rate};
  if (d.affine_velocity)
    for (std::size_t i = 0; i < particles.size(); ++i)
      scene.particles.velocity[i] += d.velocity_gradient * (particles.position[i] - d.lower);
}

/// In a periodic cell every bond is shorter than half the cell's smallest
/// width across a periodic axis, so that the minimum image the run finds
/// for it at every step is the one it was made with (docs/model.md §20.2).
void check_bonds_in_cell(SceneBuild& b) {
  const Scene& scene = b.out.scene;
  if (!scene.cell.any()) return;
  const double half = 0.5 * scene.cell.smallest_periodic_width();
  const BondList& bonds = scene.bonds;
  for (std::size_t k = 0; k < bonds.size(); ++k)
    if (!(bonds.rest_length[k] < half))
      fail(b.spec.bonds.place, "[bonds]: the bond between particles " + std::to_string(bonds.first[k]) + " and " +
                                   std::to_string(bonds.second[k]) + " is " + format_g(bonds.rest_length[k]) +
                                   " long, not shorter than half the periodic cell of [domain] (" + format_g(half) +
                                   "): make the cell larger or the bonds shorter");
}

/// Counts the close pairs, as many as the limit leaves room for.
void count_pairs(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  const BuildOptions& options = b.options;
  Scene& scene = b.out.scene;
  const BondSpec& bonds = b.spec.bonds;
  const MemoryLimit& limit = b.limit;
  const SourceCounts& counts = b.counts;
  SceneSizes& sizes = b.sizes;
  Origins& origins = b.origins;
  ParticleStore& particles = b.out.scene.particles;
  const std::size_t n = b.n;
  std::uint64_t& distance_bonds = b.distance_bonds;
  // Count the close pairs, as many as the limit leaves room for: contact
  // candidates and coincident particles over all particles, bonds by
  // distance over the sources' particles.
  {
    const auto cap = [&](std::uint64_t each) {
      if (limit.bytes == 0) return kMaxPairs;
      SceneSizes without = sizes;
      without.contact_pairs = 0;
      const std::uint64_t used = estimate_memory(without, spec.output, options.output_files).peak;
      return std::min(kMaxPairs, used >= limit.bytes ? 0 : (limit.bytes - used) / each);
    };
    const ClosePairs close = count_close_pairs(particles.position, particles.radius, scene.contact.skin, 0.0,
                                               cap(kStateBytesPerPair), 0, kCoincidence);
    if (close.coincident) {
      const auto [i, j] = *close.coincident;
      fail(origins.of(i).place, origins.describe(i) + " and " + origins.describe(j) + " are at one place, " +
                                    point_text(particles.position[i]) + " and " + point_text(particles.position[j]) +
                                    " (centres closer than 1e-6 of the sum of their radii): remove one of them");
    }
    sizes.contact_pairs = close.contact;
    if (close.over_cap) {
      if (close.contact > kMaxPairs)
        fail(spec.contact.place, "[contact] skin: more than 2^32 - 1 candidate contact pairs at the start");
      check_memory(spec, counts, sizes, limit, options.output_files, 0, Stopped::contact);
    }
  }
  if (bonds.pairs == BondPairs::distance || bonds.pairs == BondPairs::gap) {
    // Each bond costs its state, its VTK cells and its checkpoint bytes.
    SceneSizes more = sizes;
    more.bonds += 1u << 20;
    const std::uint64_t each =
        std::max<std::uint64_t>(1, (estimate_memory(more, spec.output, options.output_files).peak -
                                    estimate_memory(sizes, spec.output, options.output_files).peak) >>
                                       20);
    const std::uint64_t used = estimate_memory(sizes, spec.output, options.output_files).peak;
    const std::uint64_t room =
        limit.bytes == 0 ? kMaxPairs : std::min(kMaxPairs, used >= limit.bytes ? 0 : (limit.bytes - used) / each);
    const std::vector<double> zero(n, 0.0);
    // Gap bonds: the pairs within the widest gap (an upper bound for
    // max_gap_ratio), as contact candidates with that skin.
    const ClosePairs within =
        bonds.pairs == BondPairs::gap
            ? count_close_pairs(std::span(particles.position).first(n), std::span(particles.radius).first(n),
                                widest_bond_gap(bonds, particles.radius), 0.0, room, kMaxPairs, 0.0)
            : count_close_pairs(std::span(particles.position).first(n), zero, 0.0, bonds.distance, kMaxPairs, room, 0.0);
    distance_bonds = bonds.pairs == BondPairs::gap ? within.contact : within.within;
    sizes.bonds += distance_bonds;
    if (within.over_cap) {
      if (distance_bonds > kMaxPairs)
        fail(bonds.place, bonds.pairs == BondPairs::gap
                              ? std::string("[bonds] max_gap: more than 2^32 - 1 pairs within the bonding gap")
                              : "[bonds] distance: more than 2^32 - 1 pairs are closer than " + format_g(bonds.distance));
      check_memory(spec, counts, sizes, limit, options.output_files, distance_bonds, Stopped::distance);
    }
  }
  sizes.counted = true;
  check_memory(spec, counts, sizes, limit, options.output_files, distance_bonds, Stopped::none);
}

/// [bonds] with pairs = "gap" and the gap chosen: for binder_volume_fraction
/// the max_gap_ratio that gives it (docs/model.md §21.5), the bridges'
/// radius r_b that of the bonds: [bonds] bond_radius_ratio min(r_i, r_j),
/// else beta (r_i + r_j)/2 with [material] bond_radius_ratio or the
/// smaller [[material]] beta of the two (as the BDEM law's); noted in the
/// built scene's notes.
BondSpec chosen_gap(SceneBuild& b) {
  BondSpec bonds = b.spec.bonds;
  if (!bonds.binder_volume_fraction) return bonds;
  const std::optional<double> own = bonds.bond_radius_ratio, beta = b.spec.material.bond_radius_ratio;
  const Scene& scene = b.out.scene;
  const ParticleStore& particles = scene.particles;
  const auto radius = [&](std::uint32_t i, std::uint32_t j) {
    const double factor = own || beta ? beta.value_or(0.0)
                                      : std::min(scene.materials[particles.material[i]].bond_radius_factor,
                                                 scene.materials[particles.material[j]].bond_radius_factor);
    return listed_bond_radius(bonds, factor, particles.radius[i], particles.radius[j]);
  };
  try {
    bonds.max_gap_ratio = binder_gap_ratio(*bonds.binder_volume_fraction, std::span(particles.position).first(b.n),
                                           std::span(particles.radius).first(b.n), b.out.scene.cell, radius);
  } catch (const std::invalid_argument& e) {
    fail(bonds.place, e.what());
  }
  b.out.notes.push_back("bonds: binder_volume_fraction " + format_g(*bonds.binder_volume_fraction) +
                        " is reached at max_gap_ratio = " + format_g(*bonds.max_gap_ratio, 6));
  bonds.binder_volume_fraction.reset();
  return bonds;
}

/// Bonds found by distance or read from a CSV file ([bonds] pairs).
void add_listed_bonds(SceneBuild& b) {
  Scene& scene = b.out.scene;
  const MaterialSpec& material = b.spec.material;
  const BondSpec& bonds = b.spec.bonds;
  const std::optional<BondStiffness>& direct = b.direct;
  const bool from_material = b.from_material;
  ParticleStore& particles = b.out.scene.particles;
  const std::size_t n = b.n;
  // Bonds found by distance or read from a file.
  if (bonds.pairs == BondPairs::distance || bonds.pairs == BondPairs::gap || bonds.pairs == BondPairs::csv) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    if (bonds.pairs == BondPairs::gap) {
      try {
        pairs = gap_bond_pairs(chosen_gap(b), std::span(particles.position).first(n),
                               std::span(particles.radius).first(n), scene.cell);
      } catch (const std::invalid_argument& e) {
        fail(bonds.place, e.what());
      }
    } else if (bonds.pairs == BondPairs::distance) {
      // (In a periodic cell every bond is shorter than half the cell:
      // check_bonds_in_cell; a search as wide would find two images.)
      if (scene.cell.any() && !(bonds.distance < 0.5 * scene.cell.smallest_periodic_width()))
        fail(bonds.place, "[bonds] distance: " + format_g(bonds.distance) +
                              " is not shorter than half the periodic cell of [domain] (" +
                              format_g(0.5 * scene.cell.smallest_periodic_width()) +
                              "): bonds that long would reach two images of a particle");
      NeighbourSearch search(bonds.distance);
      search.set_cell(scene.cell);  // across periodic faces too
      const std::vector<double> zero(n, 0.0);
      search.rebuild(std::span(particles.position).first(n), zero);
      const NeighbourList& l = search.list();
      pairs.reserve(l.pair_count());
      for (std::size_t k = 0; k < l.pair_count(); ++k) pairs.emplace_back(l.owner[k], l.partner[k]);
    } else {
      const CsvTable table = read_csv_table(bonds.file, {"i", "j"}, {});
      if (table.rows() == 0)
        fail(bonds.place, "[bonds] file: " + bonds.file.string() +
                              ": no bond rows (after the header there are only blank or comment lines); "
                              "pairs = \"none\" bonds nothing");
      // (lower index, higher index, row) of every row, to find repeated pairs.
      std::vector<std::tuple<std::uint32_t, std::uint32_t, std::size_t>> seen;
      seen.reserve(table.rows());
      for (std::size_t r = 0; r < table.rows(); ++r) {
        const double i = table.at(r, "i"), j = table.at(r, "j");
        const std::string where = bonds.file.string() + ":" + std::to_string(table.line_of(r));
        if (!(i >= 0 && j >= 0 && i < static_cast<double>(n) && j < static_cast<double>(n) && i == std::floor(i) &&
              j == std::floor(j)))
          fail(bonds.place, where + ": i and j must be particle indices in [0, " + std::to_string(n) + ")");
        if (i == j) fail(bonds.place, where + ": a particle cannot be bonded to itself");
        pairs.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j));
        seen.emplace_back(std::min(pairs.back().first, pairs.back().second),
                          std::max(pairs.back().first, pairs.back().second), r);
      }
      std::sort(seen.begin(), seen.end());
      // The repeat whose later row comes first in the file.
      std::size_t first_repeat = table.rows(), earlier = 0;
      for (std::size_t k = 1; k < seen.size(); ++k)
        if (std::get<0>(seen[k]) == std::get<0>(seen[k - 1]) && std::get<1>(seen[k]) == std::get<1>(seen[k - 1]) &&
            std::get<2>(seen[k]) < first_repeat) {
          std::size_t e = k - 1;  // the first row of this pair
          while (e > 0 && std::get<0>(seen[e - 1]) == std::get<0>(seen[k]) &&
                 std::get<1>(seen[e - 1]) == std::get<1>(seen[k]))
            --e;
          first_repeat = std::get<2>(seen[k]);
          earlier = std::get<2>(seen[e]);
        }
      if (first_repeat < table.rows()) {
        const auto [a, b] = pairs[first_repeat];
        const auto [c, d] = pairs[earlier];
        fail(bonds.place, bonds.file.string() + ":" + std::to_string(table.line_of(first_repeat)) + ": the pair " +
                              std::to_string(a) + "," + std::to_string(b) + " repeats line " +
                              std::to_string(table.line_of(earlier)) + " (" + std::to_string(c) + "," +
                              std::to_string(d) + ")" + (a == c ? "" : ", reversed") + ": list each bonded pair once");
      }
    }
    // Laws without a stiffness per bond (BDEM) take theirs from [[material]].
    const bool per_bond = find_bond_law(bonds.law)->stiffness_per_bond;
    if (per_bond && !direct && !from_material)
      fail(bonds.place,
           "bonds need stiffnesses: give bending, axial and shear in [bonds], or "
           "binder_modulus and bond_radius_ratio in [material]");
    scene.bonds.reserve(scene.bonds.size() + pairs.size());
    for (const auto& [i, j] : pairs) {
      // In a periodic cell, j's minimum image (docs/model.md §20.2).
      const Vec3 image =
          scene.cell.any() ? scene.cell.offset(scene.cell.nearest_shift(particles.position[i] - particles.position[j]))
                           : Vec3(Vec3::Zero());
      BondStiffness k;
      if (!per_bond) {
        // (BondStiffness{}: the law's provider sets each bond's constants.)
      } else if (direct) {
        k = *direct;
      } else {
        const double r_i = particles.radius[i], r_j = particles.radius[j];
        const double r0 = (particles.position[i] - (particles.position[j] + image)).norm();
        // [bonds] binder_modulus and bond_radius_ratio (both or neither), else [material]'s.
        const double beta = bonds.binder_modulus ? 0.0
                                                 : need(material.bond_radius_ratio, material, "bond_radius_ratio",
                                                        bonds.place, "bond stiffness");
        const double e_b = bonds.binder_modulus ? *bonds.binder_modulus
                                                : need(material.binder_modulus, material, "binder_modulus",
                                                       bonds.place, "bond stiffness");
        k = binder_stiffness(e_b, listed_bond_radius(bonds, beta, r_i, r_j), r0);
      }
      try {
        scene.bonds.add(particles, i, j, k, image);
      } catch (const std::invalid_argument& e) {
        fail(bonds.place, e.what());
      }
    }
  }
}

/// The [[wall]]s and gravity.
void add_walls_and_gravity(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  Scene& scene = b.out.scene;
  ParticleStore& particles = b.out.scene.particles;
  const std::size_t n_all = b.out.scene.particles.size();
  const ContactLawEntry& law = *find_contact_law(b.spec.contact.law);
  // Walls, gravity.
  for (const WallSpec& w : spec.walls) {
    Wall wall;
    wall.point = w.point;
    wall.normal = w.normal;
    wall.stiffness = scene.contact_setup->wall_stiffness(scene.walls.size());
    wall.material = w.material;
    if (!(w.point.cwiseAbs().maxCoeff() <= kMaxLength))
      fail(w.place, "[[wall]] point: " + point_text(w.point) + " has a coordinate over 1e100");
    if (!std::isfinite(wall.stiffness))
      fail(w.place, "[[wall]] stiffness: " + law_symbol(law, LawTable::wall, "K^pw") + " = " + format_g(wall.stiffness) +
                        " is not finite");
    for (std::size_t i = 0; i < n_all; ++i)
      if (wall.normal.dot(particles.position[i] - wall.point) < 0.0)
        fail(w.place, "particle " + std::to_string(i) + " (at " + format_g(particles.position[i].x()) + ", " +
                          format_g(particles.position[i].y()) + ", " + format_g(particles.position[i].z()) +
                          ") starts behind this wall");
    if (w.motion.kind == WallMotion::Kind::velocity && !(w.motion.velocity.cwiseAbs().maxCoeff() <= kMaxLength))
      fail(w.place, "[[wall]] velocity: " + point_text(w.motion.velocity) + " has a component over 1e100");
    scene.walls.push_back(wall);
  }
  // Names and motions, where a wall has either (else every wall is at rest
  // and named "wall<k>", as in scenes before them).
  const bool any = std::any_of(spec.walls.begin(), spec.walls.end(), [](const WallSpec& w) {
    return !w.motion.name.empty() || w.motion.kind != WallMotion::Kind::fixed;
  });
  if (any)
    for (std::size_t k = 0; k < spec.walls.size(); ++k) {
      scene.wall_motions.push_back(spec.walls[k].motion);
      // Unnamed walls take "wall<k>", which must not be a named wall's.
      for (std::size_t j = 0; j < spec.walls.size() && spec.walls[k].motion.name.empty(); ++j)
        if (spec.walls[j].motion.name == "wall" + std::to_string(k))
          fail(spec.walls[j].place, "[[wall]] name: \"wall" + std::to_string(k) + "\" is the default name of the [[wall]] at " +
                                        spec.walls[k].place.text() + " (give that one a name, or this one another)");
    }
  scene.gravity = spec.gravity;
  scene.viscous_damping = spec.viscous_damping;
}

/// Mesh m of the scene placed as its [[mesh]] keys say: scale, rotation, translation.
MeshWall place_mesh(const MeshSpec& spec, std::size_t m, const PreparedContactLaw& law,
                    std::vector<std::string>& warnings) {
  const std::string where = spec.place.text() + ": [[mesh]] \"" + spec.name + "\" file";
  MeshFileData data;
  try {
    data = read_mesh_file(spec.file);
  } catch (const SceneError& e) {
    throw SceneError(where + ": " + e.what());
  }
  const Mat3 rotation =
      Eigen::AngleAxisd(spec.rotation_angle_deg * std::numbers::pi / 180.0, spec.rotation_axis.normalized())
          .toRotationMatrix();
  for (Vec3& v : data.vertices) {
    v = rotation * (spec.scale * v) + spec.translate;
    if (!(v.allFinite() && v.cwiseAbs().maxCoeff() <= kMaxLength))
      throw SceneError(where + ": " + spec.file_text + ": a vertex placed by scale, rotation and translate has a "
                       "coordinate over 1e100 (or not finite)");
  }
  MeshWall wall;
  wall.name = spec.name;
  try {
    auto mesh = std::make_shared<TriangleMesh>(std::move(data.vertices), std::move(data.triangles));
    for (const DroppedTriangle& d : mesh->dropped())
      warnings.push_back(where + " " + spec.file_text + ": triangle " + std::to_string(d.index) + " (" +
                         point_text(d.corners[0]) + ", " + point_text(d.corners[1]) + ", " + point_text(d.corners[2]) +
                         ") dropped: " + d.reason);
    wall.mesh = std::move(mesh);
  } catch (const std::invalid_argument& e) {
    throw SceneError(where + ": " + spec.file_text + ": " + e.what());
  }
  wall.motion.centre = spec.rotation_centre ? *spec.rotation_centre : wall.mesh->centroid();
  wall.motion.velocity = spec.velocity;
  wall.motion.angular_velocity = spec.angular_velocity;
  wall.material = spec.material;
  wall.stiffness = law.mesh_stiffness(m);
  if (!std::isfinite(wall.stiffness))
    throw SceneError(spec.place.text() + ": [[mesh]] stiffness: " + format_g(wall.stiffness) + " is not finite");
  return wall;
}

/// The [[mesh]]es.
void add_meshes(SceneBuild& b) {
  for (std::size_t m = 0; m < b.spec.meshes.size(); ++m)
    b.out.scene.meshes.push_back(place_mesh(b.spec.meshes[m], m, *b.out.scene.contact_setup, b.out.warnings));
}

/// The [[group]]s, by id (= slot until the re-ordering), each particle held by at most one kinematic group and loaded by one.
void add_groups(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  Scene& scene = b.out.scene;
  ParticleStore& particles = b.out.scene.particles;
  const std::size_t n_all = b.out.scene.particles.size();
  // Groups, by id (= slot until the re-ordering below).
  for (const GroupSpec& g : spec.groups) {
    ParticleGroup group;
    group.name = g.name;
    group.motion = g.motion;
    group.velocity = g.velocity;
    group.force = g.force;
    for (std::size_t i = 0; i < n_all; ++i) {
      const bool in = g.box ? ((particles.position[i].array() >= g.box->first.array()).all() &&
                               (particles.position[i].array() <= g.box->second.array()).all())
                            : (i >= g.ids->first && i <= g.ids->second);
      if (in) group.ids.push_back(static_cast<std::uint32_t>(i));
    }
    if (group.ids.empty())
      fail(g.place, "[[group]] \"" + g.name + "\": " +
                        (g.box ? std::string("no particle centre lies in the box ") + point_text(g.box->first) + " to " +
                                     point_text(g.box->second)
                               : "no particle has an id in [" + std::to_string(g.ids->first) + ", " +
                                     std::to_string(g.ids->second) + "] (ids 0 to " + std::to_string(n_all - 1) + ")"));
    scene.groups.push_back(std::move(group));
  }
  {
    std::vector<std::uint32_t> kinematic_owner(n_all, 0), load_owner(n_all, 0);
    for (std::size_t k = 0; k < scene.groups.size(); ++k) {
      if (scene.groups[k].force != Vec3::Zero())
        for (const std::uint32_t id : scene.groups[k].ids) {
          if (load_owner[id] != 0)
            fail(spec.groups[k].place,
                 "[[group]] \"" + scene.groups[k].name + "\" force: particle " + std::to_string(id) +
                     " is already loaded by [[group]] \"" + scene.groups[load_owner[id] - 1].name + "\" (" +
                     spec.groups[load_owner[id] - 1].place.text() +
                     "); a particle takes the force of one group only: split the groups or add the forces");
          load_owner[id] = static_cast<std::uint32_t>(k + 1);
        }
      if (scene.groups[k].motion == ParticleGroup::Motion::free) continue;
      for (const std::uint32_t id : scene.groups[k].ids) {
        if (kinematic_owner[id] != 0)
          fail(spec.groups[k].place, "[[group]] \"" + scene.groups[k].name + "\": particle " + std::to_string(id) +
                                         " is already held by [[group]] \"" +
                                         scene.groups[kinematic_owner[id] - 1].name +
                                         "\" (a particle can be in one fixed or velocity group)");
        kinematic_owner[id] = static_cast<std::uint32_t>(k + 1);
      }
    }
  }
}

/// Bonds as every re-ordering leaves them, the particles sorted for locality; clumps validated.
void order_for_locality(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  BuiltScene& out = b.out;
  Scene& scene = b.out.scene;
  ParticleStore& particles = b.out.scene.particles;
  // Bonds as every re-ordering leaves them (each with first < second, sorted
  // by their ends), also without one: the parts of a decomposed run
  // (engine/partition.hpp) hold them so, and a bond taken the other way
  // round rounds differently.
  if (scene.contact.reorder_on_rebuild) {
    sort_for_locality(scene);
  } else {
    std::vector<std::uint32_t> same(scene.particles.size());
    std::iota(same.begin(), same.end(), 0u);
    renumber_and_sort_bonds(scene.bonds, same);
  }
  for (std::size_t k = 0; k < out.clumps.size(); ++k) {
    try {
      clump_at_rest(particles, slots_of_ids(particles, out.clumps[k].ids));  // validates the inertia before any run
    } catch (const std::invalid_argument& e) {
      fail(spec.clumps[k].place, e.what());
    }
  }
}

/// The critical time step and what sets it (docs/model.md §7, §14).
void estimate_critical_step(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  BuiltScene& out = b.out;
  Scene& scene = b.out.scene;
  ParticleStore& particles = b.out.scene.particles;
  const ContactLawEntry& law = *find_contact_law(b.spec.contact.law);
  double& fraction = b.fraction;
  // Time step and step count.
  out.map = spec.run.map;
  out.implicit = spec.run.implicit;
  out.output = spec.output;
  check_overflowing_values(spec, scene, particles);
  // A mesh's stiffness (K^pw) limits the step as a wall's.
  std::vector<Wall> stiff_walls = scene.walls;
  for (const MeshWall& m : scene.meshes) stiff_walls.emplace_back().stiffness = m.stiffness;
  out.critical = critical_time_step_of(particles, scene.bonds, scene.contact, stiff_walls);
  out.critical_time_step = out.critical.h;
  b.fraction = spec.run.time_step_fraction;
  const BondLawEntry& bond_law = *find_bond_law(scene.bond_law);
  if (!bond_law.combined_estimate || !law.combined_estimate) {
    // Each law's own limit (docs/model.md §14.5): the bond law's
    // (docs/model.md §9.6 for BDEM bonds), the contact law's (§11, §14);
    // the default step is 0.2 of it.
    out.critical = CriticalTimeStep{};
    out.critical.h = std::numeric_limits<double>::infinity();
    std::string source;
    bool per_particle = false;  // the bonds' limit is docs/model.md §7's estimate (its default fraction 0.1)
    if (const std::optional<StepLimit> own = scene.bond_setup->time_step_limit(particles, scene.bonds);
        own && own->h < out.critical.h) {
      out.critical.h = own->h;
      source = own->source;
    } else if (!own && bond_law.combined_estimate && scene.bonds.size() > 0) {
      // A law without a limit of its own (Baker-Gonzalez) beside a contact
      // law with one: its bonds' per-particle estimate, contact left out.
      const CriticalTimeStep bonded = critical_time_step_of(particles, scene.bonds, ContactSettings{});
      if (bonded.h < out.critical.h) {
        out.critical.h = bonded.h;
        source = "the " + bonded.term + " stiffness " + format_g(bonded.term_stiffness, 4) + " of the " +
                 scene.bond_law + " bonds of particle " + std::to_string(particles.id[bonded.particle]) + " (" +
                 (bonded.rotation ? "rotation" : "translation") + "; docs/model.md §7)";
        per_particle = true;
      }
    }
    // The contact law's own limit (contact/contact_laws.hpp).
    if (const std::optional<StepLimit> own = scene.contact_setup->time_step_limit(particles);
        own && own->h < out.critical.h) {
      out.critical.h = own->h;
      source = own->source;
      per_particle = false;
    }
    out.critical_time_step = out.critical.h;
    out.critical_source = source;
    if (!spec.run.time_step_fraction_given) fraction = per_particle ? kDefaultTimeStepFraction : 0.2;
  } else if (!out.critical.term.empty()) {
    SourcePlace place;
    const std::string key = stiffness_key(out.critical.term, spec, place);
    const std::size_t slot = out.critical.particle;
    out.critical_source = out.critical.term + " stiffness " + format_g(out.critical.term_stiffness, 4) +
                          " of particle " + std::to_string(particles.id[slot]) + " (" +
                          (out.critical.rotation ? "rotation" : "translation") + "; " + key + ")";
    if (!(out.critical.h > 0.0))
      fail(place, key + ": the " + out.critical.term + " stiffness of particle " + std::to_string(particles.id[slot]) +
                      " overflows (" + format_g(out.critical.stiffness) + " for mass " +
                      format_g(out.critical.rotation ? particles.inertia[slot] : particles.mass[slot]) +
                      "): the critical time step estimate is 0; use a smaller stiffness");
  }
}

/// The time step (given, or a fraction of the critical one), the step count and the memory estimate.
void choose_time_step(SceneBuild& b) {
  const SceneSpec& spec = b.spec;
  const BuildOptions& options = b.options;
  BuiltScene& out = b.out;
  Scene& scene = b.out.scene;
  SceneSizes& sizes = b.sizes;
  ParticleStore& particles = b.out.scene.particles;
  double& fraction = b.fraction;
  if (spec.run.time_step) {
    out.time_step = *spec.run.time_step;
    // The implicit integrator is stable at any step (docs/model.md §12.6).
    if (out.time_step > out.critical_time_step && out.map != IntegratorMap::implicit)
      fail(spec.run.place, "[run] time_step = " + format_g(out.time_step) +
                               " is over the stability limit: the critical time step estimate "
                               "(engine/time_step.hpp) is " +
                               format_g(out.critical_time_step) + ", set by the " + out.critical_source +
                               "; use a smaller step or time_step = \"auto\"");
  } else {
    if (!std::isfinite(out.critical_time_step))
      fail(spec.run.place,
           "[run] time_step = \"auto\" needs something stiff (bonds or contact); "
           "give the time step as a number");
    out.automatic_time_step = true;
    out.time_step = fraction * out.critical_time_step;
    if (!(out.time_step > 0.0))
      fail(spec.run.place, "[run] time_step = \"auto\": " + format_g(fraction) + " of " +
                               format_g(out.critical_time_step) + " is 0 in double precision");
  }
  out.time_step_fraction = out.time_step / out.critical_time_step;
  check_first_step(spec, scene, particles, out.time_step);
  try {
    out.steps = end_step_of(spec.run, out.time_step);
  } catch (const SceneError& e) {
    if (!out.automatic_time_step) throw;
    throw SceneError(std::string(e.what()) + "; its critical step " + format_g(out.critical_time_step) +
                     " is set by the " + out.critical_source);
  }
  sizes.bonds = scene.bonds.size();
  out.sizes = sizes;
  out.memory = estimate_memory(sizes, spec.output, options.output_files);
}

}  // namespace

SceneSizes count_scene(const SceneSpec& spec) { return count_sources(spec, 0).sizes; }

BuiltScene build_scene(const SceneSpec& spec, const BuildOptions& options) {
  BuiltScene out;
  out.file = spec.file;
  SceneBuild b(spec, options, out);
  b.limit = options.memory_limit ? *options.memory_limit : available_memory();
  out.memory_limit = b.limit;
  count_and_limit(b);
  add_particle_sources(b);
  add_clumps(b);
  check_all_particles(b);
  prepare_laws(b);
  check_domain(b);
  count_pairs(b);
  add_listed_bonds(b);
  check_bonds_in_cell(b);
  add_walls_and_gravity(b);
  add_meshes(b);
  add_groups(b);
  order_for_locality(b);
  estimate_critical_step(b);
  choose_time_step(b);
  return out;
}

std::uint64_t steps_to_time(double t, double h) {
  const double k = std::ceil(t / h * (1.0 - 1e-12));
  if (!(std::isfinite(t) && k < 9.0e15)) throw std::invalid_argument("end time / time step is too many steps");
  return static_cast<std::uint64_t>(std::max(0.0, k));
}

std::uint64_t end_step_of(const RunSpec& run, double h) {
  if (run.steps) return *run.steps;
  try {
    return std::max<std::uint64_t>(1, steps_to_time(*run.end_time, h));
  } catch (const std::invalid_argument&) {
    fail(run.place, "[run] end_time / time_step is too many steps");
  }
}

namespace {

/// The providers of a scene, in gather order: bonds, the contact law's pairs
/// and walls, gravity, viscous damping, loads.
ForceField scene_forces(Scene& s, double time_step) {
  ForceField f;
  if (!s.bond_setup) s.bond_setup = find_bond_law(s.bond_law)->prepare(BondLawInput{});
  f.add(s.bond_setup->make(s.particles, std::move(s.bonds)));
  if (!s.contact_setup) {  // a scene made in code: its law's keys from `contact` and `walls`
    ContactLawInput in;
    in.particles = &s.particles;
    in.values.numbers["stiffness"] = s.contact.stiffness;
    for (const Wall& w : s.walls) in.wall_values.emplace_back().numbers["stiffness"] = w.stiffness;
    s.contact_setup = find_contact_law(s.contact_law)->prepare(in);
  }
  ContactLawProviders contact = s.contact_setup->make(s.particles, std::move(s.walls), s.contact.skin, time_step);
  f.add(std::move(contact.pairs));
  if (!s.wall_motions.empty()) {
    auto* movable = dynamic_cast<MovableWalls*>(contact.walls.get());
    if (movable == nullptr) throw std::invalid_argument("[[wall]] name, velocity, servo_stress: this contact law's walls cannot move");
    movable->set_motions(std::move(s.wall_motions));
  }
  if (contact.walls) f.add(std::move(contact.walls));
  if (!s.meshes.empty()) {
    // The meshes' candidate lists are found again after a move of the
    // Verlet skin (or a tenth of the smallest radius where the skin is 0).
    double skin = s.contact.skin;
    if (!(skin > 0.0)) {
      skin = std::numeric_limits<double>::infinity();
      for (const double r : s.particles.radius) skin = std::min(skin, 0.1 * r);
      if (!(skin > 0.0 && std::isfinite(skin))) skin = 1.0;
    }
    f.add(s.contact_setup->make_meshes(s.particles, std::move(s.meshes), skin, time_step));
  }
  if (!s.gravity.allFinite()) throw std::invalid_argument("gravity is not finite");
  f.add(std::make_unique<GravityProvider>(s.gravity));
  if (s.viscous_damping > 0.0) f.add(std::make_unique<ViscousDampingProvider>(s.viscous_damping));
  std::vector<std::uint32_t> load_ids;
  std::vector<Vec3> load_forces;
  for (const ParticleGroup& g : s.groups) {
    if (g.force == Vec3::Zero()) continue;
    for (const std::uint32_t id : g.ids) {
      load_ids.push_back(id);
      load_forces.push_back(g.force / static_cast<double>(g.ids.size()));
    }
  }
  if (!load_ids.empty()) f.add(std::make_unique<LoadProvider>(s.particles, std::move(load_ids), std::move(load_forces)));
  // The periodic cell last: the providers before it keep their order.
  if (s.cell.any()) f.add(std::make_unique<CellProvider>(s.cell, s.velocity_gradient, s.cell_servo));
  f.set_reorder_on_rebuild(s.contact.reorder_on_rebuild);
  return f;
}

}  // namespace

AssembledScene assemble_scene(BuiltScene built) {
  Scene& s = built.scene;
  AssembledScene a;
  try {
    for (const ClumpStart& c : built.clumps)
      a.clumps.push_back(make_clump(s.particles, slots_of_ids(s.particles, c.ids), c.velocity, c.angular_velocity));
    a.forces = scene_forces(s, built.time_step);
    a.groups = std::move(s.groups);
    if (built.map == IntegratorMap::implicit) require_implicit_support(a.forces, !a.clumps.empty());
  } catch (const SceneError&) {
    throw;
  } catch (const std::exception& e) {
    throw SceneError(built.file + ": " + e.what());
  }
  a.particles = std::move(s.particles);
  a.map = built.map;
  a.implicit = built.implicit;
  a.time_step = built.time_step;
  return a;
}

namespace {

/// Flags the members of fixed and velocity groups kinematic in the store
/// before the Simulation's first force evaluation, so that it already takes
/// their contacts' m* as set_groups() will (ParticleStore::kinematic).
void mark_kinematic(ParticleStore& particles, const std::vector<ParticleGroup>& groups) {
  for (const ParticleGroup& g : groups) {
    if (g.motion == ParticleGroup::Motion::free || g.ids.empty()) continue;
    if (particles.kinematic.empty()) particles.kinematic.assign(particles.size(), 0);
    for (const std::uint32_t q : slots_of_ids(particles, g.ids, "group '" + g.name + "': id")) particles.kinematic[q] = 1;
  }
}

}  // namespace

Simulation make_simulation(BuiltScene built, Simulation::Start start) {
  AssembledScene a = assemble_scene(std::move(built));
  mark_kinematic(a.particles, a.groups);
  Simulation sim(std::move(a.particles), std::move(a.forces), std::move(a.clumps), a.map, a.time_step, 0, start);
  if (!a.groups.empty()) sim.set_groups(std::move(a.groups));
  sim.set_implicit_settings(a.implicit);
  return sim;
}

}  // namespace dem
