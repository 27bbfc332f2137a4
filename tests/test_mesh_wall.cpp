// Triangle-mesh walls (docs/model.md §11.9, docs/scene-format.md [[mesh]]):
//  - geometry: closest-point regions, planar patches, active edges and
//    vertices, degenerate triangles dropped, an empty mesh refused;
//  - the claiming rule: a sphere on the apex of a fan of N = 3, 8, 50
//    triangles gets one vertex contact and the same force for every N; on a
//    flat fan the plane's force; rolling across coplanar edges the force
//    does not move; sliding off a box's rim it follows the rounded edge
//    continuously;
//  - forces against central differences of the contact energy in the face,
//    edge and vertex regions (the stateless laws, and the Hertz-Mindlin
//    elastic part);
//  - a sphere dropped on a square of 2 triangles and on a fan of 64
//    triangles gives the energy table of the analytic [[wall]] (Hertz-Mindlin
//    with friction and damping, and penalty);
//  - the same bits at 1 and 2 threads, restarts bit for bit with mesh
//    contacts active;
//  - bad [[mesh]] input refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "contact/hertz_mindlin.hpp"
#include "contact/mesh_contact_provider.hpp"
#include "contact/plane_wall_law.hpp"
#include "core/parallel.hpp"
#include "fields/gravity_provider.hpp"
#include "io/checkpoint.hpp"
#include "mesh_support.hpp"
#include "part_support.hpp"
#include "scene/scene_builder.hpp"
#include "scene_support.hpp"
#include "support.hpp"

using namespace dem;
using namespace dem::testing;
namespace fs = std::filesystem;

