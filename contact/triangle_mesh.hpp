#pragma once
/// \file triangle_mesh.hpp
/// A rigid triangle mesh as a contact surface (docs/model.md §11.9): its
/// vertices and triangles in the mesh's body frame, the adjacency that the
/// contact's claiming rule needs (edges with their two faces, vertices with
/// their faces and edges), planar patches of coplanar faces, the features
/// a sphere can touch, a static bounding-volume hierarchy for the broad
/// phase, and the closest point of a triangle with its region.
///
/// Features. Faces that meet along an edge and lie in one plane (normals
/// within `kCoplanarAngle` rad of the patch's first face and vertices within
/// kCoplanarDistance of the mesh's size from its plane) are one planar
/// patch; every face belongs to exactly one patch (maybe of one face). An
/// edge is active where it is not inside a patch (its faces are in two
/// patches, or it has one face: a rim); a vertex is active where one of its
/// edges is. Feature ids: patches [0, P), active and inactive edges
/// [P, P + E), vertices [P + E, P + E + V); inactive ones are never
/// touched (their contacts go to their patch).
///
/// Units: lengths in the scene's length unit; nothing else.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace dem {

/// Where the closest point of a triangle (a, b, c) to a point lies.
enum class TriangleRegion : std::uint8_t {
  face = 0,                               ///< the interior
  edge_ab = 1, edge_bc = 2, edge_ca = 3,  ///< edge k = corners k, k + 1 (mod 3)
  vertex_a = 4, vertex_b = 5, vertex_c = 6,
};

struct TrianglePoint {
  Vec3 point = Vec3::Zero();
  TriangleRegion region = TriangleRegion::face;
};

/// The point of triangle (a, b, c) closest to x and its region (Ericson,
/// Real-Time Collision Detection, 2005, §5.1.5: Voronoi regions tested in
/// the order vertex a, vertex b, edge ab, vertex c, edge ca, edge bc, face).
/// A non-degenerate triangle only (TriangleMesh drops the others).
TrianglePoint closest_point_on_triangle(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c);

/// A triangle dropped by TriangleMesh: its index in the input and corners.
struct DroppedTriangle {
  std::size_t index = 0;
  std::array<Vec3, 3> corners;
  std::string reason;  ///< "zero area", "repeated vertex"
};

/// A static bounding-volume hierarchy of axis-aligned boxes over the
/// triangles (median split on the longest axis of the centroids, 4
/// triangles a leaf): the same tree for the same mesh, so queries return
/// the same triangles in the same order.
class TriangleTree {
 public:
  struct Node {
    Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
    std::uint32_t first = 0;  ///< leaf: first item; inner: left child (right = left + 1)
    std::uint32_t count = 0;  ///< leaf: items (> 0); inner: 0
  };
  TriangleTree() = default;
  /// boxes: per triangle, its lower and upper corner.
  explicit TriangleTree(std::span<const std::array<Vec3, 2>> boxes);
  /// Appends to `out` every triangle whose box is within `reach` of x
  /// (ascending triangle index after the caller's sort).
  void query(const Vec3& x, double reach, std::vector<std::uint32_t>& out) const;
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  void build(std::span<const std::array<Vec3, 2>> boxes, std::uint32_t node, std::uint32_t begin, std::uint32_t end);
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> items_;
};

class TriangleMesh {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  /// Faces are coplanar when their unit normals differ by at most this (rad).
  static constexpr double kCoplanarAngle = 1e-9;
  /// ... and their vertices are within this fraction of the mesh's bounding
  /// box diagonal of the patch's plane.
  static constexpr double kCoplanarDistance = 1e-12;

  struct Edge {
    std::array<std::uint32_t, 2> vertex{kNone, kNone};  ///< ascending
    std::array<std::uint32_t, 2> face{kNone, kNone};    ///< kNone: a rim (one face)
    bool active = true;
  };

  /// vertices (length) and triangles (three vertex indices each). Vertices
  /// at the same coordinates are merged. Triangles with a repeated vertex
  /// or zero area (|(b - a) x (c - a)| <= 1e-14 times the longest edge
  /// squared) are dropped and listed in dropped(). Throws
  /// std::invalid_argument for a vertex that is not finite, an index out of
  /// range, or no triangle left.
  TriangleMesh(std::vector<Vec3> vertices, std::vector<std::array<std::uint32_t, 3>> triangles);
  TriangleMesh() = default;

