#pragma once
/// \file packing_region.hpp
/// The region a packing fills (docs/model.md §21.2, docs/scene-format.md
/// `source = "packing"`): a box, a finite cylinder, a sphere or a torus
/// or the inside of a closed surface mesh (scene/mesh_region.hpp), with its volume,
/// bounding box and the depth of a point inside it.

#include <filesystem>
#include <memory>
#include <utility>

#include "core/types.hpp"
#include "scene/mesh_region.hpp"

namespace dem {

enum class PackingRegionKind { box, cylinder, sphere, torus, mesh };

/// A region as a scene gives it (lengths in one unit):
///  - box: [lower, upper];
///  - cylinder: base centre `base`, unit `axis`, `radius`, `height` (the
///    solid from base to base + height axis);
///  - sphere: `centre`, `radius`;
///  - torus: `centre`, unit `axis` (the symmetry axis), `major_radius`
///    (centre to tube centre), `minor_radius` (the tube's) < major_radius;
///  - mesh: `file` (STL or OBJ), `scale` (its vertices' factor), and the
///    surface read from them (load_mesh_region).
struct PackingRegion {
  PackingRegionKind kind = PackingRegionKind::box;
  Vec3 lower = Vec3::Zero(), upper = Vec3::Zero();  ///< box
  Vec3 base = Vec3::Zero();                         ///< cylinder
  Vec3 axis = Vec3::UnitZ();                        ///< cylinder, torus: unit
  Vec3 centre = Vec3::Zero();                       ///< sphere, torus
  double radius = 0.0;                              ///< cylinder, sphere
  double height = 0.0;                              ///< cylinder
  double major_radius = 0.0, minor_radius = 0.0;    ///< torus
  std::filesystem::path file;                       ///< mesh
  double scale = 1.0;                               ///< mesh
  std::shared_ptr<const MeshRegion> mesh;           ///< mesh: the surface (load_mesh_region)
};

/// Reads region.file scaled by region.scale into region.mesh (kind mesh;
/// nothing for the other kinds). Throws InvalidKey naming `file` for a
/// file that cannot be read or a surface that is not closed, `scale` for a
/// scale that is not > 0.
void load_mesh_region(PackingRegion& r);

/// Throws InvalidKey (scene/invalid_key.hpp) naming the key for a region
/// with no interior: a box with upper <= lower on an axis, a zero axis, a
/// radius, height or minor radius that is not finite and > 0, a torus whose
/// minor radius is not below its major radius, a mesh region not loaded.
void validate_region(const PackingRegion& r);

/// The region's volume (length^3).
double region_volume(const PackingRegion& r);

/// The smallest axis-aligned box holding the region: (lower, upper).
std::pair<Vec3, Vec3> region_bounds(const PackingRegion& r);

/// The distance from x to the region's boundary, positive inside and
/// non-positive outside (exact inside; outside only its sign matters), so a
/// sphere of radius a centred at x lies in the region iff the depth >= a.
double region_depth(const PackingRegion& r, const Vec3& x);

/// The radius of the largest sphere the region holds.
double region_inradius(const PackingRegion& r);

}  // namespace dem
