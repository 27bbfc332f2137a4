#pragma once
// Triangle meshes for the mesh-wall tests: small surfaces built in code
// and written as ASCII STL files into a scratch folder.

#include <array>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "contact/triangle_mesh.hpp"
#include "scene_support.hpp"

namespace dem::testing {

struct Surface {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
  TriangleMesh mesh() const { return TriangleMesh(vertices, triangles); }
};

/// The square [-h, h]^2 at z = 0 as two triangles (normal +z).
inline Surface square_of_two(double h) {
  return {{{-h, -h, 0}, {h, -h, 0}, {h, h, 0}, {-h, h, 0}}, {{0, 1, 2}, {0, 2, 3}}};
}

/// The square [-h, h]^2 at z = 0 as a fan of `n` triangles (a multiple of
/// 4) around `centre` (in the square): each side split into n/4 segments.
inline Surface square_fan(double h, std::size_t n, const Vec3& centre) {
  Surface s;
  s.vertices.push_back(centre);
  const std::size_t per_side = n / 4;
  const Vec3 corners[4] = {{-h, -h, 0}, {h, -h, 0}, {h, h, 0}, {-h, h, 0}};
  for (std::size_t side = 0; side < 4; ++side)
    for (std::size_t k = 0; k < per_side; ++k) {
      const double t = static_cast<double>(k) / static_cast<double>(per_side);
      s.vertices.push_back(corners[side] + t * (corners[(side + 1) % 4] - corners[side]));
    }
  const std::uint32_t rim = static_cast<std::uint32_t>(s.vertices.size() - 1);
  for (std::uint32_t k = 0; k < rim; ++k) s.triangles.push_back({0, 1 + k, 1 + (k + 1) % rim});
  return s;
}

/// A fan of n triangles around the apex (0, 0, height) over a circle of
/// radius `radius` at z = 0 (height 0: a flat disc polygon).
inline Surface apex_fan(std::size_t n, double radius, double height) {
  Surface s;
  s.vertices.push_back({0, 0, height});
  for (std::size_t k = 0; k < n; ++k) {
    const double a = 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    s.vertices.push_back({radius * std::cos(a), radius * std::sin(a), 0.0});
  }
  for (std::uint32_t k = 0; k < n; ++k)
    s.triangles.push_back({0, 1 + k, 1 + static_cast<std::uint32_t>((k + 1) % n)});
  return s;
}

/// The box [lo, hi] as 12 triangles (outward normals).
inline Surface box(const Vec3& lo, const Vec3& hi) {
  Surface s;
  for (int k = 0; k < 8; ++k) s.vertices.push_back({k & 1 ? hi.x() : lo.x(), k & 2 ? hi.y() : lo.y(), k & 4 ? hi.z() : lo.z()});
  s.triangles = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                 {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
  return s;
}

/// A closed cylinder (drum) about the z axis: `around` segments, inward
/// facing does not matter (contacts take the particle's side).
inline Surface drum(double radius, double z0, double z1, std::size_t around) {
  Surface s;
  for (std::size_t k = 0; k < around; ++k) {
    const double a = 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(around);
    s.vertices.push_back({radius * std::cos(a), radius * std::sin(a), z0});
    s.vertices.push_back({radius * std::cos(a), radius * std::sin(a), z1});
  }
  const std::uint32_t bottom = static_cast<std::uint32_t>(s.vertices.size());
  s.vertices.push_back({0, 0, z0});
  const std::uint32_t n = static_cast<std::uint32_t>(around);
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t a0 = 2 * k, a1 = 2 * k + 1, b0 = 2 * ((k + 1) % n), b1 = 2 * ((k + 1) % n) + 1;
    s.triangles.push_back({a0, b0, b1});
    s.triangles.push_back({a0, b1, a1});
    s.triangles.push_back({bottom, b0, a0});
  }
  return s;
}

/// ASCII STL of a surface (17 significant digits: the doubles read back exactly).
inline std::string ascii_stl(const Surface& s) {
  std::ostringstream out;
  out.precision(17);
  out << "solid test\n";
  for (const auto& t : s.triangles) {
    out << "facet normal 0 0 0\nouter loop\n";
    for (const std::uint32_t v : t)
      out << "vertex " << s.vertices[v].x() << " " << s.vertices[v].y() << " " << s.vertices[v].z() << "\n";
    out << "endloop\nendfacet\n";
  }
  out << "endsolid test\n";
  return out.str();
}

}  // namespace dem::testing
