// The packing genesis (docs/model.md §21.3): random placement at reduced
// radii, then growth in stages with frictionless (Jacobi) relaxation.
#include "scene/packing_genesis.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/exact_sum.hpp"
#include "core/format.hpp"

namespace dem {

namespace {

/// The placement's random numbers: a stream apart from the sizes'.
constexpr std::uint64_t kPlacementStream = 0x9e3779b97f4a7c15ull;

/// The region with its periodic axes, seen by the genesis.
struct Confinement {
  const PackingRegion& region;
  std::array<bool, 3> periodic;
  Vec3 lower, upper;  ///< the bounds (a periodic box: the cell)

  /// The depth, ignoring the faces of periodic axes.
  double depth(const Vec3& x) const {
    if (region.kind != PackingRegionKind::box) return region_depth(region, x);
    double d = INFINITY;
    for (int a = 0; a < 3; ++a)
      if (!periodic[a]) d = std::min({d, x[a] - lower[a], upper[a] - x[a]});
    return d;
  }
  /// The unit inward normal at x (the depth's gradient).
  Vec3 inward(const Vec3& x) const {
    const double h = 1e-7 * (upper - lower).maxCoeff();
    Vec3 g = Vec3::Zero();
    for (int a = 0; a < 3; ++a) {
      Vec3 e = Vec3::Zero();
      e[a] = h;
      g[a] = periodic[a] ? 0.0 : depth(x + e) - depth(x - e);
    }
    const double n = g.norm();
    return n > 0.0 ? Vec3(g / n) : Vec3::Zero();
  }
  /// The shortest image of a separation on the periodic axes.
  Vec3 image(Vec3 r) const {
    for (int a = 0; a < 3; ++a)
      if (periodic[a]) r[a] -= (upper[a] - lower[a]) * std::nearbyint(r[a] / (upper[a] - lower[a]));
    return r;
  }
  Vec3 wrap(Vec3 x) const {
    for (int a = 0; a < 3; ++a)
      if (periodic[a]) {
        const double l = upper[a] - lower[a];
        x[a] -= l * std::floor((x[a] - lower[a]) / l);
        if (x[a] >= upper[a]) x[a] = lower[a];
      }
    return x;
  }
};

/// A cell list over the bounds, cells at least `reach` wide; ids in id order
/// within a cell.
class CellGrid {
 public:
  CellGrid(const Confinement& c, double reach, const std::vector<Vec3>& x) : c_(c) {
    for (int a = 0; a < 3; ++a)
      n_[a] = static_cast<int>(std::clamp(std::floor((c.upper[a] - c.lower[a]) / reach), 1.0, 1024.0));
    // At most about two cells a particle (a sparse start in a large region).
    while (static_cast<double>(n_[0]) * n_[1] * n_[2] > 2.0 * static_cast<double>(x.size()) + 64.0) {
      int& big = n_[std::max_element(n_.begin(), n_.end()) - n_.begin()];
      big = std::max(1, big / 2);
    }
    for (int a = 0; a < 3; ++a) width_[a] = (c.upper[a] - c.lower[a]) / n_[a];
    std::vector<std::uint32_t> cell(x.size());
    start_.assign(static_cast<std::size_t>(n_[0]) * n_[1] * n_[2] + 1, 0);
    for (std::size_t i = 0; i < x.size(); ++i) ++start_[(cell[i] = index(coords(x[i]))) + 1];
    for (std::size_t k = 1; k < start_.size(); ++k) start_[k] += start_[k - 1];
    ids_.resize(x.size());
    std::vector<std::uint32_t> fill(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < x.size(); ++i) ids_[fill[cell[i]]++] = static_cast<std::uint32_t>(i);
  }

  /// Calls f(j) for every particle in the cells around x (each cell once).
  template <class F>
  void around(const Vec3& x, F&& f) const {
    const std::array<int, 3> c = coords(x);
    std::array<std::uint32_t, 27> cells;
    int count = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          std::array<int, 3> k{c[0] + dx, c[1] + dy, c[2] + dz};
          bool inside = true;
          for (int a = 0; a < 3; ++a) {
            if (c_.periodic[a]) k[a] = (k[a] + n_[a]) % n_[a];
            inside = inside && k[a] >= 0 && k[a] < n_[a];
          }
          if (inside) cells[count++] = index(k);
        }
    std::sort(cells.begin(), cells.begin() + count);
    count = static_cast<int>(std::unique(cells.begin(), cells.begin() + count) - cells.begin());
    for (int m = 0; m < count; ++m)
      for (std::uint32_t q = start_[cells[m]]; q < start_[cells[m] + 1]; ++q) f(ids_[q]);
  }

