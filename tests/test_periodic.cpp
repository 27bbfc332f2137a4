// Periodic cells (docs/model.md §20): the neighbour search through the
// faces against brute force, a pair across a face against the same pair
// shifted into the interior (bit for bit), a frictionless gas in a fully
// periodic cell (momentum to round-off, energy to O(h^2)), bonds across
// faces through re-ordering, thread counts and checkpoints, the stress of
// the whole cell against the lattice's elastic constants, and the scene's
// [domain] errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <oneapi/tbb/global_control.h>
#include <random>
#include <string>
#include <vector>

#include "contact/neighbour_search.hpp"
#include "engine/collective.hpp"
#include "engine/partition.hpp"
#include "engine/stress.hpp"
#include "io/checkpoint.hpp"
#include "part_support.hpp"
#include "scene/scene_builder.hpp"
#include "scene_support.hpp"

namespace dem {
namespace {

using testing::replaced;
using testing::scratch_folder;
using testing::simulation_error;
using testing::write_text;

// --- the neighbour search through periodic faces -----------------------------------

std::vector<std::array<std::uint32_t, 3>> listed(const NeighbourList& l) {
  std::vector<std::array<std::uint32_t, 3>> out;
  for (std::size_t k = 0; k < l.pair_count(); ++k)
    out.push_back({l.owner[k], l.partner[k], l.image.empty() ? std::uint32_t{kNoImage} : l.image[k]});
  return out;
}

TEST(PeriodicSearch, MatchesBruteForceOnEveryCombinationOfAxes) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-0.02, 1.02);  // some a little outside the cell
  std::uniform_real_distribution<double> r(0.02, 0.035);
  std::vector<Vec3> x(400);
  std::vector<double> radius(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = Vec3(u(rng), u(rng), u(rng));
    radius[i] = r(rng);
  }
  const double skin = 0.01;
  for (const std::array<bool, 3> periodic : {std::array<bool, 3>{true, true, true}, {true, false, true},
                                             {false, false, true}, {false, true, false}}) {
    PeriodicCell cell = PeriodicCell::box(Vec3::Zero(), Vec3::Ones(), periodic);
    NeighbourSearch search(skin);
    search.set_cell(cell);
    search.rebuild(x, radius);
    const std::vector<std::array<std::uint32_t, 3>> expected = brute_force_periodic_pairs(x, radius, skin, cell);
    EXPECT_EQ(listed(search.list()), expected);
    std::size_t across = 0;
    for (const auto& p : expected) across += p[2] != kNoImage ? 1 : 0;
    EXPECT_GT(across, 0u);
  }
  // A sheared cell (the edge along y leans over x).
  PeriodicCell sheared = PeriodicCell::box(Vec3::Zero(), Vec3::Ones(), {true, true, true});
  sheared.edges(0, 1) = 0.3;
  NeighbourSearch search(skin);
  search.set_cell(sheared);
  search.rebuild(x, radius);
  EXPECT_EQ(listed(search.list()), brute_force_periodic_pairs(x, radius, skin, sheared));
}

// --- a pair across a face and the same pair inside -------------------------------------

// Two Hertz-Mindlin spheres (friction, rolling resistance) in an oblique
// collision. Every coordinate stays in [4, 8), where doubles are spaced
// 2^-50 apart: moving a point by 1 or 2 there is exact and commutes with
// rounding, so the pair inside the cell and the pair across its x faces
// (shifted by 1 and -1, the partner seen through the face at +2) make the
// same arithmetic.
const std::string kPair = R"(
[run]
integrator = "rrp25"
time_step = 2e-5
steps = 1

[[material]]
name = "grain"
density = 2500.0
E = 1e7
nu = 0.3
e = 0.5
mu_s = 0.4
mu_r = 0.1

[[particles]]
source = "csv"
file = "FILE"
material = "grain"

[contact]
law = "hertz-mindlin"
rolling = "epsd"
skin = 0.02
reorder_on_rebuild = false
)";

Simulation pair_simulation(const std::string& rows, const std::string& name, bool across) {
  const auto folder = scratch_folder("periodic");
  write_text(folder / name, "x,y,z,diameter,vx,vy,vz,wx,wy,wz\n" + rows);
  std::string text = replaced(kPair, "FILE", (folder / name).string());
  if (across) text += "\n[domain]\nlower = [4.0, 4.0, 4.0]\nupper = [6.0, 6.0, 6.0]\nperiodic = [true, false, false]\n";
  return make_simulation(build_scene(parse_scene_text(text, "pair.toml", ".")));
}

