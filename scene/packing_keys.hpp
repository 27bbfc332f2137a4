#pragma once
/// \file packing_keys.hpp
/// Internal to the scene parser: reads the keys of a `[[particles]] source =
/// "packing"` table (docs/scene-format.md) into PackingParameters, every
/// error a SceneError naming the key.

#include <filesystem>

#include "scene/packing_spec.hpp"
#include "scene/table_reader.hpp"

namespace dem::scene_reading {

/// Reads region, its geometry keys, size_distribution and its keys,
/// solid_fraction and seed (source and material are the caller's), and
/// validates them (validate_packing); a mesh region's file (relative to
/// `base`) is read then. Leaves finish() to the caller.
void read_packing_keys(TableReader& t, PackingParameters& p, const std::filesystem::path& base);

}  // namespace dem::scene_reading