 private:
  std::array<int, 3> coords(const Vec3& x) const {
    std::array<int, 3> k;
    for (int a = 0; a < 3; ++a)
      k[a] = static_cast<int>(std::clamp(std::floor((x[a] - c_.lower[a]) / width_[a]), 0.0, n_[a] - 1.0));
    return k;
  }
  std::uint32_t index(const std::array<int, 3>& k) const {
    return static_cast<std::uint32_t>((k[2] * n_[1] + k[1]) * n_[0] + k[0]);
  }

  const Confinement& c_;
  std::array<int, 3> n_{};
  Vec3 width_ = Vec3::Zero();
  std::vector<std::uint32_t> start_, ids_;
};

/// One Jacobi sweep at radius scale s: every particle moved by half of each
/// overlap with a neighbour and all of its overlap with the boundary
/// (times the relaxation factor). Returns the largest overlap ratio before
/// the move.
double relax_sweep(const Confinement& c, const std::vector<double>& d, double s, double d_max, std::vector<Vec3>& x,
                   std::vector<Vec3>& v, double momentum) {
  constexpr double kRelaxation = 0.5;
  const CellGrid grid(c, s * d_max, x);
  std::vector<Vec3> move(x.size(), Vec3::Zero());
  std::vector<double> worst(x.size(), 0.0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, x.size(), 256), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      Vec3 m = Vec3::Zero();
      double w = 0.0;
      grid.around(x[i], [&](std::uint32_t j) {
        if (j == i) return;
        const Vec3 r_ij = c.image(x[i] - x[j]);
        const double dist = r_ij.norm();
        const double overlap = 0.5 * s * (d[i] + d[j]) - dist;
        if (overlap <= 0.0) return;
        // Coincident centres: apart along x, by id.
        const Vec3 n = dist > 0.0 ? Vec3(r_ij / dist) : Vec3(i < j ? -1.0 : 1.0, 0.0, 0.0);
        m += 0.5 * overlap * n;
        w = std::max(w, overlap / (s * std::min(d[i], d[j])));
      });
      const double out = 0.5 * s * d[i] - c.depth(x[i]);
      if (out > 0.0) {
        m += out * c.inward(x[i]);
        w = std::max(w, out / (s * d[i]));
      }
      move[i] = kRelaxation * m;
      worst[i] = w;
    }
  });
  for (std::size_t i = 0; i < x.size(); ++i) {
    v[i] = momentum * v[i] + move[i];
    x[i] = c.wrap(x[i] + v[i]);
  }
  return worst.empty() ? 0.0 : *std::max_element(worst.begin(), worst.end());
}

/// Centres drawn uniformly in the bounds, kept where a sphere of radius
/// s d/2 lies inside the region.
std::vector<Vec3> place(const Confinement& c, const std::vector<double>& d, double s, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ kPlacementStream);
  std::vector<Vec3> x(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    for (int tries = 0;; ++tries) {
      if (tries == 100000)
        throw std::invalid_argument("[[particles]] region: found no place for particle " + std::to_string(i) +
                                    " in 100000 random tries");
      Vec3 p = Vec3::Zero();
      for (int a = 0; a < 3; ++a) p[a] = c.lower[a] + uniform_01(rng) * (c.upper[a] - c.lower[a]);
      if (c.depth(p) >= 0.5 * s * d[i]) {
        x[i] = p;
        break;
      }
    }
  }
  return x;
}

/// The number of neighbours of each particle closer than the sum of the
/// radii plus `gap` times the smaller diameter.
std::vector<std::uint32_t> contact_numbers(const Confinement& c, const std::vector<double>& d,
                                           const std::vector<Vec3>& x, double gap) {
  const double d_max = d.empty() ? 0.0 : *std::max_element(d.begin(), d.end());
  const CellGrid grid(c, d_max * (1.0 + gap), x);
  std::vector<std::uint32_t> z(x.size(), 0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, x.size(), 256), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i)
      grid.around(x[i], [&](std::uint32_t j) {
        if (j != i && c.image(x[i] - x[j]).norm() < 0.5 * (d[i] + d[j]) + gap * std::min(d[i], d[j])) ++z[i];
      });
  });
  return z;
}