TEST(PeriodicPair, AcrossAFaceFollowsTheShiftedPairBitForBit) {
  // Across: A near the upper x face moving +x meets B's image beyond it.
  Simulation across = pair_simulation("5.93,5.0,5.0,0.1,1.5,0.1,0.0,0.0,0.0,3.0\n"
                                      "4.04,5.03,5.01,0.1,-0.25,0.0,0.2,1.0,0.0,0.0\n",
                                      "across.csv", true);
  // Inside: the same pair moved by -1 (A) and +1 (B).
  Simulation inside = pair_simulation("4.93,5.0,5.0,0.1,1.5,0.1,0.0,0.0,0.0,3.0\n"
                                      "5.04,5.03,5.01,0.1,-0.25,0.0,0.2,1.0,0.0,0.0\n",
                                      "inside.csv", false);
  ASSERT_NE(across.cell(), nullptr);
  const auto slot = [](const Simulation& s, std::uint32_t id) {
    return static_cast<std::size_t>(std::find(s.particles().id.begin(), s.particles().id.end(), id) -
                                    s.particles().id.begin());
  };
  double closest = 1.0;
  for (int step = 0; step < 1000; ++step) {
    across.step();
    inside.step();
    const ParticleStore &p = across.particles(), &q = inside.particles();
    for (std::uint32_t id = 0; id < 2; ++id) {
      const std::size_t a = slot(across, id), b = slot(inside, id);
      // A moves by +1 into the cell's interior, B by -1 (both exact here).
      const Vec3 shift(id == 0 ? 1.0 : -1.0, 0.0, 0.0);
      ASSERT_EQ(p.position[a], Vec3(q.position[b] + shift)) << "step " << step << " particle " << id;
      ASSERT_EQ(p.velocity[a], q.velocity[b]) << "step " << step;
      ASSERT_EQ(p.angular_velocity[a], q.angular_velocity[b]) << "step " << step;
      ASSERT_EQ(p.force[a], q.force[b]) << "step " << step;
      ASSERT_EQ(p.moment[a], q.moment[b]) << "step " << step;
    }
    closest = std::min(closest, (q.position[0] - q.position[1]).norm());
  }
  EXPECT_LT(closest, 0.1);  // they did collide
  EXPECT_EQ(across.energy_report().contact, inside.energy_report().contact);
  EXPECT_EQ(across.ledger().contact, inside.ledger().contact);
  EXPECT_GT(across.ledger().contact, 0.0);  // friction and damping worked
}

// --- a frictionless gas in a fully periodic cell ---------------------------------------

std::string gas_scene(double h, std::uint64_t steps) {
  return R"(
[run]
integrator = "rrp25"
time_step = )" + std::to_string(h) + R"(
steps = )" + std::to_string(steps) + R"(

[material]
density = 1000.0

[[particles]]
source = "box_lattice"
per_side = 6
diameter = 0.1
spacing_ratio = 1.6
temperature = 1.0
origin = [0.05, 0.05, 0.05]

[contact]
stiffness = 200.0
skin = 0.02

[domain]
lower = [0.0, 0.0, 0.0]
upper = [0.96, 0.96, 0.96]
periodic = [true, true, true]
)";
}

struct GasRun {
  double worst_energy = 0.0;    ///< max |E_total(t) - E_total(0)|
  double worst_momentum = 0.0;  ///< max |P(t) - P(0)|
  double momentum_scale = 0.0;  ///< sum m |v| at the start
  double energy = 0.0;
  std::size_t wraps = 0;        ///< particles found outside the cell after a step, summed
};

GasRun run_gas(double h, std::uint64_t steps) {
  Simulation sim = make_simulation(build_scene(parse_scene_text(gas_scene(h, steps), "gas.toml", ".")));
  const EnergyReport e0 = sim.energy_report();
  GasRun g;
  g.energy = e0.total();
  for (std::size_t i = 0; i < sim.particles().size(); ++i)
    g.momentum_scale += sim.particles().mass[i] * sim.particles().velocity[i].norm();
  const Vec3 lower = Vec3::Zero(), upper = Vec3::Constant(0.96);
  for (std::uint64_t k = 0; k < steps; ++k) {
    sim.step();
    const EnergyReport e = sim.energy_report();
    g.worst_energy = std::max(g.worst_energy, std::abs(e.total() - e0.total()));
    g.worst_momentum = std::max(g.worst_momentum, (e.linear_momentum - e0.linear_momentum).norm());
    for (const Vec3& x : sim.particles().position)
      g.wraps += ((x.array() < lower.array()).any() || (x.array() >= upper.array()).any()) ? 1 : 0;
  }
  return g;
}

TEST(PeriodicGas, ConservesMomentumToRoundOffAndEnergyToSecondOrder) {
  // 216 spheres of 0.1 at about 0.5 m/s in a cell of 0.96: each crosses a
  // face and collides several times over the run.
  const double h = 2e-4;
  const GasRun coarse = run_gas(h, 2000), fine = run_gas(h / 2, 4000);
  std::printf("energy %.6e: drift %.3e (h), %.3e (h/2), ratio %.3f; momentum drift %.3e of %.3e\n", coarse.energy,
              coarse.worst_energy, fine.worst_energy, coarse.worst_energy / fine.worst_energy, coarse.worst_momentum,
              coarse.momentum_scale);
  EXPECT_LT(coarse.worst_momentum, 1e-14 * coarse.momentum_scale);
  EXPECT_LT(fine.worst_momentum, 1e-14 * fine.momentum_scale);
  EXPECT_LT(coarse.worst_energy, 1e-3 * coarse.energy);
  const double ratio = coarse.worst_energy / fine.worst_energy;
  EXPECT_GT(ratio, 3.0);
  EXPECT_LT(ratio, 5.0);
  EXPECT_GT(coarse.wraps, 0u);  // particles left the cell between rebuilds: the faces were crossed
}

// --- bonds across faces ------------------------------------------------------------------

// A bonded FCC lattice filling a fully periodic cell (the block's upper
// faces left out, bonds between nearest neighbours found through the
// faces), thermally agitated so that particles cross the faces and the
// store is re-ordered.
const std::string kPeriodicLattice = R"(
[run]
integrator = "rrp25"
time_step = 2e-8
steps = 400

