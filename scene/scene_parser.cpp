// Scene files (docs/scene-format.md): TOML read with toml++, every key
// checked for its type and range, unknown keys refused, each error naming the
// file, the line and the key.
#include <toml++/toml.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "core/format.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

std::string SourcePlace::text() const {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line) + ":" + std::to_string(column);
  return s;
}

namespace {

constexpr std::size_t kMaxSceneBytes = 16u << 20;

/// The shortest of 15 or 17 significant digits that reads back as v.
std::string format_number(double v) {
  const std::string short_form = format_g(v, 15);
  return std::stod(short_form) == v ? short_form : format_g(v, 17);
}

std::string describe(const toml::node& n) {
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

SourcePlace place_of(const std::string& file, const toml::source_region& r) {
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
    bool ok = std::isfinite(v);
    if (r == "positive") ok = ok && v > 0.0;
    if (r == "nonnegative") ok = ok && v >= 0.0;
    if (r == "fraction") ok = ok && v > 0.0 && v <= 1.0;
    if (r == "poisson") ok = ok && v > -1.0 && v < 0.5;
    if (!ok) {
      std::string expected = "a finite number";
      if (r == "positive") expected = "a finite number > 0";
      if (r == "nonnegative") expected = "a finite number >= 0";
      if (r == "fraction") expected = "a number in (0, 1]";
      if (r == "poisson") expected = "Poisson's ratio in (-1, 0.5)";
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

void read_run(TableReader& t, RunSpec& run) {
  run.place = t.place();
  if (const auto name = t.string("integrator")) {
    std::string s = *name;
    if (s.rfind("rrp", 0) == 0) s = s.substr(3);
    if (s != "23" && s != "25" && s != "27")
      t.fail(t.find("integrator"), "integrator",
             "expected \"rrp23\", \"rrp25\" or \"rrp27\", got \"" + *name + "\"");
    run.map = parse_integrator_map(s);
  }
  bool automatic = false;
  run.time_step = t.number_or_auto("time_step", "positive", automatic);
  if (const auto f = t.number("time_step_fraction", "fraction")) {
    if (run.time_step) t.fail(t.find("time_step_fraction"), "time_step_fraction",
                              "only applies with time_step = \"auto\"");
    run.time_step_fraction = *f;
  }
  run.end_time = t.number("end_time", "positive");
  run.steps = t.count("steps", 1ull << 53);
  if (const auto v = t.number("max_energy_drift", "positive")) run.max_energy_drift = *v;
  if (const auto v = t.number("warn_energy_drift", "positive")) run.warn_energy_drift = *v;
  // Unknown keys first: a misspelt end_time is reported as such, not as a
  // missing end time.
  t.finish();
  if (run.end_time.has_value() == run.steps.has_value())
    t.fail(nullptr, "", "give exactly one of end_time (time) and steps (a count)");
}

void read_output(TableReader& t, OutputSpec& out) {
  if (const auto v = t.count("vtk_every", 1ull << 53)) out.vtk_every = *v;
  if (const auto v = t.count("energy_every", 1ull << 53)) out.energy_every = *v;
  if (const auto v = t.count("checkpoint_every", 1ull << 53)) out.checkpoint_every = *v;
  t.finish();
}

void read_material(TableReader& t, MaterialSpec& m) {
  m.place = t.place();
  m.density = t.number("density", "positive");
  m.particle_modulus = t.number("particle_modulus", "positive");
  m.particle_poisson = t.number("particle_poisson", "poisson");
  m.binder_modulus = t.number("binder_modulus", "positive");
  m.bond_radius_ratio = t.number("bond_radius_ratio", "positive");
  t.finish();
}

template <class T>
void set_if(std::optional<T> v, T& field) {
  if (v) field = *v;
}

void read_source(TableReader& t, ParticleSourceSpec& s, const std::filesystem::path& base) {
  s.place = t.place();
  const auto kind = t.string("source");
  if (!kind) t.fail(nullptr, "source", "is required: \"ring_torus\", \"solid_torus\", \"box_lattice\" or \"csv\"");
  if (*kind == "ring_torus") {
    s.kind = SourceKind::ring_torus;
    RingTorusParameters& p = s.ring;
    p.wall = false;
    if (const auto n = t.count("count", 1u << 30)) p.particles = *n;
    set_if(t.number("torus_diameter", "positive"), p.torus_diameter);
    set_if(t.number("mass", "positive"), p.mass);
    set_if(t.number("inertia", "positive"), p.inertia);
    set_if(t.number("speed"), p.speed);
    set_if(t.number("tilt_deg"), p.tilt_deg);
    set_if(t.vector("spin"), p.spin);
    set_if(t.number("gap"), p.gap);
    if (p.particles < 3) t.fail(t.find("count"), "count", "a ring needs at least 3 particles");
  } else if (*kind == "solid_torus") {
    s.kind = SourceKind::solid_torus;
    SolidTorusParameters& p = s.solid;
    p.wall = false;
    set_if(t.number("major_diameter", "positive"), p.major_diameter);
    set_if(t.number("tube_diameter", "positive"), p.tube_diameter);
    set_if(t.number("particle_diameter", "positive"), p.particle_diameter);
    if (const auto n = t.count("target_particles", 1u << 30)) {
      if (t.has("particle_diameter"))
        t.fail(t.find("target_particles"), "target_particles", "give particle_diameter or target_particles, not both");
      if (*n < 1) t.fail(t.find("target_particles"), "target_particles", "must be at least 1");
      s.target_particles = *n;
    }
    set_if(t.number("speed"), p.speed);
    set_if(t.number("tilt_deg"), p.tilt_deg);
    set_if(t.vector("spin"), p.spin);
    set_if(t.number("gap", "nonnegative"), p.gap);
  } else if (*kind == "box_lattice") {
    s.kind = SourceKind::box_lattice;
    LatticeParameters& p = s.lattice;
    if (const auto n = t.count("per_side", 1000)) p.per_side = *n;
    if (p.per_side < 1) t.fail(t.find("per_side"), "per_side", "must be at least 1");
    set_if(t.number("diameter", "positive"), p.diameter);
    set_if(t.number("spacing_ratio", "positive"), p.spacing_ratio);
    set_if(t.number("temperature", "nonnegative"), p.temperature);
    if (const auto v = t.count("seed", UINT64_MAX >> 1)) p.seed = *v;
    set_if(t.vector("origin"), s.origin);
  } else if (*kind == "csv") {
    s.kind = SourceKind::csv;
    const auto file = t.string("file");
    if (!file || file->empty()) t.fail(nullptr, "file", "is required: a CSV file of x,y,z,diameter[,vx,vy,vz][,wx,wy,wz][,mass]");
    s.file = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file) : base / *file;
  } else {
    t.fail(t.find("source"), "source",
           "expected \"ring_torus\", \"solid_torus\", \"box_lattice\" or \"csv\", got \"" + *kind + "\"");
  }
  t.finish();
}

void read_bonds(TableReader& t, BondSpec& b, const std::filesystem::path& base) {
  b.place = t.place();
  if (const auto pairs = t.string("pairs")) {
    if (*pairs == "generator") b.pairs = BondPairs::generator;
    else if (*pairs == "distance") b.pairs = BondPairs::distance;
    else if (*pairs == "csv") b.pairs = BondPairs::csv;
    else if (*pairs == "none") b.pairs = BondPairs::none;
    else t.fail(t.find("pairs"), "pairs", "expected \"generator\", \"distance\", \"csv\" or \"none\", got \"" + *pairs + "\"");
  }
  const auto distance = t.number("distance", "positive");
  if (b.pairs == BondPairs::distance) {
    if (!distance) t.fail(nullptr, "distance", "is required with pairs = \"distance\" (a length)");
    b.distance = *distance;
  } else if (distance) {
    t.fail(t.find("distance"), "distance", "only applies with pairs = \"distance\"");
  }
  const auto file = t.string("file");
  if (b.pairs == BondPairs::csv) {
    if (!file || file->empty()) t.fail(nullptr, "file", "is required with pairs = \"csv\" (columns i,j)");
    b.file = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file) : base / *file;
  } else if (file) {
    t.fail(t.find("file"), "file", "only applies with pairs = \"csv\"");
  }
  const auto km = t.number("bending", "nonnegative"), ka = t.number("axial", "nonnegative"),
             ks = t.number("shear", "nonnegative");
  if (km || ka || ks) {
    if (!(km && ka && ks))
      t.fail(nullptr, "", "give all three of bending, axial and shear (energy), or none to take them from [material]");
    b.stiffness = BondStiffness{*km, *ka, *ks};
  }
  t.finish();
}

void read_contact(TableReader& t, ContactSpec& c) {
  c.place = t.place();
  c.given = true;
  bool automatic = false;
  c.stiffness = t.number_or_auto("stiffness", "nonnegative", automatic);
  if (!c.stiffness && !automatic) t.fail(nullptr, "stiffness", "is required: K^pp (energy) or \"auto\"");
  c.skin = t.number("skin", "nonnegative");
  if (const auto f = t.number("skin_fraction", "nonnegative")) {
    if (c.skin) t.fail(t.find("skin_fraction"), "skin_fraction", "give skin (a length) or skin_fraction, not both");
    c.skin_fraction = *f;
  }
  set_if(t.boolean("reorder_on_rebuild"), c.reorder_on_rebuild);
  t.finish();
}

void read_clump(TableReader& t, ClumpSpec& c) {
  c.place = t.place();
  const auto centres = t.vectors("centres", 100000);
  if (!centres) t.fail(nullptr, "centres", "is required: the member centres, [[x, y, z], ...]");
  c.centres = *centres;
  const auto diameters = t.numbers("diameters", c.centres.size());
  if (!diameters) t.fail(nullptr, "diameters", "is required: one diameter for all members, or one each");
  c.diameters = *diameters;
  c.member_mass = t.number("member_mass", "positive");
  set_if(t.vector("velocity"), c.velocity);
  set_if(t.vector("angular_velocity"), c.angular_velocity);
  t.finish();
}

void read_wall(TableReader& t, WallSpec& w) {
  w.place = t.place();
  const auto point = t.vector("point");
  const auto normal = t.vector("normal");
  if (!point) t.fail(nullptr, "point", "is required: a point of the plane, [x, y, z]");
  if (!normal) t.fail(nullptr, "normal", "is required: the normal pointing to the particles' side, [x, y, z]");
  // Scaled by its largest component first, so that neither huge nor tiny
  // components overflow or underflow the norm.
  const double largest = normal->cwiseAbs().maxCoeff();
  if (!(largest > 0.0)) t.fail(t.find("normal"), "normal", "must not be the zero vector");
  w.point = *point;
  w.normal = (*normal / largest).normalized();
  bool automatic = false;
  w.stiffness = t.number_or_auto("stiffness", "nonnegative", automatic);
  if (!w.stiffness && !automatic) t.fail(nullptr, "stiffness", "is required: K^pw (energy) or \"auto\"");
  t.finish();
}

/// Two walls facing away from each other with nothing between them.
void check_walls_enclose_something(const std::vector<WallSpec>& walls) {
  for (std::size_t a = 0; a < walls.size(); ++a)
    for (std::size_t b = a + 1; b < walls.size(); ++b) {
      const WallSpec &u = walls[a], &v = walls[b];
      if (u.normal.dot(v.normal) < -1.0 + 1e-12 && u.normal.dot(v.point - u.point) <= 0.0)
        throw SceneError(v.place.text() + ": [[wall]] " + std::to_string(b) +
                         " faces wall " + std::to_string(a) + " (" + u.place.text() +
                         ") from behind: the space between them is empty, so they trap nothing");
    }
}

}  // namespace

SceneSpec parse_scene_text(std::string_view text, const std::string& file,
                           const std::filesystem::path& base_folder) {
  if (text.size() > kMaxSceneBytes)
    throw SceneError(file + ": the scene is larger than 16 MiB");
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const SourcePlace p = place_of(file, e.source());
    throw SceneError(p.text() + ": not valid TOML: " + std::string(e.description()));
  }
  SceneSpec s;
  s.file = file;
  TableReader top(root, "top level", file);
  const auto table_of = [&](const std::string& key) -> const toml::table* {
    const toml::node* n = top.find(key);
    if (n == nullptr) return nullptr;
    if (!n->is_table()) top.fail(n, key, "expected a table [" + key + "], got " + describe(*n));
    return n->as_table();
  };
  const auto tables_of = [&](const std::string& key) {
    std::vector<const toml::table*> out;
    const toml::node* n = top.find(key);
    if (n == nullptr) return out;
    const toml::array* a = n->as_array();
    if (a == nullptr || !a->is_array_of_tables())
      top.fail(n, key, "expected tables [[" + key + "]], got " + describe(*n));
    for (const toml::node& e : *a) out.push_back(e.as_table());
    return out;
  };