/// The lines of make_packing's report.
void report_packing(const PackingParameters& p, const std::array<bool, 3>& periodic, const std::vector<double>& d,
                    const GenesisResult& g, std::vector<std::string>& report) {
  ExactSum volume;
  for (const double x : d) volume.add(std::numbers::pi / 6.0 * x * x * x);
  report.push_back("packing: " + std::to_string(d.size()) + " particles, solid fraction " +
                   format_g(volume.value() / region_volume(p.region), 4) + " (requested " +
                   (p.solid_fraction ? format_g(*p.solid_fraction, 4) : "\"dense\" = " + format_g(kDenseSolidFraction, 4)) +
                   "), largest overlap " + format_g(g.max_overlap_ratio, 2) + " of the smaller diameter after " +
                   std::to_string(g.sweeps) + " relaxation sweeps");
  const auto [lower, upper] = region_bounds(p.region);
  const std::vector<std::uint32_t> z = contact_numbers(Confinement{p.region, periodic, lower, upper}, d, g.centres, 1e-3);
  std::uint64_t sum = 0, few = 0;
  for (const std::uint32_t k : z) sum += k, few += k < 3;
  report.push_back("packing: mean contact number " + format_g(d.empty() ? 0.0 : double(sum) / double(d.size()), 3) +
                   " (pairs closer than touching plus 1e-3 of the smaller diameter; particle-particle only), " +
                   std::to_string(few) + " particles with fewer than 3 (floaters: not removed yet)");
  if (p.sizes.kind != SizeDistributionKind::sieve) return;
  const std::vector<double> got = achieved_passing(d, p.sizes.sieve_sizes, binder_fines_percent(p.sizes));
  std::string line = "packing: percent passing by mass, achieved (table):";
  for (std::size_t k = 0; k < got.size(); ++k)
    line += (k ? ", " : " ") + format_g(p.sizes.sieve_sizes[k]) + ": " + format_g(got[k], 3) + " (" +
            format_g(p.sizes.sieve_passing[k], 3) + ")";
  report.push_back(line);
}

}  // namespace

std::vector<double> packing_diameters(const PackingParameters& p, std::uint64_t max_count) {
  const SizeSampler sampler(p.sizes);
  try {
    return sample_diameters(sampler, p.seed, p.target_solid_fraction() * region_volume(p.region), max_count);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("[[particles]] region: ") + e.what() +
                                " to fill it; use a smaller region, larger particles or a smaller solid_fraction");
  }
}

std::uint64_t packing_count(const PackingParameters& p, std::uint64_t max_count) {
  return packing_diameters(p, max_count).size();
}

std::uint64_t packing_scratch_bytes(std::uint64_t n) {
  // Diameters, centres, moves, overlap ratios, the cell index.
  return n * (8 + 24 + 24 + 8 + 12);
}

GenesisResult run_genesis(const PackingParameters& p, const std::vector<double>& d,
                          const std::array<bool, 3>& periodic, const GenesisSettings& settings) {
  const auto [lower, upper] = region_bounds(p.region);
  const Confinement c{p.region, periodic, lower, upper};
  const double d_max = d.empty() ? 0.0 : *std::max_element(d.begin(), d.end());
  for (int a = 0; a < 3; ++a)
    if (periodic[a] && (p.region.kind != PackingRegionKind::box || upper[a] - lower[a] < 3.0 * d_max))
      throw std::invalid_argument("[[particles]] region: a periodic axis needs region = \"box\" at least 3 largest "
                                  "diameters wide");
  GenesisResult out;
  double s = settings.initial_scale;
  out.centres = place(c, d, s, p.seed);
  std::vector<Vec3> v(d.size(), Vec3::Zero());
  for (;;) {
    s = std::min(1.0, s * settings.growth);
    const bool last = s == 1.0;
    const double tolerance = last ? settings.final_tolerance : settings.stage_tolerance;
    const int sweeps = last ? settings.final_sweeps : settings.stage_sweeps;
    double worst = INFINITY;
    for (int k = 0; k < sweeps && worst >= tolerance; ++k, ++out.sweeps) {
      const double before = worst;
      worst = relax_sweep(c, d, s, d_max, out.centres, v, settings.momentum);
      // The heavy ball overshot: start it again from rest.
      if (worst > before) std::fill(v.begin(), v.end(), Vec3::Zero());
    }
    out.max_overlap_ratio = worst;
    if (last) break;
  }
  if (!(out.max_overlap_ratio < settings.final_tolerance))
    throw std::invalid_argument("[[particles]] solid_fraction: the relaxation left overlaps of " +
                                format_g(out.max_overlap_ratio, 3) + " of a diameter after " +
                                std::to_string(out.sweeps) + " sweeps; the region cannot hold this solid fraction");
  return out;
}

Scene make_packing(const PackingParameters& p, double density, const std::array<bool, 3>& periodic,
                   std::vector<std::string>* report) {
  if (!(std::isfinite(density) && density > 0.0)) throw std::invalid_argument("packing: density must be > 0");
  const std::vector<double> d = packing_diameters(p, 1ull << 31);
  const GenesisResult g = run_genesis(p, d, periodic);
  Scene s;
  for (std::size_t i = 0; i < d.size(); ++i) {
    ParticleSpec spec;
    spec.position = g.centres[i];
    spec.diameter = d[i];
    spec.mass = density * std::numbers::pi * d[i] * d[i] * d[i] / 6.0;
    spec.inertia = spec.mass * d[i] * d[i] / 10.0;
    s.particles.add(spec);
  }
  if (report != nullptr) report_packing(p, periodic, d, g, *report);
  return s;
}

}  // namespace dem
