// Scene files (docs/scene-format.md): TOML read with toml++, every key
// checked for its type and range, unknown keys refused, each error naming the
// file, the line and the key.
#include <toml++/toml.h>

#include <array>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "core/format.hpp"
#include "engine/amg_preconditioner.hpp"
#include "scene/scene_spec.hpp"
#include "scene/packing_keys.hpp"
#include "scene/table_reader.hpp"

namespace dem {

std::string SourcePlace::text() const {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line) + ":" + std::to_string(column);
  return s;
}

namespace {

constexpr std::size_t kMaxSceneBytes = 16u << 20;

using namespace scene_reading;

void read_run(TableReader& t, RunSpec& run) {
  run.place = t.place();
  if (const auto name = t.string("integrator")) {
    std::string s = *name;
    if (s.rfind("rrp", 0) == 0) s = s.substr(3);
    if (s != "23" && s != "25" && s != "27" && s != "implicit")
      t.fail(t.find("integrator"), "integrator",
             "expected \"rrp23\", \"rrp25\", \"rrp27\" or \"implicit\", got \"" + *name + "\"");
    run.map = parse_integrator_map(s);
  }
  const bool implicit = run.map == IntegratorMap::implicit;
  // The implicit integrator's settings (docs/model.md §12.5); only with it.
  for (const char* key : {"newton_tolerance", "cg_tolerance_max", "max_newton_iterations", "max_cg_iterations",
                          "preconditioner", "hessian_blocks", "hessian_update", "event_tolerance", "implicit_scheme"})
    if (!implicit && t.has(key))
      t.fail(t.find(key), key, "only applies with integrator = \"implicit\"");
  if (const auto v = t.number("newton_tolerance", "positive")) {
    // A residual that moves a particle by a thousandth of its radius in a
    // step is as loose as a step stays meaningful (looser ones let Newton
    // stop before it has begun and can create energy).
    if (*v > kMaxNewtonTolerance)
      t.fail(t.find("newton_tolerance"), "newton_tolerance",
             "expected a number in (0, " + format_g(kMaxNewtonTolerance) + "] (the residual in radii per step), got " +
                 format_g(*v));
    run.implicit.newton_tolerance = *v;
  }
  if (const auto v = t.number("cg_tolerance_max", "fraction")) run.implicit.cg_tolerance_max = *v;
  if (const auto v = t.count("max_newton_iterations", 1000000)) {
    if (*v == 0) t.fail(t.find("max_newton_iterations"), "max_newton_iterations", "expected a count >= 1, got 0");
    run.implicit.max_newton_iterations = *v;
  }
  if (const auto v = t.count("max_cg_iterations", 100000000)) {
    if (*v == 0) t.fail(t.find("max_cg_iterations"), "max_cg_iterations", "expected a count >= 1, got 0");
    run.implicit.max_cg_iterations = *v;
  }
  if (const auto p = t.string("preconditioner")) {
    const PreconditionerEntry* found = nullptr;
    std::vector<std::string> names;
    for (const PreconditionerEntry& e : preconditioners()) {
      names.push_back(e.keyword);
      if (*p == e.keyword) found = &e;
    }
    if (found == nullptr)
      t.fail(t.find("preconditioner"), "preconditioner", "expected " + quoted_list(names) + ", got \"" + *p + "\"");
    else if (!found->available())
      t.fail(t.find("preconditioner"), "preconditioner", std::string(found->unavailable) + "; use \"block-jacobi\"");
    else
      run.implicit.preconditioner = found->code;
  }
  if (const auto b = t.string("hessian_blocks")) {
    if (*b == "projected") run.implicit.hessian_blocks = HessianBlocks::projected;
    else if (*b == "gauss-newton") run.implicit.hessian_blocks = HessianBlocks::gauss_newton;
    else if (*b == "exact") run.implicit.hessian_blocks = HessianBlocks::exact;
    else
      t.fail(t.find("hessian_blocks"), "hessian_blocks",
             "expected \"projected\", \"gauss-newton\" or \"exact\", got \"" + *b + "\"");
  }
  if (const auto u = t.string("hessian_update")) {
    if (*u == "every-iteration") run.implicit.hessian_update = HessianUpdate::every_iteration;
    else if (*u == "when-slow") run.implicit.hessian_update = HessianUpdate::when_slow;
    else
      t.fail(t.find("hessian_update"), "hessian_update",
             "expected \"every-iteration\" or \"when-slow\", got \"" + *u + "\"");
  }
  if (const auto m = t.string("implicit_scheme")) {
    if (*m == "backward-euler") run.implicit.scheme = ImplicitScheme::backward_euler;
    else if (*m == "midpoint") run.implicit.scheme = ImplicitScheme::midpoint;
    else
      t.fail(t.find("implicit_scheme"), "implicit_scheme",
             "expected \"backward-euler\" or \"midpoint\", got \"" + *m + "\"");
  }
  if (const auto v = t.number("event_tolerance", "nonnegative")) {
    // (A bond past its strength by half or more is no longer a located event.)
    if (*v >= 0.5)
      t.fail(t.find("event_tolerance"), "event_tolerance",
             "expected 0 (off) or a fraction of the strength below 0.5, got " + format_g(*v));
    run.implicit.event_tolerance = *v;
  }
  bool automatic = false;
  run.time_step = t.number_or_auto("time_step", "positive", automatic);
  // An implicit step may be any multiple of the explicit limit.
  if (const auto f = t.number("time_step_fraction", implicit ? "positive" : "fraction")) {
    if (run.time_step) t.fail(t.find("time_step_fraction"), "time_step_fraction",
                              "only applies with time_step = \"auto\"");
    run.time_step_fraction = *f;
    run.time_step_fraction_given = true;
  }
  run.end_time = t.number("end_time", "positive");
  run.steps = t.count("steps", 1ull << 53);
  if (const auto v = t.number("max_energy_drift", "positive")) run.max_energy_drift = *v;
  if (const auto v = t.number("warn_energy_drift", "positive")) run.warn_energy_drift = *v;
  if (!implicit && t.has("implicit_energy_rise"))
    t.fail(t.find("implicit_energy_rise"), "implicit_energy_rise", "only applies with integrator = \"implicit\"");
  if (const auto v = t.number("implicit_energy_rise", "positive")) run.implicit_energy_rise = *v;
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

/// [stress]: the box of stress.csv (engine/stress.hpp).
void read_stress(TableReader& t, OutputSpec& out) {
  const auto lower = t.vector("lower");
  if (!lower) t.fail(nullptr, "lower", "is required: the box's lower corner, [x, y, z] (length)");
  const auto upper = t.vector("upper");
  if (!upper) t.fail(nullptr, "upper", "is required: the box's upper corner, [x, y, z] (length)");
  t.finish();
  if (!((upper->array() > lower->array()).all()))
    t.fail(t.find("upper"), "upper", "must exceed lower on every axis (the box has no volume)");
  out.stress_box = StressBox{*lower, *upper};
}

/// std::array<bool, 3> from `key` (an array of three booleans), or nullopt.
std::optional<std::array<bool, 3>> read_axes(TableReader& t, const std::string& key) {
  const toml::node* n = t.find(key);
  if (n == nullptr) return std::nullopt;
  const toml::array* a = n->as_array();
  if (a == nullptr || a->size() != 3 || !a->is_homogeneous(toml::node_type::boolean))
    t.fail(n, key, "expected an array of three booleans [x, y, z], got " + describe(*n));
  std::array<bool, 3> axes{};
  for (std::size_t k = 0; k < 3; ++k) axes[k] = *a->get(k)->value<bool>();
  return axes;
}

/// [domain] target_stress, servo_axes, servo_gain, max_strain_rate: the
/// periodic-cell servo (docs/model.md §20.6).
void read_cell_servo(TableReader& t, DomainSpec& d) {
  const auto axes = read_axes(t, "servo_axes");
  const auto gain = t.number("servo_gain", "positive");
  const auto cap = t.number("max_strain_rate", "positive");
  d.target_stress = t.vector("target_stress");
  if (!d.target_stress) {
    for (const char* key : {"servo_axes", "servo_gain", "max_strain_rate"})
      if (t.has(key)) t.fail(t.find(key), key, "is given without target_stress (the periodic-cell servo's target)");
    return;
  }
  if (!d.any_periodic())
    t.fail(t.find("target_stress"), "target_stress", "needs a periodic cell (periodic = [...] with some axis true)");
  if (!gain) t.fail(nullptr, "servo_gain", "is required with target_stress: the servo's gain (1/(pressure time))");
  if (!cap) t.fail(nullptr, "max_strain_rate", "is required with target_stress: the servo's largest strain rate (1/time)");
  d.servo_gain = *gain;
  d.max_strain_rate = *cap;
  d.servo_axes = axes ? *axes : d.periodic;
  static const char* const kAxis[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    if (!d.servo_axes[a]) continue;
    if (!d.periodic[a])
      t.fail(t.find("servo_axes"), "servo_axes",
             std::string("controls axis ") + kAxis[a] + ", which is not periodic");
    if (d.velocity_gradient(a, a) != 0.0)
      t.fail(t.find("velocity_gradient"), "velocity_gradient",
             std::string("L_") + kAxis[a] + kAxis[a] + " is not zero, but the servo controls the stress along " +
                 kAxis[a] + " (servo_axes): leave it 0 or take the axis out of servo_axes");
  }
  if (!(d.servo_axes[0] || d.servo_axes[1] || d.servo_axes[2]))
    t.fail(t.find("servo_axes"), "servo_axes", "controls no axis");
}

/// [domain]: the box the particles start in, its periodic axes and the
/// velocity gradient of a periodic cell (docs/model.md §20).
void read_domain(TableReader& t, DomainSpec& d) {
  d.place = t.place();
  const auto lower = t.vector("lower");
  if (!lower) t.fail(nullptr, "lower", "is required: the domain's lower corner, [x, y, z] (length)");
  const auto upper = t.vector("upper");
  if (!upper) t.fail(nullptr, "upper", "is required: the domain's upper corner, [x, y, z] (length)");
  if (!((upper->array() > lower->array()).all()))
    t.fail(t.find("upper"), "upper", "must exceed lower on every axis (the domain has no volume)");
  d.lower = *lower;
  d.upper = *upper;
  if (const auto axes = read_axes(t, "periodic")) d.periodic = *axes;
  if (const auto rows = t.vectors("velocity_gradient", 3)) {
    if (rows->size() != 3)
      t.fail(t.find("velocity_gradient"), "velocity_gradient",
             "expected three rows [[L_xx, L_xy, L_xz], [L_yx, L_yy, L_yz], [L_zx, L_zy, L_zz]] (1/time)");
    for (int r = 0; r < 3; ++r) d.velocity_gradient.row(r) = (*rows)[static_cast<std::size_t>(r)].transpose();
    static const char* const kAxis[3] = {"x", "y", "z"};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        if (d.velocity_gradient(r, c) != 0.0 && !(d.periodic[r] && d.periodic[c]))
          t.fail(t.find("velocity_gradient"), "velocity_gradient",
                 std::string("L_") + kAxis[r] + kAxis[c] +
                     " is not zero, but it deforms the cell between axes that are not both periodic (periodic = "
                     "[" + (d.periodic[0] ? "true" : "false") + ", " + (d.periodic[1] ? "true" : "false") + ", " +
                     (d.periodic[2] ? "true" : "false") + "])");
  }
  if (const auto a = t.boolean("affine_velocity")) d.affine_velocity = *a;
  read_cell_servo(t, d);
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
  if (!kind)
    t.fail(nullptr, "source",
           "is required: \"ring_torus\", \"solid_torus\", \"box_lattice\", \"csv\", \"fcc_block\", \"chain\" or "
           "\"packing\"");
  if (const auto m = t.string("material")) s.material_name = *m;
  if (*kind == "fcc_block") {
    s.kind = SourceKind::fcc_block;
    FccBlockParameters& p = s.fcc;
    p.spacing = t.required_number("spacing", "positive");
    if (const toml::node* n = t.find("cells")) {
      const toml::array* a = n->as_array();
      if (a == nullptr || a->size() != 3) t.fail(n, "cells", "expected [nx, ny, nz], three whole numbers >= 1");
      for (std::size_t k = 0; k < 3; ++k) {
        const toml::node& e = *a->get(k);
        if (!e.is_integer() || *e.value<std::int64_t>() < 1 || *e.value<std::int64_t>() > 4096)
          t.fail(n, "cells", "expected [nx, ny, nz], three whole numbers in [1, 4096]");
        p.cells[k] = static_cast<std::uint32_t>(*e.value<std::int64_t>());
      }
    } else {
      t.fail(nullptr, "cells", "is required: [nx, ny, nz], the block in cube cells of side sqrt(2) spacing");
    }
    set_if(t.vector("rotation_axis"), p.rotation_axis);
    if (p.rotation_axis.norm() == 0.0) t.fail(t.find("rotation_axis"), "rotation_axis", "must not be the zero vector");
    set_if(t.number("rotation_angle"), p.rotation_angle_deg);
    set_if(t.vector("origin"), p.origin);
    p.lowest_z = t.number("lowest_z");
    if (p.lowest_z && t.has("origin")) t.fail(t.find("lowest_z"), "lowest_z", "give origin or lowest_z, not both");
    set_if(t.vector("velocity"), p.velocity);
    set_if(t.vector("angular_velocity"), p.angular_velocity);
    set_if(t.boolean("periodic"), p.periodic);
  } else if (*kind == "chain") {
    s.kind = SourceKind::chain;
    ChainParameters& p = s.chain;
    const auto n = t.count("count", 1u << 30);
    if (!n || *n < 2) t.fail(t.find("count"), "count", "is required: at least 2 particles");
    p.count = static_cast<std::uint32_t>(*n);
    p.diameter = t.required_number("diameter", "positive");
    set_if(t.vector("origin"), p.origin);
    set_if(t.vector("direction"), p.direction);
    if (p.direction.norm() == 0.0) t.fail(t.find("direction"), "direction", "must not be the zero vector");
    set_if(t.vector("velocity"), p.velocity);
  } else if (*kind == "ring_torus") {
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
  } else if (*kind == "packing") {
    s.kind = SourceKind::packing;
    read_packing_keys(t, s.packing, base);
  } else if (*kind == "csv") {
    s.kind = SourceKind::csv;
    const auto file = t.string("file");
    if (!file || file->empty())
      t.fail(nullptr, "file", "is required: a CSV file of x,y,z,diameter[,vx,vy,vz][,wx,wy,wz][,mass][,material]");
    s.file = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file) : base / *file;
  } else {
    t.fail(t.find("source"), "source",
           "expected \"ring_torus\", \"solid_torus\", \"box_lattice\", \"csv\", \"fcc_block\", \"chain\" or "
           "\"packing\", got \"" +
               *kind + "\"");
  }
  t.finish();
}

/// [bonds] max_gap, max_gap_ratio and binder_volume_fraction (pairs = "gap").
void read_gap_keys(TableReader& t, BondSpec& b) {
  b.max_gap = t.number("max_gap", "nonnegative");
  b.max_gap_ratio = t.number("max_gap_ratio", "nonnegative");
  b.binder_volume_fraction = t.number("binder_volume_fraction", "positive");
  constexpr std::array<const char*, 3> keys{"max_gap", "max_gap_ratio", "binder_volume_fraction"};
  if (b.pairs != BondPairs::gap) {
    for (const char* key : keys)
      if (t.find(key) != nullptr) t.fail(t.find(key), key, "only applies with pairs = \"gap\"");
    return;
  }
  if (b.binder_volume_fraction && !(*b.binder_volume_fraction < 1.0))
    t.fail(t.find("binder_volume_fraction"), "binder_volume_fraction",
           "expected a number in (0, 1) (binder volume / (binder + particle volume)), got " +
               format_g(*b.binder_volume_fraction));
  const int given = int(b.max_gap.has_value()) + int(b.max_gap_ratio.has_value()) +
                    int(b.binder_volume_fraction.has_value());
  if (given > 1) {
    const char* second = b.binder_volume_fraction ? "binder_volume_fraction" : "max_gap_ratio";
    t.fail(t.find(second), second,
           "give one of max_gap (a length), max_gap_ratio (a fraction of the smaller radius) and "
           "binder_volume_fraction (the gap chosen for a binder volume), not two");
  }
  if (given == 0)
    t.fail(nullptr, "max_gap",
           "is required with pairs = \"gap\": the largest surface gap bonded, as a length (max_gap) or as a "
           "fraction of the smaller radius (max_gap_ratio), or binder_volume_fraction to choose it");
}

/// [bonds] binder_modulus and bond_radius_ratio (listed bonds' stiffnesses).
void read_binder_keys(TableReader& t, BondSpec& b) {
  b.binder_modulus = t.number("binder_modulus", "positive");
  b.bond_radius_ratio = t.number("bond_radius_ratio", "positive");
  if (!b.binder_modulus && !b.bond_radius_ratio) return;
  const char* given = b.binder_modulus ? "binder_modulus" : "bond_radius_ratio";
  if (b.pairs == BondPairs::generator || b.pairs == BondPairs::none)
    t.fail(t.find(given), given, "only applies with pairs = \"distance\", \"gap\" or \"csv\"");
  if (!find_bond_law(b.law)->stiffness_per_bond)
    t.fail(t.find(given), given,
           "applies to laws with stiffnesses per bond; law \"" + b.law +
               "\" takes its bond stiffnesses from [[material]] E, nu and beta (r_b = beta (r_i + r_j)/2)");
  if (!b.binder_modulus || !b.bond_radius_ratio)
    t.fail(nullptr, b.binder_modulus ? "bond_radius_ratio" : "binder_modulus",
           std::string("is required with ") + given + " (the bond radius r_b = bond_radius_ratio min(r_i, r_j))");
}

void read_bonds(TableReader& t, BondSpec& b, const std::filesystem::path& base) {
  b.place = t.place();
  if (const auto law = t.string("law")) {
    if (find_bond_law(*law) == nullptr)
      t.fail(t.find("law"), "law", "expected " + bond_law_keywords() + ", got \"" + *law + "\"");
    b.law = *law;
  }
  if (const auto pairs = t.string("pairs")) {
    if (*pairs == "generator") b.pairs = BondPairs::generator;
    else if (*pairs == "distance") b.pairs = BondPairs::distance;
    else if (*pairs == "gap") b.pairs = BondPairs::gap;
    else if (*pairs == "csv") b.pairs = BondPairs::csv;
    else if (*pairs == "none") b.pairs = BondPairs::none;
    else
      t.fail(t.find("pairs"), "pairs",
             "expected \"generator\", \"distance\", \"gap\", \"csv\" or \"none\", got \"" + *pairs + "\"");
  }
  const auto distance = t.number("distance", "positive");
  if (b.pairs == BondPairs::distance) {
    if (!distance) t.fail(nullptr, "distance", "is required with pairs = \"distance\" (a length)");
    b.distance = *distance;
  } else if (distance) {
    t.fail(t.find("distance"), "distance", "only applies with pairs = \"distance\"");
  }
  read_gap_keys(t, b);
  read_binder_keys(t, b);
  const auto file = t.string("file");
  if (b.pairs == BondPairs::csv) {
    if (!file || file->empty()) t.fail(nullptr, "file", "is required with pairs = \"csv\" (columns i,j)");
    b.file = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file) : base / *file;
  } else if (file) {
    t.fail(t.find("file"), "file", "only applies with pairs = \"csv\"");
  }
  const auto km = t.number("bending", "nonnegative"), ka = t.number("axial", "nonnegative"),
             ks = t.number("shear", "nonnegative");
  if ((km || ka || ks) && !find_bond_law(b.law)->stiffness_per_bond) {
    const char* key = km ? "bending" : ka ? "axial" : "shear";
    t.fail(t.find(key), key, find_bond_law(b.law)->stiffness_refusal);
  }
  if (km || ka || ks) {
    if (!(km && ka && ks))
      t.fail(nullptr, "", "give all three of bending, axial and shear (energy), or none to take them from [material]");
    b.stiffness = BondStiffness{*km, *ka, *ks};
  }
  t.finish();
}