[[material]]
name = "m"
density = 2400.0
E = 1e9
nu = 0.25
beta = 0.8

[[particles]]
source = "fcc_block"
material = "m"
spacing = 2e-3
cells = [4, 4, 4]
periodic = true
origin = [7.0710678118654756e-4, 7.0710678118654756e-4, 7.0710678118654756e-4]

[bonds]
law = "bdem"
pairs = "distance"
distance = 2.2e-3

[contact]
law = "penalty"
stiffness = 1e6
skin = 2e-4

[domain]
lower = [0.0, 0.0, 0.0]
upper = [0.011313708498984761, 0.011313708498984761, 0.011313708498984761]
periodic = [true, true, true]
)";

/// The lattice with random velocities of about `speed` (m/s) about a
/// common drift of (100, 60, 30) m/s, which carries every particle through
/// a face in the run.
Simulation agitated_lattice(const std::string& text, double speed) {
  Simulation sim = make_simulation(build_scene(parse_scene_text(text, "lattice.toml", ".")));
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, speed);
  ParticleStore& p = sim.particles();
  Vec3 mean = Vec3::Zero();
  for (Vec3& v : p.velocity) {
    v = Vec3(n(rng), n(rng), n(rng));
    mean += v;
  }
  mean /= static_cast<double>(p.size());
  for (Vec3& v : p.velocity) v += Vec3(100.0, 60.0, 30.0) - mean;
  sim.positions_changed();
  return sim;
}

/// The largest distance of a particle from where it started, per axis
/// (length): over half the cell, it was put back through a face.
double largest_jump(const Simulation& sim) {
  double d = 0.0;
  const ParticleStore& p = sim.particles();
  for (std::size_t i = 0; i < p.size(); ++i)
    d = std::max(d, (p.position[i] - p.reference_position[i]).cwiseAbs().maxCoeff());
  return d;
}

std::vector<std::byte> physics(const Simulation& sim) {
  CheckpointState c = capture_simulation(sim);
  return encode_checkpoint(c);
}

TEST(PeriodicBonds, AcrossFacesThroughReorderingThreadsAndCheckpoints) {
  const BuiltScene built = build_scene(parse_scene_text(kPeriodicLattice, "lattice.toml", "."));
  // 256 particles, 12 bonds each: every site has its full shell through the faces.
  ASSERT_EQ(built.scene.particles.size(), 256u);
  ASSERT_EQ(built.scene.bonds.size(), 256u * 6u);
  std::vector<std::byte> one, two;
  for (const int threads : {1, 2}) {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    Simulation sim = agitated_lattice(kPeriodicLattice, 40.0);
    const EnergyReport e0 = sim.energy_report();
    for (int k = 0; k < 400; ++k) sim.step();
    EXPECT_GT(sim.reorder_count(), 0u);
    EXPECT_GT(largest_jump(sim), 0.5 * 0.011313708498984761);
    const EnergyReport e1 = sim.energy_report();
    std::printf("threads %d: E_balance %.9e -> %.9e, broken %llu\n", threads, e0.balance(), e1.balance(),
                static_cast<unsigned long long>(e1.broken_bonds));
    EXPECT_EQ(e1.broken_bonds, 0u);
    EXPECT_NEAR(e1.balance(), e0.balance(), 1e-4 * std::abs(e0.balance()));
    (threads == 1 ? one : two) = physics(sim);
  }
  EXPECT_EQ(one, two);
  // A checkpoint at step 173 (after re-orderings and crossings) continues bit for bit.
  Simulation whole = agitated_lattice(kPeriodicLattice, 40.0);
  Simulation part = agitated_lattice(kPeriodicLattice, 40.0);
  for (int k = 0; k < 173; ++k) part.step();
  Simulation restored = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(part))));
  ASSERT_NE(restored.cell(), nullptr);
  for (int k = 0; k < 400; ++k) whole.step();
  for (int k = 173; k < 400; ++k) restored.step();
  EXPECT_EQ(physics(whole), physics(restored));
  EXPECT_EQ(physics(whole), one);
}

// --- walls and meshes in a cell periodic along x and y ---------------------------------------

/// 216 frictional Hertz-Mindlin spheres (damped) streaming along x and y
/// and falling onto a floor at z = 0 in a cell periodic along x and y:
/// `floor` is a [[wall]] or a [[mesh]] table.
std::string floor_scene(double h, std::uint64_t steps, const std::string& floor) {
  char head[128];
  std::snprintf(head, sizeof head, "[run]\ntime_step = %.17g\nsteps = %llu\n", h,
                static_cast<unsigned long long>(steps));
  return head + std::string(R"(
[[material]]
name = "grain"
density = 1.9099
E = 1e3
nu = 0.3
e = 0.5
mu_s = 0.4

[[particles]]
source = "box_lattice"
material = "grain"
per_side = 6
diameter = 0.1
spacing_ratio = 1.6
temperature = 1e-4
origin = [0.05, 0.05, 0.06]

[contact]
law = "hertz-mindlin"
skin = 0.02

[gravity]
acceleration = [0.0, 0.0, -9.81]

[domain]
lower = [0.0, 0.0, 0.0]
upper = [0.96, 0.96, 2.0]
periodic = [true, true, false]
)") + floor;
}

