// Moving and servo-controlled plane walls (docs/model.md §11.8;
// docs/scene-format.md [[wall]] velocity, servo_stress; walls.csv):
//  - a wall moving at a constant velocity into a sphere at rest gives, in
//    the wall's frame, the motion of the sphere thrown at the wall at rest
//    (Galilean invariance, to round-off), with Hertz-Mindlin friction,
//    damping and rolling resistance;
//  - a frictionless elastic sphere struck by a wall at speed v leaves at
//    2 v, and W_boundary is minus the kinetic energy it gained;
//  - E_balance closes to O(h^2) with the moving wall's work booked;
//  - the walls' loads (walls.csv) are the sums of the particles' own wall
//    forces and moments, computed apart;
//  - the servo walls of scenes/confined_compression.toml reach their target
//    stress within 1% and hold it while the platen compresses;
//  - a restart from a checkpoint, and a part made of the whole state (the
//    MPI path), continue a servo run bit for bit; 1 and 2 threads agree;
//  - bad [[wall]] keys are refused naming them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/wall_provider.hpp"
#include "core/parallel.hpp"
#include "engine/partition.hpp"
#include "io/checkpoint.hpp"
#include "scene/scene_builder.hpp"
#include "scene_support.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {

using dem::testing::snapshot;

const fs::path& folder() {
  static const fs::path dir = dem::testing::scratch_folder("moving_walls");
  return dir;
}

Simulation simulation_of(const std::string& text) {
  return make_simulation(build_scene(parse_scene_text(text, "s.toml", folder())));
}

/// The SceneError message of making a Simulation of `text`, or "".
std::string simulation_error(const std::string& text) {
  try {
    (void)simulation_of(text);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

std::string vec(const Vec3& v) {
  char b[128];
  std::snprintf(b, sizeof b, "[%.17g, %.17g, %.17g]", v.x(), v.y(), v.z());
  return b;
}

// ------------------------------------------------------------ one sphere

constexpr double kD = 0.01;  // sphere diameter (m)

/// One sphere of diameter 10 mm at `x` with velocity `v` and spin `w`
/// above a floor through the origin (normal +z) moving at `wall_v`, under
/// `law` ("hertz-mindlin": friction, damping, EPSD rolling; "hertz":
/// frictionless, elastic), time step h.
std::string sphere_scene(const std::string& law, const Vec3& x, const Vec3& v, const Vec3& w, const Vec3& wall_v,
                         double h) {
  static int k = 0;
  const std::string csv = "sphere" + std::to_string(k++) + ".csv";
  char row[512];
  std::snprintf(row, sizeof row, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", x.x(), x.y(), x.z(),
                kD, v.x(), v.y(), v.z(), w.x(), w.y(), w.z());
  dem::testing::write_text(folder() / csv, std::string("x,y,z,diameter,vx,vy,vz,wx,wy,wz\n") + row);
  char run[96];
  std::snprintf(run, sizeof run, "[run]\ntime_step = %.17g\nsteps = 10\n", h);
  std::string text = std::string(run) + R"(
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
file = ")" + csv + R"("
material = "grain"
)";
  if (law == "hertz-mindlin")
    text += "[contact]\nlaw = \"hertz-mindlin\"\nrolling = \"epsd\"\nrolling_damping = 0.1\n";
  else
    text += "[contact]\nlaw = \"hertz\"\nstiffness = 0.9\n";
  text += "[[wall]]\nname = \"floor\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n";
  if (law == "hertz") text += "stiffness = 0.9\n";  // K^pw = (4/3) E* r^3, E* = E/(2 (1 - nu^2))
  if (wall_v != Vec3::Zero()) text += "velocity = " + vec(wall_v) + "\n";
  return text;
}

Simulation sphere(const std::string& law, const Vec3& x, const Vec3& v, const Vec3& w, const Vec3& wall_v, double h) {
  return simulation_of(sphere_scene(law, x, v, w, wall_v, h));
}

const Vec3 kWallVelocity(0.2, -0.1, 0.5);
const Vec3 kStart(0.0, 0.0, 0.5 * kD + 1e-4), kSpin(5.0, 30.0, 8.0);

/// max |E_balance - E_0| over `steps` steps of h, and the last report.
double balance_drift(Simulation& sim, std::size_t steps, EnergyReport* last = nullptr) {
  const double e0 = sim.energy_report().balance();
  double worst = 0.0;
  for (std::size_t k = 0; k < steps; ++k) {
    sim.step();
    worst = std::max(worst, std::abs(sim.energy_report().balance() - e0));
  }
  if (last != nullptr) *last = sim.energy_report();
  return worst;
}

}  // namespace

