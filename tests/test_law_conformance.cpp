// The conformance suite of contact laws: every law of the registry
// (contact/contact_laws.hpp) runs through the same checks, pairs and walls,
// by one row of kLaws below:
//  - the conservative force and the wall force are minus the gradient of
//    U_contact + U_wall (central differences), with no moment at rest;
//  - Hessian blocks (laws that have them) are the derivative of the forces;
//  - forces sum to zero (Newton's third law) and the moments balance the
//    angular momentum to within the overlap's arm (|delta| |F_t| per contact:
//    moments act about the centres, docs/model.md §11.2; adhesive contacts
//    also hold at a negative overlap, down to the row's `hold`);
//  - objectivity: a rigidly rotated pile gives the rotated motion;
//  - relabelling the particles changes nothing but round-off;
//  - the same bits at 1, 2 and 3 threads and on every SIMD target;
//  - a checkpoint continues bit for bit; MPI parts give the whole's bits.
// A law whose name is in the registry but not in kLaws fails the suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bonds/bond_laws.hpp"
#include "contact/contact_laws.hpp"
#include "core/parallel.hpp"
#include "core/simd.hpp"
#include "engine/force_field.hpp"
#include "engine/simulation.hpp"
#include "fields/gravity_provider.hpp"
#include "io/checkpoint.hpp"
#include "part_support.hpp"
#include "simd_targets.hpp"
#include "support.hpp"