TEST(PeriodicBoundaries, AFloorWallOrMeshInACellPeriodicAlongXAndYClosesTheLedgerToSecondOrder) {
  // The grains stream at (0.5, 0.3) m/s through the x and y faces while
  // they fall onto the floor: a [[wall]], or a [[mesh]] of two triangles
  // over [-2, 2]^2, wider than the cell (a particle near a face touches it
  // on both sides of the face). E_balance closes to O(h^2) with either,
  // and the two give the same bits.
  const std::filesystem::path dir = scratch_folder("periodic_floor");
  write_text(dir / "floor.stl",
             "solid floor\n"
             "facet normal 0 0 1\nouter loop\nvertex -2 -2 0\nvertex 2 -2 0\nvertex 2 2 0\nendloop\nendfacet\n"
             "facet normal 0 0 1\nouter loop\nvertex -2 -2 0\nvertex 2 2 0\nvertex -2 2 0\nendloop\nendfacet\n"
             "endsolid floor\n");
  std::vector<dem::testing::StateSnapshot> ends;
  for (const std::string floor : {"[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n",
                                  "[[mesh]]\nfile = \"floor.stl\"\n"}) {
    double drift[2] = {0.0, 0.0}, scale = 0.0;
    for (int k = 0; k < 2; ++k) {
      const double h = k == 0 ? 2e-4 : 1e-4;
      const std::uint64_t steps = k == 0 ? 3000 : 6000;
      Simulation sim = make_simulation(build_scene(parse_scene_text(floor_scene(h, steps, floor), "floor.toml", dir)));
      for (Vec3& v : sim.particles().velocity) v += Vec3(0.5, 0.3, 0.0);
      sim.positions_changed();
      const double e0 = sim.energy_report().balance();
      double lowest = INFINITY;
      for (std::uint64_t s = 0; s < steps; ++s) {
        sim.step();
        drift[k] = std::max(drift[k], std::abs(sim.energy_report().balance() - e0));
      }
      for (const Vec3& x : sim.particles().position) lowest = std::min(lowest, x.z());
      if (k == 0) {
        EXPECT_GT(largest_jump(sim), 0.48) << floor;  // put back through a face
        EXPECT_GT(sim.energy_report().wall, 0.0) << floor;  // on the floor at the end
        EXPECT_GT(lowest, 0.04) << floor;  // and not through it (radius 0.05)
        scale = std::abs(sim.ledger().contact);
        ends.push_back(dem::testing::snapshot(sim));
      }
    }
    std::printf("floor in a periodic cell (%s): W_contact %.4e J; drift %.3e J at h, %.3e J at h/2 (ratio %.2f)\n",
                floor.substr(0, 8).c_str(), scale, drift[0], drift[1], drift[0] / drift[1]);
    EXPECT_GT(scale, 0.0);
    EXPECT_LT(drift[0], 1e-3 * scale);
    EXPECT_GT(drift[0] / drift[1], 3.0);
    EXPECT_LT(drift[0] / drift[1], 5.0);
  }
  // Both floors give the same bits (a face contact is the plane's).
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_TRUE(ends[0] == ends[1]);
}

// --- the stress of the whole cell ----------------------------------------------------------

/// The affine elastic constants of the nearest-neighbour FCC lattice
/// (docs/model.md §19.2), as tests/test_stress.cpp.
struct Constants {
  double c11, c12, c44;
};
Constants fcc_constants() {
  const double d = 2e-3, e_mod = 1e9, nu = 0.25, beta = 0.8;
  const double r_b = beta * d / 2.0, area = M_PI * r_b * r_b;
  const double k_n = e_mod * area / d, k_t = e_mod / (2.0 * (1.0 + nu)) * area / d;
  return {std::sqrt(2.0) * (k_n + k_t) / d, (k_n - k_t) / (std::sqrt(2.0) * d), (k_n + k_t) / (std::sqrt(2.0) * d)};
}

/// The periodic lattice with its cell and positions strained by eps
/// (x -> origin + (I + eps)(x - origin)): the cell's velocity gradient eps
/// taken to t = 1, its forces evaluated, and the whole cell's stress.
StressMeasure strained_cell_stress(const Mat3& eps) {
  std::string text = kPeriodicLattice;
  text += "velocity_gradient = [";
  for (int r = 0; r < 3; ++r)
    text += std::string(r ? ", " : "") + "[" + std::to_string(eps(r, 0)) + ", " + std::to_string(eps(r, 1)) + ", " +
            std::to_string(eps(r, 2)) + "]";
  text += "]\n";
  AssembledScene a = assemble_scene(build_scene(parse_scene_text(text, "lattice.toml", ".")));
  for (Vec3& x : a.particles.position) x = (Mat3::Identity() + eps) * x;  // the origin is 0
  a.forces.set_cell_time(1.0);  // H(1) = H0 + L H0 = (I + eps) H0
  const Mat3 h0 = 0.011313708498984761 * Mat3::Identity();
  EXPECT_TRUE(a.forces.cell()->edges.isApprox((Mat3::Identity() + eps) * h0, 1e-15));
  a.forces.update_records(a.particles);
  a.forces.evaluate(a.particles);
  return measure_stress(a.forces, a.particles, StressBox::cell(a.forces.cell()->volume()), serial_collective());
}

