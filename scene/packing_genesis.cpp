// The packing genesis (docs/model.md §21.3): random placement at reduced
// radii, then growth in stages with frictionless (Jacobi) relaxation.
#include "scene/packing_genesis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>


#include "core/exact_sum.hpp"
#include "core/format.hpp"
#include "scene/packing_geometry.hpp"
#include "scene/packing_contacts.hpp"
#include "scene/packing_measures.hpp"
#include "scene/packing_relaxation.hpp"
#include "scene/packing_tiling.hpp"

namespace dem {

namespace {

/// The placement's random numbers: a stream apart from the sizes'.
constexpr std::uint64_t kPlacementStream = 0x9e3779b97f4a7c15ull;

/// "dense": the largest overlap ratio of an unjammed state, and the net
/// force / mean overlap below which a state with overlaps is jammed (to
/// decide; to deliver).
constexpr double kZeroOverlap = 1e-9, kDecideForce = 1e-4, kFinalForce = 1e-7;
/// "dense": the most relaxations of the decompression (it takes 4 to 9).
constexpr int kMaxDecompressions = 40;
/// The largest fall of the mean overlap one decompression aims at (a
/// factor): the secant's jamming point is only an estimate, and a scale
/// just below jamming takes a critically slow minimisation, so each step
/// stops well short of it until the target is near.
constexpr double kOverlapFall = 1.0 / 3.0;

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

/// Fills the report of the delivered particles (diameters d, centres x, of
/// the drawn `drawn`), docs/model.md §21.4.
void measure(const PackingParameters& p, const Confinement& c, const std::vector<double>& d,
             const std::vector<Vec3>& x, const GenesisResult& g, PackingReport& r) {
  const std::size_t n = d.size();
  r.delivered_count = n;
  r.requested_solid_fraction = p.solid_fraction;
  ExactSum volume;
  for (const double x : d) volume.add(std::numbers::pi / 6.0 * x * x * x);
  r.solid_fraction = volume.value() / region_volume(p.region);
  const double d_max = n ? *std::max_element(d.begin(), d.end()) : 0.0;
  r.interior_margin = 2.0 * d_max;
  r.interior_volume = interior_volume(c, r.interior_margin, d_max);
  r.interior_solid_fraction = r.interior_volume > 0.0
                                  ? interior_sphere_volume(c, d, x, r.interior_margin) / r.interior_volume
                                  : std::numeric_limits<double>::quiet_NaN();
  const PackingContacts k = find_contacts(c, d, x, 0.0);
  const std::vector<std::uint8_t> all(n, 1);
  r.contacts = k.pairs.size();
  r.mean_coordination = n ? 2.0 * double(k.pairs.size()) / double(n) : 0.0;
  const std::vector<std::uint8_t> bearing = strip_below(k, n, 4, true);
  std::uint64_t kept = 0, pairs = 0;
  for (const std::uint8_t b : bearing) kept += b;
  for (const auto& [i, j] : k.pairs) pairs += bearing[i] && bearing[j];
  r.rattlers = n - kept;
  r.mean_coordination_non_rattlers = kept ? 2.0 * double(pairs) / double(kept) : 0.0;
  r.below_three = 0;
  for (const std::uint32_t z : contact_counts(k, all, true)) r.below_three += z < 3;
  r.fabric = fabric_tensor(k, all);
  r.fabric_anisotropy = fabric_anisotropy(r.fabric);
  r.max_overlap_ratio = g.max_overlap_ratio;
  r.sweeps = g.sweeps;
  r.relaxations = g.relaxations;
  r.jammed = g.jammed;
  r.scale = g.scale;
  r.sieve.clear();
  if (p.sizes.kind == SizeDistributionKind::sieve) {
    const std::vector<double> got = achieved_passing(d, p.sizes.sieve_sizes, binder_fines_percent(p.sizes));
    for (std::size_t q = 0; q < got.size(); ++q)
      r.sieve.push_back({p.sizes.sieve_sizes[q], p.sizes.sieve_passing[q], got[q]});
  }
}

/// The mean overlap of a relaxed state over the mean drawn diameter times
/// the scale s: the dimensionless isotropic stress of the harmonic overlaps.
double overlap_ratio(const RelaxResult& r, double s, double d_mean) { return r.mean_overlap / (s * d_mean); }

/// The progress line of a "dense" relaxation of n particles at scale s
/// (`m`: its mean overlap ratio; `out`: the genesis so far).
std::string relaxation_line(const GenesisResult& out, std::size_t n, double s, const RelaxResult& r, double m,
                            double target) {
  std::string state = "not converged";
  if (r.outcome == RelaxOutcome::unjammed)
    state = "unjammed";
  else if (r.outcome == RelaxOutcome::jammed)
    state = "jammed, mean overlap " + format_g(m, 3) + " of a diameter (target " + format_g(target, 3) + ")";
  return "packing: relaxation " + std::to_string(out.relaxations) + " of " + std::to_string(n) +
         " particles at diameters x " + format_g(s, 7) + ": " + state + " after " + std::to_string(r.steps) +
         " FIRE steps (" + std::to_string(out.sweeps) + " in all)";
}

/// "dense" (docs/model.md §21.3): compression past jamming, then
/// decompression by a secant on the mean overlap to settings.target_overlap.
GenesisResult dense_genesis(const Confinement& c, const std::vector<double>& d, std::uint64_t seed,
                            const GenesisSettings& settings) {
  GenesisResult out;
  ExactSum sum;
  for (const double x : d) sum.add(x);
  const double d_mean = d.empty() ? 1.0 : sum.value() / double(d.size());
  const double target = settings.target_overlap;
  OverlapRelaxation relaxation(c, d);
  const auto relax = [&](std::vector<Vec3>& x, double s, double force_ratio) {
    const RelaxResult r = relaxation.relax(x, s, {kZeroOverlap, force_ratio, settings.max_steps});
    out.sweeps += r.steps;
    ++out.relaxations;
    if (settings.progress)
      settings.progress(relaxation_line(out, d.size(), s, r, overlap_ratio(r, s, d_mean), target));
    return r;
  };
  // Compress until jammed. A relaxation that does not converge counts as
  // jammed (with its mean overlap).
  double lo = 0.0, hi = std::cbrt(settings.compress_fraction / kDenseSolidFraction);
  std::vector<Vec3> jammed = place(c, d, std::cbrt(settings.start_fraction / kDenseSolidFraction), seed);
  RelaxResult r;
  for (int k = 0;; ++k) {
    r = relax(jammed, hi, kDecideForce);
    if (r.outcome != RelaxOutcome::unjammed) break;
    if (k == 100) throw std::invalid_argument("[[particles]] solid_fraction: \"dense\" found no jammed state");
    lo = hi;
    hi *= 1.0 + settings.growth;
  }
  // Decompress: the mean overlap falls about linearly with the scale, to 0
  // at the jamming point; a secant through the last two jammed states
  // (the first step a short one: d m / d ln s is near 0.6) aimed at the
  // target or at kOverlapFall of the last mean overlap if larger, each
  // relaxation from the last jammed state, never below `lo`, the largest
  // scale found unjammed.
  double m_hi = overlap_ratio(r, hi, d_mean), s_prev = 0.0, m_prev = 0.0;
  for (int k = 0; k < kMaxDecompressions && std::abs(m_hi - target) > settings.overlap_tolerance * target &&
                  hi - lo > settings.bracket * hi;
       ++k) {
    // Aimed in the upper half of the tolerance: the curve steepens towards
    // jamming, so a secant overshoots rather than falls short.
    const double aim = std::max(target * (1.0 + 0.5 * settings.overlap_tolerance), kOverlapFall * m_hi);
    double s = s_prev > 0.0 ? hi + (aim - m_hi) * (hi - s_prev) / (m_hi - m_prev) : hi * (1.0 - 0.5 * (m_hi - aim));
    if (!(s > lo + 0.1 * (hi - lo)) || !std::isfinite(s)) s = lo + 0.5 * (hi - lo);
    std::vector<Vec3> x = jammed;
    const RelaxResult q = relax(x, s, kDecideForce);
    if (q.outcome == RelaxOutcome::unjammed) {
      lo = s;
      continue;
    }
    s_prev = hi, m_prev = m_hi;
    hi = s, m_hi = overlap_ratio(q, s, d_mean);
    jammed = std::move(x);
  }
  // The delivered state, its forces balanced closely.
  r = relax(jammed, hi, kFinalForce);
  out.centres = std::move(jammed);
  out.scale = hi;
  out.jammed = r.outcome == RelaxOutcome::jammed;
  out.max_overlap_ratio = r.max_overlap_ratio;
  return out;
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
  // Diameters; centres (and the jammed copy); forces, velocities and moves;
  // per-particle overlap data; the cell index; the Verlet list (about 40
  // neighbours and its start); the contacts (about 3.5 a particle, pair and
  // normal) and their peeling (CSR, counts).
  return n * (8 + 2 * 24 + 3 * 24 + 8 + 8 + 4 + 12 + (40 * 4 + 8) + 7 * (8 + 24) / 2 + (8 + 7 * 4 + 4));
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
  if (!p.solid_fraction) return dense_genesis(c, d, p.seed, settings);
  // A numeric solid fraction: placed at the drawn sizes, relaxed once.
  GenesisResult out;
  OverlapRelaxation relaxation(c, d);
  out.centres = place(c, d, 1.0, p.seed);
  const RelaxResult r = relaxation.relax(out.centres, 1.0, {settings.tolerance, 1e-4, settings.max_steps});
  out.sweeps = r.steps;
  out.relaxations = 1;
  out.max_overlap_ratio = r.max_overlap_ratio;
  if (r.outcome != RelaxOutcome::unjammed)
    throw std::invalid_argument("[[particles]] solid_fraction: the relaxation left overlaps of " +
                                format_g(r.max_overlap_ratio, 3) + " of a diameter after " +
                                std::to_string(out.sweeps) + " steps (" +
                                (r.outcome == RelaxOutcome::jammed ? "jammed" : "not converged") +
                                "); the region cannot hold this solid fraction");
  return out;
}

namespace {

/// Whether a packing of this region and these periodic axes has confining
/// faces, where the floaters of a "dense" one are removed (docs/model.md
/// §21.4): any region but a box periodic on all three axes.
bool has_faces(const PackingParameters& p, const std::array<bool, 3>& periodic) {
  return p.region.kind != PackingRegionKind::box || !(periodic[0] && periodic[1] && periodic[2]);
}

/// Number-quantile bins of the rattler compensation (docs/model.md §21.8).
constexpr std::size_t kRattlerBins = 8;
/// The largest weight a bin takes (a bin whose rattlers are above 3/4).
constexpr double kMaxRattlerWeight = 4.0;

/// The rattler compensation of a jammed periodic tile (docs/model.md
/// §21.8): the tile's particles (drawn diameters `tile`, genesis `g`) in
/// kRattlerBins bins of equal count by size, and for each bin the weight
/// 1 / (1 - its fraction of rattlers: outside the 3-core of the contact
/// network), at most kMaxRattlerWeight; `fraction` gets the rattlers'
/// share of the whole tile.
std::vector<double> rattler_weights(const PackingParameters& tile_p, const std::vector<double>& tile,
                                    const GenesisResult& g, double& fraction) {
  const std::size_t n = tile.size();
  const auto [lower, upper] = region_bounds(tile_p.region);
  const Confinement cell{tile_p.region, {true, true, true}, lower, upper};
  std::vector<double> d(tile);
  for (double& x : d) x *= g.scale;
  const std::vector<std::uint8_t> keep = strip_below(find_contacts(cell, d, g.centres, 0.0), n, 3, false);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return tile[a] != tile[b] ? tile[a] < tile[b] : a < b; });
  std::vector<double> all(kRattlerBins, 0.0), kept(kRattlerBins, 0.0);
  std::size_t rattlers = 0;
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t b = r * kRattlerBins / n;
    all[b] += 1.0;
    kept[b] += keep[order[r]];
    rattlers += !keep[order[r]];
  }
  fraction = n ? double(rattlers) / double(n) : 0.0;
  std::vector<double> w(kRattlerBins, 1.0);
  for (std::size_t b = 0; b < kRattlerBins; ++b)
    if (all[b] > 0.0) w[b] = all[b] / std::max(kept[b], all[b] / kMaxRattlerWeight);
  return w;
}