TEST(MovingWalls, AMovingWallActsAsTheWallAtRestInItsFrame) {
  // Lab frame: the floor rises at v into a spinning sphere at rest. Wall
  // frame: the floor at rest, the sphere thrown at -v. Same relative
  // motion, to round-off, through the whole frictional contact.
  const double h = 1e-6;
  Simulation moving = sphere("hertz-mindlin", kStart, Vec3::Zero(), kSpin, kWallVelocity, h);
  Simulation still = sphere("hertz-mindlin", kStart, -kWallVelocity, kSpin, Vec3::Zero(), h);
  double dx = 0.0, dv = 0.0, dw = 0.0;
  bool touched = false;
  for (int k = 0; k < 1500; ++k) {
    moving.step();
    still.step();
    const Vec3 wall = kWallVelocity * moving.time();
    dx = std::max(dx, (moving.particles().position[0] - wall - still.particles().position[0]).norm());
    dv = std::max(dv, (moving.particles().velocity[0] - kWallVelocity - still.particles().velocity[0]).norm());
    dw = std::max(dw, (moving.particles().angular_velocity[0] - still.particles().angular_velocity[0]).norm());
    touched = touched || still.energy_report().wall > 0.0;
  }
  std::printf("wall frame against lab frame: max |dx| %.3e m, |dv| %.3e m/s, |dw| %.3e 1/s\n", dx, dv, dw);
  ASSERT_TRUE(touched);
  EXPECT_GT(still.particles().velocity[0].z(), 0.0) << "it rebounded";
  EXPECT_LT(dx, 1e-15);
  EXPECT_LT(dv, 1e-12);
  EXPECT_LT(dw, 1e-10);
  // The wall's displacement along its normal, and its load on both runs.
  const std::vector<BoundaryLoad> a = moving.boundary_loads(), b = still.boundary_loads();
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].name, "floor");
  EXPECT_DOUBLE_EQ(a[0].displacement, kWallVelocity.z() * moving.time());
  EXPECT_EQ(b[0].displacement, 0.0);
}

TEST(MovingWalls, AnElasticSphereStruckByAWallLeavesAtTwiceItsSpeed) {
  // Frictionless Hertz K^pw wall (WallProvider): in the wall's frame the
  // sphere comes in at -v and leaves at +v, so at 2 v in the lab; the
  // kinetic energy 2 m v^2 it gains is the wall's work, -W_boundary.
  const Vec3 v(0.0, 0.0, 0.4);
  Simulation sim = sphere("hertz", kStart, Vec3::Zero(), Vec3::Zero(), v, 2e-7);
  EnergyReport last;
  const double drift = balance_drift(sim, 15000, &last);
  const double m = sim.particles().mass[0];
  const Vec3 u = sim.particles().velocity[0];
  std::printf("after the strike: v = %.12f m/s (2 v = %.3f), W_boundary = %.9e J (-2 m v^2 = %.9e), drift %.3e J\n",
              u.z(), 2 * v.z(), last.boundary_work, -2 * m * v.squaredNorm(), drift);
  EXPECT_EQ(last.wall, 0.0) << "the sphere has left the wall";
  EXPECT_NEAR(u.z(), 2 * v.z(), 1e-6);
  EXPECT_NEAR(last.boundary_work, -2 * m * v.squaredNorm(), 1e-6 * m * v.squaredNorm());
  EXPECT_EQ(last.contact_work, 0.0);
}