namespace {

using dem::testing::snapshot;

const fs::path& folder() {
  static const fs::path dir = scratch_folder("mesh_wall");
  return dir;
}

// ------------------------------------------------------------------ geometry

TEST(MeshGeometry, ClosestPointRegions) {
  const Vec3 a(0, 0, 0), b(1, 0, 0), c(0, 1, 0);
  const auto at = [&](const Vec3& x) { return closest_point_on_triangle(x, a, b, c); };
  EXPECT_EQ(at({0.2, 0.2, 1}).region, TriangleRegion::face);
  EXPECT_TRUE(at({0.2, 0.2, 1}).point.isApprox(Vec3(0.2, 0.2, 0), 1e-15));
  EXPECT_EQ(at({-1, -1, 0.5}).region, TriangleRegion::vertex_a);
  EXPECT_EQ(at({2, -0.1, 0}).region, TriangleRegion::vertex_b);
  EXPECT_EQ(at({-0.1, 3, 0}).region, TriangleRegion::vertex_c);
  EXPECT_EQ(at({0.5, -1, 0}).region, TriangleRegion::edge_ab);
  EXPECT_EQ(at({1, 1, 0}).region, TriangleRegion::edge_bc);
  EXPECT_EQ(at({-1, 0.5, 0}).region, TriangleRegion::edge_ca);
  EXPECT_TRUE(at({1, 1, 0}).point.isApprox(Vec3(0.5, 0.5, 0), 1e-15));
}

TEST(MeshGeometry, PatchesEdgesAndVertices) {
  const TriangleMesh square = square_of_two(1.0).mesh();
  EXPECT_EQ(square.patch_count(), 1u);
  std::size_t active = 0;
  for (const auto& e : square.edges()) active += e.active;
  EXPECT_EQ(active, 4u) << "the diagonal is inside the patch";
  const TriangleMesh fan = square_fan(1.0, 64, Vec3(0.1, -0.2, 0)).mesh();
  EXPECT_EQ(fan.patch_count(), 1u);
  EXPECT_FALSE(fan.vertex_active(0)) << "the fan's centre is inside the patch";
  const TriangleMesh cube = box(Vec3(0, 0, 0), Vec3(1, 1, 1)).mesh();
  EXPECT_EQ(cube.patch_count(), 6u);
  active = 0;
  for (const auto& e : cube.edges()) active += e.active;
  EXPECT_EQ(active, 12u);
  for (std::uint32_t v = 0; v < 8; ++v) EXPECT_TRUE(cube.vertex_active(v));
  const TriangleMesh apex = apex_fan(8, 1.0, 0.5).mesh();
  EXPECT_EQ(apex.patch_count(), 8u);
  EXPECT_TRUE(apex.vertex_active(0));
  EXPECT_TRUE(apex.adjacent(apex.vertex_feature(0), 3));
  EXPECT_EQ(cube.centroid(), Vec3(0.5, 0.5, 0.5));
}

TEST(MeshGeometry, DegenerateTrianglesAreDroppedAndAnEmptyMeshRefused) {
  Surface s = square_of_two(1.0);
  s.vertices.push_back({0.5, 0.5, 0});
  s.triangles.push_back({0, 2, 4});  // on the diagonal: zero area
  s.triangles.push_back({1, 1, 3});  // a repeated vertex
  const TriangleMesh m = s.mesh();
  EXPECT_EQ(m.face_count(), 2u);
  ASSERT_EQ(m.dropped().size(), 2u);
  EXPECT_EQ(m.dropped()[0].index, 2u);
  EXPECT_EQ(m.dropped()[0].reason, "zero area");
  EXPECT_EQ(m.dropped()[1].reason, "repeated vertex");
  EXPECT_THROW(TriangleMesh({{0, 0, 0}}, {}), std::invalid_argument);
  EXPECT_THROW(TriangleMesh({{0, 0, 0}, {1, 0, 0}, {NAN, 0, 0}}, {{0, 1, 2}}), std::invalid_argument);
}

TEST(MeshGeometry, TheTreeFindsEveryTriangleInReach) {
  const TriangleMesh m = square_fan(1.0, 64, Vec3(0.3, 0.1, 0)).mesh();
  std::mt19937_64 rng(3);
  for (int k = 0; k < 200; ++k) {
    const Vec3 x = random_vec(rng, 1.5);
    const double reach = 0.3;
    std::vector<std::uint32_t> found;
    m.tree().query(x, reach, found);
    std::sort(found.begin(), found.end());
    for (std::uint32_t t = 0; t < m.face_count(); ++t) {
      const auto& tri = m.triangles()[t];
      const Vec3 p = closest_point_on_triangle(x, m.vertices()[tri[0]], m.vertices()[tri[1]], m.vertices()[tri[2]]).point;
      if ((x - p).norm() < reach) {
        EXPECT_TRUE(std::binary_search(found.begin(), found.end(), t)) << k << " " << t;
      }
    }
  }
}

// ------------------------------------------------------------ the claiming rule

/// One sphere (radius r, unit density) at x, for the providers' tests.
ParticleStore one_sphere(const Vec3& x, double r, const Vec3& v = Vec3::Zero(), const Vec3& w = Vec3::Zero()) {
  ParticleStore s;
  s.add(solid_sphere(r, 1000.0, x, v, w));
  return s;
}

MeshWall wall_of(const Surface& surface, double stiffness = 1e3) {
  MeshWall m;
  m.name = "m";
  m.mesh = std::make_shared<TriangleMesh>(surface.vertices, surface.triangles);
  m.motion.centre = m.mesh->centroid();
  m.stiffness = stiffness;
  return m;
}

/// The force on a sphere of radius r at x from a stateless law's mesh (one evaluation).
struct Probe {
  Vec3 force = Vec3::Zero();
  double energy = 0.0;
  std::size_t contacts = 0;
};
Probe probe(const MeshWall& wall, const PlaneWallLaw& law, const Vec3& x, double r) {
  const ParticleStore s = one_sphere(x, r);
  PlaneMeshProvider p({wall}, PlaneMeshLaw{&law}, 1, 0.1 * r, 0.0, "pmeshes");
  p.evaluate(s);
  std::vector<Vec3> f(1, Vec3::Zero()), m(1, Vec3::Zero());
  p.add_body_forces(s, 0, 1, f, m);
  EnergyReport rep;
  p.add_potential_energies(s, rep);
  return {f[0], rep.wall, p.contact_count()};
}

TEST(MeshClaiming, OneVertexContactOnTheApexOfAFanWhateverItsCount) {
  const double r = 0.05, depth = 1e-3;
  std::vector<Vec3> forces;
  for (const std::size_t n : {3u, 8u, 50u}) {
    const MeshWall wall = wall_of(apex_fan(n, 1.0, 0.2));
    const Probe p = probe(wall, hertz_plane_wall(), Vec3(0, 0, 0.2 + r - depth), r);
    EXPECT_EQ(p.contacts, 1u) << n;
    forces.push_back(p.force);
  }
  // The Hertz wall force of the overlap: K^pw/r (depth/r)^{3/2} along +z.
  const double expected = 1e3 / r * std::pow(depth / r, 1.5);
  std::printf("apex of fans of 3, 8, 50 triangles: F_z = %.17g, %.17g, %.17g (Hertz: %.17g)\n", forces[0].z(),
              forces[1].z(), forces[2].z(), expected);
  EXPECT_EQ(forces[0], forces[1]);
  EXPECT_EQ(forces[0], forces[2]);
  EXPECT_NEAR(forces[0].z(), expected, 1e-12 * expected);
  // A flat fan: the plane's contact for every count.
  for (const std::size_t n : {3u, 8u, 50u}) {
    const Probe p = probe(wall_of(apex_fan(n, 1.0, 0.0)), hertz_plane_wall(), Vec3(0, 0, r - depth), r);
    EXPECT_EQ(p.contacts, 1u);
    EXPECT_NEAR(p.force.z(), expected, 1e-12 * expected) << n;
  }
}

TEST(MeshClaiming, RollingAcrossCoplanarEdgesFeelsNoJump) {
  const double r = 0.05, z = r - 2e-3;
  const MeshWall wall = wall_of(square_fan(1.0, 64, Vec3(0.013, -0.021, 0)));
  const MeshWall plane = wall_of(square_of_two(1.0));
  double largest = 0.0;
  Vec3 last = Vec3::Zero();
  // A path through the fan's centre and across many of its edges.
  for (int k = 0; k <= 4000; ++k) {
    const double t = -0.5 + 1e-3 * 0.25 * k;
    const Vec3 x(t, 0.37 * t + 0.002, z);
    const Probe p = probe(wall, penalty_plane_wall(), x, r);
    ASSERT_EQ(p.contacts, 1u) << t;
    if (k > 0) largest = std::max(largest, (p.force - last).norm());
    last = p.force;
    EXPECT_EQ(p.force, probe(plane, penalty_plane_wall(), x, r).force) << t;
  }
  std::printf("rolling across the 64-triangle fan: largest step change of F %.3g (|F| %.6g)\n", largest, last.norm());
  EXPECT_LE(largest, 1e-14 * last.norm());
}

TEST(MeshClaiming, SlidingOffABoxRimFollowsTheRoundedEdge) {
  const double r = 0.05, z = 1.0 + r - 1e-3;  // the top face at z = 1, the rim at x = 1
  const MeshWall wall = wall_of(box(Vec3(0, 0, 0), Vec3(1, 1, 1)));
  double largest = 0.0, f_max = 0.0;
  Vec3 last = Vec3::Zero();
  const double dx = 1e-5;
  for (int k = 0; k <= 10000; ++k) {
    const double x = 1.0 - 0.02 + dx * k;
    const Probe p = probe(wall, hertz_plane_wall(), Vec3(x, 0.5, z), r);
    EXPECT_LE(p.contacts, 1u);
    if (x > 1.0) {  // the rounded edge: the force along the normal from the rim to the centre
      const Vec3 d(x - 1.0, 0.0, z - 1.0);
      const double overlap = r - d.norm();
      const Vec3 expected = overlap > 0.0 ? Vec3(1e3 / r * std::pow(overlap / r, 1.5) * d.normalized()) : Vec3::Zero();
      EXPECT_LE((p.force - expected).norm(), 1e-9 * (1e3 / r) * std::pow(1e-3 / r, 1.5)) << x;
    }
    if (k > 0) largest = std::max(largest, (p.force - last).norm());
    last = p.force;
    f_max = std::max(f_max, p.force.norm());
  }
  // Continuous: no step larger than what the force's slope gives over dx.
  std::printf("sliding off the rim: largest step change of F %.3g over dx = %g (|F|max %.6g)\n", largest, dx, f_max);
  EXPECT_LE(largest, 0.01 * f_max);
}

// ------------------------------------------------------------ finite differences

/// -dU/dx by central differences against the force, at points of the face,
/// edge and vertex regions of a box.
template <class Force, class Energy>
void expect_gradient(const Force& force, const Energy& energy, const Vec3& x, const char* where) {
  const double h = 1e-7;
  const Vec3 f = force(x);
  ASSERT_GT(f.norm(), 0.0) << where;
  for (int a = 0; a < 3; ++a) {
    Vec3 xp = x, xm = x;
    xp[a] += h;
    xm[a] -= h;
    const double fd = -(energy(xp) - energy(xm)) / (2 * h);
    EXPECT_NEAR(f[a], fd, 1e-6 * f.norm()) << where << " component " << a;
  }
}

TEST(MeshContactForces, AreMinusTheGradientOfTheEnergyInEveryRegion) {
  const double r = 0.05;
  const MeshWall wall = wall_of(box(Vec3(0, 0, 0), Vec3(1, 1, 1)));
  const std::vector<std::pair<Vec3, const char*>> points = {
      {Vec3(0.4, 0.6, 1.0 + r - 2e-3), "face"},
      {Vec3(1.0 + 0.01, 0.5, 1.0 + r - 0.02), "edge"},
      {Vec3(1.0 + 0.012, 1.0 + 0.014, 1.0 + 0.02), "vertex"}};
  for (const PlaneWallLaw* law : {&hertz_plane_wall(), &penalty_plane_wall()})
    for (const auto& [x, where] : points) {
      EXPECT_EQ(probe(wall, *law, x, r).contacts, 1u) << where;
      expect_gradient([&](const Vec3& y) { return probe(wall, *law, y, r).force; },
                      [&](const Vec3& y) { return probe(wall, *law, y, r).energy; }, x, where);
    }
  // Hertz-Mindlin: the elastic part (force - nc_force) against U_wall.
  const HertzMindlinLaw law({ContactMaterial{1e7, 0.3, 0.5, 0.3, 0.0}}, 1e-6);
  for (const auto& [x, where] : points) {
    const auto run = [&](const Vec3& y, double& u) {
      const ParticleStore s = one_sphere(y, r, Vec3(0.1, 0.2, -0.3), Vec3(1, 2, 3));
      MeshWall m = wall;
      m.material = Wall::kParticleMaterial;
      MeshContactProvider<HertzMindlinLaw> p({m}, law, 1, 0.1 * r, 0.0, "mmeshes");
      p.evaluate(s);
      std::vector<Vec3> f(1, Vec3::Zero()), mo(1, Vec3::Zero()), nc(1, Vec3::Zero()), ncm(1, Vec3::Zero());
      p.add_body_forces(s, 0, 1, f, mo);
      p.add_body_nonconservative(s, 0, 1, nc, ncm);
      EnergyReport rep;
      p.add_potential_energies(s, rep);
      u = rep.wall;
      return Vec3(f[0] - nc[0]);
    };
    double u = 0.0;
    expect_gradient([&](const Vec3& y) { return run(y, u); },
                    [&](const Vec3& y) {
                      run(y, u);
                      return u;
                    },
                    x, where);
  }
}

// ------------------------------------------------------------ scenes

/// A sphere (d = 10 mm) thrown obliquely with spin at a floor at z = 0:
/// `floor` is the [[wall]] or [[mesh]] table.
std::string drop_scene(const std::string& law, const std::string& floor, int steps = 3000) {
  write_text(folder() / "sphere.csv",
             "x,y,z,diameter,vx,vy,vz,wx,wy,wz\n0.001,-0.002,0.00502,0.01,0.4,-0.3,-1.0,10,-20,5\n");
  const std::string contact = law == "penalty" ? "[contact]\nlaw = \"penalty\"\nstiffness = 1e6\nwall_stiffness = 1e6\n"
                                               : "[contact]\nlaw = \"hertz-mindlin\"\n";
  return "[run]\ntime_step = 2e-7\nsteps = " + std::to_string(steps) +
         "\n[[material]]\nname = \"glass\"\ndensity = 2500.0\nE = 6.3e9\nnu = 0.23\ne = 0.6\nmu_s = 0.3\n"
         "[[particles]]\nsource = \"csv\"\nfile = \"sphere.csv\"\nmaterial = \"glass\"\n"
         "[bonds]\npairs = \"none\"\n" + contact + floor + "[gravity]\nacceleration = [0.0, 0.0, -9.81]\n";
}

std::vector<std::pair<std::string, double>> columns(const EnergyReport& r) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, sum] : r.exact) out.emplace_back(name, sum.value());
  out.emplace_back("W_contact", r.contact_work);
  out.emplace_back("E_balance", r.balance());
  return out;
}