TEST(PeriodicStress, WholeCellOfAStrainedLatticeGivesItsElasticConstants) {
  const Constants c = fcc_constants();
  const double e = 1e-6;  // printed by std::to_string as 0.000001
  Mat3 eps = Mat3::Zero();
  eps(0, 0) = e;
  const StressMeasure m = strained_cell_stress(eps);
  std::printf("cell C11 %.9e / %.9e, C12 %.9e / %.9e\n", m.sigma[0] / e, c.c11, m.sigma[1] / e, c.c12);
  EXPECT_NEAR(m.sigma[0] / e, c.c11, 1e-5 * c.c11);
  EXPECT_NEAR(m.sigma[1] / e, c.c12, 1e-5 * c.c11);
  EXPECT_NEAR(m.sigma[2] / e, c.c12, 1e-5 * c.c11);
  EXPECT_EQ(m.particles, 256.0);
  EXPECT_NEAR(m.volume, std::pow(0.011313708498984761, 3) * (1.0 + e), 1e-12 * m.volume);
  // Simple shear g: sigma_xy = C44 g.
  Mat3 shear = Mat3::Zero();
  shear(0, 1) = e;
  const StressMeasure s = strained_cell_stress(shear);
  EXPECT_NEAR(s.sigma[5] / e, c.c44, 1e-5 * c.c11);
  EXPECT_NEAR(s.sigma[0] / e, 0.0, 1e-5 * c.c11);
  // Unstrained: zero.
  const StressMeasure z = strained_cell_stress(Mat3::Zero());
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(z.sigma[k], 0.0, 1e-9 * c.c11) << k;
}

// --- a deforming cell ------------------------------------------------------------------

/// The periodic lattice in a cell extended along x at the engineering rate
/// `rate` (1/s), the material streaming with it from the start.
Simulation stretched_lattice(double rate, std::uint64_t steps) {
  std::string text = replaced(kPeriodicLattice, "steps = 400", "steps = " + std::to_string(steps));
  char row[128];
  std::snprintf(row, sizeof row, "velocity_gradient = [[%.17g, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]\n", rate);
  text += row;
  text += "affine_velocity = true\n";
  return make_simulation(build_scene(parse_scene_text(text, "lattice.toml", ".")));
}

TEST(PeriodicDeformation, UniaxialStrainRateGivesC11AndC12AndTheLedgerCloses) {
  // The cell's x edge grows at 0.5 1/s: a strain of 1e-6 in 100 steps of
  // 2e-8 s, so slowly (the wave crosses the cell in 1.8e-5 s) that the
  // lattice is in the quasi-static limit.
  const double rate = 0.5, h = 2e-8;
  const std::uint64_t steps = 100;
  Simulation sim = stretched_lattice(rate, steps);
  const EnergyReport e0 = sim.energy_report();
  for (std::uint64_t k = 0; k < steps; ++k) sim.step();
  const double strain = rate * h * static_cast<double>(steps);
  const double edge = sim.cell()->edges(0, 0), edge0 = 0.011313708498984761;
  EXPECT_NEAR((edge - edge0) / edge0, strain, 1e-12);
  const StressMeasure m = sim.cell_stress();
  const Constants c = fcc_constants();
  std::printf("strain %.3e: s_xx/e %.9e (C11 %.9e), s_yy/e %.9e (C12 %.9e), W_boundary %.6e\n", strain,
              m.sigma[0] / strain, c.c11, m.sigma[1] / strain, c.c12, sim.ledger().boundary);
  EXPECT_NEAR(m.sigma[0] / strain, c.c11, 1e-3 * c.c11);
  EXPECT_NEAR(m.sigma[1] / strain, c.c12, 1e-3 * c.c12);
  EXPECT_NEAR(m.sigma[2] / strain, c.c12, 1e-3 * c.c12);
  // The cell's work is the elastic energy stored: W_boundary = -V C11 e^2/2.
  const EnergyReport e1 = sim.energy_report();
  const double stored = 0.5 * c.c11 * strain * strain * std::pow(edge0, 3);
  EXPECT_NEAR(-sim.ledger().boundary, stored, 1e-2 * stored);
  EXPECT_NEAR(e1.balance(), e0.balance(), 1e-3 * stored);
}

/// A frictional granular gas (Hertz-Mindlin with damping, sliding friction
/// and rolling resistance), nearly at rest but for its streaming with the
/// cell, in a fully periodic cell sheared at 2 1/s to a strain of 0.4,
/// Lees-Edwards across the y faces: the cell's work heats it.
std::string sheared_gas(double h, std::uint64_t steps) {
  char text[2048];
  std::snprintf(text, sizeof text, R"(
[run]
integrator = "rrp25"
time_step = %.17g
steps = %llu

[[material]]
name = "grain"
density = 1000.0
E = 1e6
nu = 0.3
e = 0.7
mu_s = 0.5
mu_r = 0.05

[[particles]]
source = "box_lattice"
material = "grain"
per_side = 6
diameter = 0.1
spacing_ratio = 1.6
temperature = 1e-3
origin = [0.05, 0.05, 0.05]

[contact]
law = "hertz-mindlin"
rolling = "epsd"
skin = 0.02

[domain]
lower = [0.0, 0.0, 0.0]
upper = [0.96, 0.96, 0.96]
periodic = [true, true, true]
velocity_gradient = [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
affine_velocity = true
)",
                h, static_cast<unsigned long long>(steps));
  return text;
}

struct ShearRun {
  double worst = 0.0;     ///< max |E_balance(t) - E_balance(0)|
  double boundary = 0.0;  ///< W_boundary at the end
  double contact = 0.0;   ///< W_contact at the end
};

