// A built specimen as CSV tables (scene/specimen_files.hpp).
#include "scene/specimen_files.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/text_file.hpp"

namespace dem {

namespace {

/// `v` with 17 significant digits (read back to the same double).
void append_number(std::string& out, double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  out += text;
}

/// The slot of each id 0..n-1.
std::vector<std::uint32_t> slots_by_id(const ParticleStore& p) {
  std::vector<std::uint32_t> slot(p.size(), UINT32_MAX);
  for (std::uint32_t s = 0; s < p.size(); ++s) {
    if (p.id[s] >= p.size() || slot[p.id[s]] != UINT32_MAX)
      throw std::invalid_argument("particles_csv: the particles' ids are not 0, 1, ..., n - 1");
    slot[p.id[s]] = s;
  }
  return slot;
}

}  // namespace

std::string particles_csv(const Scene& scene, const SceneSpec& spec) {
  const ParticleStore& p = scene.particles;
  const bool named = !spec.materials.empty();
  std::string out = named ? "x,y,z,diameter,vx,vy,vz,wx,wy,wz,mass,material\n" : "x,y,z,diameter,vx,vy,vz,wx,wy,wz,mass\n";
  out.reserve(out.size() + p.size() * 160);
  for (const std::uint32_t s : slots_by_id(p)) {
    const double row[11] = {p.position[s].x(),         p.position[s].y(),         p.position[s].z(),
                            2.0 * p.radius[s],         p.velocity[s].x(),         p.velocity[s].y(),
                            p.velocity[s].z(),         p.angular_velocity[s].x(), p.angular_velocity[s].y(),
                            p.angular_velocity[s].z(), p.mass[s]};
    for (int k = 0; k < 11; ++k) {
      if (k) out += ',';
      append_number(out, row[k]);
    }
    if (named) {
      out += ',';
      out += spec.materials.at(p.material[s]).material.name;
    }
    out += '\n';
  }
  return out;
}

std::string bonds_csv(const Scene& scene) {
  const ParticleStore& p = scene.particles;
  const BondList& b = scene.bonds;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs(b.size());
  for (std::size_t k = 0; k < b.size(); ++k) {
    const std::uint32_t i = p.id[b.first[k]], j = p.id[b.second[k]];
    pairs[k] = {std::min(i, j), std::max(i, j)};
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out = "i,j\n";
  out.reserve(out.size() + pairs.size() * 16);
  for (const auto& [i, j] : pairs) out += std::to_string(i) + ',' + std::to_string(j) + '\n';
  return out;
}

SpecimenFiles write_specimen(const std::filesystem::path& folder, const Scene& scene, const SceneSpec& spec,
                             const std::string& report_json, bool overwrite) {
  if (!spec.clumps.empty())
    throw std::invalid_argument("[[clump]]: a specimen with clumps cannot be written as CSV tables (the clumps' "
                                "bodies would be lost); write one without them");
  SpecimenFiles f{folder / "particles.csv", folder / "bonds.csv",
                  report_json.empty() ? std::filesystem::path() : folder / "packing.json"};
  for (const std::filesystem::path& p : {f.particles, f.bonds, f.report})
    if (!overwrite && !p.empty() && std::filesystem::exists(p))
      throw std::invalid_argument(p.string() + " exists: give --overwrite to replace it, or another --output-dir");
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec || !std::filesystem::is_directory(folder))
    throw std::runtime_error("cannot make the folder '" + folder.string() + "'" + (ec ? ": " + ec.message() : ""));
  write_text_file(f.particles, particles_csv(scene, spec));
  write_text_file(f.bonds, bonds_csv(scene));
  if (!f.report.empty()) write_text_file(f.report, report_json);
  return f;
}

}  // namespace dem