TEST(MeshScenes, ASphereOnTwoTrianglesOrAFanOf64IsTheAnalyticWall) {
  write_text(folder() / "square2.stl", ascii_stl(square_of_two(0.0625)));
  write_text(folder() / "fan64.stl", ascii_stl(square_fan(0.0625, 64, Vec3(0.0009765625, -0.001953125, 0))));
  for (const std::string law : {"hertz-mindlin", "penalty"}) {
    const std::string wall = "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n";
    Simulation analytic = make_simulation(build_scene(parse_scene_text(drop_scene(law, wall), "s.toml", folder())));
    std::vector<Simulation> meshes;
    for (const char* file : {"square2.stl", "fan64.stl"})
      meshes.push_back(make_simulation(build_scene(parse_scene_text(
          drop_scene(law, std::string("[[mesh]]\nfile = \"") + file + "\"\n"), "s.toml", folder()))));
    double worst = 0.0, largest_wall = 0.0;
    for (int k = 0; k < 3000; ++k) {
      analytic.step();
      for (Simulation& m : meshes) m.step();
      if (k % 50 != 49) continue;
      const auto a = columns(analytic.energy_report());
      largest_wall = std::max(largest_wall, analytic.energy_report().wall);
      for (Simulation& m : meshes) {
        const auto b = columns(m.energy_report());
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t c = 0; c < a.size(); ++c) {
          ASSERT_EQ(a[c].first, b[c].first);
          const double scale = std::max(std::abs(a[c].second), 1e-300);
          worst = std::max(worst, std::abs(a[c].second - b[c].second) / scale);
          EXPECT_NEAR(a[c].second, b[c].second, 1e-12 * std::abs(a[c].second)) << law << " " << a[c].first << " step " << k;
        }
      }
    }
    std::printf("%s: 2 and 64 triangles against the analytic wall: largest relative difference %.3g (U_wall up to %.3g J, "
                "W_contact %.3g J)\n",
                law.c_str(), worst, largest_wall, analytic.energy_report().contact_work);
    EXPECT_GT(largest_wall, 0.0);
    if (law != "penalty") {
      EXPECT_GT(analytic.energy_report().contact_work, 0.0) << "friction and damping act";
    }
  }
}