ShearRun run_sheared_gas(double h, std::uint64_t steps) {
  Simulation sim = make_simulation(build_scene(parse_scene_text(sheared_gas(h, steps), "shear.toml", ".")));
  const double e0 = sim.energy_report().balance();
  ShearRun r;
  for (std::uint64_t k = 0; k < steps; ++k) {
    sim.step();
    r.worst = std::max(r.worst, std::abs(sim.energy_report().balance() - e0));
  }
  r.boundary = sim.ledger().boundary;
  r.contact = sim.ledger().contact;
  return r;
}

TEST(PeriodicDeformation, ShearedFrictionalGasClosesTheLedgerToSecondOrder) {
  // The cell's work (its conservative and dissipative parts across the
  // faces, and the kinetic energy of particles put back through a face
  // with their image's velocity) books what E_total and W_contact miss.
  const double h = 1e-4;
  const ShearRun coarse = run_sheared_gas(h, 2000), fine = run_sheared_gas(h / 2, 4000);
  std::printf("W_boundary %.6e, W_contact %.6e; |E_balance - E_0| %.3e (h), %.3e (h/2), ratio %.3f\n",
              coarse.boundary, coarse.contact, coarse.worst, fine.worst, coarse.worst / fine.worst);
  // (E_total is about 70 J, mostly the streaming; W_contact 0.17 J, the
  // cell's work 0.017 J: the balance closes to 1.1e-3 J at h, 2.9e-4 J at
  // h/2.)
  EXPECT_GT(coarse.contact, 0.0);
  EXPECT_LT(coarse.boundary, 0.0);  // the cell works on the gas
  EXPECT_LT(coarse.worst, 1e-2 * coarse.contact);
  const double ratio = coarse.worst / fine.worst;
  EXPECT_GT(ratio, 3.0);
  EXPECT_LT(ratio, 5.0);
}

// --- the periodic-cell servo -----------------------------------------------------------------

/// The periodic lattice in a cell whose normal stresses follow `target`
/// (Pa, tension positive) by the servo (docs/model.md §20.6), at time step
/// h. The servo's time constants are 1/(g (C11 + 2 C12)) = 5e-5 s for the
/// volume and 1/(g (C11 - C12)) = 9e-5 s for the shape, 3 and 6 times the
/// time an elastic wave takes to cross the cell.
std::string servo_lattice(const Vec3& target, double h) {
  char step[64];
  std::snprintf(step, sizeof step, "time_step = %.17g", h);
  std::string text = replaced(kPeriodicLattice, "time_step = 2e-8", step);
  char rows[256];
  std::snprintf(rows, sizeof rows,
                "target_stress = [%.17g, %.17g, %.17g]\nservo_gain = 1.4e-5\nmax_strain_rate = 20.0\n", target.x(),
                target.y(), target.z());
  return text + rows;
}

/// The largest relative distance of the cell's normal stresses from the
/// target, over `steps` steps sampled every 10.
double servo_error(Simulation& sim, const Vec3& target, std::uint64_t steps) {
  double worst = 0.0;
  for (std::uint64_t k = 0; k < steps; ++k) {
    sim.step();
    if (k % 10 != 9) continue;
    const StressMeasure m = sim.cell_stress();
    for (int a = 0; a < 3; ++a) worst = std::max(worst, std::abs(m.sigma[a] - target[a]) / std::abs(target[a]));
  }
  return worst;
}

TEST(PeriodicServo, ReachesTheTargetStressWithinOnePercentHoldsItAndStrainsAsTheElasticConstantsSay) {
  const Vec3 target(-1.0e6, -1.5e6, -0.5e6);
  Simulation sim = make_simulation(build_scene(parse_scene_text(servo_lattice(target, 2e-7), "lattice.toml", ".")));
  const double reach = servo_error(sim, target, 3000);  // 6e-4 s: 6.5 of the slower time constant
  const double hold = servo_error(sim, target, 3000);
  std::printf("servo: worst relative error %.3e while reaching, %.3e while holding\n", reach, hold);
  EXPECT_GT(reach, 0.9);  // it started at zero stress
  EXPECT_LT(hold, 1e-2);
  // The cell's strains are those of the lattice's elastic constants
  // (docs/model.md §19.2): sigma = C eps with cubic C.
  const Constants c = fcc_constants();
  Mat3 stiffness;
  stiffness << c.c11, c.c12, c.c12, c.c12, c.c11, c.c12, c.c12, c.c12, c.c11;
  const Vec3 expected = stiffness.lu().solve(target);
  const double edge0 = 0.011313708498984761;
  for (int a = 0; a < 3; ++a) {
    const double strain = (sim.cell()->edges(a, a) - edge0) / edge0;
    std::printf("axis %d: strain %.6e, from C11 and C12 %.6e\n", a, strain, expected[a]);
    EXPECT_NEAR(strain, expected[a], 2e-2 * std::abs(expected[a]));
  }
  EXPECT_EQ(sim.cell()->edges(0, 1), 0.0);  // the servo moves the diagonal only
}