/// "1.05, 1.2, ..." (3 significant digits).
std::string join_g(const std::vector<double>& v) {
  std::string out;
  for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + format_g(v[k], 3);
  return out;
}

/// The genesis of a tiled "dense" packing (docs/model.md §21.8): the tile's
/// genesis, its particles repeated over the region; `d` gets the delivered
/// diameters, the result the centres and the tile's figures. In a region
/// without periodic axes the jammed tile is scaled by 1/s (centres and
/// edges: the same packing), so the delivered diameters are the drawn ones;
/// a periodic cell must be tiled exactly, so there the diameters are s
/// times the drawn ones.
GenesisResult tiled_genesis(const PackingParameters& p, const Confinement& c, std::uint64_t tile_particles,
                            const GenesisSettings& settings, std::vector<double>& d, PackingReport* report) {
  TilePlan plan = plan_tiles(p, tile_particles, d.size());
  // The tile's sizes stratified, so that its few thousand carry the
  // distribution to every tile.
  std::vector<double> tile = stratified_diameters(SizeSampler(plan.tile.sizes), plan.tile.seed,
                                                  kDenseSolidFraction * region_volume(plan.tile.region), 1ull << 31);
  if (settings.progress)
    settings.progress("packing: tiled: the genesis of a periodic tile of " + std::to_string(tile.size()) +
                      " particles, to be repeated " + std::to_string(plan.count[0]) + " x " +
                      std::to_string(plan.count[1]) + " x " + std::to_string(plan.count[2]) + " times");
  GenesisResult g = run_genesis(plan.tile, tile, {true, true, true}, settings);
  if (has_faces(p, c.periodic)) {
    // Floaters will be removed, the tile's rattlers among them, and they
    // are mostly small: the tile is drawn again with more of the sizes that
    // rattled, so that the delivered sizes keep the distribution.
    double rattlers = 0.0;
    const std::vector<double> weights = rattler_weights(plan.tile, tile, g, rattlers);
    if (settings.progress)
      settings.progress("packing: tiled: " + format_g(100.0 * rattlers, 3) +
                        "% of the tile rattle (< 3 contacts) and will go as floaters; the tile drawn again with "
                        "each size's share raised by its rattlers' (bin weights " + join_g(weights) + ")");
    tile = stratified_diameters(SizeSampler(plan.tile.sizes), plan.tile.seed,
                                kDenseSolidFraction * region_volume(plan.tile.region), 1ull << 31, weights);
    const GenesisResult first = std::move(g);
    g = run_genesis(plan.tile, tile, {true, true, true}, settings);
    g.sweeps += first.sweeps;
    g.relaxations += first.relaxations;
  }
  if (!(c.periodic[0] || c.periodic[1] || c.periodic[2])) {
    for (Vec3& x : g.centres) x /= g.scale;
    plan.side /= g.scale;
    for (int a = 0; a < 3; ++a)
      plan.count[a] = static_cast<std::uint32_t>(std::ceil((c.upper[a] - c.lower[a]) / plan.side[a]));
    g.scale = 1.0;
  } else {
    for (double& x : tile) x *= g.scale;
  }
  std::vector<Vec3> x;
  d.clear();
  repeat_tile(plan, c, tile, g.centres, d, x);
  g.centres = std::move(x);
  if (report != nullptr) {
    report->tile_particles = tile.size();
    report->tile_side = plan.side;
    report->tiles = plan.count;
  }
  return g;
}

}  // namespace