TEST(MovingWalls, EnergyBalanceClosesToSecondOrderWithTheWallsWork) {
  // Hertz-Mindlin with friction, damping and rolling: W_contact counts the
  // dissipation at the relative velocity, W_boundary the wall's work.
  const double t_end = 1.2e-3;
  std::vector<double> drift;
  for (const double h : {4e-6, 2e-6, 1e-6}) {
    Simulation sim = sphere("hertz-mindlin", kStart, Vec3::Zero(), kSpin, kWallVelocity, h);
    EnergyReport last;
    drift.push_back(balance_drift(sim, static_cast<std::size_t>(std::llround(t_end / h)), &last));
    std::printf("h = %.0e s: max |E_balance - E_0| = %.3e J (W_boundary %.6e, W_contact %.6e, E_0 %.6e)\n", h,
                drift.back(), last.boundary_work, last.contact_work, last.total() - 0.0);
    EXPECT_LT(last.boundary_work, 0.0) << "the wall gives energy";
    EXPECT_GT(last.contact_work, 0.0) << "the contact dissipates";
  }
  for (std::size_t k = 1; k < drift.size(); ++k) {
    const double order = std::log2(drift[k - 1] / drift[k]);
    std::printf("observed order %.3f\n", order);
    EXPECT_GT(order, 1.8);
    EXPECT_LT(order, 2.3);
  }
}

namespace {

/// Six grains apart from each other, each thrown with a spin at one of the
/// three walls of a box corner (two at each), under Hertz-Mindlin
/// (`kinetic`) or frictionless Hertz K^pw walls; two of the walls move.
std::string corner_scene(bool kinetic) {
  dem::testing::write_text(folder() / "corner.csv",
                           "x,y,z,diameter,vx,vy,vz,wx,wy,wz\n"
                           "0.0052,0.03,0.03,0.01,-0.3,0.1,0.0,0.0,0.0,40.0\n"
                           "0.0052,0.06,0.05,0.01,-0.3,0.0,0.1,10.0,0.0,0.0\n"
                           "0.03,0.0052,0.03,0.01,0.0,-0.3,0.05,0.0,20.0,0.0\n"
                           "0.06,0.0052,0.06,0.01,0.1,-0.3,0.0,0.0,0.0,-30.0\n"
                           "0.03,0.06,0.0052,0.01,0.0,0.05,-0.3,30.0,0.0,0.0\n"
                           "0.06,0.03,0.0052,0.01,0.05,0.0,-0.3,0.0,-20.0,5.0\n");
  std::string text = R"(
[run]
time_step = 2e-6
steps = 10
[[material]]
name = "grain"
density = 2500.0
E = 1e7
e = 0.5
mu_s = 0.5
mu_r = 0.1
[[particles]]
source = "csv"
file = "corner.csv"
material = "grain"
)";
  text += kinetic ? "[contact]\nlaw = \"hertz-mindlin\"\nrolling = \"epsd\"\nrolling_damping = 0.1\n"
                  : "[contact]\nlaw = \"hertz\"\nstiffness = 0.0\n";
  const std::string stiff = kinetic ? "" : "stiffness = 0.9\n";
  text += "[[wall]]\nname = \"x0\"\npoint = [0.0, 0.0, 0.0]\nnormal = [1.0, 0.0, 0.0]\nvelocity = [0.05, 0.01, 0.0]\n" +
          stiff;
  text += "[[wall]]\nname = \"y0\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]\n" + stiff;
  text += "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nvelocity = [0.0, 0.0, 0.02]\n" + stiff;
  return text;
}

}  // namespace

