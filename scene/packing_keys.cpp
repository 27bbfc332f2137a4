// The keys of [[particles]] source = "packing" (docs/scene-format.md).
#include "scene/packing_keys.hpp"

#include "scene/invalid_key.hpp"

namespace dem::scene_reading {

namespace {

/// A required, non-zero axis, normalised.
Vec3 read_axis(TableReader& t) {
  const auto a = t.vector("axis");
  if (!a) t.fail(nullptr, "axis", "is required: [x, y, z], the region's axis");
  if (!(a->norm() > 0.0) || !std::isfinite(a->norm())) t.fail(t.find("axis"), "axis", "must not be the zero vector");
  return a->normalized();
}

Vec3 required_vector(TableReader& t, const std::string& key, const char* what) {
  const auto v = t.vector(key);
  if (!v) t.fail(nullptr, key, std::string("is required: ") + what);
  return *v;
}

void read_region(TableReader& t, PackingRegion& r, const std::filesystem::path& base) {
  const auto kind = t.string("region");
  if (!kind) t.fail(nullptr, "region", "is required: \"box\", \"cylinder\", \"sphere\", \"torus\" or \"mesh\"");
  if (*kind == "box") {
    r.kind = PackingRegionKind::box;
    r.lower = required_vector(t, "lower", "[x, y, z], the box's lower corner");
    r.upper = required_vector(t, "upper", "[x, y, z], the box's upper corner");
  } else if (*kind == "cylinder") {
    r.kind = PackingRegionKind::cylinder;
    r.base = required_vector(t, "base", "[x, y, z], the centre of the cylinder's base");
    r.axis = read_axis(t);
    r.radius = t.required_number("radius", "positive");
    r.height = t.required_number("height", "positive");
  } else if (*kind == "sphere") {
    r.kind = PackingRegionKind::sphere;
    r.centre = required_vector(t, "centre", "[x, y, z], the sphere's centre");
    r.radius = t.required_number("radius", "positive");
  } else if (*kind == "torus") {
    r.kind = PackingRegionKind::torus;
    r.centre = required_vector(t, "centre", "[x, y, z], the torus's centre");
    r.axis = read_axis(t);
    r.major_radius = t.required_number("major_radius", "positive");
    r.minor_radius = t.required_number("minor_radius", "positive");
  } else if (*kind == "mesh") {
    r.kind = PackingRegionKind::mesh;
    const auto file = t.string("file");
    if (!file || file->empty()) t.fail(nullptr, "file", "is required: a closed STL or OBJ surface (region = \"mesh\")");
    r.file = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file) : base / *file;
    if (const auto scale = t.number("scale", "positive")) r.scale = *scale;
  } else {
    t.fail(t.find("region"), "region",
           "expected \"box\", \"cylinder\", \"sphere\", \"torus\" or \"mesh\", got \"" + *kind + "\"");
  }
}

/// A non-empty array of finite numbers.
std::vector<double> read_list(TableReader& t, const std::string& key, const char* what) {
  const toml::node* n = t.find(key);
  if (n == nullptr) t.fail(nullptr, key, std::string("is required: ") + what);
  const toml::array* a = n->as_array();
  if (a == nullptr || a->empty() || a->size() > 1000)
    t.fail(n, key, std::string("expected an array of 1 to 1000 numbers: ") + what);
  std::vector<double> out;
  for (const toml::node& e : *a) {
    if (!(e.is_integer() || e.is_floating_point()) || !std::isfinite(*e.value<double>()))
      t.fail(&e, key, "expected a finite number, got " + describe(e));
    out.push_back(*e.value<double>());
  }
  return out;
}

void read_sizes(TableReader& t, SizeDistribution& s) {
  const auto kind = t.string("size_distribution");
  if (!kind) t.fail(nullptr, "size_distribution", "is required: \"uniform\", \"lognormal\" or \"sieve\"");
  if (*kind == "uniform" || *kind == "lognormal") {
    s.kind = *kind == "uniform" ? SizeDistributionKind::uniform : SizeDistributionKind::lognormal;
    s.d_min = t.required_number("d_min", "positive");
    s.d_max = t.required_number("d_max", "positive");
    if (s.kind == SizeDistributionKind::lognormal) {
      s.median = t.required_number("median", "positive");
      s.sigma_ln = t.required_number("sigma_ln", "positive");
    }
  } else if (*kind == "sieve") {
    s.kind = SizeDistributionKind::sieve;
    s.sieve_sizes = read_list(t, "sieve_sizes", "the sieve sizes (length), ascending");
    s.sieve_passing = read_list(t, "sieve_passing", "percent passing by mass at each sieve size, rising to 100");
    if (const auto d = t.number("d_min", "positive")) s.d_min = *d;
  } else {
    t.fail(t.find("size_distribution"), "size_distribution",
           "expected \"uniform\", \"lognormal\" or \"sieve\", got \"" + *kind + "\"");
  }
}

void read_solid_fraction(TableReader& t, PackingParameters& p) {
  const toml::node* n = t.find("solid_fraction");
  if (n == nullptr) t.fail(nullptr, "solid_fraction", "is required: a number in (0, 0.74] or \"dense\"");
  if (n->is_string()) {
    if (*n->value<std::string_view>() != "dense")
      t.fail(n, "solid_fraction", "expected a number in (0, 0.74] or \"dense\", got " + describe(*n));
    p.solid_fraction.reset();
    return;
  }
  if (!(n->is_integer() || n->is_floating_point()))
    t.fail(n, "solid_fraction", "expected a number in (0, 0.74] or \"dense\", got " + describe(*n));
  p.solid_fraction = *n->value<double>();
}

void read_seed(TableReader& t, PackingParameters& p) {
  const toml::node* n = t.find("seed");
  if (n == nullptr) return;
  if (!n->is_integer() || *n->value<std::int64_t>() < 0)
    t.fail(n, "seed", "expected a whole number >= 0, got " + describe(*n));
  p.seed = static_cast<std::uint64_t>(*n->value<std::int64_t>());
}

}  // namespace

void read_packing_keys(TableReader& t, PackingParameters& p, const std::filesystem::path& base) {
  read_region(t, p.region, base);
  read_sizes(t, p.sizes);
  read_solid_fraction(t, p);
  read_seed(t, p);
  p.tile_particles = t.count("tile_particles");
  try {
    load_mesh_region(p.region);
    validate_packing(p);
  } catch (const InvalidKey& e) {
    t.fail(t.has(e.key()) ? t.find(e.key()) : nullptr, e.key(), e.problem());
  }
}

}  // namespace dem::scene_reading
