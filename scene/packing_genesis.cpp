// The packing genesis (docs/model.md §21.3): random placement at reduced
// radii, then growth in stages with frictionless (Jacobi) relaxation.
#include "scene/packing_genesis.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/exact_sum.hpp"
#include "core/format.hpp"
#include "scene/packing_geometry.hpp"
#include "scene/packing_relaxation.hpp"

namespace dem {

namespace {

/// The placement's random numbers: a stream apart from the sizes'.
constexpr std::uint64_t kPlacementStream = 0x9e3779b97f4a7c15ull;

/// "dense": the largest overlap ratio of an unjammed state, and the net
/// force / mean overlap below which a state with overlaps is jammed (to
/// decide; to deliver).
constexpr double kZeroOverlap = 1e-9, kDecideForce = 1e-4, kFinalForce = 1e-7;

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
  OverlapRelaxation relaxation(c, d);
  const auto relax = [&](std::vector<Vec3>& x, double s, const RelaxLimits& limits) {
    const RelaxResult r = relaxation.relax(x, s, limits);
    out.sweeps += r.steps;
    ++out.relaxations;
    return r;
  };
  if (p.solid_fraction) {
    out.centres = place(c, d, 1.0, p.seed);
    const RelaxResult r = relax(out.centres, 1.0, {settings.tolerance, 1e-4, settings.max_steps});
    out.max_overlap_ratio = r.max_overlap_ratio;
    if (r.outcome != RelaxOutcome::unjammed)
      throw std::invalid_argument("[[particles]] solid_fraction: the relaxation left overlaps of " +
                                  format_g(r.max_overlap_ratio, 3) + " of a diameter after " +
                                  std::to_string(out.sweeps) + " steps (" +
                                  (r.outcome == RelaxOutcome::jammed ? "jammed" : "not converged") +
                                  "); the region cannot hold this solid fraction");
    return out;
  }
  // "dense": grow until jammed, then bisect the scale to the jamming onset.
  const RelaxLimits decide{kZeroOverlap, kDecideForce, settings.max_steps};
  double s = std::cbrt(settings.start_fraction / p.target_solid_fraction());
  double lo = 0.0, hi = INFINITY;
  std::vector<Vec3> x = place(c, d, s, p.seed), jammed;
  for (;;) {
    // A relaxation that does not converge is taken as jammed (the safe side).
    if (relax(x, s, decide).outcome == RelaxOutcome::unjammed) {
      lo = s;
    } else {
      hi = s;
      jammed = x;
    }
    if (lo > 0.0 && hi < INFINITY && hi - lo <= settings.bracket * hi) break;
    if (hi == INFINITY) s *= 1.0 + settings.growth;
    else if (lo == 0.0) s /= 1.0 + settings.growth;
    else s = 0.5 * (lo + hi);
  }
  // The jammed end, its forces balanced closely (contacts: overlap > 0); a
  // state taken for jammed at the looser balance may still unjam: then on
  // up by the bracket's width.
  RelaxResult r = relax(jammed, hi, {kZeroOverlap, kFinalForce, settings.max_steps});
  for (int k = 0; k < 100 && r.outcome == RelaxOutcome::unjammed; ++k) {
    hi *= 1.0 + settings.bracket;
    r = relax(jammed, hi, {kZeroOverlap, kFinalForce, settings.max_steps});
  }
  out.centres = std::move(jammed);
  out.scale = hi;
  out.jammed = r.outcome == RelaxOutcome::jammed;
  out.max_overlap_ratio = r.max_overlap_ratio;
  return out;
}

Scene make_packing(const PackingParameters& p, double density, const std::array<bool, 3>& periodic,
                   std::vector<std::string>* report) {
  if (!(std::isfinite(density) && density > 0.0)) throw std::invalid_argument("packing: density must be > 0");
  std::vector<double> d = packing_diameters(p, 1ull << 31);
  const GenesisResult g = run_genesis(p, d, periodic);
  for (double& x : d) x *= g.scale;
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
