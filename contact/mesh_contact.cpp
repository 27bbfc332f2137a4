#include "contact/mesh_contact.hpp"

#include <algorithm>
#include <cmath>

namespace dem {

MeshPose mesh_pose(const MeshMotion& motion, double t) {
  MeshPose p;
  p.centre0 = motion.centre;
  p.velocity = motion.velocity;
  p.angular_velocity = motion.angular_velocity;
  if (!motion.moves() || t == 0.0) {
    p.centre = motion.centre;
    return p;
  }
  p.identity = false;
  p.centre = motion.centre + t * motion.velocity;
  const double speed = motion.angular_velocity.norm();
  if (speed > 0.0) {
    const Vec3 axis = motion.angular_velocity / speed;
    const double angle = speed * t;
    Mat3 k;
    k << 0.0, -axis.z(), axis.y(), axis.z(), 0.0, -axis.x(), -axis.y(), axis.x(), 0.0;
    p.rotation = Mat3::Identity() + std::sin(angle) * k + (1.0 - std::cos(angle)) * (k * k);
  }
  return p;
}

namespace {

/// Whether the candidate of a patch from a region other than the face
/// interior (an inactive edge or vertex) lies where y projects onto the
/// patch: its offset from y along the patch is at round-off.
bool projects_here(const Vec3& y, const Vec3& point, const Vec3& normal, double r) {
  const Vec3 d = y - point;
  const Vec3 along = d - d.dot(normal) * normal;
  return along.squaredNorm() <= 1e-18 * r * r;
}

}  // namespace

void mesh_contacts(const TriangleMesh& mesh, const Vec3& y, double r, double reach,
                   std::span<const std::uint32_t> triangles, MeshContactScratch& scratch,
                   std::vector<MeshContact>& out) {
  auto& candidates = scratch.candidates;
  candidates.clear();
  const auto& vertices = mesh.vertices();
  for (const std::uint32_t t : triangles) {
    const auto& tri = mesh.triangles()[t];
    const TrianglePoint tp = closest_point_on_triangle(y, vertices[tri[0]], vertices[tri[1]], vertices[tri[2]]);
    const std::uint32_t f = mesh.feature_of(t, tp.region);
    if (mesh.is_patch(f) && tp.region != TriangleRegion::face &&
        !projects_here(y, tp.point, mesh.patch_normal(f), r))
      continue;  // the patch's own triangle under y says so
    candidates.push_back({f, tp.point});
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const MeshContactScratch::Candidate& a, const MeshContactScratch::Candidate& b) {
              return a.feature < b.feature;
            });
  const double limit = r + reach;
  scratch.patches.clear();
  scratch.edges.clear();
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const std::uint32_t f = candidates[k].feature;
    if (k > 0 && candidates[k - 1].feature == f) continue;
    MeshContact c;
    c.feature = f;
    if (mesh.is_patch(f)) {
      const Vec3& n = mesh.patch_normal(f);
      const double g = (y - mesh.patch_point(f)).dot(n);
      if (!(std::abs(g) < limit)) continue;
      c.point = mesh.patch_point(f);
      c.normal = g >= 0.0 ? n : Vec3(-n);
      c.contact = y - g * n;
      scratch.patches.push_back(f);
      out.push_back(c);
      continue;
    }
    const auto claimed = [&](std::uint32_t patch) {
      return std::binary_search(scratch.patches.begin(), scratch.patches.end(), patch);
    };
    Vec3 p;
    if (mesh.is_edge(f)) {
      const TriangleMesh::Edge& e = mesh.edges()[f - mesh.patch_count()];
      if (claimed(mesh.patch_of(e.face[0])) || (e.face[1] != TriangleMesh::kNone && claimed(mesh.patch_of(e.face[1]))))
        continue;
      const Vec3 &a = vertices[e.vertex[0]], &b = vertices[e.vertex[1]];
      const Vec3 ab = b - a;
      const double s = std::clamp((y - a).dot(ab) / ab.squaredNorm(), 0.0, 1.0);
      p = a + s * ab;
    } else {
      const std::uint32_t v = f - mesh.vertex_feature(0);
      const auto patches = mesh.vertex_patches(v);
      if (std::any_of(patches.begin(), patches.end(), claimed)) continue;
      const auto edges = mesh.vertex_edges(v);
      if (std::any_of(edges.begin(), edges.end(), [&](std::uint32_t e) {
            return std::binary_search(scratch.edges.begin(), scratch.edges.end(), mesh.edge_feature(e));
          }))
        continue;
      p = vertices[v];
    }
    const Vec3 d = y - p;
    const double dist = d.norm();
    if (!(dist < limit && dist > 0.0)) continue;
    c.point = p;
    c.normal = d / dist;
    c.contact = p;
    if (mesh.is_edge(f)) scratch.edges.push_back(f);
    out.push_back(c);
  }
}

}  // namespace dem