TEST(MovingWalls, WallLoadsAreTheSumsOfTheParticlesWallForces) {
  for (const bool kinetic : {true, false}) {
    Simulation sim = simulation_of(corner_scene(kinetic));
    for (int k = 0; k < 400; ++k) sim.step();
    const std::vector<BoundaryLoad> loads = sim.boundary_loads();
    ASSERT_EQ(loads.size(), 3u);
    EXPECT_EQ(loads[0].name, "x0");
    EXPECT_EQ(loads[1].name, "y0");
    EXPECT_EQ(loads[2].name, "wall2");
    const ParticleStore& s = sim.particles();
    // Independent sums: the frictionless walls by the wall law of
    // contact_potential.hpp; the kinetic ones by each particle's own force
    // and moment (the grains are apart: only walls touch them, and each
    // touches one at most, checked below).
    Vec3 force[3] = {Vec3::Zero(), Vec3::Zero(), Vec3::Zero()}, moment[3] = {Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
    int touching = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (kinetic) {
        int w_touch = -1, count = 0;
        for (int w = 0; w < 3; ++w)
          if ((s.position[i] - loads[w].centre).dot(loads[w].normal) < s.radius[i]) w_touch = w, ++count;
        ASSERT_LE(count, 1) << "a grain touches two walls: pick another state";
        if (w_touch < 0) continue;
        ++touching;
        const Vec3 f = s.force[i];
        force[w_touch] -= f;
        moment[w_touch] -= (s.position[i] - loads[w_touch].centre).cross(f) + s.moment[i];
      } else {
        for (int w = 0; w < 3; ++w) {
          Wall wall;
          wall.point = loads[w].centre;
          wall.normal = loads[w].normal;
          wall.stiffness = dynamic_cast<const WallProvider&>(*sim.forces().find("walls")).walls()[w].stiffness;
          const Vec3 f = wall_contact(s.position[i], s.radius[i], wall).force_i;
          if (f != Vec3::Zero()) ++touching;
          force[w] -= f;
          moment[w] -= (s.position[i] - wall.point).cross(f);
        }
      }
    }
    std::printf("%d grains touch a wall\n", touching);
    ASSERT_GE(touching, 3) << (kinetic ? "kinetic" : "Hertz K^pw");
    for (int w = 0; w < 3; ++w) {
      const double scale = std::max(1e-3, force[w].norm());
      std::printf("%s wall %s: F = (%.9e, %.9e, %.9e) N, by the particles (%.9e, %.9e, %.9e); M_x %.6e / %.6e\n",
                  kinetic ? "kinetic" : "Hertz", loads[w].name.c_str(), loads[w].force().x(), loads[w].force().y(),
                  loads[w].force().z(), force[w].x(), force[w].y(), force[w].z(), loads[w].moment().x(), moment[w].x());
      EXPECT_LT((loads[w].force() - force[w]).norm(), 1e-12 * scale) << loads[w].name;
      EXPECT_LT((loads[w].moment() - moment[w]).norm(), 1e-12 * scale * 0.1) << loads[w].name;
    }
    EXPECT_GT(loads[0].displacement, 0.0);
    EXPECT_DOUBLE_EQ(loads[0].displacement, 0.05 * sim.time());
    EXPECT_EQ(loads[1].displacement, 0.0);
  }
}

// ------------------------------------------------------------ the servo scene

namespace {

Simulation confined_compression() {
  return make_simulation(build_scene(read_scene_file(std::string(DEM_SOURCE_DIR) + "/scenes/confined_compression.toml")));
}

/// |F_n| / (P A) - 1 of each servo wall (their names begin with "side").
std::vector<double> servo_errors(const Simulation& sim, double p, double area) {
  std::vector<double> out;
  for (const BoundaryLoad& l : sim.boundary_loads())
    if (l.name.rfind("side", 0) == 0) out.push_back(-l.force().dot(l.normal) / (p * area) - 1.0);
  return out;
}

// The scene's servo settings (scenes/confined_compression.toml).
constexpr double kConfining = 1e5;   // Pa
constexpr double kSideArea = 2.6e-4;  // m^2

}  // namespace