TEST(PeriodicServo, LedgerClosesToSecondOrderWithTheCellsWorkBooked) {
  // The same 4e-4 s at h and h/2: W_boundary books the work of the servo's
  // cell, and E_balance's drift falls as h^2.
  const Vec3 target(-1.0e6, -1.0e6, -1.0e6);
  double drift[2] = {0.0, 0.0}, work = 0.0;
  for (int k = 0; k < 2; ++k) {
    const double h = k == 0 ? 2e-7 : 1e-7;
    Simulation sim = make_simulation(build_scene(parse_scene_text(servo_lattice(target, h), "lattice.toml", ".")));
    const double e0 = sim.energy_report().balance();
    const std::uint64_t steps = k == 0 ? 2000 : 4000;
    for (std::uint64_t s = 0; s < steps; ++s) {
      sim.step();
      drift[k] = std::max(drift[k], std::abs(sim.energy_report().balance() - e0));
    }
    work = sim.ledger().boundary;
  }
  std::printf("servo ledger: W_boundary %.6e J, worst drift %.3e J at h, %.3e J at h/2 (ratio %.2f)\n", work,
              drift[0], drift[1], drift[0] / drift[1]);
  EXPECT_LT(work, 0.0);  // the cell compressed the lattice: energy went in
  EXPECT_LT(drift[0], 1e-2 * std::abs(work));
  EXPECT_GT(drift[0] / drift[1], 3.0);
  EXPECT_LT(drift[0] / drift[1], 5.0);
}

TEST(PeriodicServo, ThreadsAndACheckpointGiveTheSameBits) {
  const Vec3 target(-1.0e6, -1.5e6, -0.5e6);
  const std::string text = servo_lattice(target, 2e-7);
  std::vector<std::byte> one, two;
  for (const int threads : {1, 2}) {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    Simulation sim = agitated_lattice(text, 5.0);
    for (int k = 0; k < 400; ++k) sim.step();
    (threads == 1 ? one : two) = physics(sim);
  }
  EXPECT_EQ(one, two);
  Simulation part = agitated_lattice(text, 5.0);
  for (int k = 0; k < 173; ++k) part.step();
  Simulation restored = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(part))));
  for (int k = 173; k < 400; ++k) restored.step();
  EXPECT_EQ(physics(restored), one);
}

TEST(PeriodicServo, BadInputIsRefusedNamingTheKey) {
  const std::string ok = servo_lattice(Vec3(-1e6, -1e6, -1e6), 2e-7);
  EXPECT_EQ(simulation_error(ok), "");
  const auto error_of = [&](const std::string& from, const std::string& to) {
    return simulation_error(replaced(ok, from, to));
  };
  EXPECT_NE(error_of("servo_gain = 1.4e-5\n", "").find("[domain] servo_gain: is required with target_stress"),
            std::string::npos);
  EXPECT_NE(error_of("max_strain_rate = 20.0\n", "").find("[domain] max_strain_rate: is required"),
            std::string::npos);
  EXPECT_NE(error_of("servo_gain = 1.4e-5", "servo_gain = -1.0").find("[domain] servo_gain: expected a finite number > 0"),
            std::string::npos);
  const std::string axis = error_of("periodic = [true, true, true]\n",
                                    "periodic = [true, true, false]\nservo_axes = [true, false, true]\n");
  EXPECT_NE(axis.find("[domain] servo_axes: controls axis z, which is not periodic"), std::string::npos) << axis;
  const std::string both = simulation_error(
      ok + "velocity_gradient = [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]\n");
  EXPECT_NE(both.find("[domain] velocity_gradient: L_xx is not zero, but the servo controls"), std::string::npos)
      << both;
  const std::string alone = simulation_error(kPeriodicLattice + "servo_gain = 1e-6\n");
  EXPECT_NE(alone.find("[domain] servo_gain: is given without target_stress"), std::string::npos) << alone;
}

// --- bad input ----------------------------------------------------------------------------

