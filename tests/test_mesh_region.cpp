// A closed surface mesh as the region of a packing (scene/mesh_region.hpp,
// docs/model.md §21.2): a cube given as 12 triangles is the box region (its
// volume, bounds and depths), a packing in an octahedron lies inside it and
// has the same bits on 1 and 2 threads, and an open surface is refused.
#include <gtest/gtest.h>

#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "scene/mesh_region.hpp"
#include "scene/packing_genesis.hpp"
#include "scene/packing_region.hpp"
#include "scene_support.hpp"

namespace dem {
namespace {

/// An ASCII STL of the triangles (corner triples), normals left to VTK.
std::string stl(const std::vector<std::array<Vec3, 3>>& triangles) {
  std::string out = "solid region\n";
  char line[200];
  for (const auto& t : triangles) {
    out += "facet normal 0 0 0\nouter loop\n";
    for (const Vec3& v : t) {
      std::snprintf(line, sizeof line, "vertex %.17g %.17g %.17g\n", v.x(), v.y(), v.z());
      out += line;
    }
    out += "endloop\nendfacet\n";
  }
  return out + "endsolid region\n";
}

/// The cube [0, a]^3 as 12 triangles (some wound inwards on purpose: the
/// region orients them).
std::vector<std::array<Vec3, 3>> cube(double a) {
  const auto c = [a](int i, int j, int k) { return Vec3(a * i, a * j, a * k); };
  return {{c(0, 0, 0), c(1, 0, 0), c(1, 1, 0)}, {c(0, 0, 0), c(1, 1, 0), c(0, 1, 0)},
          {c(0, 0, 1), c(1, 0, 1), c(1, 1, 1)}, {c(0, 0, 1), c(1, 1, 1), c(0, 1, 1)},
          {c(0, 0, 0), c(1, 0, 0), c(1, 0, 1)}, {c(0, 0, 0), c(1, 0, 1), c(0, 0, 1)},
          {c(0, 1, 0), c(1, 1, 0), c(1, 1, 1)}, {c(0, 1, 0), c(1, 1, 1), c(0, 1, 1)},
          {c(0, 0, 0), c(0, 1, 0), c(0, 1, 1)}, {c(0, 0, 0), c(0, 1, 1), c(0, 0, 1)},
          {c(1, 0, 0), c(1, 1, 0), c(1, 1, 1)}, {c(1, 0, 0), c(1, 1, 1), c(1, 0, 1)}};
}

/// The octahedron |x| + |y| + |z| <= a.
std::vector<std::array<Vec3, 3>> octahedron(double a) {
  std::vector<std::array<Vec3, 3>> t;
  for (int sx : {-1, 1})
    for (int sy : {-1, 1})
      for (int sz : {-1, 1}) t.push_back({Vec3(sx * a, 0, 0), Vec3(0, sy * a, 0), Vec3(0, 0, sz * a)});
  return t;
}

std::filesystem::path write_stl(const std::string& name, const std::vector<std::array<Vec3, 3>>& triangles) {
  const std::filesystem::path p = testing::scratch_folder("mesh_region") / name;
  testing::write_text(p, stl(triangles));
  return p;
}

TEST(MeshRegion, ACubeOfTwelveTrianglesIsTheBoxRegion) {
  const MeshRegion m(write_stl("cube.stl", cube(1.0)), 2.0);  // scaled to [0, 2]^3
  PackingRegion box;
  box.lower = Vec3::Zero(), box.upper = Vec3::Constant(2.0);
  EXPECT_NEAR(m.volume(), 8.0, 1e-12);
  EXPECT_EQ(m.bounds().first, Vec3::Zero());
  EXPECT_EQ(m.bounds().second, Vec3::Constant(2.0));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-0.5, 2.5);
  double worst = 0.0;
  int inside = 0;
  for (int k = 0; k < 2000; ++k) {
    const Vec3 x(u(rng), u(rng), u(rng));
    const double d = region_depth(box, x);
    if (d > 0.0) {
      ++inside;
      worst = std::max(worst, std::abs(m.depth(x) - d));  // exact inside
    } else {
      EXPECT_LE(m.depth(x), 1e-12) << x.transpose();  // outside: only the sign matters
    }
  }
  EXPECT_GT(inside, 500);
  EXPECT_LT(worst, 1e-12);
  EXPECT_NEAR(m.inradius(), 1.0, 2.0 / 32);
}

TEST(MeshRegion, APackingInAnOctahedronLiesInsideItAndHasTheSameBitsOnOneAndTwoThreads) {
  PackingParameters p;
  p.region.kind = PackingRegionKind::mesh;
  p.region.file = write_stl("octahedron.stl", octahedron(1.0));
  p.region.scale = 6.0;
  load_mesh_region(p.region);
  ASSERT_NEAR(region_volume(p.region), 4.0 / 3.0 * 216.0, 1e-9);  // (4/3) a^3
  p.sizes.kind = SizeDistributionKind::uniform;
  p.sizes.d_min = 0.8, p.sizes.d_max = 1.2;
  p.solid_fraction = 0.45;
  p.seed = 11;
  std::vector<Scene> made;
  for (const int threads : {1, 2}) {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, threads);
    made.push_back(make_packing(p, 1000.0, {false, false, false}));
  }
  const ParticleStore &a = made[0].particles, &b = made[1].particles;
  ASSERT_GT(a.size(), 100u);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.position.data(), b.position.data(), a.size() * sizeof(Vec3)), 0);
  // Inside the octahedron, by its own inequality: |x| + |y| + |z| <= 6 - sqrt(3) r.
  double worst = -INFINITY;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, (a.position[i].cwiseAbs().sum() + std::sqrt(3.0) * a.radius[i] - 6.0) /
                                (std::sqrt(3.0) * 2.0 * a.radius[i]));
  EXPECT_LT(worst, 1e-3) << "a sphere protrudes by this fraction of its diameter";
}

TEST(MeshRegion, AnOpenSurfaceIsRefusedNamingTheFile) {
  auto open = cube(1.0);
  open.pop_back();
  PackingRegion r;
  r.kind = PackingRegionKind::mesh;
  r.file = write_stl("open.stl", open);
  try {
    load_mesh_region(r);
    ADD_FAILURE() << "an open surface was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("file: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a closed surface"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dem