/// 600 frictional spheres raining onto a tilted fan and a box (more than two
/// of the provider's blocks of 256).
std::string pile_scene() {
  std::string csv = "x,y,z,diameter,vx,vy,vz\n";
  int n = 0;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      for (int k = 0; k < 6; ++k, ++n)
        csv += std::to_string(-0.0225 + 0.005 * i + 0.0002 * (k % 2)) + "," + std::to_string(-0.0225 + 0.005 * j) + "," +
               std::to_string(0.0023 + 0.005 * k) + ",0.004,0.01,0.0," + std::to_string(-10.0 - 0.1 * (n % 7)) + "\n";
  write_text(folder() / "pile.csv", csv);
  write_text(folder() / "floor.stl", ascii_stl(square_fan(0.0625, 64, Vec3(0.0009765625, -0.001953125, 0))));
  write_text(folder() / "block.stl", ascii_stl(box(Vec3(-0.0078125, -0.0078125, 0.0), Vec3(0.0078125, 0.0078125, 0.0078125))));
  return R"(
[run]
time_step = 2e-7
steps = 400
[[material]]
name = "glass"
density = 2500.0
E = 6.3e8
nu = 0.23
e = 0.6
mu_s = 0.3
[[particles]]
source = "csv"
file = "pile.csv"
material = "glass"
[bonds]
pairs = "none"
[contact]
law = "hertz-mindlin"
[[mesh]]
name = "floor"
file = "floor.stl"
rotation_axis = [1.0, 1.0, 0.0]
rotation_angle = 0.5
[[mesh]]
name = "block"
file = "block.stl"
translate = [0.0, 0.0, -0.0079125]
[gravity]
acceleration = [0.0, 0.0, -9.81]
)";
}