TEST(PeriodicInput, RefusedNamingTheKey) {
  const std::string ok = kPeriodicLattice;
  EXPECT_EQ(simulation_error(ok), "");
  const auto error_of = [&](const std::string& from, const std::string& to) {
    return simulation_error(replaced(ok, from, to));
  };
  const std::string upper = "upper = [0.011313708498984761, 0.011313708498984761, 0.011313708498984761]";
  // upper <= lower
  EXPECT_NE(error_of(upper, "upper = [0.0113, 0.0, 0.0113]").find("[domain] upper: must exceed lower"),
            std::string::npos);
  // a cell narrower than two interaction ranges (along z)
  std::string narrow = simulation_error(replaced(
      replaced(ok, "cells = [4, 4, 4]", "cells = [4, 4, 1]"), upper,
      "upper = [0.011313708498984761, 0.011313708498984761, 0.0028284271247461901]"));
  EXPECT_NE(narrow.find("[domain] periodic: the cell is"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("along z"), std::string::npos) << narrow;
  // a bond longer than half the cell
  const std::string long_bond = error_of("distance = 2.2e-3", "distance = 6e-3");
  EXPECT_NE(long_bond.find("[bonds]"), std::string::npos) << long_bond;
  EXPECT_NE(long_bond.find("half the periodic cell"), std::string::npos) << long_bond;
  // particles outside the domain
  const std::string outside = error_of("lower = [0.0, 0.0, 0.0]", "lower = [0.001, 0.0, 0.0]");
  EXPECT_NE(outside.find("[domain] lower, upper"), std::string::npos) << outside;
  // not three booleans
  EXPECT_NE(error_of("periodic = [true, true, true]\n", "periodic = [1, 1, 1]\n").find("[domain] periodic"),
            std::string::npos);
  EXPECT_NE(error_of("periodic = [true, true, true]\n", "periodic = [true, true]\n").find("[domain] periodic"),
            std::string::npos);
  // a velocity gradient between axes that are not both periodic
  const std::string gradient = error_of("periodic = [true, true, true]\n",
                                        "periodic = [true, true, false]\n"
                                        "velocity_gradient = [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]\n");
  EXPECT_NE(gradient.find("[domain] velocity_gradient: L_xz"), std::string::npos) << gradient;
  // gravity along a periodic axis
  const std::string falling = simulation_error(ok + "\n[gravity]\nacceleration = [0.0, 0.0, -9.81]\n");
  EXPECT_NE(falling.find("gravity has a component along the periodic axis z"), std::string::npos) << falling;
  // an unknown key
  EXPECT_NE(simulation_error(ok + "shape = \"box\"\n").find("[domain] shape: unknown key"), std::string::npos);
}

// --- parts of a decomposed run (engine/partition.hpp) ------------------------------------

TEST(PeriodicPartition, GhostsAreFoundThroughTheFaces) {
  // Two particles near opposite faces of a cell periodic along x, owned by
  // two ranks: each is a ghost of the other's rank through the face (the
  // nearest image 0.2 away), not without the cell (1.6 away).
  ParticleStore s;
  for (const double x : {0.1, 1.7}) {
    ParticleSpec p;
    p.position = Vec3(x, 0.5, 0.5);
    s.add(p);
  }
  const PeriodicCell cell = PeriodicCell::box(Vec3::Zero(), Vec3(1.8, 1.0, 1.0), {true, false, false});
  const std::vector<std::uint32_t> owner = bisect_owners(s.position, s.id, 2, &cell);
  ASSERT_NE(owner[0], owner[1]);
  const std::vector<PartLayout> through = part_layouts(s, owner, 2, 0.3, {}, &cell);
  const std::vector<PartLayout> plain = part_layouts(s, owner, 2, 0.3, {});
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(through[r].members.size(), 2u) << "rank " << r;
    EXPECT_EQ(through[r].owned_count(), 1u);
    EXPECT_EQ(plain[r].members.size(), 1u) << "rank " << r;
  }
  // A particle just past the upper face is bisected where it will be put back.
  ParticleStore t = s;
  t.position[1] = Vec3(1.85, 0.5, 0.5);  // at 0.05 once put back: with particle 0
  for (const double x : {1.2, 1.3}) {
    ParticleSpec p;
    p.position = Vec3(x, 0.5, 0.5);
    t.add(p);
  }
  const std::vector<std::uint32_t> wrapped = bisect_owners(t.position, t.id, 2, &cell);
  EXPECT_EQ(wrapped[0], wrapped[1]);
  EXPECT_NE(wrapped[0], wrapped[2]);
  const std::vector<std::uint32_t> unwrapped = bisect_owners(t.position, t.id, 2);
  EXPECT_NE(unwrapped[0], unwrapped[1]);
}

TEST(PeriodicPartition, PartsOfAnAgitatedLatticeGiveTheWholeForces) {
  // Every particle has crossed a face and been put back (the store
  // re-ordered, the bonds' images found again): each part's owned
  // particles, with ghosts found through the faces, get the whole run's F
  // and tau bits, and the parts' energies merge into the whole's.
  Simulation whole = agitated_lattice(kPeriodicLattice, 40.0);
  for (int k = 0; k < 400; ++k) whole.step();
  ASSERT_GT(largest_jump(whole), 0.5 * 0.011313708498984761);
  ASSERT_GT(whole.reorder_count(), 0u);
  for (std::size_t ranks = 1; ranks <= 4; ++ranks) expect_parts_match(whole, ranks);
}

TEST(PeriodicPartition, PartsOfAShearedFrictionalPackingGiveTheWholeForces) {
  // The frictional gas packed (each grain pressed on its six neighbours,
  // those across the faces too) in its deforming cell (Lees-Edwards across
  // the y faces): contacts and friction histories across faces, found by
  // ghosts through the faces, the contact list restored where the images
  // were at its last build.
  std::string text = sheared_gas(1e-4, 300);
  text = replaced(text, "spacing_ratio = 1.6", "spacing_ratio = 0.99");
  text = replaced(text, "upper = [0.96, 0.96, 0.96]", "upper = [0.594, 0.594, 0.594]");
  Simulation whole = make_simulation(build_scene(parse_scene_text(text, "shear.toml", ".")));
  for (int k = 0; k < 300; ++k) whole.step();
  ASSERT_FALSE(whole.cell()->edges.isApprox(whole.forces().neighbours().build_edges()))
      << "the list was just built: the test shows nothing of the build cell";
  // Pairs in contact across the faces (their force slots not zero).
  std::size_t across = 0;
  for (std::size_t p = 0; p < whole.forces().providers().size(); ++p) {
    if (whole.forces().capabilities(p).neighbour_list == nullptr) continue;
    const PairResults r = whole.forces().providers()[p]->pair_results();
    for (std::size_t k = 0; k < r.offset.size(); ++k)
      if (!r.offset[k].isZero(0.0) && !r.force[k].isZero(0.0)) ++across;
  }
  ASSERT_GT(across, 50u);
  for (std::size_t ranks = 2; ranks <= 4; ++ranks) expect_parts_match(whole, ranks);
}

}  // namespace
}  // namespace dem
