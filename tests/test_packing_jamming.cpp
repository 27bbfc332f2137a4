// "dense" packings at the jamming point and their report
// (scene/packing_genesis.hpp, scene/packing_report.hpp, docs/model.md
// §21.3-21.4): every figure checked against a brute-force count over all
// pairs made here, not by the code under test.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <random>
#include <vector>

#include "scene/packing_genesis.hpp"

namespace dem {
namespace {

PackingParameters dense_box(double side, std::uint64_t seed) {
  PackingParameters p;
  p.region.kind = PackingRegionKind::box;
  p.region.upper = Vec3(side, side, side);
  p.sizes.d_min = 0.99999, p.sizes.d_max = 1.0;  // equal spheres (to 1e-5)
  p.seed = seed;
  return p;  // solid_fraction: "dense"
}

/// The brute-force contact network: every pair (minimum images on the
/// periodic axes of the box [lower, upper]) with overlap > 0.
struct Brute {
  std::vector<std::vector<std::size_t>> touching;
  double worst_overlap = 0.0;  ///< / smaller diameter
  Mat3 fabric = Mat3::Zero();
  std::size_t contacts = 0;
};

Brute brute_contacts(const ParticleStore& s, const PackingRegion& r, const std::array<bool, 3>& periodic) {
  Brute b;
  const std::size_t n = s.size();
  b.touching.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      Vec3 d = s.position[i] - s.position[j];
      for (int a = 0; a < 3; ++a)
        if (periodic[a]) d[a] -= (r.upper[a] - r.lower[a]) * std::round(d[a] / (r.upper[a] - r.lower[a]));
      const double overlap = s.radius[i] + s.radius[j] - d.norm();
      b.worst_overlap = std::max(b.worst_overlap, overlap / (2.0 * std::min(s.radius[i], s.radius[j])));
      if (overlap <= 0.0) continue;
      b.touching[i].push_back(j), b.touching[j].push_back(i);
      const Vec3 u = d.normalized();
      b.fabric += u * u.transpose();
      ++b.contacts;
    }
  if (b.contacts) b.fabric /= double(b.contacts);
  return b;
}

/// Mean contact number after stripping, until none is left, the particles
/// with fewer than 4 contacts (plus `extra[i]` boundary contacts).
double non_rattler_coordination(const Brute& b, const std::vector<int>& extra, std::size_t& rattlers) {
  const std::size_t n = b.touching.size();
  std::vector<bool> in(n, true);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (!in[i]) continue;
      int z = extra[i];
      for (const std::size_t j : b.touching[i]) z += in[j];
      if (z < 4) in[i] = false, changed = true;
    }
  }
  std::size_t kept = 0, ends = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (in[i]) {
      ++kept;
      for (const std::size_t j : b.touching[i]) ends += in[j];
    }
  rattlers = n - kept;
  return kept ? double(ends) / double(kept) : 0.0;
}

double solid_fraction(const ParticleStore& s, double volume) {
  double v = 0.0;
  for (const double r : s.radius) v += 4.0 / 3.0 * std::numbers::pi * r * r * r;
  return v / volume;
}

Scene pack_on(int threads, const PackingParameters& p, const std::array<bool, 3>& periodic,
              PackingReport* report = nullptr) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  return make_packing(p, 1000.0, periodic, report);
}

constexpr std::array<bool, 3> kPeriodic{true, true, true};