namespace dem {
namespace {

constexpr double kR = 1e-3, kRho = 2400, kE = 1e8, kNu = 0.3, kH = 2e-7;

/// One row per law: its keyword and the values of its keys for the test
/// piles (SI units; spheres of radius 1 mm, E = 1e8 Pa).
struct LawRow {
  std::string keyword;
  std::map<std::string, double> contact;  ///< [contact] keys
  std::map<std::string, double> wall;     ///< each [[wall]]'s keys
  std::map<std::string, bool> flags;
  std::map<std::string, std::string> words;  ///< choice keys
  std::string variant;                       ///< suffix of the test name for a second row of a law
  /// Adhesive laws: a length beyond touching (r_i + r_j) over which a
  /// contact can still hold (more than JKR's pull-off distance, 6.7e-4 kR
  /// for gamma = 1 J/m² here); 0: contacts act only while the spheres overlap.
  double hold = 0.0;
};

const std::vector<LawRow> kLaws = {
    {"hertz", {{"stiffness", 0.3}}, {{"stiffness", 0.3}}, {}, {}, "", 0.0},
    {"penalty", {{"stiffness", 1e5}, {"wall_stiffness", 1e5}}, {}, {}, {}, "", 0.0},
    {"hertz-mindlin", {{"rolling_damping", 0.3}}, {}, {}, {{"rolling", "epsd"}}, "", 0.0},
    {"hertz-mindlin", {}, {}, {}, {{"rolling", "epsd2"}, {"damping", "tsuji"}}, "epsd2_tsuji", 0.0},
    {"hertz-mindlin", {}, {}, {}, {{"rolling", "cdt"}, {"damping", "tsuji-clamped"}}, "cdt_tsuji_clamped", 0.0},
    {"hertz-mindlin", {{"rolling_stiffness", 1e3}, {"rolling_dashpot", 1e-3}}, {}, {},
     {{"rolling", "sds"}, {"twisting", "marshall"}}, "sds_marshall", 0.0},
    {"hertz-mindlin", {{"twisting_stiffness", 1e-6}, {"twisting_dashpot", 1e-10}, {"twisting_friction", 1e-4}}, {}, {},
     {{"rolling", "epsd"}, {"twisting", "sds"}}, "twisting_sds", 0.0},
    {"linear", {{"stiffness", 1e5}}, {}, {}, {}, "", 0.0},
    {"jkr", {{"surface_energy", 1.0}}, {}, {}, {}, "", 1e-3 * kR},
    {"dmt", {{"surface_energy", 1.0}}, {}, {}, {}, "", 0.0},
};

ParticleSpec sphere(const Vec3& x, const Vec3& v, const Vec3& w = Vec3::Zero()) {
  return dem::testing::solid_sphere(kR, kRho, x, v, w);
}

/// A scene for one law: particles, walls (points, normals) and gravity.
struct LawScene {
  ParticleStore particles;
  std::vector<Wall> walls;
  Vec3 gravity = Vec3::Zero();
  bool reorder = true;
};

/// The law's providers for this setup, made through its registry entry.
ForceField forces_of(const LawRow& row, const LawScene& setup) {
  const ContactLawEntry* law = find_contact_law(row.keyword);
  if (law == nullptr) throw std::logic_error("no law " + row.keyword);
  ContactLawInput in;
  in.particles = &setup.particles;
  in.materials = {{"grain", kRho, kE, kNu, 0.5, 0.4, 0.05}};
  in.e_max = kE;
  in.r_min = in.r_max = kR;
  in.contact_given = true;
  in.values.numbers = row.contact;
  in.values.flags = row.flags;
  in.values.words = row.words;
  for (std::size_t w = 0; w < setup.walls.size(); ++w) in.wall_values.emplace_back().numbers = row.wall;
  std::shared_ptr<PreparedContactLaw> prepared = law->prepare(in);
  std::vector<Wall> walls = setup.walls;
  for (std::size_t w = 0; w < walls.size(); ++w) walls[w].stiffness = prepared->wall_stiffness(w);
  ContactLawProviders p = prepared->make(setup.particles, walls, 0.2 * kR, kH);
  ForceField f;
  f.add(std::move(p.pairs));
  if (p.walls) f.add(std::move(p.walls));
  f.add(std::make_unique<GravityProvider>(setup.gravity));
  f.set_reorder_on_rebuild(setup.reorder);
  return f;
}

Simulation simulation_of(const LawRow& row, const LawScene& setup) {
  return Simulation(setup.particles, forces_of(row, setup), IntegratorMap::rrp25, kH);
}

/// 27 spheres in a loose cube over a floor, moving and spinning at random
/// (about 0.5 m/s), so that they collide with each other and the floor.
LawScene pile(bool with_floor = true, std::uint64_t seed = 3) {
  LawScene s;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k = 0; k < 27; ++k) {
    const Vec3 x(2.05 * kR * (k % 3), 2.05 * kR * ((k / 3) % 3), 1.05 * kR + 2.05 * kR * (k / 9));
    s.particles.add(sphere(x + 0.02 * kR * Vec3(u(rng), u(rng), u(rng)), 0.5 * Vec3(u(rng), u(rng), u(rng)),
                           500.0 * Vec3(u(rng), u(rng), u(rng))));
  }
  if (with_floor) s.walls.push_back(Wall{Vec3::Zero(), Vec3::UnitZ(), 0.0});
  s.gravity = Vec3(0, 0, -9.81);
  return s;
}

std::vector<Vec3> by_id(const std::vector<Vec3>& v, const ParticleStore& p) {
  std::vector<Vec3> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[p.id[i]] = v[i];
  return out;
}

double potential(const Simulation& sim) {
  const EnergyReport r = sim.energy_report();
  return r.contact + r.wall;
}

/// docs/scene-format.md lists every law's keys exactly as the registry does.
TEST(LawConformanceRows, SceneFormatDocsHoldTheRegistrysKeyTables) {
  std::ifstream in(std::string(DEM_SOURCE_DIR) + "/docs/scene-format.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto expect_between = [&](const std::string& marker, const std::string& table) {
    const std::string begin = "<!-- " + marker + ": begin -->\n", end = "<!-- " + marker + ": end -->";
    const std::size_t a = doc.find(begin), b = doc.find(end);
    ASSERT_NE(a, std::string::npos) << marker;
    ASSERT_NE(b, std::string::npos) << marker;
    std::string expected = "\n";
    expected += table;
    EXPECT_EQ(doc.substr(a + begin.size(), b - a - begin.size()), expected)
        << "paste `dem laws` between the " << marker << " markers of docs/scene-format.md";
  };
  expect_between("contact-law-tables", contact_law_tables());
  expect_between("bond-law-table", bond_law_tables());
}

/// Two overlapping spheres at rest and a third pressed into the floor.
LawScene three_contacts() {
  LawScene s;
  s.particles.add(sphere(Vec3(0, 0, 3 * kR), Vec3::Zero()));
  s.particles.add(sphere(Vec3(1.97 * kR, 0.11 * kR, 3.05 * kR), Vec3::Zero()));
  s.particles.add(sphere(Vec3(5 * kR, 0, 0.985 * kR), Vec3::Zero()));
  s.walls.push_back(Wall{Vec3::Zero(), Vec3::UnitZ(), 0.0});
  s.reorder = false;
  return s;
}

class LawConformance : public ::testing::TestWithParam<LawRow> {};

TEST(LawConformanceRows, EveryRegisteredLawHasARow) {
  for (const ContactLawEntry& e : contact_laws())
    EXPECT_TRUE(std::any_of(kLaws.begin(), kLaws.end(), [&](const LawRow& r) { return r.keyword == e.keyword; }))
        << "law \"" << e.keyword << "\" is not in the conformance suite (add a row to kLaws)";
}

/// Two overlapping spheres at rest and a third pressed into the floor: the
/// force on every particle is -dU/dx (U = U_contact + U_wall), no moment.
TEST_P(LawConformance, ConservativeForcesAreTheEnergyGradient) {
  const LawRow& row = GetParam();
  const LawScene s = three_contacts();
  const Simulation sim = simulation_of(row, s);
  const double eps = 1e-9 * kR;
  for (std::size_t i = 0; i < 3; ++i) {
    const Vec3 f = sim.particles().force[i];
    ASSERT_GT(f.norm(), 0.0) << "particle " << i << " should touch something";
    EXPECT_EQ(sim.particles().moment[i], Vec3::Zero()) << "particle " << i;
    for (int c = 0; c < 3; ++c) {
      LawScene plus = s, minus = s;
      plus.particles.position[i][c] += eps;
      minus.particles.position[i][c] -= eps;
      const double grad = (potential(simulation_of(row, plus)) - potential(simulation_of(row, minus))) / (2 * eps);
      EXPECT_NEAR(f[c], -grad, 1e-6 * f.norm()) << row.keyword << ": particle " << i << ", component " << c;
    }
  }
}

/// The pair's element Hessian (translation block) is -dF_i/dx_i, and the
/// wall's diagonal block is -dF/dx, by central differences of the forces.
TEST_P(LawConformance, HessianBlocksAreTheForceDerivative) {
  const LawRow& row = GetParam();
  if (!find_contact_law(row.keyword)->hessian) GTEST_SKIP() << "no Hessian blocks";
  const LawScene s = three_contacts();
  const Simulation sim = simulation_of(row, s);
  const ForceProvider& pairs = *sim.forces().providers()[0];
  const HessianSource* pair_blocks = sim.forces().capabilities(0).hessian;
  const HessianSource* wall_blocks = sim.forces().capabilities(1).hessian;
  ASSERT_TRUE(pair_blocks != nullptr);
  ASSERT_TRUE(wall_blocks != nullptr);
  std::vector<Mat12> blocks(pair_blocks->record_second_ends().size());
  ASSERT_EQ(blocks.size(), 1u) << "one pair in the list";
  pair_blocks->element_hessians(sim.particles(), 0, blocks, HessianBlocks::exact);
  std::vector<Mat6> diag(3, Mat6::Zero());
  wall_blocks->add_body_hessians(sim.particles(), 0, 3, diag);
  const std::uint32_t i = pairs.pair_results().first[0];
  const double eps = 1e-9 * kR;
  for (int c = 0; c < 3; ++c) {
    for (const std::size_t p : {std::size_t{i}, std::size_t{2}}) {
      LawScene plus = s, minus = s;
      plus.particles.position[p][c] += eps;
      minus.particles.position[p][c] -= eps;
      const Vec3 df = (simulation_of(row, plus).particles().force[p] - simulation_of(row, minus).particles().force[p]) /
                      (2 * eps);
      const Vec3 expected = p == 2 ? Vec3(-diag[2].block<3, 3>(0, 0).col(c)) : Vec3(-blocks[0].block<3, 3>(0, 0).col(c));
      EXPECT_LT((df - expected).norm(), 1e-5 * expected.norm() + 1e-9) << row.keyword << ": particle " << p << ", column " << c;
    }
  }
}

/// Without walls and gravity: the contact forces sum to zero, and the
/// moments balance the angular momentum to within the overlap's arm.
TEST_P(LawConformance, ForcesAndMomentsBalance) {
  const LawRow& row = GetParam();
  Simulation sim = simulation_of(row, [] {
    LawScene s = pile(false);
    s.gravity = Vec3::Zero();
    return s;
  }());
  std::size_t touching = 0;
  for (int k = 0; k < 1500; ++k) {
    sim.step();
    const ParticleStore& p = sim.particles();
    Vec3 sum = Vec3::Zero(), torque = Vec3::Zero();
    double scale = 0.0, overlap = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      sum += p.force[i];
      torque += p.position[i].cross(p.force[i]) + p.moment[i];
      scale += p.force[i].norm();
      for (std::size_t j = i + 1; j < p.size(); ++j) {
        const double delta = p.radius[i] + p.radius[j] - (p.position[i] - p.position[j]).norm();
        if (delta > -row.hold) overlap = std::max(overlap, std::abs(delta));
      }
    }
    if (scale > 0.0) ++touching;
    EXPECT_LE(sum.norm(), 1e-13 * scale) << row.keyword << " step " << k;
    EXPECT_LE(torque.norm(), overlap * scale + 1e-13 * scale * 10 * kR) << row.keyword << " step " << k;
  }
  EXPECT_GT(touching, 100u);
}

