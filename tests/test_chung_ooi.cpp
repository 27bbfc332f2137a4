// The Chung & Ooi (2011) benchmarks of DEM codes at the level of one impact
// (Granular Matter 13:643-656, tests 1-4, with the paper's inputs), run as
// scenes through the Hertz-Mindlin law (docs/model.md §11.2, §11.5) and a
// [[wall]] of a rigid material (E = 1e30 Pa: E* and G* are the sphere's own
// to 1e-19); docs/verification.md "Chung & Ooi" gives the numbers.
//  - Test 1, two equal spheres head on at 10 m/s each (glass, limestone),
//    and test 2, a sphere on a rigid wall at 0.2 m/s (aluminium and
//    magnesium alloys): the largest overlap, the largest force and the
//    contact time of Hertz theory, within 1e-4;
//  - test 3, Al2O3 and cast iron spheres on a rigid wall at 3.9 m/s: the
//    measured restitution is the input e = 0.2, 0.4, 0.6, 0.8, 1 within 1e-3;
//  - test 4, Al2O3 and aluminium alloy spheres (mu = 0.092, e = 0.98) on a
//    rigid wall at 3.9 m/s from 5 to 85 degrees: where the contact slides
//    throughout (tan(theta) above 3.5 mu (1 + e)) the rebound of rigid-body
//    impact theory, tangential restitution e_t = 1 - mu (1 + e)/tan(theta),
//    spin 2.5 mu (1 + e) v_n / r and the contact patch's rebound angle
//    atan((tan(theta) - 3.5 mu (1 + e))/e), within 1e-4 (0.01 degrees); at
//    a grazing angle (0.01 degrees) the patch's tangential restitution of
//    the no-slip limit of Mindlin's spring, against an independent RK4
//    integration of the contact's equations, within 1e-4. Between the two
//    (10-30 degrees) the tangential compliance turns the patch back:
//    negative rebound angles, as in the paper's curves.
// With DEM_CHUNG_OOI_CSV set, test 4 writes its curves there
// (tools/plot_chung_ooi.py draws docs/images/chung_ooi_test4.png).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>

#include "contact/hertz_mindlin.hpp"
#include "scene_support.hpp"

using namespace dem;