Simulation pile(const std::string& text) { return make_simulation(build_scene(parse_scene_text(text, "s.toml", folder()))); }

const MeshContactProvider<HertzMindlinLaw>& mesh_provider(const Simulation& sim) {
  const auto* p = dynamic_cast<const MeshContactProvider<HertzMindlinLaw>*>(sim.forces().find("mmeshes"));
  EXPECT_NE(p, nullptr);
  return *p;
}

TEST(MeshScenes, TheSameBitsAtOneAndTwoThreads) {
  const std::string text = pile_scene();
  dem::testing::StateSnapshot one, two;
  std::size_t contacts = 0;
  {
    ThreadLimit limit(1);
    Simulation sim = pile(text);
    for (int k = 0; k < 400; ++k) sim.step();
    one = snapshot(sim);
    contacts = mesh_provider(sim).contact_count();
  }
  {
    ThreadLimit limit(2);
    Simulation sim = pile(text);
    for (int k = 0; k < 400; ++k) sim.step();
    two = snapshot(sim);
  }
  std::printf("600 spheres on two meshes: %zu mesh contacts at the end\n", contacts);
  EXPECT_GT(contacts, 20u);
  EXPECT_TRUE(one == two);
}

TEST(MeshScenes, RestartsContinueBitForBitWithMeshContacts) {
  const std::string text = pile_scene();
  Simulation whole = pile(text);
  for (int k = 0; k < 400; ++k) whole.step();
  Simulation half = pile(text);
  for (int k = 0; k < 250; ++k) half.step();
  EXPECT_GT(mesh_provider(half).contact_count(), 10u) << "contacts are active at the checkpoint";
  Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(half))));
  EXPECT_EQ(mesh_provider(resumed).contact_count(), mesh_provider(half).contact_count());
  for (int k = 250; k < 400; ++k) resumed.step();
  EXPECT_TRUE(snapshot(resumed) == snapshot(whole));
  EXPECT_EQ(resumed.energy_report().wall, whole.energy_report().wall);
}