/// A pile rotated rigidly (particles, velocities, spins, floor, gravity)
/// moves as the rotated pile, to round-off.
TEST_P(LawConformance, ObjectiveUnderARigidRotation) {
  const LawRow& row = GetParam();
  const Mat3 rot = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  LawScene a = pile(), b = pile();
  for (std::size_t i = 0; i < b.particles.size(); ++i) {
    b.particles.position[i] = rot * b.particles.position[i];
    b.particles.velocity[i] = rot * b.particles.velocity[i];
    b.particles.angular_velocity[i] = rot * b.particles.angular_velocity[i];
  }
  for (Wall& w : b.walls) w.normal = rot * w.normal;
  b.gravity = rot * b.gravity;
  a.reorder = b.reorder = false;
  Simulation sa = simulation_of(row, a), sb = simulation_of(row, b);
  for (int k = 0; k < 800; ++k) {
    sa.step();
    sb.step();
  }
  double dx = 0.0, dv = 0.0, dw = 0.0, v_scale = 0.0, w_scale = 0.0;
  for (std::size_t i = 0; i < sa.particles().size(); ++i) {
    dx = std::max(dx, (rot * sa.particles().position[i] - sb.particles().position[i]).norm());
    dv = std::max(dv, (rot * sa.particles().velocity[i] - sb.particles().velocity[i]).norm());
    dw = std::max(dw, (rot * sa.particles().angular_velocity[i] - sb.particles().angular_velocity[i]).norm());
    v_scale = std::max(v_scale, sa.particles().velocity[i].norm());
    w_scale = std::max(w_scale, sa.particles().angular_velocity[i].norm());
  }
  EXPECT_LT(dx, 1e-12 * kR) << row.keyword;
  EXPECT_LT(dv, 1e-8 * v_scale) << row.keyword;
  EXPECT_LT(dw, 1e-8 * w_scale) << row.keyword;
  // Not zero: in contact (an adhesive contact's energy may be negative).
  EXPECT_NE(sa.energy_report().contact + sa.energy_report().wall, 0.0) << "the pile should be in contact";
}