TEST(MovingWalls, ServoWallsReachTheirStressWithinOnePercentAndHoldIt) {
  Simulation sim = confined_compression();
  const std::size_t settle = 3000, hold = 6000;
  for (std::size_t k = 0; k < settle; ++k) sim.step();
  double worst = 0.0;
  for (std::size_t k = 0; k < hold; ++k) {
    sim.step();
    if (k % 100 == 0)
      for (const double e : servo_errors(sim, kConfining, kSideArea)) worst = std::max(worst, std::abs(e));
  }
  const std::vector<double> last = servo_errors(sim, kConfining, kSideArea);
  ASSERT_EQ(last.size(), 4u);
  std::printf("servo walls after %zu steps: worst |F_n/(P A) - 1| = %.3e while the platen compresses; last:", settle,
              worst);
  for (const double e : last) std::printf(" %.2e", e);
  std::printf("\n");
  EXPECT_LT(worst, 0.01);
}

TEST(MovingWalls, AServoRunRestartsBitForBit) {
  Simulation whole = confined_compression();
  for (int k = 0; k < 600; ++k) whole.step();
  Simulation half = confined_compression();
  for (int k = 0; k < 301; ++k) half.step();
  Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(half))));
  for (int k = 301; k < 600; ++k) resumed.step();
  EXPECT_TRUE(snapshot(resumed) == snapshot(whole));
  EXPECT_NE(whole.ledger().boundary, 0.0);
}

TEST(MovingWalls, CornerWallsOfEitherKindRestartBitForBit) {
  // Stateless Hertz K^pw walls (WallProvider) and kinetic ones with their
  // slots per particle and wall, restarted while grains touch them.
  for (const bool kinetic : {true, false}) {
    Simulation whole = simulation_of(corner_scene(kinetic));
    for (int k = 0; k < 500; ++k) whole.step();
    Simulation half = simulation_of(corner_scene(kinetic));
    for (int k = 0; k < 351; ++k) half.step();
    ASSERT_GT(half.energy_report().wall, 0.0);
    Simulation resumed = simulation_from(decode_checkpoint(encode_checkpoint(capture_simulation(half))));
    EXPECT_TRUE(snapshot(resumed) == snapshot(half)) << "the loads restored with the state";
    for (int k = 351; k < 500; ++k) resumed.step();
    EXPECT_TRUE(snapshot(resumed) == snapshot(whole)) << (kinetic ? "kinetic" : "Hertz K^pw");
  }
}

TEST(MovingWalls, APartMadeOfTheWholeStateContinuesBitForBit) {
  // The MPI path without MPI: the walls' motion state and per-wall slots
  // travel in the providers' histories (Decomposable::pack_history) to a
  // part that owns every particle.
  Simulation whole = confined_compression();
  for (int k = 0; k < 301; ++k) whole.step();
  const GlobalState state = capture_global_state(whole);
  PartFactory factory(confined_compression());
  PartLayout all;
  all.members.resize(state.particles.size());
  std::iota(all.members.begin(), all.members.end(), 0u);
  all.ghost.assign(all.members.size(), 0);
  Simulation part = factory.make(state, all);
  for (int k = 301; k < 600; ++k) {
    whole.step();
    part.step();
  }
  EXPECT_TRUE(snapshot(part) == snapshot(whole));
}

TEST(MovingWalls, OneAndTwoThreadsGiveTheSameBits) {
  dem::testing::StateSnapshot one, two;
  {
    ThreadLimit limit(1);
    Simulation sim = confined_compression();
    for (int k = 0; k < 300; ++k) sim.step();
    one = snapshot(sim);
  }
  {
    ThreadLimit limit(2);
    Simulation sim = confined_compression();
    for (int k = 0; k < 300; ++k) sim.step();
    two = snapshot(sim);
  }
  EXPECT_TRUE(one == two);
}

