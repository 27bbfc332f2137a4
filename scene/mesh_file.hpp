#pragma once
/// \file mesh_file.hpp
/// Triangle meshes from files for [[mesh]] tables (docs/scene-format.md):
/// STL (ASCII or binary) and Wavefront OBJ, read with VTK's readers
/// (vtkSTLReader, vtkOBJReader); polygons of more than three corners are
/// split into fans. Vertices are returned as the file has them (lengths in
/// the file's unit); TriangleMesh (contact/triangle_mesh.hpp) merges
/// repeated ones.

#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/types.hpp"

namespace dem {

struct MeshFileData {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
};

/// Reads a .stl or .obj file (the extension decides, in any case). Throws
/// SceneError (scene/scene_spec.hpp) whose message starts with the path:
/// no such file, not a regular file, another extension, what the reader
/// reported for a file it cannot read, no triangles, or a vertex that is
/// not finite (its index).
MeshFileData read_mesh_file(const std::filesystem::path& path);

}  // namespace dem