TEST(MeshScenes, PartsOfADecomposedRunGiveTheWholeRunsBits) {
  // The floor turning about its centre: the parts take the meshes' clock and
  // each particle's contacts from the history (MPI parts, engine/partition.hpp).
  const std::string text = replaced(pile_scene(), "rotation_angle = 0.5\n", "rotation_angle = 0.5\nangular_velocity = [0.0, 0.0, 2.0]\n");
  Simulation sim = pile(text);
  for (int k = 0; k < 250; ++k) sim.step();
  ASSERT_GT(mesh_provider(sim).contact_count(), 10u);
  expect_parts_match(sim, 2);
  expect_parts_match(sim, 3);
}

// ------------------------------------------------------------ a rotating drum

/// What a run of the drum gives: the change of the spheres' L_z, what the
/// drum's reported moments give for it, the scale of those sums, and the
/// largest |E_balance - E_0| with E_0.
struct DrumRun {
  double dl = 0.0, expected = 0.0, scale = 0.0, drift = 0.0, e0 = 0.0, w_boundary = 0.0;
};

/// 48 frictional spheres thrown outwards in a closed drum (24 segments about
/// the z axis) turning at 20 rad/s, for `time` at step h; the stepper moves
/// the drum (MovingBoundary). No pair contacts: Hertz-Mindlin's pair moments
/// balance angular momentum only up to delta n x F_t (section 11.2's
/// moments act at r_i, r_j from centres r_i + r_j - delta apart), while the
/// drum's balance is exact: dL_z = -(h/2)(M_k + M_k+1) per step (gravity
/// along the axis has no moment about it).
DrumRun run_drum(double h, double time) {
  const double r = 0.004;
  ParticleStore s;
  for (int k = 0; k < 48; ++k) {
    const double a = 0.7 * k, rad = 0.012 + 0.0006 * k;
    const Vec3 out(std::cos(a), std::sin(a), 0.0), round(-std::sin(a), std::cos(a), 0.0);
    s.add(solid_sphere(r, 2500.0, Vec3(rad * std::cos(a), rad * std::sin(a), 0.0042 + 0.009 * (k % 3)),
                       0.8 * out + 0.3 * round));
  }
  for (std::size_t i = 0; i < s.size(); ++i) s.material[i] = 0;
  const HertzMindlinLaw law({ContactMaterial{1e7, 0.3, 0.5, 0.5, 0.0}}, h);
  MeshWall drum_wall = wall_of(drum(0.05, 0.0, 0.04, 24));
  drum_wall.name = "drum";
  drum_wall.motion.centre = Vec3::Zero();
  drum_wall.motion.angular_velocity = Vec3(0, 0, 20.0);
  ForceField f;
  f.add(std::make_unique<MeshContactProvider<HertzMindlinLaw>>(std::vector<MeshWall>{drum_wall}, law, s.size(),
                                                                 0.4 * r, 0.0, "mmeshes"));
  f.add(std::make_unique<GravityProvider>(Vec3(0, 0, -9.81)));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  const auto moment_z = [&] {
    const std::vector<BoundaryLoad> loads = sim.boundary_loads();
    EXPECT_EQ(loads.size(), 1u);
    EXPECT_EQ(loads[0].name, "drum");
    return loads[0].moment().z();
  };
  DrumRun out;
  double m_last = moment_z();
  const EnergyReport first = sim.energy_report();
  out.e0 = first.balance();
  const double l0 = first.angular_momentum.z();
  const int steps = static_cast<int>(std::lround(time / h));
  for (int k = 0; k < steps; ++k) {
    sim.step();
    const double m = moment_z();
    out.expected += -0.5 * h * (m_last + m);
    out.scale += 0.5 * h * (std::abs(m_last) + std::abs(m));
    m_last = m;
    if (k % 10 == 9) out.drift = std::max(out.drift, std::abs(sim.energy_report().balance() - out.e0));
  }
  const EnergyReport last = sim.energy_report();
  out.dl = last.angular_momentum.z() - l0;
  out.w_boundary = last.boundary_work;
  return out;
}

