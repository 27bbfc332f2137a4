#include "scene/solid_torus.hpp"
#include "core/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace dem {

namespace {


void require(bool ok, const std::string& what, double value, const char* expected) {
  if (!ok)
    throw std::invalid_argument("solid torus: " + what + " must be " + expected + ", got " +
                                format_g(value, 10));
}

/// The FCC lattice of nearest-neighbour distance d, centred on the torus
/// centre: sites (i, j, k) * s, s = d/sqrt(2), i + j + k even, i, j in
/// [-ni, ni], k in [-nk, nk].
struct Lattice {
  double spacing = 0.0;
  int ni = 0, nk = 0;
  double centre_radius = 0.0;  // D_t / 2
  double keep_radius = 0.0;    // (D_tube - d) / 2

  explicit Lattice(const SolidTorusParameters& p)
      : spacing(p.particle_diameter / std::sqrt(2.0)),
        centre_radius(0.5 * p.major_diameter),
        keep_radius(0.5 * (p.tube_diameter - p.particle_diameter)) {
    const double ri = std::ceil((centre_radius + keep_radius) / spacing) + 1.0;
    const double rk = std::ceil(keep_radius / spacing) + 1.0;
    if (!(ri < 2e4 && rk < 2e4))
      throw std::invalid_argument("solid torus: the particle diameter " +
                                  format_g(p.particle_diameter, 10) +
                                  " m is too small for the torus (lattice too large)");
    ni = static_cast<int>(ri);
    nk = static_cast<int>(rk);
  }
  Vec3 site(int i, int j, int k) const { return spacing * Vec3(i, j, k); }
  bool inside(int i, int j, int k) const {
    if (((i + j + k) & 1) != 0) return false;
    return within(i, j, k);
  }
  /// The distance test of inside() alone (any parity).
  bool within(int i, int j, int k) const {
    const Vec3 x = site(i, j, k);
    const double rho = std::hypot(x.x(), x.y()) - centre_radius;
    return rho * rho + x.z() * x.z() <= keep_radius * keep_radius * (1.0 + 1e-12);
  }
  /// Calls f(i, j, k) for every kept site, in (k, j, i) order.
  template <class F>
  void for_each_site(F&& f) const {
    for (int k = -nk; k <= nk; ++k)
      for (int j = -ni; j <= ni; ++j)
        for (int i = -ni; i <= ni; ++i)
          if (inside(i, j, k)) f(i, j, k);
  }
};

/// The sites of one lattice row (j, k) that pass Lattice::within (any
/// parity), for i >= 0: [lo, hi] (empty when lo > hi). By symmetry the row
/// keeps [-hi, -lo] too. Found from the torus equation and settled at both
/// ends with within() itself, so it agrees with the site-by-site test.
struct RowSpan {
  int lo = 1, hi = 0;
};

RowSpan row_span(const Lattice& lattice, int j, int k) {
  const double y = lattice.spacing * j, z = lattice.spacing * k;
  const double a2 = lattice.keep_radius * lattice.keep_radius * (1.0 + 1e-12);
  if (z * z > a2) return {};  // within() adds rho^2 >= 0 to z^2
  const double w = std::sqrt(a2 - z * z), c = lattice.centre_radius;
  // hypot(x, y) in [c - w, c + w]  <=>  |x| in [t_lo, t_hi].
  const double outer = (c + w) * (c + w) - y * y, inner = (c - w) * (c - w) - y * y;
  const double t_hi = outer > 0.0 ? std::sqrt(outer) : 0.0, t_lo = inner > 0.0 ? std::sqrt(inner) : 0.0;
  const auto clamp = [&](double v) {
    return static_cast<int>(std::clamp(v, 0.0, static_cast<double>(lattice.ni)));
  };
  const auto in = [&](int i) { return i >= 0 && i <= lattice.ni && lattice.within(i, j, k); };
  int lo = clamp(std::ceil(t_lo / lattice.spacing)), hi = clamp(std::floor(t_hi / lattice.spacing));
  if (lo > hi || (!in(lo) && !in(hi))) {
    // Rounding at an end of a short row: look for a kept site next to the estimate.
    int seed = -1;
    for (const int candidate : {hi, hi + 1, hi - 1, lo, lo - 1, lo + 1})
      if (in(candidate)) {
        seed = candidate;
        break;
      }
    if (seed < 0) return {};
    lo = hi = seed;
  }
  if (in(hi)) {
    while (in(hi + 1)) ++hi;
  } else {
    while (hi > lo && !in(hi)) --hi;
  }
  if (in(lo)) {
    while (in(lo - 1)) --lo;
  } else {
    while (lo < hi && !in(lo)) ++lo;
  }
  return RowSpan{lo, hi};
}

/// A whole row as at most two intervals of i: [-hi, hi], or [-hi, -lo] and [lo, hi].
struct RowIntervals {
  int count = 0;
  int lo[2] = {0, 0}, hi[2] = {0, 0};
};

RowIntervals intervals_of(const RowSpan& r) {
  if (r.lo > r.hi) return {};
  if (r.lo == 0) return RowIntervals{1, {-r.hi, 0}, {r.hi, 0}};
  return RowIntervals{2, {-r.hi, r.lo}, {-r.lo, r.hi}};
}

/// Integers i in [a, b] with i - parity even.
std::uint64_t count_with_parity(int a, int b, int parity) {
  if (a > b) return 0;
  const int first = ((a - parity) & 1) != 0 ? a + 1 : a;
  return first > b ? 0 : static_cast<std::uint64_t>((b - first) / 2 + 1);
}

/// Pairs (i in row a, i + di in row b), i of the given parity.
std::uint64_t pairs_between(const RowIntervals& a, const RowIntervals& b, int di, int parity) {
  std::uint64_t n = 0;
  for (int u = 0; u < a.count; ++u)
    for (int v = 0; v < b.count; ++v)
      n += count_with_parity(std::max(a.lo[u], b.lo[v] - di), std::min(a.hi[u], b.hi[v] - di), parity);
  return n;
}

}  // namespace