  const toml::table* run = table_of("run");
  if (run == nullptr) throw SceneError(file + ": the [run] table is required (integrator, time_step, end_time or steps)");
  TableReader run_reader(*run, "run", file);
  read_run(run_reader, s.run);
  if (const toml::table* t = table_of("output")) {
    TableReader r(*t, "output", file);
    read_output(r, s.output);
  }
  if (const toml::table* t = table_of("material")) {
    TableReader r(*t, "material", file);
    read_material(r, s.material);
  }
  const auto sources = tables_of("particles");
  if (sources.empty()) throw SceneError(file + ": at least one [[particles]] table is required");
  if (sources.size() > 1024) throw SceneError(file + ": more than 1024 [[particles]] tables");
  for (const toml::table* t : sources) {
    TableReader r(*t, "[particles]", file);
    s.sources.emplace_back();
    read_source(r, s.sources.back(), base_folder);
  }
  bool any_generator = false;
  for (const ParticleSourceSpec& src : s.sources) any_generator |= src.kind != SourceKind::csv;
  if (!any_generator) s.bonds.pairs = BondPairs::none;
  if (const toml::table* t = table_of("bonds")) {
    TableReader r(*t, "bonds", file);
    read_bonds(r, s.bonds, base_folder);
  }
  if (const toml::table* t = table_of("contact")) {
    TableReader r(*t, "contact", file);
    read_contact(r, s.contact);
  }
  const auto walls = tables_of("wall");
  if (walls.size() > 1024) throw SceneError(file + ": more than 1024 [[wall]] tables");
  for (const toml::table* t : walls) {
    TableReader r(*t, "[wall]", file);
    s.walls.emplace_back();
    read_wall(r, s.walls.back());
  }
  check_walls_enclose_something(s.walls);
  const auto clumps = tables_of("clump");
  if (clumps.size() > 100000) throw SceneError(file + ": more than 100000 [[clump]] tables");
  for (const toml::table* t : clumps) {
    TableReader r(*t, "[clump]", file);
    s.clumps.emplace_back();
    read_clump(r, s.clumps.back());
  }
  if (const toml::table* t = table_of("gravity")) {
    TableReader r(*t, "gravity", file);
    const auto g = r.vector("acceleration");
    if (!g) r.fail(nullptr, "acceleration", "is required: g, [x, y, z] (length/time^2)");
    s.gravity = *g;
    r.finish();
  }
  top.finish();
  return s;
}

std::uint64_t regular_file_size(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) throw SceneError(path.string() + ": no such file");
  if (ec) throw SceneError(path.string() + ": cannot read: " + ec.message());
  if (status.type() == std::filesystem::file_type::directory)
    throw SceneError(path.string() + ": is a directory, not a file");
  if (status.type() != std::filesystem::file_type::regular)
    throw SceneError(path.string() + ": is not a regular file (a device, a pipe or a socket)");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw SceneError(path.string() + ": cannot read: " + ec.message());
  return size;
}

std::string read_text_file(const std::filesystem::path& path) {
  const std::uint64_t size = regular_file_size(path);
  if (size > kMaxSceneBytes) throw SceneError(path.string() + ": larger than 16 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError(path.string() + ": cannot open for reading");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (!in) throw SceneError(path.string() + ": cannot read");
  return text;
}

SceneSpec read_scene_file(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  return parse_scene_text(text, path.string(), path.parent_path());
}

}  // namespace dem
