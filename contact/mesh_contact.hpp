#pragma once
/// \file mesh_contact.hpp
/// A sphere against a rigid triangle mesh (docs/model.md §11.9): the mesh's
/// prescribed rigid motion and pose, and the narrow phase that turns the
/// triangles near a sphere into its contacts, one per touched feature,
/// each a plane-wall contact against a local Wall.
///
/// The claiming rule (so that the force does not depend on how a surface
/// is tessellated): the closest point of each triangle near the sphere is
/// mapped to a feature (its face's planar patch; an active edge or vertex;
/// an inactive edge or vertex: the patch, and then only where the centre
/// projects onto the patch there). Each feature gives at most one contact:
/// a patch, the plane contact with its plane (normal towards the centre);
/// an edge or a vertex, the contact with its closest point p (normal
/// (x - p)/|x - p|: a rounded edge or corner). An edge contact stands only
/// where the centre is in the edge's Voronoi region (both its faces' closest
/// points are on it), or at a concave edge beside the one face that claims
/// the centre; a vertex contact only where every face around the vertex has
/// its closest point there. So a convex surface gives one contact, with its
/// closest feature.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/triangle_mesh.hpp"
#include "core/types.hpp"

namespace dem {

/// A mesh's prescribed rigid motion: it turns at `angular_velocity`
/// (1/time, spatial) about `centre` (length; at t = 0) while `centre`
/// moves at `velocity` (length/time); both constant.
struct MeshMotion {
  Vec3 centre = Vec3::Zero();
  Vec3 velocity = Vec3::Zero();
  Vec3 angular_velocity = Vec3::Zero();
  bool moves() const { return !velocity.isZero(0.0) || !angular_velocity.isZero(0.0); }
};

/// Where a mesh is at one time: x = c(t) + R(t) (y - c0) for a point y of
/// its body frame (the scene's frame at t = 0), c(t) = c0 + v t,
/// R(t) = exp(t [omega]x) (Rodrigues' formula of the angle |omega| t, so
/// the pose is a function of t alone: restarts give the same bits).
struct MeshPose {
  bool identity = true;  ///< R = I and c = c0: points keep their coordinates exactly
  Mat3 rotation = Mat3::Identity();
  Vec3 centre0 = Vec3::Zero(), centre = Vec3::Zero();
  Vec3 velocity = Vec3::Zero(), angular_velocity = Vec3::Zero();

  Vec3 to_body(const Vec3& x) const { return identity ? x : Vec3(centre0 + rotation.transpose() * (x - centre)); }
  Vec3 to_world(const Vec3& y) const { return identity ? y : Vec3(centre + rotation * (y - centre0)); }
  Vec3 direction_to_world(const Vec3& n) const { return identity ? n : Vec3(rotation * n); }
  /// The velocity of the mesh's material point at world point p.
  Vec3 velocity_at(const Vec3& p) const { return velocity + angular_velocity.cross(p - centre); }
};

/// The pose of a mesh moving by `motion` at time t (time).
MeshPose mesh_pose(const MeshMotion& motion, double t);

/// A triangle mesh as a wall of a scene: geometry (body frame), motion and
/// the contact law's data.
struct MeshWall {
  std::string name;                           ///< [[mesh]] name (walls.csv, meshes.pvd)
  std::shared_ptr<const TriangleMesh> mesh;
  MeshMotion motion;
  /// Its [[material]] (laws with materials), or Wall::kParticleMaterial.
  std::uint32_t material = Wall::kParticleMaterial;
  double stiffness = 0.0;                     ///< K^pw or k_c of the stiffness laws (Wall::stiffness)
};

/// One contact of a sphere with a mesh, in the mesh's body frame.
struct MeshContact {
  std::uint32_t feature = 0;
  Vec3 point = Vec3::Zero();   ///< the local wall's point: the patch's point, or the closest point
  Vec3 normal = Vec3::Zero();  ///< unit, towards the sphere's centre
  Vec3 contact = Vec3::Zero(); ///< the closest point of the feature (where the mesh's velocity is taken)
};

/// Scratch of mesh_contacts(), kept between calls so that they allocate nothing.
struct MeshContactScratch {
  struct Candidate {
    std::uint32_t feature;
    Vec3 point;
  };
  std::vector<Candidate> candidates;
  std::vector<std::uint32_t> patches, edges;  ///< in contact, ascending
  std::vector<std::pair<std::uint32_t, std::uint32_t>> reports;  ///< (triangle, feature named or kNone), by triangle
  std::vector<std::uint32_t> triangles;       ///< broad-phase output
};

/// The contacts of a sphere of radius r centred at y (body frame) with the
/// mesh, by the claiming rule of the file comment, ascending by feature:
/// every feature whose distance to y is below r + reach (reach >= 0: how
/// far beyond touching a law's contact lasts). `triangles`: the mesh's
/// triangles within r + reach of y, or more (any order; the result does
/// not depend on the extra ones). Appends to `out`.
void mesh_contacts(const TriangleMesh& mesh, const Vec3& y, double r, double reach,
                   std::span<const std::uint32_t> triangles, MeshContactScratch& scratch,
                   std::vector<MeshContact>& out);

}  // namespace dem
