#pragma once
/// \file specimen_files.hpp
/// A built specimen written as the CSV tables a scene reads back
/// (`dem pack`, docs/scene-format.md "dem pack"): particles.csv for
/// `[[particles]] source = "csv"` and bonds.csv for `[bonds] pairs = "csv"`,
/// every number with 17 significant digits, so that the scene built from
/// them has the same bits as the one written (docs/model.md §21.6).

#include <filesystem>
#include <string>

#include "engine/scene.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

/// The particles of `scene` in creation (id) order as CSV text: header
/// `x,y,z,diameter,vx,vy,vz,wx,wy,wz,mass` plus `material` (the [[material]]'s name)
/// when `spec` has [[material]]s; one row a particle. Lengths, velocities
/// (spatial angular velocities) and masses in the scene's units; the rows' ids are 0, 1, ... (the
/// scene's ids must be a permutation of them).
std::string particles_csv(const Scene& scene, const SceneSpec& spec);

/// What write_specimen wrote.
struct SpecimenFiles {
  std::filesystem::path particles, bonds, report;  ///< report: empty if not written
};

/// Writes folder/particles.csv, folder/bonds.csv and, if `report_json` is
/// not empty, folder/packing.json (each through a temporary name, renamed),
/// creating the folder. Throws std::invalid_argument naming the file if one
/// of the three exists and `overwrite` is false (nothing is written then),
/// or for a scene with clumps (not written: their bodies would be lost);
/// std::runtime_error if the folder cannot be made or a file written.
SpecimenFiles write_specimen(const std::filesystem::path& folder, const Scene& scene, const SceneSpec& spec,
                             const std::string& report_json, bool overwrite);

/// The bonds of `scene` as CSV text: header `i,j`, the two particles'
/// creation ids (i < j), rows sorted by (i, j).
std::string bonds_csv(const Scene& scene);

}  // namespace dem
