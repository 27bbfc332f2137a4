// The uniaxial compression scene on a generated specimen
// (scenes/ucs_cylinder.toml, docs/model.md §21.7) in its quasi-static
// regime: the initial slope of the stress-strain curve does not depend on
// the platen's speed (within 2% over a factor of 4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

#include "app_support.hpp"
#include <sstream>
#include "scene_support.hpp"

namespace fs = std::filesystem;

namespace dem {
namespace {

constexpr double kRadius = 0.005, kHeight = 0.02;  // the cylinder of scenes/ucs_cylinder.toml

/// The least-squares slope of the axial stress against the axial strain
/// for strains in [lo, hi], from the top platen's rows of walls.csv.
double slope(const fs::path& walls, double lo, double hi) {
  std::istringstream in(testing::read_file_text(walls));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::istringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << walls << ": no column " << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t u = column("top_u_n"), f = column("top_F_z");
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (std::istringstream r(line); std::getline(r, line, ',');) row.push_back(std::stod(line));
    if (row.size() != header.size()) continue;
    const double e = std::abs(row[u]) / kHeight;
    const double s = std::abs(row[f]) / (std::numbers::pi * kRadius * kRadius);
    if (e < lo || e > hi) continue;
    n += 1, sx += e, sy += s, sxx += e * e, sxy += e * s;
  }
  EXPECT_GT(n, 20) << walls;
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/// The shipped scene with the platen at `speed` (m/s) until 0.8% strain.
fs::path run_at(double speed, const std::string& name) {
  std::string text = testing::read_file_text(fs::path(DEM_SOURCE_DIR) / "scenes" / "ucs_cylinder.toml");
  char velocity[80], end[80];
  std::snprintf(velocity, sizeof velocity, "velocity = [0.0, 0.0, %.17g]", -speed);
  std::snprintf(end, sizeof end, "end_time = %.17g ", 0.008 * kHeight / speed);
  text = testing::replaced(text, "velocity = [0.0, 0.0, -0.1]", velocity);
  text = testing::replaced(text, "end_time = 0.006 ", end);
  text = testing::replaced(text, "energy_every = 100", "energy_every = 20");
  text = testing::replaced(text, "vtk_every = 800", "vtk_every = 0");
  const fs::path dir = testing::scratch_folder("strength");
  testing::write_text(dir / (name + ".toml"), text);
  const auto r = testing::run_command(std::string(DEM_BINARY_DIR) + "/apps/dem run " + (dir / (name + ".toml")).string() +
                                      " --quiet --overwrite --output-dir " + (dir / name).string());
  EXPECT_EQ(r.status, 0) << r.output;
  return dir / name / "walls.csv";
}

TEST(UniaxialCompression, TheInitialSlopeDoesNotDependOnThePlatenSpeedWithinTwoPercentOverAFactorOfFour) {
  const double fast = slope(run_at(0.1, "fast"), 0.003, 0.008);
  const double slow = slope(run_at(0.025, "slow"), 0.003, 0.008);
  EXPECT_NEAR(fast / slow, 1.0, 0.02) << "E at 0.1 m/s " << fast << " Pa, at 0.025 m/s " << slow << " Pa";
  // A bonded specimen of E = 1e8 Pa grains and bonds: tens of MPa.
  EXPECT_GT(slow, 1e7);
  EXPECT_LT(slow, 1e8);
}

}  // namespace
}  // namespace dem