void validate(const SolidTorusParameters& p) {
  const auto positive = [](double v) { return std::isfinite(v) && v > 0.0; };
  require(positive(p.major_diameter), "the major diameter D_t (m)", p.major_diameter,
          "a finite positive number");
  require(positive(p.tube_diameter), "the tube diameter D_tube (m)", p.tube_diameter,
          "a finite positive number");
  require(positive(p.particle_diameter), "the particle diameter d (m)", p.particle_diameter,
          "a finite positive number");
  require(p.particle_diameter < p.tube_diameter, "the particle diameter d (m)",
          p.particle_diameter, "smaller than the tube diameter");
  require(p.tube_diameter < p.major_diameter, "the tube diameter D_tube (m)", p.tube_diameter,
          "smaller than the major diameter (the torus would have no hole)");
  require(positive(p.density), "the density rho (kg/m^3)", p.density, "a finite positive number");
  require(positive(p.particle_modulus), "the particle modulus E_p (Pa)", p.particle_modulus,
          "a finite positive number");
  require(std::isfinite(p.particle_poisson) && p.particle_poisson > -1.0 &&
              p.particle_poisson < 0.5,
          "the particle Poisson ratio nu", p.particle_poisson, "in (-1, 0.5)");
  require(std::isfinite(p.binder_modulus) && p.binder_modulus >= 0.0,
          "the binder modulus E_b (Pa)", p.binder_modulus, "a finite number >= 0");
  require(std::isfinite(p.bond_radius_ratio) && p.bond_radius_ratio >= 0.0,
          "the bond radius ratio beta", p.bond_radius_ratio, "a finite number >= 0");
  require(std::isfinite(p.speed), "the speed (m/s)", p.speed, "finite");
  require(std::isfinite(p.tilt_deg), "the tilt (degrees)", p.tilt_deg, "finite");
  if (!p.spin.allFinite()) throw std::invalid_argument("solid torus: the spin is not finite");
  require(std::isfinite(p.gap) && p.gap >= 0.0, "the gap to the wall (m)", p.gap,
          "a finite number >= 0");
  require(std::isfinite(p.skin_fraction) && p.skin_fraction >= 0.0, "the skin fraction",
          p.skin_fraction, "a finite number >= 0");
}

