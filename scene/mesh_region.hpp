#pragma once
/// \file mesh_region.hpp
/// The inside of a closed triangle surface (an STL or OBJ file) as the
/// region of a packing ([[particles]] region = "mesh", docs/model.md §21.2):
/// its volume, bounding box and the signed distance of a point to the
/// surface, all by VTK (vtkMassProperties, vtkImplicitPolyDataDistance).

#include <filesystem>
#include <memory>
#include <utility>

#include "core/types.hpp"

namespace dem {

class MeshRegion {
 public:
  /// Reads `file` (scene/mesh_file.hpp), scales its vertices by `scale`
  /// (> 0), merges repeated vertices and orients the triangles outwards.
  /// Throws SceneError from the reader (its message starts with the path),
  /// std::invalid_argument if the surface is not closed (edges with one
  /// triangle, or more than two) or encloses no volume.
  MeshRegion(const std::filesystem::path& file, double scale);
  ~MeshRegion();
  MeshRegion(const MeshRegion&) = delete;
  MeshRegion& operator=(const MeshRegion&) = delete;

  double volume() const { return volume_; }                        ///< length^3
  std::pair<Vec3, Vec3> bounds() const { return {lower_, upper_}; }  ///< lower, upper corners
  /// The distance from x to the surface, positive inside and negative
  /// outside (length). Safe to call from several threads at once (each
  /// thread queries its own copy of the surface and its locator); the
  /// result does not depend on the thread.
  double depth(const Vec3& x) const;
  /// The largest depth on a 32^3 grid over the bounds (length): an estimate
  /// (from below) of the radius of the largest sphere inside.
  double inradius() const { return inradius_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  double volume_ = 0.0, inradius_ = 0.0;
  Vec3 lower_ = Vec3::Zero(), upper_ = Vec3::Zero();
};

}  // namespace dem