Scene make_packing(const PackingParameters& p, double density, const std::array<bool, 3>& periodic,
                   PackingReport* report, const GenesisProgress& progress) {
  if (!(std::isfinite(density) && density > 0.0)) throw std::invalid_argument("packing: density must be > 0");
  std::vector<double> d = packing_diameters(p, 1ull << 31);
  const auto [lower, upper] = region_bounds(p.region);
  const Confinement c{p.region, periodic, lower, upper};
  GenesisSettings settings;
  settings.progress = progress;
  GenesisResult g;
  if (const std::uint64_t tile = tile_particles_of(p, d.size()); tile > 0) {
    g = tiled_genesis(p, c, tile, settings, d, report);
  } else {
    g = run_genesis(p, d, periodic, settings);
    for (double& x : d) x *= g.scale;
  }
  // Floaters (fewer than 3 contacts, the boundary's counting) go where a
  // jammed packing has confining faces (docs/model.md §21.4).
  const bool walls = has_faces(p, periodic);
  std::vector<std::uint8_t> keep(d.size(), 1);
  std::string note;
  if (!p.solid_fraction && walls)
    keep = strip_below(find_contacts(c, d, g.centres, 0.0), d.size(), 3, true);
  else if (p.solid_fraction)
    note = "not removed: a numeric solid_fraction below jamming leaves no contact network; use \"dense\"";
  else
    note = "not removed in a periodic cell: rattlers keep the solid fraction and carry no force";
  std::vector<double> dk;
  std::vector<Vec3> xk;
  Scene s;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (!keep[i]) continue;
    dk.push_back(d[i]);
    xk.push_back(g.centres[i]);
    ParticleSpec spec;
    spec.position = g.centres[i];
    spec.diameter = d[i];
    spec.mass = density * std::numbers::pi * d[i] * d[i] * d[i] / 6.0;
    spec.inertia = spec.mass * d[i] * d[i] / 10.0;
    s.particles.add(spec);
  }
  if (report != nullptr) {
    measure(p, c, dk, xk, g, *report);
    report->requested_count = d.size();
    report->floaters_removed = d.size() - dk.size();
    report->floater_fraction = d.empty() ? 0.0 : double(report->floaters_removed) / double(d.size());
    report->floaters_note = report->below_three > 0 ? note : "";
  }
  return s;
}

}  // namespace dem
