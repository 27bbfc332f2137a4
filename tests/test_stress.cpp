// The macroscopic (Love-Weber) stress tensor (engine/stress.hpp,
// docs/model.md §19): a bonded FCC lattice under a small homogeneous strain
// against its elastic constants from the bond stiffnesses; the kinetic part
// of a gas; symmetry, layout independence and the [stress] scene key.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <oneapi/tbb/global_control.h>
#include <string>

#include "engine/collective.hpp"
#include "engine/stress.hpp"
#include "scene/scene_builder.hpp"
#include "scene_support.hpp"

namespace dem {
namespace {

// A bonded FCC block of 6 x 6 x 6 cubic cells (cell side a = sqrt(2) d),
// BDEM bonds between nearest neighbours, no contact between bonded pairs.
constexpr double kD = 2e-3, kE = 1e9, kNu = 0.25, kBeta = 0.8;
const std::string kLattice = R"(
[run]
integrator = "rrp25"
time_step = 1e-8
steps = 1

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
cells = [6, 6, 6]

[bonds]
law = "bdem"
pairs = "generator"

[contact]
law = "penalty"
stiffness = 1e6
)";

struct Strained {
  AssembledScene scene;
  StressBox box;
  std::size_t inside = 0;
};

/// The lattice with x -> x0 + (I + eps)(x - x0) applied after its bonds took
/// their rest state, forces evaluated; the box spans 3 x 3 x 3 cubic cells
/// of the interior, offset by a quarter cell so that no centre lies on a face.
Strained strained_lattice(const Mat3& eps) {
  Strained s{assemble_scene(build_scene(parse_scene_text(kLattice, "s.toml", "."))), {}, 0};
  ParticleStore& p = s.scene.particles;
  Vec3 x0 = p.position[0];
  for (const Vec3& x : p.position) x0 = x0.cwiseMin(x);
  const double a = std::sqrt(2.0) * kD;
  s.box.lower = x0 + Vec3::Constant(1.75 * a);
  s.box.upper = x0 + Vec3::Constant(4.75 * a);
  for (Vec3& x : p.position) x = x0 + (Mat3::Identity() + eps) * (x - x0);
  s.box.lower = x0 + (Mat3::Identity() + eps) * (s.box.lower - x0);
  s.box.upper = x0 + (Mat3::Identity() + eps) * (s.box.upper - x0);
  s.scene.forces.update_records(p);
  s.scene.forces.evaluate(p);
  for (const Vec3& x : p.position) s.inside += s.box.contains(x) ? 1 : 0;
  return s;
}

/// The affine (Born) elastic constants of an FCC lattice of nearest-neighbour
/// bonds with axial stiffness k_n and transverse stiffness k_t (docs/model.md
/// §19.2): C11 = sqrt(2) (k_n + k_t)/l, C12 = (k_n - k_t)/(sqrt(2) l),
/// C44 = (k_n + k_t)/(sqrt(2) l).
struct Constants {
  double c11, c12, c44;
};
Constants fcc_constants() {
  const double r_b = kBeta * kD / 2.0, area = M_PI * r_b * r_b;
  const double k_n = kE * area / kD, k_t = kE / (2.0 * (1.0 + kNu)) * area / kD;
  return {std::sqrt(2.0) * (k_n + k_t) / kD, (k_n - k_t) / (std::sqrt(2.0) * kD), (k_n + k_t) / (std::sqrt(2.0) * kD)};
}

TEST(Stress, UniaxialStrainOfABondedFccLatticeGivesC11AndC12) {
  const double e = 1e-7;
  Mat3 eps = Mat3::Zero();
  eps(0, 0) = e;
  const Strained s = strained_lattice(eps);
  ASSERT_EQ(s.inside, 108u);  // 27 cells of 4
  const StressMeasure m = measure_stress(s.scene.forces, s.scene.particles, s.box, serial_collective());
  const Constants c = fcc_constants();
  EXPECT_NEAR(m.sigma[0] / e, c.c11, 1e-6 * c.c11);
  std::printf("C11 %.9e / %.9e, C12 %.9e / %.9e\n", m.sigma[0] / e, c.c11, m.sigma[1] / e, c.c12);
  EXPECT_NEAR(m.sigma[1] / e, c.c12, 1e-6 * c.c11);
  EXPECT_NEAR(m.sigma[2] / e, c.c12, 1e-6 * c.c11);
  for (int k = 3; k < 6; ++k) EXPECT_NEAR(m.sigma[k] / e, 0.0, 1e-8 * c.c11) << k;
  for (const double x : m.kinetic) EXPECT_EQ(x, 0.0);
  EXPECT_EQ(m.particles, 108.0);
  EXPECT_DOUBLE_EQ(m.volume, s.box.volume());
}

TEST(Stress, CompressionIsNegativeAndLinearInTheStrain) {
  // Tension positive: the same strain of the other sign gives the opposite
  // stress (to the second order in the strain), along every axis.
  for (int axis = 0; axis < 3; ++axis) {
    Mat3 eps = Mat3::Zero();
    eps(axis, axis) = -1e-7;
    const StressMeasure m = [&] {
      const Strained s = strained_lattice(eps);
      return measure_stress(s.scene.forces, s.scene.particles, s.box, serial_collective());
    }();
    const Constants c = fcc_constants();
    EXPECT_NEAR(m.sigma[axis] / -1e-7, c.c11, 1e-6 * c.c11) << axis;
    EXPECT_LT(m.sigma[axis], 0.0);
  }
}

TEST(Stress, ShearStrainGivesTheOffDiagonalComponent) {
  // eps_xy = eps_yx = g/2: sigma_xy = C44 g; the other components zero to
  // first order in g.
  const double g = 1e-7;
  Mat3 eps = Mat3::Zero();
  eps(0, 1) = eps(1, 0) = g / 2.0;
  const Strained s = strained_lattice(eps);
  const StressMeasure m = measure_stress(s.scene.forces, s.scene.particles, s.box, serial_collective());
  const Constants c = fcc_constants();
  EXPECT_NEAR(m.sigma[5] / g, c.c44, 1e-6 * c.c11);
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(m.sigma[k] / g, 0.0, 1e-6 * c.c11) << k;
}

TEST(Stress, KineticPartOfAGasIsItsMomentumFluxAboutTheMeanVelocity) {
  ParticleStore p;
  const Vec3 x[] = {{0.1, 0.1, 0.1}, {0.5, 0.2, 0.7}, {0.9, 0.8, 0.3}, {1.5, 0.5, 0.5}};
  const Vec3 v[] = {{1.0, 2.0, -1.0}, {-3.0, 0.5, 0.0}, {0.25, -1.0, 2.0}, {9.0, 9.0, 9.0}};
  const double mass[] = {1.0, 2.0, 0.5, 7.0};
  for (int k = 0; k < 4; ++k) {
    ParticleSpec sp;
    sp.position = x[k];
    sp.velocity = v[k];
    sp.mass = mass[k];
    sp.diameter = 0.01;
    p.add(sp);
  }
  const ForceField none;
  const StressBox box{Vec3::Zero(), Vec3::Ones()};  // the fourth particle is outside
  const StressMeasure m = measure_stress(none, p, box, serial_collective());
  Vec3 vbar = Vec3::Zero();
  double mt = 0.0;
  for (int k = 0; k < 3; ++k) {
    vbar += mass[k] * v[k];
    mt += mass[k];
  }
  vbar /= mt;
  Mat3 t = Mat3::Zero();
  for (int k = 0; k < 3; ++k) t -= mass[k] * (v[k] - vbar) * (v[k] - vbar).transpose();
  const int row[] = {0, 1, 2, 1, 0, 0}, col[] = {0, 1, 2, 2, 2, 1};
  for (int c = 0; c < 6; ++c) {
    EXPECT_NEAR(m.sigma[c], t(row[c], col[c]), 1e-14 * t.norm()) << c;
    EXPECT_EQ(m.sigma[c], m.kinetic[c]) << c;
  }
  EXPECT_EQ(m.particles, 3.0);
}

TEST(Stress, SameBitsAtOneAndTwoThreads) {
  Mat3 eps;
  eps << 1e-7, 3e-8, -2e-8, 3e-8, -5e-8, 1e-8, -2e-8, 1e-8, 4e-8;
  StressMeasure one, two;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    const Strained s = strained_lattice(eps);
    one = measure_stress(s.scene.forces, s.scene.particles, s.box, serial_collective());
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
    const Strained s = strained_lattice(eps);
    two = measure_stress(s.scene.forces, s.scene.particles, s.box, serial_collective());
  }
  for (int c = 0; c < 6; ++c) EXPECT_EQ(one.sigma[c], two.sigma[c]) << c;
}

TEST(Stress, SceneKeyAndBadBoxes) {
  const std::string ok = kLattice + "\n[stress]\nlower = [0.0, 0.0, 0.0]\nupper = [0.01, 0.01, 0.01]\n";
  const SceneSpec spec = parse_scene_text(ok, "s.toml", ".");
  ASSERT_TRUE(spec.output.stress_box.has_value());
  EXPECT_EQ(spec.output.stress_box->upper, Vec3::Constant(0.01));
  const auto message = [](const std::string& text) -> std::string {
    try {
      (void)parse_scene_text(text, "s.toml", ".");
    } catch (const SceneError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(kLattice + "\n[stress]\nlower = [0.0, 0.0, 0.0]\nupper = [0.01, 0.0, 0.01]\n").find("upper"),
            std::string::npos);
  EXPECT_NE(message(kLattice + "\n[stress]\nupper = [0.01, 0.01, 0.01]\n").find("lower"), std::string::npos);
  EXPECT_NE(message(kLattice + "\n[stress]\nlower = [0.0, 0.0, 0.0]\nupper = [1, 1, 1]\nvolume = 2\n").find("volume"),
            std::string::npos);
}

}  // namespace
}  // namespace dem