SolidTorusConstants solid_torus_constants(const SolidTorusParameters& p) {
  const double pi = std::numbers::pi;
  const double d = p.particle_diameter, r = 0.5 * d;
  SolidTorusConstants c;
  c.mass = p.density * pi * d * d * d / 6.0;
  c.inertia = c.mass * d * d / 10.0;
  const double rb = 0.5 * p.bond_radius_ratio * d;
  const double area = pi * rb * rb;
  const double second_moment = 0.25 * pi * rb * rb * rb * rb;
  const double r0 = d;
  c.k_axial = p.binder_modulus * area * r0;
  c.k_shear = c.k_axial;
  c.k_bending = p.binder_modulus * second_moment / r0;
  const double one_minus_nu2 = 1.0 - p.particle_poisson * p.particle_poisson;
  const double e_star = p.particle_modulus / (2.0 * one_minus_nu2);
  const double r_star = 0.5 * r;  // r r / (r + r)
  c.k_contact = 4.0 / 3.0 * e_star * std::sqrt(r_star) * std::pow(2.0 * r, 2.5);
  const double e_wall = p.particle_modulus / one_minus_nu2;
  c.k_wall = 4.0 / 3.0 * e_wall * r * r * r;
  return c;
}

SolidTorusCounts solid_torus_counts(const SolidTorusParameters& p) {
  validate(p);
  const Lattice lattice(p);
  const int ni = lattice.ni, nk = lattice.nk, width = 2 * ni + 1;
  SolidTorusCounts out;
  out.lattice_cells = static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(width) *
                      static_cast<std::uint64_t>(2 * nk + 1);
  // Two slices of rows at a time: k and k + 1.
  std::vector<RowIntervals> slice(static_cast<std::size_t>(width)), above(static_cast<std::size_t>(width));
  const auto fill = [&](std::vector<RowIntervals>& rows, int k) {
    for (int j = -ni; j <= ni; ++j) rows[static_cast<std::size_t>(j + ni)] = intervals_of(row_span(lattice, j, k));
  };
  const auto row = [&](const std::vector<RowIntervals>& rows, int j) -> RowIntervals {
    return j < -ni || j > ni ? RowIntervals{} : rows[static_cast<std::size_t>(j + ni)];
  };
  fill(slice, -nk);
  for (int k = -nk; k <= nk; ++k) {
    if (k < nk) fill(above, k + 1);
    else above.assign(above.size(), RowIntervals{});
    for (int j = -ni; j <= ni; ++j) {
      const RowIntervals a = row(slice, j);
      if (a.count == 0) continue;
      const int parity = (j + k) & 1;
      for (int u = 0; u < a.count; ++u) out.sites += count_with_parity(a.lo[u], a.hi[u], parity);
      // Each pair of lattice nearest neighbours once: the 12 offsets in
      // opposite pairs, the one of each pair with dk > 0 or (dk = 0, di = 1).
      out.bonds += pairs_between(a, row(slice, j + 1), 1, parity) + pairs_between(a, row(slice, j - 1), 1, parity) +
                   pairs_between(a, row(above, j), 1, parity) + pairs_between(a, row(above, j), -1, parity) +
                   pairs_between(a, row(above, j + 1), 0, parity) + pairs_between(a, row(above, j - 1), 0, parity);
    }
    slice.swap(above);
  }
  return out;
}

std::size_t solid_torus_site_count(const SolidTorusParameters& p) {
  return static_cast<std::size_t>(solid_torus_counts(p).sites);
}

double solid_torus_diameter_for(const SolidTorusParameters& p, std::size_t target) {
  if (target < 1) throw std::invalid_argument("solid torus: the target particle count must be >= 1");
  // Volume estimate: sites = V sqrt(2)/d^3, V = 2 pi^2 (D_t/2) ((D_tube - d)/2)^2.
  SolidTorusParameters q = p;
  const auto count = [&](double d) {
    q.particle_diameter = d;
    return solid_torus_site_count(q);
  };
  const double v = 2.0 * std::numbers::pi * std::numbers::pi * 0.5 * p.major_diameter *
                   std::pow(0.5 * p.tube_diameter, 2);
  double guess = std::cbrt(v * std::sqrt(2.0) / static_cast<double>(target));
  guess = std::min(guess, 0.5 * p.tube_diameter);
  // Bracket: lo gives more than target, hi fewer (or the largest d allowed).
  double lo = 0.5 * guess, hi = std::min(2.0 * guess, 0.999 * p.tube_diameter);
  if (count(lo) < target)
    throw std::invalid_argument("solid torus: cannot place " + std::to_string(target) +
                                " particles in the torus");
  double best = lo;
  std::size_t best_err = std::numeric_limits<std::size_t>::max();
  for (int it = 0; it < 60; ++it) {
    const double mid = std::sqrt(lo * hi);
    const std::size_t n = count(mid);
    const std::size_t err = n > target ? n - target : target - n;
    if (err < best_err) best_err = err, best = mid;
    if (static_cast<double>(err) <= 0.005 * static_cast<double>(target)) break;
    (n > target ? lo : hi) = mid;
  }
  return best;
}