TEST(MeshScenes, ADrumsMomentIsTheSpheresChangeOfAngularMomentumAndItsWorkIsBooked) {
  const DrumRun a = run_drum(2e-5, 0.06), b = run_drum(1e-5, 0.06);
  std::printf("drum: L_z changed by %.12g, the drum's moments give %.12g (difference %.3g; sum of |h M| %.3g)\n", a.dl,
              a.expected, a.dl - a.expected, a.scale);
  std::printf("drum: W_boundary %.6g J of E_0 %.6g J; largest |E_balance - E_0| %.3g at h, %.3g at h/2 (ratio %.2f)\n",
              a.w_boundary, a.e0, a.drift, b.drift, a.drift / b.drift);
  EXPECT_GT(a.dl, 1e3 * std::abs(a.dl - a.expected)) << "the turning drum drags the spheres round (+z)";
  EXPECT_NEAR(a.dl, a.expected, 1e-10 * a.scale);
  EXPECT_NEAR(b.dl, b.expected, 1e-10 * b.scale);
  EXPECT_LT(a.w_boundary, 0.0) << "the drum does work on the spheres";
  EXPECT_LT(a.drift, 1e-3 * a.e0);
  EXPECT_GT(a.drift / b.drift, 2.5) << "E_balance closes to O(h^2) with the drum's work booked";
}