// The test: equal frictionless spheres, "dense", in a periodic
// cell: solid fraction in [0.630, 0.650] and mean contact number of the
// non-rattlers in [5.8, 6.2]; overlaps below 1e-3 of the diameter; a
// near-isotropic fabric; the report's figures equal the brute-force ones.
TEST(PackingJamming, MonodisperseDenseInAPeriodicCellIsJammedAndIsostatic) {
  const PackingParameters p = dense_box(7.0, 1);
  PackingReport report;
  const Scene s = pack_on(2, p, kPeriodic, &report);
  const std::size_t n = s.particles.size();
  const Brute b = brute_contacts(s.particles, p.region, kPeriodic);
  std::size_t rattlers = 0;
  const double z_nr = non_rattler_coordination(b, std::vector<int>(n, 0), rattlers);
  const double phi = solid_fraction(s.particles, 343.0);
  const double anisotropy = std::sqrt(1.5 * (b.fabric - Mat3::Identity() / 3.0).squaredNorm());
  std::printf("periodic dense: %zu particles, phi %.4f, Z %.3f, Z non-rattlers %.3f (%zu rattlers), worst overlap "
              "%.2g, fabric anisotropy %.3g, %llu FIRE steps\n",
              n, phi, 2.0 * double(b.contacts) / double(n), z_nr, rattlers, b.worst_overlap, anisotropy,
              static_cast<unsigned long long>(report.sweeps));
  EXPECT_TRUE(report.jammed);
  EXPECT_GE(phi, 0.630);
  EXPECT_LE(phi, 0.650);
  EXPECT_GE(z_nr, 5.8);
  EXPECT_LE(z_nr, 6.2);
  EXPECT_LT(b.worst_overlap, 1e-3);
  // Near isotropic: the sampling noise of ~1,200 contact directions is
  // about 0.02 (measured 0.0128 with 843 particles).
  EXPECT_LT(anisotropy, 0.06);
  // The report says the same.
  EXPECT_EQ(report.delivered_count, n);
  EXPECT_EQ(report.requested_count, n);  // a periodic cell keeps its rattlers
  EXPECT_EQ(report.contacts, b.contacts);
  EXPECT_EQ(report.rattlers, rattlers);
  EXPECT_NEAR(report.solid_fraction, phi, 1e-12);
  EXPECT_NEAR(report.mean_coordination_non_rattlers, z_nr, 1e-12);
  EXPECT_NEAR(report.fabric_anisotropy, anisotropy, 1e-12);
  EXPECT_NEAR(report.max_overlap_ratio, b.worst_overlap, 1e-6);
  // No confining face: the interior is the whole cell.
  EXPECT_NEAR(report.interior_solid_fraction, phi, 1e-12);

  // (e) The JSON parses back with its fields.
  const nlohmann::json j = nlohmann::json::parse(report_json(report));
  EXPECT_EQ(j.at("delivered_count").get<std::uint64_t>(), n);
  EXPECT_EQ(j.at("requested_solid_fraction").get<std::string>(), "dense");
  EXPECT_DOUBLE_EQ(j.at("solid_fraction").get<double>(), report.solid_fraction);
  EXPECT_DOUBLE_EQ(j.at("coordination").at("mean_non_rattlers").get<double>(), z_nr);
  EXPECT_EQ(j.at("coordination").at("rattlers").get<std::uint64_t>(), rattlers);
  EXPECT_EQ(j.at("floaters").at("removed").get<std::uint64_t>(), 0u);
  EXPECT_EQ(j.at("fabric").at("tensor").size(), 3u);
  EXPECT_DOUBLE_EQ(j.at("fabric").at("anisotropy").get<double>(), report.fabric_anisotropy);
  EXPECT_TRUE(j.at("genesis").at("jammed").get<bool>());
  EXPECT_TRUE(j.at("sieve").is_array());
  // Two sources: an array of both, in order.
  std::vector<std::string> notes;
  std::string both;
  add_packing_report(report, notes, both);
  EXPECT_TRUE(nlohmann::json::parse(both).is_object());
  add_packing_report(report, notes, both);
  const nlohmann::json two = nlohmann::json::parse(both);
  ASSERT_TRUE(two.is_array());
  EXPECT_EQ(two.size(), 2u);
  EXPECT_EQ(notes.size(), 2 * report_lines(report).size());
}

// (b) The same bits on 1, 2 and 3 threads; another seed, another packing
// whose solid fraction is within 0.005.
TEST(PackingJamming, SameBitsOn1To3ThreadsAndAnotherSeedAnotherPacking) {
  const PackingParameters p = dense_box(7.0, 3);
  const Scene one = pack_on(1, p, kPeriodic), two = pack_on(2, p, kPeriodic), three = pack_on(3, p, kPeriodic);
  const auto same = [](const Scene& a, const Scene& b) {
    const ParticleStore &x = a.particles, &y = b.particles;
    return x.size() == y.size() &&
           std::memcmp(x.position.data(), y.position.data(), x.size() * sizeof(Vec3)) == 0 &&
           std::memcmp(x.radius.data(), y.radius.data(), x.size() * sizeof(double)) == 0;
  };
  EXPECT_TRUE(same(one, two));
  EXPECT_TRUE(same(one, three));
  const Scene other = pack_on(2, dense_box(7.0, 4), kPeriodic);
  EXPECT_FALSE(same(one, other));
  const double a = solid_fraction(one.particles, 343.0), b = solid_fraction(other.particles, 343.0);
  std::printf("seeds 3 and 4: %zu particles, phi %.4f and %.4f\n", one.particles.size(), a, b);
  EXPECT_NEAR(a, b, 0.005);
}