Scene make_solid_torus(const SolidTorusParameters& p) {
  validate(p);
  const SolidTorusConstants c = solid_torus_constants(p);
  const Lattice lattice(p);
  const long long wi = 2LL * lattice.ni + 1, wk = 2LL * lattice.nk + 1;
  const long long cells = wi * wi * wk;
  if (cells > (1LL << 31))
    throw std::invalid_argument("solid torus: the lattice is too large for d = " +
                                format_g(p.particle_diameter, 10));
  // Dense map from lattice site to particle index (-1: no particle).
  std::vector<std::int32_t> index(static_cast<std::size_t>(cells), -1);
  const auto cell = [&](int i, int j, int k) {
    return static_cast<std::size_t>(((k + lattice.nk) * wi + (j + lattice.ni)) * wi +
                                    (i + lattice.ni));
  };
  std::vector<Vec3> sites;
  lattice.for_each_site([&](int i, int j, int k) {
    index[cell(i, j, k)] = static_cast<std::int32_t>(sites.size());
    sites.push_back(lattice.site(i, j, k));
  });
  if (sites.empty())
    throw std::invalid_argument("solid torus: no lattice site lies inside the torus");
  if (sites.size() >= std::numeric_limits<std::uint32_t>::max() / 2)
    throw std::invalid_argument("solid torus: too many particles");

  // Tilt about y, then shift along x so that min(x_i - r) = gap.
  const double tilt = p.tilt_deg * std::numbers::pi / 180.0;
  const Mat3 ry = Eigen::AngleAxisd(tilt, Vec3::UnitY()).toRotationMatrix();
  const double r = 0.5 * p.particle_diameter;
  double min_x = std::numeric_limits<double>::infinity();
  for (Vec3& x : sites) {
    x = ry * x;
    min_x = std::min(min_x, x.x());
  }
  const Vec3 centre(p.gap + r - min_x, 0.0, 0.0);

  Scene scene;
  scene.particles.reserve(sites.size());
  for (const Vec3& x : sites) {
    ParticleSpec s;
    s.position = x + centre;
    s.velocity = Vec3(-p.speed, 0.0, 0.0) + p.spin.cross(x);
    s.angular_velocity = p.spin;
    s.mass = c.mass;
    s.inertia = c.inertia;
    s.diameter = p.particle_diameter;
    scene.particles.add(s);
  }
  std::vector<Vec3>().swap(sites);

  const BondStiffness k{c.k_bending, c.k_axial, c.k_shear};
  static constexpr int kOffsets[12][3] = {{1, 1, 0},  {1, -1, 0}, {-1, 1, 0}, {-1, -1, 0},
                                          {1, 0, 1},  {1, 0, -1}, {-1, 0, 1}, {-1, 0, -1},
                                          {0, 1, 1},  {0, 1, -1}, {0, -1, 1}, {0, -1, -1}};
  scene.bonds.reserve(6 * scene.particles.size());
  lattice.for_each_site([&](int i, int j, int k3) {
    const std::int32_t a = index[cell(i, j, k3)];
    for (const auto& o : kOffsets) {
      const int ii = i + o[0], jj = j + o[1], kk = k3 + o[2];
      if (std::abs(ii) > lattice.ni || std::abs(jj) > lattice.ni || std::abs(kk) > lattice.nk)
        continue;
      const std::int32_t b = index[cell(ii, jj, kk)];
      if (b > a)
        scene.bonds.add(scene.particles, static_cast<std::uint32_t>(a),
                        static_cast<std::uint32_t>(b), k);
    }
  });
  scene.contact = ContactSettings{c.k_contact, p.skin_fraction * p.particle_diameter};
  if (p.wall) {
    Wall w;
    w.point = Vec3::Zero();
    w.normal = Vec3::UnitX();
    w.stiffness = c.k_wall;
    scene.walls.push_back(w);
  }
  return scene;
}

}  // namespace dem
