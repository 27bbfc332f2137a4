// Builds a scene file's particles, bonds, walls and time step
// (scene_builder.hpp).
#include "scene/scene_builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "contact/neighbour_search.hpp"
#include "engine/clump.hpp"
#include "engine/reorder.hpp"
#include "engine/time_step.hpp"
#include "scene/csv_table.hpp"
#include "core/format.hpp"

namespace dem {

namespace {


[[noreturn]] void fail(const SourcePlace& at, const std::string& what) {
  throw SceneError(at.text() + ": " + what);
}

double need(const std::optional<double>& v, const MaterialSpec& m, const char* key,
            const SourcePlace& user, const std::string& why) {
  if (!v)
    fail(user, why + " needs [material] " + key +
                   (m.place.line > 0 ? " (the [material] table at " + m.place.text() + " lacks it)" : ""));
  return *v;
}

/// MODEL.md section 7 bond stiffnesses for ends of radii r_i, r_j and rest length r0.
BondStiffness binder_stiffness(double e_b, double beta, double r_i, double r_j, double r0) {
  const double pi = std::numbers::pi;
  const double rb = 0.5 * beta * (r_i + r_j);
  const double area = pi * rb * rb;
  BondStiffness k;
  k.axial = e_b * area * r0;
  k.shear = k.axial;
  k.bending = e_b * 0.25 * pi * rb * rb * rb * rb / r0;
  return k;
}

/// Appends `part`'s particles (ids renumbered after those already there) and,
/// if `with_bonds`, its bonds with their own stiffnesses or `override`.
void append(Scene& into, const Scene& part, bool with_bonds, const std::optional<BondStiffness>& override) {
  const std::uint32_t offset = static_cast<std::uint32_t>(into.particles.size());
  ParticleStore& s = into.particles;
  s.append(part.particles);
  if (!with_bonds) return;
  for (std::size_t b = 0; b < part.bonds.size(); ++b)
    into.bonds.add(s, offset + part.bonds.first[b], offset + part.bonds.second[b],
                   override ? *override : part.bonds.stiffness(b));
}

Scene read_csv_particles(const ParticleSourceSpec& src, const MaterialSpec& material) {
  const CsvTable table = read_csv_table(src.file, {"x", "y", "z", "diameter"},
                                        {"vx", "vy", "vz", "wx", "wy", "wz", "mass"});
  const bool has_v = table.has("vx") || table.has("vy") || table.has("vz");
  const bool has_w = table.has("wx") || table.has("wy") || table.has("wz");
  if (has_v && !(table.has("vx") && table.has("vy") && table.has("vz")))
    fail(src.place, src.file.string() + ": give all of vx, vy, vz or none");
  if (has_w && !(table.has("wx") && table.has("wy") && table.has("wz")))
    fail(src.place, src.file.string() + ": give all of wx, wy, wz or none");
  const bool has_mass = table.has("mass");
  if (!has_mass) need(material.density, material, "density", src.place, "a CSV source without a mass column");
  Scene scene;
  scene.particles.reserve(table.rows());
  for (std::size_t r = 0; r < table.rows(); ++r) {
    ParticleSpec p;
    p.position = Vec3(table.at(r, "x"), table.at(r, "y"), table.at(r, "z"));
    p.diameter = table.at(r, "diameter");
    if (has_v) p.velocity = Vec3(table.at(r, "vx"), table.at(r, "vy"), table.at(r, "vz"));
    if (has_w) p.angular_velocity = Vec3(table.at(r, "wx"), table.at(r, "wy"), table.at(r, "wz"));
    const double d = p.diameter;
    if (!(d > 0.0))
      fail(src.place, src.file.string() + ":" + std::to_string(table.line_of(r)) +
                          ": column \"diameter\": must be > 0, got " + format_g(d));
    p.mass = has_mass ? table.at(r, "mass") : *material.density * std::numbers::pi * d * d * d / 6.0;
    p.inertia = p.mass * d * d / 10.0;
    try {
      scene.particles.add(p);
    } catch (const std::invalid_argument& e) {
      fail(src.place, src.file.string() + ":" + std::to_string(table.line_of(r)) + ": " + e.what());
    }
  }
  return scene;
}

/// One source's particles (and its own neighbour bonds).
Scene generate(const ParticleSourceSpec& src, const MaterialSpec& material) {
  try {
    switch (src.kind) {
      case SourceKind::ring_torus: return make_ring_torus(src.ring);
      case SourceKind::solid_torus: {
        SolidTorusParameters p = src.solid;
        if (material.density) p.density = *material.density;
        if (material.particle_modulus) p.particle_modulus = *material.particle_modulus;
        if (material.particle_poisson) p.particle_poisson = *material.particle_poisson;
        if (material.binder_modulus) p.binder_modulus = *material.binder_modulus;
        if (material.bond_radius_ratio) p.bond_radius_ratio = *material.bond_radius_ratio;
        if (src.target_particles) p.particle_diameter = solid_torus_diameter_for(p, *src.target_particles);
        return make_solid_torus(p);
      }
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
      case SourceKind::csv: return read_csv_particles(src, material);
    }
  } catch (const SceneError&) {
    throw;
  } catch (const std::exception& e) {
    fail(src.place, e.what());
  }
  fail(src.place, "unknown particle source");
}

/// Hertz stiffnesses of MODEL.md section 7 for radius r.
SolidTorusConstants hertz_constants(const MaterialSpec& m, double r, const SourcePlace& user,
                                    const std::string& what) {
  SolidTorusParameters p;
  p.particle_modulus = need(m.particle_modulus, m, "particle_modulus", user, what);
  p.particle_poisson = need(m.particle_poisson, m, "particle_poisson", user, what);
  p.particle_diameter = 2.0 * r;
  return solid_torus_constants(p);
}

}  // namespace

std::uint64_t estimated_memory_bytes(std::uint64_t particles, std::uint64_t bonds) {
  // Store 212 B, neighbour list and search about 300 B, VTK buffers 172 B per
  // particle; bond data, scratch, per-particle rows and VTK about 110 B per bond.
  return 690 * particles + 110 * bonds;
}

BuiltScene build_scene(const SceneSpec& spec) {
  BuiltScene out;
  Scene& scene = out.scene;
  const MaterialSpec& material = spec.material;
  const BondSpec& bonds = spec.bonds;

  // Bond stiffness for bonds that do not keep their generator's.
  std::optional<BondStiffness> direct = bonds.stiffness;
  const bool from_material = !direct && (material.binder_modulus || material.bond_radius_ratio);

  for (const ParticleSourceSpec& src : spec.sources) {
    const Scene part = generate(src, material);
    if (scene.particles.size() + part.particles.size() > (1ull << 31))
      fail(src.place, "the scene has more than 2^31 particles");
    bool own_bonds = bonds.pairs == BondPairs::generator;
    if (own_bonds && src.kind == SourceKind::ring_torus && !direct && !from_material)
      fail(bonds.place.line > 0 ? bonds.place : src.place,
           "the ring's bonds need stiffnesses: give bending, axial and shear in [bonds], or "
           "binder_modulus and bond_radius_ratio in [material]");
    std::optional<BondStiffness> override = direct;
    if (own_bonds && !direct && from_material && src.kind == SourceKind::ring_torus) {
      const double r = part.particles.radius[0];
      override = binder_stiffness(need(material.binder_modulus, material, "binder_modulus", bonds.place, "bond stiffness"),
                                  need(material.bond_radius_ratio, material, "bond_radius_ratio", bonds.place, "bond stiffness"),
                                  r, r, part.bonds.rest_length.empty() ? 2 * r : part.bonds.rest_length[0]);
    }
    append(scene, part, own_bonds, override);
  }
  ParticleStore& particles = scene.particles;
  const std::size_t n = particles.size();

  // Bonds found by distance or read from a file.
  if (bonds.pairs == BondPairs::distance || bonds.pairs == BondPairs::csv) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    if (bonds.pairs == BondPairs::distance) {
      NeighbourSearch search(bonds.distance);
      const std::vector<double> zero(n, 0.0);
      search.rebuild(particles.position, zero);
      const NeighbourList& l = search.list();
      for (std::size_t k = 0; k < l.pair_count(); ++k) pairs.emplace_back(l.owner[k], l.partner[k]);
    } else {
      const CsvTable table = read_csv_table(bonds.file, {"i", "j"}, {});
      for (std::size_t r = 0; r < table.rows(); ++r) {
        const double i = table.at(r, "i"), j = table.at(r, "j");
        const std::string where = bonds.file.string() + ":" + std::to_string(table.line_of(r));
        if (!(i >= 0 && j >= 0 && i < static_cast<double>(n) && j < static_cast<double>(n) &&
              i == std::floor(i) && j == std::floor(j)))
          fail(bonds.place, where + ": i and j must be particle indices in [0, " + std::to_string(n) + ")");
        if (i == j) fail(bonds.place, where + ": a particle cannot be bonded to itself");
        pairs.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j));
      }
    }
    if (!direct && !from_material)
      fail(bonds.place, "bonds need stiffnesses: give bending, axial and shear in [bonds], or "
                        "binder_modulus and bond_radius_ratio in [material]");
    scene.bonds.reserve(pairs.size());
    for (const auto& [i, j] : pairs) {
      BondStiffness k;
      if (direct) {
        k = *direct;
      } else {
        const double r0 = (particles.position[i] - particles.position[j]).norm();
        k = binder_stiffness(need(material.binder_modulus, material, "binder_modulus", bonds.place, "bond stiffness"),
                             need(material.bond_radius_ratio, material, "bond_radius_ratio", bonds.place, "bond stiffness"),
                             particles.radius[i], particles.radius[j], r0);
      }
      try {
        scene.bonds.add(particles, i, j, k);
      } catch (const std::invalid_argument& e) {
        fail(bonds.place, e.what());
      }
    }
  }

  // Clumps: members appended after everything else, so no bond reaches them.
  for (const ClumpSpec& c : spec.clumps) {
    ClumpStart start;
    start.velocity = c.velocity;
    start.angular_velocity = c.angular_velocity;
    if (!c.member_mass) need(material.density, material, "density", c.place, "a [[clump]] without member_mass");
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
  }
  const std::size_t n_all = particles.size();

  // Contact, walls, gravity.
  const double r_min = *std::min_element(particles.radius.begin(), particles.radius.end());
  if (!spec.contact.given && n_all > 1)
    throw SceneError(spec.file + ": the [contact] table is required: stiffness = K^pp (energy), "
                                 "\"auto\" (Hertz, from [material]) or 0 (no contact)");
  scene.contact.stiffness =
      spec.contact.stiffness ? *spec.contact.stiffness
      : spec.contact.given   ? hertz_constants(material, r_min, spec.contact.place, "contact stiffness \"auto\"").k_contact
                             : 0.0;
  scene.contact.skin = spec.contact.skin ? *spec.contact.skin : spec.contact.skin_fraction * 2.0 * r_min;
  scene.contact.reorder_on_rebuild = spec.contact.reorder_on_rebuild;
  for (const WallSpec& w : spec.walls) {
    Wall wall;
    wall.point = w.point;
    wall.normal = w.normal;
    wall.stiffness = w.stiffness ? *w.stiffness
                                 : hertz_constants(material, r_min, w.place, "wall stiffness \"auto\"").k_wall;
    for (std::size_t i = 0; i < n_all; ++i)
      if (wall.normal.dot(particles.position[i] - wall.point) < 0.0)
        fail(w.place, "particle " + std::to_string(i) + " (at " + format_g(particles.position[i].x()) + ", " +
                          format_g(particles.position[i].y()) + ", " + format_g(particles.position[i].z()) +
                          ") starts behind this wall");
    scene.walls.push_back(wall);
  }
  scene.gravity = spec.gravity;
  if (scene.contact.reorder_on_rebuild) sort_for_locality(scene);
  for (std::size_t k = 0; k < out.clumps.size(); ++k) {
    try {
      clump_at_rest(particles, slots_of_ids(particles, out.clumps[k].ids));  // validates the inertia before any run
    } catch (const std::invalid_argument& e) {
      fail(spec.clumps[k].place, e.what());
    }
  }

  // Time step and step count.
  out.map = spec.run.map;
  out.output = spec.output;
  out.critical_time_step = critical_time_step(particles, scene.bonds, scene.contact);
  if (spec.run.time_step) {
    out.time_step = *spec.run.time_step;
    if (out.time_step > out.critical_time_step)
      fail(spec.run.place, "[run] time_step = " + format_g(out.time_step) +
                               " is over the stability limit: the critical time step estimate "
                               "(MODEL.md section 7) is " + format_g(out.critical_time_step) +
                               "; use a smaller step or time_step = \"auto\"");
  } else {
    if (!std::isfinite(out.critical_time_step))
      fail(spec.run.place, "[run] time_step = \"auto\" needs something stiff (bonds or contact); "
                           "give the time step as a number");
    out.automatic_time_step = true;
    out.time_step = spec.run.time_step_fraction * out.critical_time_step;
  }
  out.time_step_fraction = out.time_step / out.critical_time_step;
  out.steps = end_step_of(spec.run, out.time_step);
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

Simulation make_simulation(BuiltScene built) {
  Scene& s = built.scene;
  std::vector<Clump> clumps;
  for (const ClumpStart& c : built.clumps)
    clumps.push_back(make_clump(s.particles, slots_of_ids(s.particles, c.ids), c.velocity, c.angular_velocity));
  ForceField field(s.particles, std::move(s.bonds), s.contact, std::move(s.walls), s.gravity);
  return Simulation(std::move(s.particles), std::move(field), std::move(clumps), built.map, built.time_step);
}

}  // namespace dem
