// Checkpoint bytes of mesh walls and of the stateless plane-wall law of
// mesh contacts (contact/mesh_contact_provider.hpp).
#include <string>

#include "contact/contact_laws.hpp"
#include "contact/mesh_contact_provider.hpp"

namespace dem {

void save_mesh_walls(ByteWriter& w, const std::vector<MeshWall>& meshes) {
  w.u64(meshes.size());
  for (const MeshWall& m : meshes) {
    w.string(m.name);
    w.array(m.mesh->vertices(), [](ByteWriter& ww, const Vec3& v) { ww.vec3(v); });
    w.array(m.mesh->triangles(), [](ByteWriter& ww, const std::array<std::uint32_t, 3>& t) {
      for (const std::uint32_t v : t) ww.u32(v);
    });
    w.vec3(m.motion.centre);
    w.vec3(m.motion.velocity);
    w.vec3(m.motion.angular_velocity);
    w.u32(m.material);
    w.f64(m.stiffness);
  }
}

std::vector<MeshWall> load_mesh_walls(ByteReader& r) {
  const std::size_t count = r.count("meshes", 8 + 8 + 8 + 72 + 12);
  std::vector<MeshWall> out(count);
  for (MeshWall& m : out) {
    m.name = r.string("mesh name", 4096);
    std::vector<Vec3> vertices;
    std::vector<std::array<std::uint32_t, 3>> triangles;
    r.array(vertices, 24, "mesh vertex", [](ByteReader& rr) { return rr.vec3("mesh vertex"); });
    r.array(triangles, 12, "mesh triangle", [](ByteReader& rr) {
      std::array<std::uint32_t, 3> t;
      for (std::uint32_t& v : t) v = rr.u32("mesh triangle");
      return t;
    });
    try {
      auto mesh = std::make_shared<TriangleMesh>(std::move(vertices), std::move(triangles));
      if (!mesh->dropped().empty()) throw std::invalid_argument("a saved mesh has degenerate triangles");
      m.mesh = std::move(mesh);
    } catch (const std::invalid_argument& e) {
      throw StateError("inconsistent: mesh \"" + m.name + "\": " + e.what());
    }
    m.motion.centre = r.vec3("mesh centre");
    m.motion.velocity = r.vec3("mesh velocity");
    m.motion.angular_velocity = r.vec3("mesh angular velocity");
    m.material = r.u32("mesh material");
    m.stiffness = r.f64("mesh stiffness");
    if (!(m.motion.centre.allFinite() && m.motion.velocity.allFinite() && m.motion.angular_velocity.allFinite()))
      throw StateError("inconsistent: mesh \"" + m.name + "\": its motion is not finite");
  }
  return out;
}

PlaneMeshLaw PlaneMeshLaw::load(ByteReader& r) {
  const std::uint8_t code = r.u8("mesh wall law");
  const PlaneWallLaw* law = find_plane_wall_law(code);
  if (!law) throw StateError("inconsistent: mesh wall law " + std::to_string(code) + " (" + plane_wall_law_codes() + ")");
  return PlaneMeshLaw{law};
}

}  // namespace dem