/// The same pile with its particles stored in reverse order (each pair's
/// ends swapped in the list): the same motion to round-off.
TEST_P(LawConformance, RelabellingTheParticlesChangesOnlyRoundOff) {
  const LawRow& row = GetParam();
  LawScene a = pile(), b;
  b.walls = a.walls;
  b.gravity = a.gravity;
  for (std::size_t k = a.particles.size(); k-- > 0;) {
    ParticleSpec p = sphere(a.particles.position[k], a.particles.velocity[k], a.particles.angular_velocity[k]);
    b.particles.add(p);
  }
  a.reorder = b.reorder = false;
  Simulation sa = simulation_of(row, a), sb = simulation_of(row, b);
  for (int k = 0; k < 800; ++k) {
    sa.step();
    sb.step();
  }
  const std::size_t n = sa.particles().size();
  double dx = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    dx = std::max(dx, (sa.particles().position[i] - sb.particles().position[n - 1 - i]).norm());
  EXPECT_LT(dx, 1e-12 * kR) << row.keyword;
}

/// Bits at 1, 2 and 3 threads and on every SIMD target, with re-ordering on.
TEST_P(LawConformance, SameBitsForAnyThreadCountAndSimdTarget) {
  const LawRow& row = GetParam();
  std::vector<Vec3> first;
  for (const std::string& target : available_simd_targets())
    for (const std::size_t threads : {1, 2, 3}) {
      testing::SimdTargetScope scope(target);
      ThreadLimit limit(threads);
      Simulation sim = simulation_of(row, pile());
      for (int k = 0; k < 1200; ++k) sim.step();
      const std::vector<Vec3> x = by_id(sim.particles().position, sim.particles());
      if (first.empty()) first = x;
      EXPECT_EQ(x, first) << row.keyword << ": " << target << ", " << threads << " threads";
    }
}