/// Reads the keys of every contact law (contact/contact_laws.hpp) of one
/// table, in registry order: the chosen law's into `values`; another law's
/// key, when given, is refused by the chosen law's own reason or as "only
/// applies to law ...".
void read_law_keys(TableReader& t, const ContactLawEntry& law, LawTable table, LawValues& values) {
  std::vector<std::string> seen;
  for (const ContactLawEntry& e : contact_laws())
    for (const LawKey& k : e.keys) {
      if (k.table != table || std::find(seen.begin(), seen.end(), k.name) != seen.end()) continue;
      seen.push_back(k.name);
      // Read as the most general kind any law gives the key.
      bool any_auto = false, boolean = false, choice = false;
      const LawKey* own = nullptr;
      for (const ContactLawEntry& x : contact_laws())
        for (const LawKey& y : x.keys)
          if (y.table == table && y.name == k.name) {
            any_auto |= y.kind == LawKeyKind::number_or_auto;
            boolean |= y.kind == LawKeyKind::boolean;
            choice |= y.kind == LawKeyKind::choice;
            if (&x == &law) own = &y;
          }
      bool automatic = false;
      std::optional<double> number;
      std::optional<bool> flag;
      std::optional<std::string> word;
      const std::string check = own != nullptr ? own->check : k.check;
      if (boolean) flag = t.boolean(k.name);
      else if (choice) {
        // A choice whose values include "true"/"false" also takes the TOML booleans.
        const toml::node* node = t.find(k.name);
        const bool takes_booleans = std::find(k.choices.begin(), k.choices.end(), "true") != k.choices.end();
        if (node != nullptr && node->is_boolean() && takes_booleans)
          word = *node->value<bool>() ? "true" : "false";
        else
          word = t.string(k.name);
      }
      else if (any_auto) number = t.number_or_auto(k.name, check.c_str(), automatic);
      else number = t.number(k.name, check.c_str());
      const bool given = number || flag || automatic || word;
      if (own == nullptr) {
        if (!given) continue;
        if (table == LawTable::wall) {  // refused by parse_scene once the whole scene is read
          if (number) values.numbers[k.name] = *number;
          if (automatic) values.automatic.insert(k.name);
          if (flag) values.flags[k.name] = *flag;
          if (word) values.words[k.name] = *word;
          continue;
        }
        for (const LawRefusal& r : law.refusals)
          if (r.table == table && r.name == k.name) t.fail(t.find(k.name), k.name, r.message);
        std::string note;
        for (const ContactLawEntry& x : contact_laws())
          for (const LawKey& y : x.keys)
            if (y.table == table && y.name == k.name && note.empty()) note = y.note;
        t.fail(t.find(k.name), k.name,
               "only applies to law " +
                   contact_law_keywords([&](const ContactLawEntry& x) {
                     return std::any_of(x.keys.begin(), x.keys.end(),
                                        [&](const LawKey& y) { return y.table == table && y.name == k.name; });
                   }) +
                   (note.empty() ? "" : " " + note));
      }
      if (automatic && own->kind != LawKeyKind::number_or_auto)
        t.fail(t.find(k.name), k.name, "\"auto\" does not apply to law \"" + law.keyword + "\": give " + own->required);
      if (!given && !own->required.empty()) t.fail(nullptr, k.name, "is required: " + own->required);
      if (word && std::find(own->choices.begin(), own->choices.end(), *word) == own->choices.end())
        t.fail(t.find(k.name), k.name, "expected " + quoted_list(own->choices) + ", got \"" + *word + "\"");
      if (word) values.words[k.name] = *word;
      if (number) values.numbers[k.name] = *number;
      if (flag) values.flags[k.name] = *flag;
      if (automatic) values.automatic.insert(k.name);
    }
}