// ------------------------------------------------------------ bad input

TEST(MovingWalls, BadKeysAreRefusedNamingThem) {
  const std::string base = sphere_scene("hertz-mindlin", kStart, Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), 1e-6);
  const auto error = [&](const std::string& keys) {
    return simulation_error(dem::testing::replaced(base, "name = \"floor\"\n", "name = \"floor\"\n" + keys));
  };
  const std::string servo = "servo_stress = 1e4\nservo_area = 1e-4\nservo_gain = 1e-3\nservo_max_speed = 0.1\n";
  EXPECT_EQ(error(""), "");
  EXPECT_EQ(error(servo), "");
  struct Case {
    std::string keys, key;
  };
  for (const Case& c : std::vector<Case>{
           {"velocity = [0.0, 0.0, 1.0]\n" + servo, "servo_stress"},
           {"servo_stress = 1e4\nservo_gain = 1e-3\nservo_max_speed = 0.1\n", "servo_area"},
           {"servo_stress = 1e4\nservo_area = 1e-4\nservo_max_speed = 0.1\n", "servo_gain"},
           {"servo_stress = 1e4\nservo_area = 1e-4\nservo_gain = 1e-3\n", "servo_max_speed"},
           {"servo_stress = -1e4\nservo_area = 1e-4\nservo_gain = 1e-3\nservo_max_speed = 0.1\n", "servo_stress"},
           {"servo_stress = 1e4\nservo_area = 0.0\nservo_gain = 1e-3\nservo_max_speed = 0.1\n", "servo_area"},
           {"servo_stress = 1e4\nservo_area = 1e-4\nservo_gain = -1.0\nservo_max_speed = 0.1\n", "servo_gain"},
           {"servo_area = 1e-4\n", "servo_area"},
           {"servo_gain = 1e-3\n", "servo_gain"},
           {"velocity = [0.0, \"a\", 1.0]\n", "velocity"},
           {"velocity = [0.0, 1.0]\n", "velocity"},
           {"velocity = [0.0, 0.0, nan]\n", "velocity"},
           {"velocity = [0.0, 0.0, 600.0]\n", "velocity: the wall moves 0.0006 in one step"},
           {"servo_stress = 1e4\nservo_area = 1e-4\nservo_gain = 1e-3\nservo_max_speed = 600.0\n", "servo_max_speed: the wall moves"},
       }) {
    const std::string e = error(c.keys);
    EXPECT_NE(e.find(c.key), std::string::npos) << c.keys << " -> " << e;
  }
  // Names: not empty, no commas, not twice, not another wall's default name.
  EXPECT_NE(simulation_error(dem::testing::replaced(base, "name = \"floor\"", "name = \"\"")).find("name"),
            std::string::npos);
  EXPECT_NE(simulation_error(dem::testing::replaced(base, "name = \"floor\"", "name = \"a,b\"")).find("name"),
            std::string::npos);
  const std::string two = base + "[[wall]]\nname = \"floor\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n";
  EXPECT_NE(simulation_error(two).find("already"), std::string::npos) << simulation_error(two);
  const std::string clash = dem::testing::replaced(base, "name = \"floor\"", "name = \"wall1\"") +
                            "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n";
  EXPECT_NE(simulation_error(clash).find("wall1"), std::string::npos)
      << simulation_error(clash);
}

TEST(MovingWalls, TheImplicitIntegratorRefusesMovingWalls) {
  std::string text = sphere_scene("hertz", kStart, Vec3::Zero(), Vec3::Zero(), Vec3(0, 0, 0.1), 1e-6);
  text = dem::testing::replaced(text, "[run]\n", "[run]\nintegrator = \"implicit\"\n");
  try {
    (void)simulation_of(text);
    ADD_FAILURE() << "made";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("explicit"), std::string::npos) << e.what();
  }
}