/// A checkpoint in the middle continues with the same bits, its history included.
TEST_P(LawConformance, CheckpointContinuesBitForBit) {
  const LawRow& row = GetParam();
  Simulation sim = simulation_of(row, pile());
  for (int k = 0; k < 700; ++k) sim.step();
  Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(sim))));
  for (int k = 0; k < 700; ++k) {
    sim.step();
    resumed.step();
  }
  EXPECT_EQ(by_id(resumed.particles().position, resumed.particles()), by_id(sim.particles().position, sim.particles()))
      << row.keyword;
  EXPECT_EQ(by_id(resumed.particles().angular_velocity, resumed.particles()),
            by_id(sim.particles().angular_velocity, sim.particles()))
      << row.keyword;
  EXPECT_EQ(resumed.ledger().contact, sim.ledger().contact) << row.keyword;
}

/// MPI-style parts of the running pile (its histories carried into the
/// parts) give every owned particle the whole run's force and moment bits.
TEST_P(LawConformance, MpiPartsGiveTheWholeForces) {
  const LawRow& row = GetParam();
  Simulation sim = simulation_of(row, pile());
  for (int k = 0; k < 900; ++k) sim.step();
  for (const std::size_t ranks : {2, 3}) expect_parts_match(sim, ranks);
}

INSTANTIATE_TEST_SUITE_P(Laws, LawConformance, ::testing::ValuesIn(kLaws),
                         [](const ::testing::TestParamInfo<LawRow>& info) {
                           std::string name = info.param.keyword;
                           if (!info.param.variant.empty()) name += "_" + info.param.variant;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace dem