// ------------------------------------------------------------ bad input

std::string error_of(const std::string& mesh_table) {
  try {
    (void)make_simulation(build_scene(parse_scene_text(drop_scene("hertz-mindlin", mesh_table), "s.toml", folder())));
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

TEST(MeshScenes, BadInputIsRefusedNamingTheKey) {
  write_text(folder() / "empty.stl", "solid nothing\nendsolid nothing\n");
  {  // a binary STL of one triangle with a NaN coordinate
    std::string bytes(80, ' ');
    const auto put = [&](const void* p, std::size_t n) { bytes.append(static_cast<const char*>(p), n); };
    const std::uint32_t count = 1;
    put(&count, 4);
    const float data[12] = {0, 0, 1, 0, 0, 0, 1, 0, 0, NAN, 1, 0};  // normal, then three corners
    put(data, sizeof data);
    const std::uint16_t attribute = 0;
    put(&attribute, 2);
    write_text(folder() / "nan.stl", bytes);
  }
  write_text(folder() / "flat.stl", ascii_stl(Surface{{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {{0, 1, 2}}}));
  write_text(folder() / "mesh.txt", "not a mesh\n");
  struct Case {
    std::string table, expected;
  };
  const std::vector<Case> cases = {
      {"[[mesh]]\nfile = \"missing.stl\"\n", "[[mesh]] \"mesh0\" file: "},
      {"[[mesh]]\nfile = \"missing.stl\"\n", "missing.stl: no such file"},
      {"[[mesh]]\nfile = \"empty.stl\"\n", "no triangles"},
      {"[[mesh]]\nfile = \"nan.stl\"\n", "vertex 2 is not finite"},
      {"[[mesh]]\nfile = \"flat.stl\"\n", "no triangles of non-zero area"},
      {"[[mesh]]\nfile = \"mesh.txt\"\n", "expected a .stl"},
      {"[[mesh]]\nfile = \"empty.stl\"\nscale = 0\n", "[[mesh]] scale: expected a finite number > 0"},
      {"[[mesh]]\nscale = 2\n", "[[mesh]] file: is required"},
      {"[[mesh]]\nfile = \"x.stl\"\nstiffness = 5\n", "[[mesh]] stiffness does not apply"},
      {"[[mesh]]\nfile = \"x.stl\"\nmaterial = \"steel\"\n", "[[mesh]] material: no [[material]] is named \"steel\""},
      {"[[mesh]]\nfile = \"x.stl\"\nspeed = 2\n", "[[mesh]] speed: unknown key"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(c.table);
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.table << "\n -> " << e;
  }
}

TEST(MeshScenes, DegenerateTrianglesAreReportedByTheBuilder) {
  Surface s = square_of_two(0.0625);
  s.vertices.push_back({0.0, 0.0, 0.0});
  s.triangles.push_back({0, 2, 4});
  write_text(folder() / "degenerate.stl", ascii_stl(s));
  const BuiltScene b = build_scene(parse_scene_text(drop_scene("hertz-mindlin", "[[mesh]]\nfile = \"degenerate.stl\"\n"),
                                                    "s.toml", folder()));
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_NE(b.warnings[0].find("triangle 2 ("), std::string::npos) << b.warnings[0];
  EXPECT_NE(b.warnings[0].find("dropped: zero area"), std::string::npos) << b.warnings[0];
}

}  // namespace