void read_contact(TableReader& t, ContactSpec& c) {
  c.place = t.place();
  c.given = true;
  if (const auto law = t.string("law")) {
    if (find_contact_law(*law) == nullptr)
      t.fail(t.find("law"), "law", "expected " + contact_law_keywords() + ", got \"" + *law + "\"");
    c.law = *law;
  }
  read_law_keys(t, *find_contact_law(c.law), LawTable::contact, c.values);
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

/// The index of the [[material]] named `name`; else fails at the value of
/// `key`, listing the scene's materials.
std::uint32_t material_named(TableReader& t, const std::string& key, const toml::node* at, const std::string& name,
                             const std::vector<NamedMaterialSpec>& materials) {
  std::string known;
  for (std::size_t k = 0; k < materials.size(); ++k) {
    if (materials[k].material.name == name) return static_cast<std::uint32_t>(k);
    known += (k ? ", \"" : "\"") + materials[k].material.name + "\"";
  }
  t.fail(at, key,
         "no [[material]] is named \"" + name + "\"" +
             (materials.empty() ? std::string(" (the scene has no [[material]] tables)")
                                : " (the scene has " + known + ")"));
}

/// [[wall]] material: a [[material]] for the laws whose contacts take
/// material coefficients (ContactLawEntry::pair_keys).
void read_wall_material(TableReader& t, WallSpec& w, const ContactLawEntry& law,
                        const std::vector<NamedMaterialSpec>& materials) {
  const auto name = t.string("material");
  if (!name) return;
  if (law.pair_keys.empty())
    t.fail(t.find("material"), "material",
           "does not apply with [contact] law = \"" + law.keyword + "\" (its walls take a stiffness, not a "
           "[[material]]; laws with wall materials: " +
               contact_law_keywords([](const ContactLawEntry& e) { return !e.pair_keys.empty(); }) + ")");
  w.material = material_named(t, "material", t.find("material"), *name, materials);
}

/// [[wall]] name, velocity, servo_stress, servo_area, servo_gain,
/// servo_max_speed (contact/wall_motion.hpp).
void read_wall_motion(TableReader& t, WallMotion& m) {
  if (const auto name = t.string("name")) {
    if (name->empty()) t.fail(t.find("name"), "name", "must not be empty");
    if (name->find_first_of(",\"\n\r") != std::string::npos)
      t.fail(t.find("name"), "name", "must not contain commas, quotes or line breaks (it names columns of walls.csv)");
    m.name = *name;
  }
  const auto velocity = t.vector("velocity");
  const auto stress = t.number("servo_stress", "nonnegative");
  const auto area = t.number("servo_area", "positive");
  const auto gain = t.number("servo_gain", "positive");
  const auto speed = t.number("servo_max_speed", "positive");
  if (velocity && stress)
    t.fail(t.find("servo_stress"), "servo_stress",
           "does not go with velocity: a wall moves at a prescribed velocity or under the servo, not both");
  if (!stress) {
    for (const char* key : {"servo_area", "servo_gain", "servo_max_speed"})
      if (t.find(key) != nullptr) t.fail(t.find(key), key, "only applies with servo_stress (Pa)");
  } else {
    if (!area) t.fail(nullptr, "servo_area", "is required with servo_stress: the area the stress acts on (m^2)");
    if (!gain) t.fail(nullptr, "servo_gain", "is required with servo_stress: the wall speed per newton of force error (m/(N s))");
    if (!speed) t.fail(nullptr, "servo_max_speed", "is required with servo_stress: the largest wall speed (m/s)");
    m.kind = WallMotion::Kind::servo;
    m.servo_stress = *stress;
    m.servo_area = *area;
    m.servo_gain = *gain;
    m.servo_max_speed = *speed;
  }
  if (velocity) {
    if (!velocity->allFinite()) t.fail(t.find("velocity"), "velocity", "must be finite ([vx, vy, vz], length/time)");
    m.kind = WallMotion::Kind::velocity;
    m.velocity = *velocity;
  }
}

void read_wall(TableReader& t, WallSpec& w, const ContactLawEntry& law,
               const std::vector<NamedMaterialSpec>& materials) {
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
  read_wall_material(t, w, law, materials);
  read_wall_motion(t, w.motion);
  read_law_keys(t, law, LawTable::wall, w.values);
  t.finish();
}

/// One [[mesh]] table (the file is read by the builder).
void read_mesh(TableReader& t, MeshSpec& m, std::size_t index, const ContactLawEntry& law,
               const std::vector<NamedMaterialSpec>& materials, const std::filesystem::path& base) {
  m.place = t.place();
  m.name = "mesh" + std::to_string(index);
  if (const auto name = t.string("name")) {
    if (name->empty() || name->find_first_of(",\"\n\r") != std::string::npos)
      t.fail(t.find("name"), "name", "must be non-empty, without commas, quotes or line breaks (a column of walls.csv)");
    m.name = *name;
  }
  const auto file = t.string("file");
  if (!file || file->empty())
    t.fail(t.find("file"), "file", "is required: the mesh's STL or OBJ file, relative to the scene file's folder");
  m.file_text = *file;
  m.file = std::filesystem::path(*file).is_absolute() ? std::filesystem::path(*file) : base / *file;
  set_if(t.number("scale", "positive"), m.scale);
  set_if(t.vector("translate"), m.translate);
  set_if(t.vector("rotation_axis"), m.rotation_axis);
  if (!(m.rotation_axis.cwiseAbs().maxCoeff() > 0.0))
    t.fail(t.find("rotation_axis"), "rotation_axis", "must not be the zero vector");
  set_if(t.number("rotation_angle"), m.rotation_angle_deg);
  set_if(t.vector("velocity"), m.velocity);
  set_if(t.vector("angular_velocity"), m.angular_velocity);
  m.rotation_centre = t.vector("rotation_centre");
  WallSpec as_wall;
  read_wall_material(t, as_wall, law, materials);
  m.material = as_wall.material;
  read_law_keys(t, law, LawTable::wall, m.values);
  t.finish();
}

/// [[interaction]] materials = ["a", "b"]: the indices of the two.
std::pair<std::uint32_t, std::uint32_t> read_interaction_materials(TableReader& t,
                                                                   const std::vector<NamedMaterialSpec>& materials) {
  const toml::node* n = t.find("materials");
  if (n == nullptr) t.fail(nullptr, "materials", "is required: the pair of [[material]] names, [\"a\", \"b\"]");
  const toml::array* a = n->as_array();
  if (a == nullptr || a->size() != 2 || !a->get(0)->is_string() || !a->get(1)->is_string())
    t.fail(n, "materials", "expected two [[material]] names [\"a\", \"b\"], got " + describe(*n));
  std::uint32_t index[2];
  for (std::size_t k = 0; k < 2; ++k)
    index[k] = material_named(t, "materials", a->get(k), std::string(*a->get(k)->value<std::string_view>()),
                              materials);
  return {index[0], index[1]};
}

/// One [[interaction]] table: a pair of materials and the coefficients
/// (the [[material]] keys e, mu_s, mu_r) that the contact law takes.
void read_interaction(TableReader& t, InteractionSpec& spec, const ContactLawEntry& law,
                      const std::vector<NamedMaterialSpec>& materials) {
  spec.place = t.place();
  if (law.pair_keys.empty())
    t.fail(nullptr, "", "does not apply with [contact] law = \"" + law.keyword + "\" (a law without [[material]] "
           "coefficients; laws with them: " +
               contact_law_keywords([](const ContactLawEntry& e) { return !e.pair_keys.empty(); }) + ")");
  std::tie(spec.pair.a, spec.pair.b) = read_interaction_materials(t, materials);
  spec.pair.restitution = t.number("e", "fraction");
  spec.pair.sliding_friction = t.number("mu_s", "nonnegative");
  spec.pair.rolling_friction = t.number("mu_r", "nonnegative");
  for (const char* key : {"e", "mu_s", "mu_r"})
    if (t.has(key) && std::find(law.pair_keys.begin(), law.pair_keys.end(), key) == law.pair_keys.end())
      t.fail(t.find(key), key, "does not apply to law \"" + law.keyword + "\" (its pair coefficients: " +
                                   quoted_list(law.pair_keys) + ")");
  t.finish();
  if (!spec.pair.restitution && !spec.pair.sliding_friction && !spec.pair.rolling_friction)
    t.fail(nullptr, "", "give at least one coefficient of the pair: " + quoted_list(law.pair_keys));
}

void read_named_material(TableReader& t, NamedMaterialSpec& spec) {
  spec.place = t.place();
  SceneMaterial& m = spec.material;
  const auto name = t.string("name");
  if (!name || name->empty()) t.fail(nullptr, "name", "is required: a name for [[particles]] material = \"...\"");
  m.name = *name;
  set_if(t.number("density", "positive"), m.density);  // required of the materials of particles
  m.youngs_modulus = t.required_number("E", "positive");
  set_if(t.number("nu", "poisson_closed"), m.poisson_ratio);
  set_if(t.number("beta", "positive"), m.bond_radius_factor);
  set_if(t.number("sigma_c", "positive_or_inf"), m.tensile_strength);
  set_if(t.number("tau_c", "positive_or_inf"), m.shear_strength);
  set_if(t.boolean("tension_only"), m.tension_only);
  set_if(t.number("e", "fraction"), m.restitution);
  set_if(t.number("mu_s", "nonnegative"), m.sliding_friction);
  set_if(t.number("mu_r", "nonnegative"), m.rolling_friction);
  t.finish();
}

void read_group(TableReader& t, GroupSpec& g) {
  g.place = t.place();
  const auto name = t.string("name");
  if (!name || name->empty()) t.fail(nullptr, "name", "is required: the group's name in groups.csv");
  if (name->find_first_of(",\"\n\r") != std::string::npos)
    t.fail(t.find("name"), "name", "must not contain commas, quotes or line breaks (it is a column of groups.csv)");
  g.name = *name;
  const auto lo = t.vector("box_min"), hi = t.vector("box_max");
  if (lo.has_value() != hi.has_value())
    t.fail(nullptr, lo ? "box_max" : "box_min", "give both box_min and box_max ([x, y, z], length)");
  if (lo) {
    if (!((lo->array() <= hi->array()).all()))
      t.fail(t.find("box_max"), "box_max", "must be >= box_min in every coordinate");
    g.box = std::make_pair(*lo, *hi);
  }
  if (const toml::node* n = t.find("ids")) {
    const toml::array* a = n->as_array();
    if (a == nullptr || a->size() != 2 || !a->get(0)->is_integer() || !a->get(1)->is_integer() ||
        *a->get(0)->value<std::int64_t>() < 0 || *a->get(1)->value<std::int64_t>() < *a->get(0)->value<std::int64_t>())
      t.fail(n, "ids", "expected [first, last], particle ids with 0 <= first <= last");
    g.ids = std::make_pair(static_cast<std::uint64_t>(*a->get(0)->value<std::int64_t>()),
                           static_cast<std::uint64_t>(*a->get(1)->value<std::int64_t>()));
  }
  if (g.box.has_value() == g.ids.has_value())
    t.fail(nullptr, "", "give exactly one selector: box_min and box_max, or ids = [first, last]");
  if (const auto motion = t.string("motion")) {
    if (*motion == "free") g.motion = ParticleGroup::Motion::free;
    else if (*motion == "fixed") g.motion = ParticleGroup::Motion::fixed;
    else if (*motion == "velocity") g.motion = ParticleGroup::Motion::velocity;
    else t.fail(t.find("motion"), "motion", "expected \"free\", \"fixed\" or \"velocity\", got \"" + *motion + "\"");
  }
  const auto v = t.vector("velocity");
  if (g.motion == ParticleGroup::Motion::velocity && !v)
    t.fail(nullptr, "velocity", "is required with motion = \"velocity\" ([vx, vy, vz], length/time)");
  if (v && g.motion != ParticleGroup::Motion::velocity)
    t.fail(t.find("velocity"), "velocity", "only applies with motion = \"velocity\"");
  if (v) g.velocity = *v;
  set_if(t.vector("force"), g.force);
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

namespace {

toml::table parse_toml(std::string_view text, const std::string& file) {
  if (text.size() > kMaxSceneBytes)
    throw SceneError(file + ": the scene is larger than 16 MiB");
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const SourcePlace p = place_of(file, e.source());
    throw SceneError(p.text() + ": not valid TOML: " + std::string(e.description()));
  }
}

SceneSpec parse_scene_root(const toml::table& root, const std::string& file, const std::filesystem::path& base_folder);

}  // namespace

SceneSpec parse_scene_text(std::string_view text, const std::string& file,
                           const std::filesystem::path& base_folder) {
  return parse_scene_root(parse_toml(text, file), file, base_folder);
}

std::vector<SceneKeyVariant> scene_key_variants(std::string_view text, const std::string& file,
                                                const std::filesystem::path& base_folder,
                                                const std::vector<std::string>& values) {
  toml::table root = parse_toml(text, file);
  std::vector<KeyLookup> log;
  g_key_log = &log;
  try {
    (void)parse_scene_root(root, file, base_folder);
  } catch (...) {
    g_key_log = nullptr;
    throw;
  }
  g_key_log = nullptr;
  std::vector<SceneKeyVariant> out;
  std::set<std::pair<const toml::table*, std::string>> seen;
  for (const KeyLookup& k : log) {
    if (!seen.insert({k.table, k.key}).second) continue;
    auto* table = const_cast<toml::table*>(k.table);
    // Tables and arrays of tables hold the logged tables: only values vary.
    if (const toml::node* old = table->get(k.key);
        old != nullptr && (old->is_table() || (old->is_array() && old->as_array()->is_array_of_tables())))
      continue;
    toml::table saved;
    if (const toml::node* old = table->get(k.key)) old->visit([&](const auto& n) { saved.insert_or_assign("v", n); });
    for (const std::string& value : values) {
      const toml::table v = toml::parse("v = " + value);
      v.get("v")->visit([&](const auto& n) { table->insert_or_assign(k.key, n); });
      std::ostringstream text_out;
      text_out << root;
      out.push_back({k.section, k.key, value, text_out.str()});
    }
    if (const toml::node* old = saved.get("v"))
      old->visit([&](const auto& n) { table->insert_or_assign(k.key, n); });
    else
      table->erase(k.key);
  }
  return out;
}

namespace {

/// The top level of a scene file: its tables, looked up by name (and so
/// counted as read for TableReader::finish()).
struct RootTables {
  RootTables(const toml::table& root, const std::string& file) : root(root), file(file), top(root, "top level", file) {}
  const toml::table& root;
  const std::string& file;
  TableReader top;

  /// The table [key], or nullptr; refuses anything else under that key.
  const toml::table* table(const std::string& key) {
    const toml::node* n = top.find(key);
    if (n == nullptr) return nullptr;
    if (!n->is_table()) top.fail(n, key, "expected a table [" + key + "], got " + describe(*n));
    return n->as_table();
  }
  /// The tables [[key]] (none if absent); refuses anything else under that key.
  std::vector<const toml::table*> tables(const std::string& key) {
    std::vector<const toml::table*> out;
    const toml::node* n = top.find(key);
    if (n == nullptr) return out;
    const toml::array* a = n->as_array();
    if (a == nullptr || !a->is_array_of_tables())
      top.fail(n, key, "expected tables [[" + key + "]], got " + describe(*n));
    for (const toml::node& e : *a) out.push_back(e.as_table());
    return out;
  }
};

/// `material`: the section-7 table [material] or the Part II array [[material]].
void read_materials(RootTables& root, SceneSpec& s) {
  if (const toml::node* n = root.root.get("material"); n != nullptr && n->is_array()) {
    for (const toml::table* t : root.tables("material")) {
      TableReader r(*t, "[material]", root.file);
      s.materials.emplace_back();
      read_named_material(r, s.materials.back());
      for (std::size_t k = 0; k + 1 < s.materials.size(); ++k)
        if (s.materials[k].material.name == s.materials.back().material.name)
          throw SceneError(s.materials.back().place.text() + ": [[material]] name: \"" +
                           s.materials.back().material.name + "\" is already the name of the [[material]] at " +
                           s.materials[k].place.text());
    }
    if (s.materials.size() > 65536) throw SceneError(root.file + ": more than 65536 [[material]] tables");
  } else if (const toml::table* t = root.table("material")) {
    TableReader r(*t, "material", root.file);
    read_material(r, s.material);
  }
}

/// The [[particles]] sources, each with its [[material]] resolved to an index.
void read_sources(RootTables& root, SceneSpec& s, const std::filesystem::path& base_folder) {
  const auto sources = root.tables("particles");
  if (sources.empty()) throw SceneError(root.file + ": at least one [[particles]] table is required");
  if (sources.size() > 1024) throw SceneError(root.file + ": more than 1024 [[particles]] tables");
  for (const toml::table* t : sources) {
    TableReader r(*t, "[particles]", root.file);
    s.sources.emplace_back();
    read_source(r, s.sources.back(), base_folder);
  }
  for (ParticleSourceSpec& src : s.sources) {
    if (src.material_name.empty()) {
      if ((src.kind == SourceKind::fcc_block || src.kind == SourceKind::chain || src.kind == SourceKind::packing) &&
          s.materials.empty())
        throw SceneError(src.place.text() + ": [[particles]] source \"" +
                         std::string(src.kind == SourceKind::chain     ? "chain"
                                     : src.kind == SourceKind::packing ? "packing"
                                                                       : "fcc_block") +
                         "\" needs a [[material]] (density, E, ...)");
      continue;
    }
    if (s.materials.empty())
      throw SceneError(src.place.text() + ": [[particles]] material = \"" + src.material_name +
                       "\": the scene has no [[material]] tables");
    bool found = false;
    std::string known;
    for (std::size_t k = 0; k < s.materials.size(); ++k) {
      known += (k ? ", \"" : "\"") + s.materials[k].material.name + "\"";
      if (s.materials[k].material.name == src.material_name) {
        src.material_index = static_cast<std::uint32_t>(k);
        found = true;
      }
    }
    if (!found)
      throw SceneError(src.place.text() + ": [[particles]] material: no [[material]] is named \"" + src.material_name +
                       "\" (the scene has " + known + ")");
  }
}

/// The [[wall]], [[mesh]], [[group]] and [[clump]] tables, [gravity] and [damping].
void read_boundaries(RootTables& root, SceneSpec& s, const std::filesystem::path& base_folder) {
  const std::string& file = root.file;
  const auto walls = root.tables("wall");
  if (walls.size() > 1024) throw SceneError(file + ": more than 1024 [[wall]] tables");
  for (const toml::table* t : walls) {
    TableReader r(*t, "[wall]", file);
    s.walls.emplace_back();
    read_wall(r, s.walls.back(), *find_contact_law(s.contact.law), s.materials);
    const WallSpec& w = s.walls.back();
    for (std::size_t k = 0; k + 1 < s.walls.size() && !w.motion.name.empty(); ++k)
      if (s.walls[k].motion.name == w.motion.name)
        throw SceneError(w.place.text() + ": [[wall]] name: \"" + w.motion.name +
                         "\" is already the name of the [[wall]] at " + s.walls[k].place.text());
  }
  check_walls_enclose_something(s.walls);
  const auto meshes = root.tables("mesh");
  if (meshes.size() > 1024) throw SceneError(file + ": more than 1024 [[mesh]] tables");
  for (const toml::table* t : meshes) {
    TableReader r(*t, "[mesh]", file);
    s.meshes.emplace_back();
    read_mesh(r, s.meshes.back(), s.meshes.size() - 1, *find_contact_law(s.contact.law), s.materials, base_folder);
    for (std::size_t k = 0; k + 1 < s.meshes.size(); ++k)
      if (s.meshes[k].name == s.meshes.back().name)
        throw SceneError(s.meshes.back().place.text() + ": [[mesh]] name: \"" + s.meshes.back().name +
                         "\" is already the name of the [[mesh]] at " + s.meshes[k].place.text());
  }
  const auto groups = root.tables("group");
  if (groups.size() > 1024) throw SceneError(file + ": more than 1024 [[group]] tables");
  for (const toml::table* t : groups) {
    TableReader r(*t, "[group]", file);
    s.groups.emplace_back();
    read_group(r, s.groups.back());
    for (std::size_t k = 0; k + 1 < s.groups.size(); ++k)
      if (s.groups[k].name == s.groups.back().name)
        throw SceneError(s.groups.back().place.text() + ": [[group]] name: \"" + s.groups.back().name +
                         "\" is already the name of the [[group]] at " + s.groups[k].place.text());
  }
  const auto clumps = root.tables("clump");
  if (clumps.size() > 100000) throw SceneError(file + ": more than 100000 [[clump]] tables");
  for (const toml::table* t : clumps) {
    TableReader r(*t, "[clump]", file);
    s.clumps.emplace_back();
    read_clump(r, s.clumps.back());
  }
  if (const toml::table* t = root.table("gravity")) {
    TableReader r(*t, "gravity", file);
    const auto g = r.vector("acceleration");
    if (!g) r.fail(nullptr, "acceleration", "is required: g, [x, y, z] (length/time^2)");
    s.gravity = *g;
    r.finish();
  }
  if (const toml::table* t = root.table("damping")) {
    TableReader r(*t, "damping", file);
    const auto alpha = r.number("viscous", "positive");
    if (!alpha) r.fail(nullptr, "viscous", "is required: the viscous damping rate alpha (1/time)");
    s.viscous_damping = *alpha;
    r.finish();
  }
}

/// The [[interaction]] tables, each pair of materials at most once.
void read_interactions(RootTables& root, SceneSpec& s) {
  const auto tables = root.tables("interaction");
  if (tables.size() > 65536) throw SceneError(root.file + ": more than 65536 [[interaction]] tables");
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> given;  // unordered pair -> table
  for (const toml::table* t : tables) {
    TableReader r(*t, "[interaction]", root.file);
    s.interactions.emplace_back();
    read_interaction(r, s.interactions.back(), *find_contact_law(s.contact.law), s.materials);
    const PairCoefficients& p = s.interactions.back().pair;
    const auto [it, added] = given.emplace(std::minmax(p.a, p.b), s.interactions.size() - 1);
    if (!added)
      r.fail(r.find("materials"), "materials",
             "the pair (\"" + s.materials[p.a].material.name + "\", \"" + s.materials[p.b].material.name +
                 "\") is already given by the [[interaction]] at " + s.interactions[it->second].place.text());
  }
}

/// Every [[particles]] source but a CSV table (whose rows the builder
/// checks) is made of a [[material]] with a density: only a material of
/// walls alone may leave it out.
void check_particle_densities(const SceneSpec& s) {
  if (s.materials.empty()) return;
  for (const ParticleSourceSpec& src : s.sources) {
    const NamedMaterialSpec& m = s.materials.at(src.material_index);
    if (src.kind == SourceKind::csv || m.material.density > 0.0) continue;
    throw SceneError(m.place.text() + ": [[material]] density: is required: \"" + m.material.name +
                     "\" is the material of the [[particles]] at " + src.place.text() +
                     " (only a material of [[wall]]s alone may leave it out)");
  }
}

/// What the chosen laws need of the rest of the scene: [[material]] tables,
/// and no [[wall]] key of another contact law.
void check_laws_against_scene(const SceneSpec& s) {
  if (const BondLawEntry& bl = *find_bond_law(s.bonds.law); bl.needs_materials && s.materials.empty())
    throw SceneError(s.bonds.place.text() + ": [bonds] law = \"" + bl.keyword + "\" needs [[material]] tables " +
                     bl.materials_note);
  const ContactLawEntry& law = *find_contact_law(s.contact.law);
  if (law.needs_materials && s.materials.empty())
    throw SceneError(s.contact.place.text() + ": [contact] law = \"" + law.keyword + "\" needs [[material]] tables " +
                     law.materials_note);
  for (const WallSpec& w : s.walls)
    for (const ContactLawEntry& e : contact_laws())
      for (const LawKey& k : e.keys)
        if (k.table == LawTable::wall && w.values.given(k.name) &&
            std::none_of(law.keys.begin(), law.keys.end(),
                         [&](const LawKey& y) { return y.table == LawTable::wall && y.name == k.name; }))
          throw SceneError(w.place.text() + ": [[wall]] " + k.name + " does not apply with [contact] law = \"" +
                           law.keyword + "\"");
  for (const MeshSpec& m : s.meshes)
    for (const ContactLawEntry& e : contact_laws())
      for (const LawKey& k : e.keys)
        if (k.table == LawTable::wall && m.values.given(k.name) &&
            std::none_of(law.keys.begin(), law.keys.end(),
                         [&](const LawKey& y) { return y.table == LawTable::wall && y.name == k.name; }))
          throw SceneError(m.place.text() + ": [[mesh]] " + k.name + " does not apply with [contact] law = \"" +
                           law.keyword + "\"");
}

SceneSpec parse_scene_root(const toml::table& table, const std::string& file, const std::filesystem::path& base_folder) {
  SceneSpec s;
  s.file = file;
  RootTables root(table, file);
  const toml::table* run = root.table("run");
  if (run == nullptr) throw SceneError(file + ": the [run] table is required (integrator, time_step, end_time or steps)");
  TableReader run_reader(*run, "run", file);
  read_run(run_reader, s.run);
  if (const toml::table* t = root.table("output")) {
    TableReader r(*t, "output", file);
    read_output(r, s.output);
  }
  if (const toml::table* t = root.table("stress")) {
    TableReader r(*t, "stress", file);
    read_stress(r, s.output);
  }
  if (const toml::table* t = root.table("domain")) {
    TableReader r(*t, "domain", file);
    read_domain(r, s.domain.emplace());
  }
  read_materials(root, s);
  read_sources(root, s, base_folder);
  bool any_generator = false;
  for (const ParticleSourceSpec& src : s.sources) any_generator |= src.kind != SourceKind::csv;
  if (!any_generator) s.bonds.pairs = BondPairs::none;
  if (const toml::table* t = root.table("bonds")) {
    TableReader r(*t, "bonds", file);
    read_bonds(r, s.bonds, base_folder);
  }
  if (const toml::table* t = root.table("contact")) {
    TableReader r(*t, "contact", file);
    read_contact(r, s.contact);
  }
  read_boundaries(root, s, base_folder);
  read_interactions(root, s);
  root.top.finish();
  check_laws_against_scene(s);
  check_particle_densities(s);
  return s;
}

}  // namespace

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
