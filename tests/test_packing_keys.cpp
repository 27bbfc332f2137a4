// The keys of [[particles]] source = "packing" (docs/scene-format.md): read
// into PackingParameters, and bad input refused with the key named.
#include <gtest/gtest.h>

#include <string>

#include "scene/scene_spec.hpp"

namespace dem {
namespace {

const char* kHead = R"(
[run]
time_step = "auto"
steps = 10
[[material]]
name = "grain"
density = 2650.0
E = 5e7
[contact]
law = "penalty"
[[particles]]
source = "packing"
material = "grain"
)";

const char* kBox = R"(
region = "box"
lower = [0.0, 0.0, 0.0]
upper = [0.02, 0.02, 0.02]
)";

const char* kSieve = R"(
size_distribution = "sieve"
sieve_sizes = [0.5e-3, 1e-3, 1.5e-3, 2e-3, 3e-3, 4e-3]
sieve_passing = [0, 12, 35, 60, 88, 100]
)";

SceneSpec parse(const std::string& body) { return parse_scene_text(std::string(kHead) + body, "p.toml", "."); }

/// The message of the SceneError that `body` raises ("" if none).
std::string error_of(const std::string& body) {
  try {
    parse(body);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

TEST(PackingKeys, ReadsABoxWithASieveTable) {
  const SceneSpec s = parse(std::string(kBox) + kSieve + "solid_fraction = 0.6\nseed = 42\nd_min = 1e-3\n");
  ASSERT_EQ(s.sources.size(), 1u);
  const ParticleSourceSpec& src = s.sources[0];
  EXPECT_EQ(src.kind, SourceKind::packing);
  const PackingParameters& p = src.packing;
  EXPECT_EQ(p.region.kind, PackingRegionKind::box);
  EXPECT_EQ(p.region.upper, Vec3(0.02, 0.02, 0.02));
  EXPECT_EQ(p.sizes.kind, SizeDistributionKind::sieve);
  EXPECT_EQ(p.sizes.sieve_passing[2], 35.0);
  EXPECT_EQ(p.sizes.d_min, 1e-3);
  EXPECT_EQ(p.solid_fraction, 0.6);
  EXPECT_EQ(p.seed, 42u);
}

TEST(PackingKeys, ReadsTheOtherRegionsAndDistributions) {
  const std::string uniform = "size_distribution = \"uniform\"\nd_min = 1e-3\nd_max = 2e-3\nsolid_fraction = \"dense\"\n";
  SceneSpec s = parse("region = \"cylinder\"\nbase = [0, 0, 0]\naxis = [0, 0, 2]\nradius = 0.01\nheight = 0.02\n" +
                      uniform);
  EXPECT_EQ(s.sources[0].packing.region.kind, PackingRegionKind::cylinder);
  EXPECT_EQ(s.sources[0].packing.region.axis, Vec3(0, 0, 1));  // normalised
  EXPECT_FALSE(s.sources[0].packing.solid_fraction.has_value());
  s = parse("region = \"sphere\"\ncentre = [0, 0, 0]\nradius = 0.01\n" + uniform);
  EXPECT_EQ(s.sources[0].packing.region.kind, PackingRegionKind::sphere);
  s = parse("region = \"torus\"\ncentre = [0, 0, 0]\naxis = [0, 1, 0]\nmajor_radius = 0.02\nminor_radius = 0.005\n"
            "size_distribution = \"lognormal\"\nmedian = 1.5e-3\nsigma_ln = 0.2\nd_min = 1e-3\nd_max = 2e-3\n"
            "solid_fraction = 0.5\n");
  EXPECT_EQ(s.sources[0].packing.region.kind, PackingRegionKind::torus);
  EXPECT_EQ(s.sources[0].packing.sizes.kind, SizeDistributionKind::lognormal);
}

/// Each bad value is refused with its key named, and the place in the file.
TEST(PackingKeys, BadInputNamesTheKey) {
  const std::string box_sieve = std::string(kBox) + kSieve;
  const struct {
    std::string body, expect;
  } cases[] = {
      {std::string(kBox) +
           "size_distribution = \"sieve\"\nsieve_sizes = [1e-3, 2e-3]\nsieve_passing = [10, 90]\nsolid_fraction = 0.5\n",
       "sieve_passing: must rise to 100"},
      {std::string(kBox) + "size_distribution = \"sieve\"\nsieve_sizes = [1e-3, 2e-3, 3e-3]\n"
                           "sieve_passing = [10, 5, 100]\nsolid_fraction = 0.5\n",
       "sieve_passing: must not decrease"},
      {std::string(kBox) + "size_distribution = \"sieve\"\nsieve_sizes = [-1e-3, 2e-3]\n"
                           "sieve_passing = [0, 100]\nsolid_fraction = 0.5\n",
       "sieve_sizes: sizes must be finite and > 0"},
      {std::string(kBox) + "size_distribution = \"uniform\"\nd_min = 0\nd_max = 1e-3\nsolid_fraction = 0.5\n",
       "d_min: expected a finite number > 0"},
      {box_sieve + "solid_fraction = 0.75\n", "solid_fraction: expected a number in (0, 0.74]"},
      {box_sieve + "solid_fraction = \"loose\"\n", "solid_fraction: expected a number in (0, 0.74] or \"dense\""},
      {box_sieve + "solid_fraction = 0.6\nseed = 1.5\n", "seed: expected a whole number >= 0, got 1.5"},
      {box_sieve + "solid_fraction = 0.6\nseed = \"abc\"\n", "seed: expected a whole number"},
      {"region = \"box\"\nlower = [0, 0, 0]\nupper = [0.02, 0.0, 0.02]\n" + std::string(kSieve) +
           "solid_fraction = 0.6\n",
       "upper: must be above lower on every axis"},
      {"region = \"sphere\"\ncentre = [0, 0, 0]\nradius = 0\n" + std::string(kSieve) + "solid_fraction = 0.6\n",
       "radius: expected a finite number > 0"},
      {"region = \"torus\"\ncentre = [0, 0, 0]\naxis = [0, 0, 1]\nmajor_radius = 0.01\nminor_radius = 0.02\n" +
           std::string(kSieve) + "solid_fraction = 0.6\n",
       "minor_radius: must be below major_radius"},
      {"region = \"cylinder\"\nbase = [0, 0, 0]\naxis = [0, 0, 0]\nradius = 0.01\nheight = 0.01\n" +
           std::string(kSieve) + "solid_fraction = 0.6\n",
       "axis: must not be the zero vector"},
      {"region = \"sphere\"\ncentre = [0, 0, 0]\nradius = 1e-3\n" + std::string(kSieve) + "solid_fraction = 0.6\n",
       "sieve_sizes: the largest particle (0.004) does not fit in the region"},
      {"region = \"mesh\"\nfile = \"a.stl\"\n" + std::string(kSieve) + "solid_fraction = 0.6\n",
       "file: "},
      {"region = \"cube\"\n" + std::string(kSieve) + "solid_fraction = 0.6\n", "region: expected \"box\""},
      {std::string(kBox) + "size_distribution = \"normal\"\nsolid_fraction = 0.6\n",
       "size_distribution: expected \"uniform\", \"lognormal\" or \"sieve\""},
      {box_sieve + "solid_fraction = 0.6\nd_max = 1\n", "d_max: unknown key"},
      {box_sieve, "solid_fraction: is required"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.body);
    EXPECT_NE(e.find("[[particles]] " + c.expect), std::string::npos) << c.body << "\ngot: " << e;
    EXPECT_EQ(e.rfind("p.toml:", 0), 0u) << e;
  }
}

}  // namespace
}  // namespace dem