namespace {

/// A sphere material of the paper's tables.
struct Solid {
  const char* name;
  double E, nu, rho;
};

// Test 1 (Table 1), test 2 (Table 3), tests 3 and 4 (Tables 5 and 7).
constexpr Solid kGlass{"glass", 4.8e10, 0.20, 2800}, kLimestone{"limestone", 2.0e10, 0.25, 2500};
constexpr Solid kAlAlloy2{"aluminium alloy", 7.0e10, 0.33, 2699}, kMgAlloy{"magnesium alloy", 4.0e10, 0.35, 1800};
constexpr Solid kAlumina{"Al2O3", 3.8e11, 0.23, 4000}, kCastIron{"cast iron", 1.0e11, 0.25, 7000};
constexpr Solid kAlAlloy4{"aluminium alloy", 7.0e10, 0.33, 2700};

constexpr double kRigidE = 1e30;  // Pa: the wall's E, rigid to 1e-19

/// Hertz's elastic impact (docs/model.md §11.5): K = 4/3 E* sqrt(R*),
/// delta_0 = (m* v²/K)^(2/5); the largest overlap (5/4)^(2/5) delta_0, the
/// largest force K delta_max^(3/2) and the contact time
/// 2 (5/4)^(2/5) (2/5) B(2/5, 1/2) delta_0/v.
struct Hertz {
  double overlap, force, duration;
};

Hertz hertz(double e_star, double r_star, double m_star, double v) {
  const double k = 4.0 / 3.0 * e_star * std::sqrt(r_star);
  const double delta0 = std::pow(m_star * v * v / k, 0.4), x_max = std::pow(1.25, 0.4);
  const double beta = std::tgamma(0.4) * std::tgamma(0.5) / std::tgamma(0.9);
  return {x_max * delta0, k * std::pow(x_max * delta0, 1.5), 2.0 * x_max * 0.4 * beta * delta0 / v};
}

double mass(const Solid& s, double r) { return s.rho * 4.0 / 3.0 * std::numbers::pi * r * r * r; }

/// One impact as a scene: spheres of `s` (radius r) from `rows` (CSV rows
/// x,y,z,diameter,vx,vy,vz), restitution e and friction mu, Hertz-Mindlin
/// with the exact damping; with a rigid wall z = 0 when `wall`.
std::string impact_scene(const Solid& s, double e, double mu, double h, bool wall, const std::string& csv) {
  std::ostringstream t;
  t.precision(17);
  t << "[run]\ntime_step = " << h << "\nsteps = 1\n"
    << "[[material]]\nname = \"sphere\"\ndensity = " << s.rho << "\nE = " << s.E << "\nnu = " << s.nu
    << "\ne = " << e << "\nmu_s = " << mu << "\n"
    << "[[material]]\nname = \"rigid\"\nE = " << kRigidE << "\nnu = " << s.nu << "\ne = " << e
    << "\nmu_s = " << mu << "\n"
    << "[[particles]]\nsource = \"csv\"\nfile = \"" << csv << "\"\nmaterial = \"sphere\"\n"
    << "[contact]\nlaw = \"hertz-mindlin\"\n";
  if (wall) t << "[[wall]]\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\nmaterial = \"rigid\"\n";
  return t.str();
}

/// What an impact measured: the largest overlap and force on sphere 0, the
/// contact time (the touching and parting instants interpolated linearly in
/// the gap between steps), and sphere 0's velocity and spin after it.
struct Impact {
  double overlap = 0.0, force = 0.0, duration = NAN;
  Vec3 velocity, spin;
};

/// Runs the scene `text` until the contact has opened again; `gap(p)` is
/// the contact's gap (negative: the overlap).
template <class Gap>
Impact run_impact(const std::string& text, Gap gap) {
  Simulation sim = make_simulation(build_scene(parse_scene_text(text, "chung_ooi.toml", ".")));
  Impact out;
  double before = gap(sim.particles()), touched = NAN;
  const double h = sim.time_step();
  for (int k = 0; k < 10000000; ++k) {
    sim.step();
    const ParticleStore& p = sim.particles();
    const double now = gap(p), t = sim.time();
    if (now < 0.0 && std::isnan(touched)) touched = t - h + h * before / (before - now);
    if (!std::isnan(touched)) {
      out.overlap = std::max(out.overlap, -now);
      out.force = std::max(out.force, p.force[0].norm());
      if (now >= 0.0) {
        out.duration = t - h + h * before / (before - now) - touched;
        out.velocity = p.velocity[0];
        out.spin = p.angular_velocity[0];
        return out;
      }
    }
    before = now;
  }
  ADD_FAILURE() << "the contact did not open";
  return out;
}

/// The folder of this process's CSV tables, and the file name of one.
std::string csv_file(const std::string& name, const std::string& rows) {
  static const std::filesystem::path dir = dem::testing::scratch_folder("chung_ooi");
  const std::filesystem::path p = dir / (name + ".csv");
  dem::testing::write_text(p, "x,y,z,diameter,vx,vy,vz\n" + rows);
  return p.string();
}

std::string row(const Vec3& x, double d, const Vec3& v) {
  std::ostringstream t;
  t.precision(17);
  t << x.x() << ',' << x.y() << ',' << x.z() << ',' << d << ',' << v.x() << ',' << v.y() << ',' << v.z() << '\n';
  return t.str();
}

/// A sphere (radius r) touching the wall z = 0 from above, moving at v.
Impact wall_impact(const Solid& s, double r, const Vec3& v, double e, double mu, double h) {
  const std::string csv = csv_file("wall", row(Vec3(0, 0, r), 2 * r, v));
  return run_impact(impact_scene(s, e, mu, h, true, csv),
                    [r](const ParticleStore& p) { return p.position[0].z() - r; });
}

/// E* of a sphere on the rigid wall, and of two equal spheres.
double e_star_wall(const Solid& s) { return 1.0 / ((1 - s.nu * s.nu) / s.E + (1 - s.nu * s.nu) / kRigidE); }
double e_star_pair(const Solid& s) { return s.E / (2.0 * (1 - s.nu * s.nu)); }

void expect_hertz(const Impact& got, const Hertz& want, const char* name) {
  EXPECT_NEAR(got.overlap / want.overlap, 1.0, 1e-4) << name;
  EXPECT_NEAR(got.force / want.force, 1.0, 1e-4) << name;
  EXPECT_NEAR(got.duration / want.duration, 1.0, 1e-4) << name;
  std::printf("%-16s overlap %.6e m (Hertz %.6e)  force %.6e N (%.6e)  time %.6e s (%.6e)\n", name, got.overlap,
              want.overlap, got.force, want.force, got.duration, want.duration);
}

// ---------------------------------------------------------------- test 1

TEST(ChungOoi, Test1EqualSpheresHeadOnFollowHertz) {
  constexpr double r = 0.010, v = 10.0;
  for (const Solid& s : {kGlass, kLimestone}) {
    const Hertz want = hertz(e_star_pair(s), 0.5 * r, 0.5 * mass(s, r), 2 * v);
    const double h = want.duration / 4000;
    const std::string csv = csv_file("pair", row(Vec3(-r, 0, 0), 2 * r, Vec3(v, 0, 0)) +
                                                 row(Vec3(r, 0, 0), 2 * r, Vec3(-v, 0, 0)));
    const Impact got = run_impact(impact_scene(s, 1.0, 0.35, h, false, csv), [r](const ParticleStore& p) {
      return (p.position[1] - p.position[0]).norm() - 2 * r;
    });
    expect_hertz(got, want, s.name);
    EXPECT_NEAR(got.velocity.x(), -v, 1e-6 * v) << s.name;  // elastic: back at 10 m/s
  }
}

// ---------------------------------------------------------------- test 2

TEST(ChungOoi, Test2SphereOnRigidWallFollowsHertz) {
  constexpr double r = 0.10, v = 0.2;
  for (const Solid& s : {kAlAlloy2, kMgAlloy}) {
    const Hertz want = hertz(e_star_wall(s), r, mass(s, r), v);
    const Impact got = wall_impact(s, r, Vec3(0, 0, -v), 1.0, 0.0, want.duration / 4000);
    expect_hertz(got, want, s.name);
    EXPECT_NEAR(got.velocity.z(), v, 1e-6 * v) << s.name;
  }
}

// ---------------------------------------------------------------- test 3

TEST(ChungOoi, Test3RestitutionIsTheInput) {
  constexpr double r = 0.0025, v = 3.9;
  for (const Solid& s : {kAlumina, kCastIron}) {
    const double h = hertz(e_star_wall(s), r, mass(s, r), v).duration / 2000;
    for (const double e : {0.2, 0.4, 0.6, 0.8, 1.0}) {
      const double got = wall_impact(s, r, Vec3(0, 0, -v), e, 0.0, h).velocity.z() / v;
      EXPECT_NEAR(got, e, 1e-3) << s.name << " e = " << e;
      std::printf("%-10s e = %.1f: measured %.6f\n", s.name, e, got);
    }
  }
}

// ---------------------------------------------------------------- test 4

constexpr double kMu4 = 0.092, kE4 = 0.98, kR4 = 0.0025, kV4 = 3.9;

/// The oblique rebound: normal and tangential restitution of the centre
/// (e_n = v_z'/v_n, e_t = v_x'/v_t), the spin omega_y' and the contact
/// patch's rebound angle atan((v_x' - r omega_y')/v_z') (degrees).
struct Rebound {
  double e_n, e_t, spin, angle;
};

Rebound oblique(const Solid& s, double theta_deg) {
  const double theta = theta_deg * std::numbers::pi / 180.0;
  const double vn = kV4 * std::cos(theta), vt = kV4 * std::sin(theta);
  const double h = hertz(e_star_wall(s), kR4, mass(s, kR4), kV4).duration / 2000;
  const Impact got = wall_impact(s, kR4, Vec3(vt, 0, -vn), kE4, kMu4, h);
  const double patch = got.velocity.x() - kR4 * got.spin.y();
  return {got.velocity.z() / vn, got.velocity.x() / vt, got.spin.y(),
          std::atan(patch / got.velocity.z()) * 180.0 / std::numbers::pi};
}

/// Rigid-body impact theory with sliding throughout (valid where tan(theta)
/// >= 3.5 mu (1 + e_n)): Coulomb's impulse mu (1 + e_n) m v_n on the centre
/// and the spin it gives a solid sphere (I = 0.4 m r²).
Rebound sliding_theory(double theta_deg, double e_n) {
  const double theta = theta_deg * std::numbers::pi / 180.0, t = std::tan(theta);
  const double vn = kV4 * std::cos(theta), j = kMu4 * (1 + e_n);
  return {e_n, 1.0 - j / t, 2.5 * j * vn / kR4, std::atan((t - 3.5 * j) / e_n) * 180.0 / std::numbers::pi};
}

TEST(ChungOoi, Test4ObliqueImpactFollowsRigidBodyTheoryWhereItSlides) {
  const char* path = std::getenv("DEM_CHUNG_OOI_CSV");
  std::ofstream csv;
  if (path) csv.open(path), csv << "material,theta,e_n,e_t,spin,rebound_angle,e_t_sliding,rebound_angle_sliding\n";
  for (const Solid& s : {kAlumina, kAlAlloy4}) {
    for (int deg = 5; deg <= 85; deg += 5) {
      const Rebound got = oblique(s, deg), want = sliding_theory(deg, got.e_n);
      EXPECT_NEAR(got.e_n, kE4, 1e-3) << s.name << ' ' << deg;
      const bool slides = std::tan(deg * std::numbers::pi / 180.0) >= 3.5 * kMu4 * (1 + got.e_n);
      if (slides) {
        EXPECT_NEAR(got.e_t, want.e_t, 1e-4) << s.name << ' ' << deg;
        EXPECT_NEAR(got.spin / want.spin, 1.0, 1e-4) << s.name << ' ' << deg;
        EXPECT_NEAR(got.angle, want.angle, 0.01) << s.name << ' ' << deg;
      }
      std::printf("%-16s %2d deg: e_n %.5f  e_t %.5f (sliding %.5f)  spin %9.3f rad/s (%9.3f)  rebound %7.3f deg (%7.3f)\n",
                  s.name, deg, got.e_n, got.e_t, want.e_t, got.spin, want.spin, got.angle, want.angle);
      if (csv) csv << s.name << ',' << deg << ',' << got.e_n << ',' << got.e_t << ',' << got.spin << ',' << got.angle
                   << ',' << want.e_t << ',' << want.angle << '\n';
    }
  }
}

/// The no-slip limit of a grazing impact: the contact's equations
/// (docs/model.md §11.2) with Mindlin's spring S_t = 8 G* a never capped,
/// integrated by RK4 with 2e5 steps over the contact. State: overlap delta,
/// its rate, the tangential spring's stretch xi and the patch's tangential
/// velocity u, which Coulomb's force moves by 3.5 F_t/m (centre and spin of
/// a solid sphere). Returns u after over u before.
double no_slip_patch_restitution(const Solid& s, double vn, double vt) {
  const ContactMaterial sphere{s.E, s.nu, kE4, kMu4, 0.0}, rigid{kRigidE, s.nu, kE4, kMu4, 0.0};
  const ContactPair pair = contact_pair(sphere, rigid);
  const double m = mass(s, kR4);
  using State = std::array<double, 4>;  // delta, delta', xi, u
  const auto rate = [&](const State& y) {
    const double d = std::max(y[0], 0.0), a = std::sqrt(kR4 * d);
    const double sn = 2 * pair.e_star * a, st = 8 * pair.g_star * a;
    const double fn = std::max(0.0, 4.0 / 3.0 * pair.e_star * a * d + pair.damping * std::sqrt(sn * m) * y[1]);
    const double ft = fn > 0.0 ? -st * y[2] - pair.damping * std::sqrt(st * m) * y[3] : 0.0;
    return State{y[1], -fn / m, y[3], 3.5 * ft / m};
  };
  const double dt = hertz(pair.e_star, kR4, m, vn).duration / 2e5;
  State y{0.0, vn, 0.0, vt};
  for (int k = 0; k < 1000000; ++k) {
    const auto add = [](const State& a, const State& b, double f) {
      return State{a[0] + f * b[0], a[1] + f * b[1], a[2] + f * b[2], a[3] + f * b[3]};
    };
    const State k1 = rate(y), k2 = rate(add(y, k1, dt / 2)), k3 = rate(add(y, k2, dt / 2)), k4 = rate(add(y, k3, dt));
    State next = y;
    for (int i = 0; i < 4; ++i) next[i] += dt / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    if (next[0] < 0.0) return (y[3] + (next[3] - y[3]) * y[0] / (y[0] - next[0])) / vt;
    y = next;
  }
  return NAN;
}

TEST(ChungOoi, Test4GrazingImpactReachesTheNoSlipLimit) {
  for (const Solid& s : {kAlumina, kAlAlloy4}) {
    constexpr double theta = 0.01 * std::numbers::pi / 180.0;  // the tangential spring never slides
    const double vn = kV4 * std::cos(theta), vt = kV4 * std::sin(theta);
    const double h = hertz(e_star_wall(s), kR4, mass(s, kR4), kV4).duration / 2000;
    const Impact got = wall_impact(s, kR4, Vec3(vt, 0, -vn), kE4, kMu4, h);
    const double patch = (got.velocity.x() - kR4 * got.spin.y()) / vt, want = no_slip_patch_restitution(s, vn, vt);
    EXPECT_NEAR(patch, want, 1e-4) << s.name;
    std::printf("%-16s no-slip patch restitution %.6f (RK4 of the contact %.6f)\n", s.name, patch, want);
  }
}

}  // namespace
