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

/// Whether the edge e with faces own (its patch in contact) and other is
/// concave seen from y: other's third vertex lies on y's side of own's
/// patch plane.
bool concave_from(const TriangleMesh& mesh, const TriangleMesh::Edge& e, std::uint32_t own, std::uint32_t other,
                  const Vec3& y) {
  const std::uint32_t patch = mesh.patch_of(own);
  const Vec3& point = mesh.patch_point(patch);
  const Vec3 n = (y - point).dot(mesh.patch_normal(patch)) >= 0.0 ? mesh.patch_normal(patch) : Vec3(-mesh.patch_normal(patch));
  const double scale = (mesh.vertices()[e.vertex[1]] - mesh.vertices()[e.vertex[0]]).norm();
  for (const std::uint32_t v : mesh.triangles()[other])
    if (v != e.vertex[0] && v != e.vertex[1]) return (mesh.vertices()[v] - point).dot(n) > 1e-12 * scale;
  return false;
}

}  // namespace

void mesh_contacts(const TriangleMesh& mesh, const Vec3& y, double r, double reach,
                   std::span<const std::uint32_t> triangles, MeshContactScratch& scratch,
                   std::vector<MeshContact>& out) {
  auto& candidates = scratch.candidates;
  candidates.clear();
  auto& reports = scratch.reports;  // (triangle, the feature its closest point names, or kNone)
  reports.clear();
  const auto& vertices = mesh.vertices();
  for (const std::uint32_t t : triangles) {
    const auto& tri = mesh.triangles()[t];
    const TrianglePoint tp = closest_point_on_triangle(y, vertices[tri[0]], vertices[tri[1]], vertices[tri[2]]);
    const std::uint32_t f = mesh.feature_of(t, tp.region);
    if (mesh.is_patch(f) && tp.region != TriangleRegion::face &&
        !projects_here(y, tp.point, mesh.patch_normal(f), r)) {
      reports.emplace_back(t, TriangleMesh::kNone);
      continue;  // the patch's own triangle under y says so
    }
    reports.emplace_back(t, f);
    candidates.push_back({f, tp.point});
  }
  std::sort(reports.begin(), reports.end());
  const auto report = [&](std::uint32_t face) {
    const auto it = std::lower_bound(reports.begin(), reports.end(), std::make_pair(face, std::uint32_t{0}));
    return it != reports.end() && it->first == face ? it->second : TriangleMesh::kNone;
  };
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
      // An edge stands where y is in its Voronoi region (each face's closest
      // point is on it), or at a concave edge beside the one face that
      // claims y (docs/model.md §11.9).
      const TriangleMesh::Edge& e = mesh.edges()[f - mesh.patch_count()];
      const std::uint32_t r0 = report(e.face[0]);
      const std::uint32_t r1 = e.face[1] == TriangleMesh::kNone ? f : report(e.face[1]);
      if (r0 != f || r1 != f) {
        if (r0 != f && r1 != f) continue;
        const std::uint32_t own = r0 == f ? e.face[1] : e.face[0], other = r0 == f ? e.face[0] : e.face[1];
        const std::uint32_t claim = r0 == f ? r1 : r0;
        if (!(claim == mesh.patch_of(own) && claimed(claim) && concave_from(mesh, e, own, other, y))) continue;
      }
      const Vec3 &a = vertices[e.vertex[0]], &b = vertices[e.vertex[1]];
      const Vec3 ab = b - a;
      const double s = std::clamp((y - a).dot(ab) / ab.squaredNorm(), 0.0, 1.0);
      p = a + s * ab;
    } else {
      // A vertex stands where y is in its Voronoi region: every face around
      // it has its closest point there.
      const std::uint32_t v = f - mesh.vertex_feature(0);
      bool all = true;
      for (const std::uint32_t e : mesh.vertex_edges(v))
        for (const std::uint32_t face : mesh.edges()[e].face)
          all = all && (face == TriangleMesh::kNone || report(face) == f);
      if (!all) continue;
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