  const std::vector<Vec3>& vertices() const { return vertices_; }
  const std::vector<std::array<std::uint32_t, 3>>& triangles() const { return triangles_; }
  const std::vector<DroppedTriangle>& dropped() const { return dropped_; }
  std::size_t face_count() const { return triangles_.size(); }
  const Vec3& face_normal(std::uint32_t f) const { return face_normal_[f]; }
  /// The three edges of face f: edge k joins corners k and k + 1 (mod 3).
  const std::array<std::uint32_t, 3>& face_edges(std::uint32_t f) const { return face_edges_[f]; }
  const std::vector<Edge>& edges() const { return edges_; }
  bool vertex_active(std::uint32_t v) const { return vertex_active_[v] != 0; }

  std::size_t patch_count() const { return patch_normal_.size(); }
  std::uint32_t patch_of(std::uint32_t f) const { return patch_of_[f]; }
  /// The plane of patch p: a point of it (its first face's first corner) and its unit normal.
  const Vec3& patch_point(std::uint32_t p) const { return patch_point_[p]; }
  const Vec3& patch_normal(std::uint32_t p) const { return patch_normal_[p]; }

  // --- features ---------------------------------------------------------------
  std::uint32_t feature_count() const {
    return static_cast<std::uint32_t>(patch_count() + edges_.size() + vertices_.size());
  }
  std::uint32_t edge_feature(std::uint32_t e) const { return static_cast<std::uint32_t>(patch_count()) + e; }
  std::uint32_t vertex_feature(std::uint32_t v) const {
    return static_cast<std::uint32_t>(patch_count() + edges_.size()) + v;
  }
  bool is_patch(std::uint32_t feature) const { return feature < patch_count(); }
  bool is_edge(std::uint32_t feature) const { return !is_patch(feature) && feature < vertex_feature(0); }
  /// The feature a closest point of face f in `region` belongs to: the
  /// face's patch, the edge or the vertex where active, else the patch.
  std::uint32_t feature_of(std::uint32_t f, TriangleRegion region) const;
  /// The patches of the faces around vertex v (ascending, no repeats).
  std::span<const std::uint32_t> vertex_patches(std::uint32_t v) const {
    return {vertex_patch_.data() + vertex_patch_offset_[v], vertex_patch_.data() + vertex_patch_offset_[v + 1]};
  }
  /// The edges at vertex v (ascending).
  std::span<const std::uint32_t> vertex_edges(std::uint32_t v) const {
    return {vertex_edge_.data() + vertex_edge_offset_[v], vertex_edge_.data() + vertex_edge_offset_[v + 1]};
  }
  /// Whether two features share a vertex (a contact moving from one to the
  /// other carries its history, docs/model.md §11.9).
  bool adjacent(std::uint32_t f, std::uint32_t g) const;

  // --- geometry ---------------------------------------------------------------
  const TriangleTree& tree() const { return tree_; }
  const Vec3& lower() const { return lower_; }  ///< bounding box
  const Vec3& upper() const { return upper_; }
  /// The area-weighted centroid of the surface (length).
  const Vec3& centroid() const { return centroid_; }

 private:
  void merge_vertices(std::vector<std::array<std::uint32_t, 3>>& triangles);
  void drop_degenerate(std::vector<std::array<std::uint32_t, 3>>& triangles);
  void build_edges();
  void build_patches();
  void build_vertex_lists();
  void build_geometry();

  std::vector<Vec3> vertices_;
  std::vector<std::array<std::uint32_t, 3>> triangles_;
  std::vector<DroppedTriangle> dropped_;
  std::vector<Vec3> face_normal_;
  std::vector<std::array<std::uint32_t, 3>> face_edges_;
  std::vector<Edge> edges_;
  std::vector<std::uint8_t> vertex_active_;
  std::vector<std::uint32_t> patch_of_;
  std::vector<Vec3> patch_point_, patch_normal_;
  std::vector<std::uint32_t> patch_adjacent_offset_, patch_adjacent_;  ///< patches sharing a vertex
  std::vector<std::uint32_t> vertex_patch_offset_, vertex_patch_;
  std::vector<std::uint32_t> vertex_edge_offset_, vertex_edge_;
  TriangleTree tree_;
  Vec3 lower_ = Vec3::Zero(), upper_ = Vec3::Zero(), centroid_ = Vec3::Zero();
};

}  // namespace dem