/// Brute-force boundary contacts of a sphere (radius a at x) with a box's
/// faces or a cylinder's mantle and caps, and its protrusion out of them.
int boundary_contacts(const PackingRegion& r, const Vec3& x, double a, double& protrusion) {
  std::vector<double> gaps;
  if (r.kind == PackingRegionKind::box) {
    for (int k = 0; k < 3; ++k) gaps.push_back(x[k] - r.lower[k]), gaps.push_back(r.upper[k] - x[k]);
  } else {
    const Vec3 v = x - r.base;
    const double s = v.dot(r.axis);
    gaps = {s, r.height - s, r.radius - (v - s * r.axis).norm()};
  }
  int z = 0;
  for (const double g : gaps) {
    z += a - g > 0.0;
    protrusion = std::max(protrusion, (a - g) / (2.0 * a));
  }
  return z;
}

// (c) Walled "dense" packings (a box and a tilted cylinder): after floater
// removal every particle has at least 3 contacts, the boundary's counting,
// or the report counts those that do not; none lies outside the region.
TEST(PackingJamming, WalledDensePackingsKeepNoFloater) {
  PackingRegion box, cylinder;
  box.kind = PackingRegionKind::box;
  box.upper = Vec3(6.0, 6.5, 7.0);
  cylinder.kind = PackingRegionKind::cylinder;
  cylinder.base = Vec3(1, 2, 3), cylinder.axis = Vec3(1, 0, 1).normalized(), cylinder.radius = 3.5,
  cylinder.height = 6.0;
  for (const PackingRegion& r : {box, cylinder}) {
    PackingParameters p = dense_box(1.0, 7);
    p.region = r;
    p.sizes.d_min = 0.7;  // d uniform in [0.7, 1]
    PackingReport report;
    const Scene s = pack_on(2, p, {false, false, false}, &report);
    const std::size_t n = s.particles.size();
    const Brute b = brute_contacts(s.particles, r, {false, false, false});
    std::size_t few = 0;
    std::vector<int> walls(n);
    double protrusion = -INFINITY;
    for (std::size_t i = 0; i < n; ++i) {
      walls[i] = boundary_contacts(r, s.particles.position[i], s.particles.radius[i], protrusion);
      few += walls[i] + b.touching[i].size() < 3;
    }
    std::size_t rattlers = 0;
    const double z_nr = non_rattler_coordination(b, walls, rattlers);
    std::printf("walled region %d: %zu of %llu particles kept (%llu floaters removed), phi %.4f, interior %.4f, "
                "Z non-rattlers %.3f, %zu with < 3 contacts, worst overlap %.2g, protrusion %.2g\n",
                static_cast<int>(r.kind), n, static_cast<unsigned long long>(report.requested_count),
                static_cast<unsigned long long>(report.floaters_removed), report.solid_fraction,
                report.interior_solid_fraction, z_nr, few, b.worst_overlap, protrusion);
    EXPECT_TRUE(report.jammed);
    EXPECT_EQ(report.below_three, few);
    EXPECT_TRUE(few == 0 || !report.floaters_note.empty());
    EXPECT_EQ(report.requested_count - report.floaters_removed, n);
    EXPECT_GT(report.floaters_removed, 0u);
    EXPECT_LT(b.worst_overlap, 1e-3);
    EXPECT_LT(protrusion, 1e-3);
    EXPECT_EQ(report.rattlers, rattlers);
    EXPECT_NEAR(report.mean_coordination_non_rattlers, z_nr, 1e-12);
    if (r.kind == PackingRegionKind::box) {
      // The interior solid fraction against random points of the interior
      // box (2 largest diameters from the faces): 200,000 points, standard
      // error 0.0011.
      double d_max = 0.0;
      for (const double a : s.particles.radius) d_max = std::max(d_max, 2.0 * a);
      const Vec3 lo = r.lower + Vec3::Constant(2.0 * d_max), hi = r.upper - Vec3::Constant(2.0 * d_max);
      std::mt19937_64 rng(11);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      int hits = 0;
      constexpr int kPoints = 200000;
      for (int q = 0; q < kPoints; ++q) {
        const Vec3 y = lo + Vec3(u(rng), u(rng), u(rng)).cwiseProduct(hi - lo);
        for (std::size_t i = 0; i < n; ++i)
          if ((y - s.particles.position[i]).squaredNorm() < s.particles.radius[i] * s.particles.radius[i]) {
            ++hits;
            break;
          }
      }
      std::printf("interior solid fraction %.4f, by random points %.4f\n", report.interior_solid_fraction,
                  double(hits) / kPoints);
      EXPECT_NEAR(report.interior_solid_fraction, double(hits) / kPoints, 0.005);
    }
  }
}

}  // namespace
}  // namespace dem
