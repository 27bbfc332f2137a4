// The uniaxial compression scene on a generated specimen
// (scenes/ucs_cylinder.toml, docs/model.md §21.7) in its quasi-static
// regime: the initial slope of the stress-strain curve does not depend on
// the platen's speed (within 2% over a factor of 4), and Young's modulus
// measured on the specimen agrees with the one of a periodic cell of the
// same grains and bonds under uniaxial stress (the cell's servo holding
// the lateral stresses at zero).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <string>
#include <vector>

#include <vtkDataArray.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLPolyDataReader.h>

#include "app_support.hpp"
#include <sstream>
#include "scene_support.hpp"

namespace fs = std::filesystem;

namespace dem {
namespace {

constexpr double kRadius = 0.005, kHeight = 0.02;  // the cylinder of scenes/ucs_cylinder.toml

/// The least-squares slope of y against x.
double fit_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t k = 0; k < x.size(); ++k) n += 1, sx += x[k], sy += y[k], sxx += x[k] * x[k], sxy += x[k] * y[k];
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/// The rows of a CSV file with a header: column name -> values.
std::map<std::string, std::vector<double>> read_columns(const fs::path& file) {
  std::istringstream in(testing::read_file_text(file));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::istringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  std::map<std::string, std::vector<double>> out;
  while (std::getline(in, line)) {
    std::size_t k = 0;
    for (std::istringstream r(line); std::getline(r, line, ',') && k < header.size(); ++k) {
      char* end = nullptr;
      const double v = std::strtod(line.c_str(), &end);
      if (end != line.c_str()) out[header[k]].push_back(v);
    }
  }
  return out;
}

/// A particle frame: positions by id.
std::vector<Vec3> frame_positions(const fs::path& vtp) {
  auto reader = vtkSmartPointer<vtkXMLPolyDataReader>::New();
  reader->SetFileName(vtp.c_str());
  reader->Update();
  vtkPolyData* poly = reader->GetOutput();
  vtkDataArray* id = poly->GetPointData()->GetArray("id");
  EXPECT_NE(id, nullptr) << vtp;
  std::vector<Vec3> x(poly->GetNumberOfPoints());
  for (vtkIdType k = 0; k < poly->GetNumberOfPoints(); ++k) {
    double p[3];
    poly->GetPoint(k, p);
    x.at(static_cast<std::size_t>(id->GetTuple1(k))) = Vec3(p[0], p[1], p[2]);
  }
  return x;
}

/// The least-squares slope of the axial stress against the axial strain
/// for strains in [lo, hi], from the top platen's rows of walls.csv.
double slope(const fs::path& walls, double lo, double hi) {
  const auto table = read_columns(walls);
  const std::vector<double>&u = table.at("top_u_n"), &f = table.at("top_F_z");
  std::vector<double> strains, stresses;
  for (std::size_t r = 0; r < u.size() && r < f.size(); ++r) {
    const double e = std::abs(u[r]) / kHeight;
    if (e < lo || e > hi) continue;
    strains.push_back(e);
    stresses.push_back(std::abs(f[r]) / (std::numbers::pi * kRadius * kRadius));
  }
  EXPECT_GT(strains.size(), 20u) << walls;
  return fit_slope(strains, stresses);
}

/// The shipped scene with the platen at `speed` (m/s) until 0.8% strain.
fs::path run_at(double speed, const std::string& name, int vtk_every = 0) {
  std::string text = testing::read_file_text(fs::path(DEM_SOURCE_DIR) / "scenes" / "ucs_cylinder.toml");
  char velocity[80], end[80];
  std::snprintf(velocity, sizeof velocity, "velocity = [0.0, 0.0, %.17g]", -speed);
  std::snprintf(end, sizeof end, "end_time = %.17g ", 0.008 * kHeight / speed);
  text = testing::replaced(text, "velocity = [0.0, 0.0, -0.05]", velocity);
  text = testing::replaced(text, "end_time = 0.012 ", end);
  text = testing::replaced(text, "energy_every = 100", "energy_every = 20");
  text = testing::replaced(text, "vtk_every = 1600", "vtk_every = " + std::to_string(vtk_every));
  const fs::path dir = testing::scratch_folder("strength");
  testing::write_text(dir / (name + ".toml"), text);
  const auto r = testing::run_command(std::string(DEM_BINARY_DIR) + "/apps/dem run " + (dir / (name + ".toml")).string() +
                                      " --quiet --overwrite --output-dir " + (dir / name).string());
  EXPECT_EQ(r.status, 0) << r.output;
  return dir / name / "walls.csv";
}

/// Young's modulus of the middle half of the specimen (a strain gauge: the
/// strain from the grains' axial displacements against their initial
/// height, free of the platens' contact compliance) against the platen's
/// stress, over the frames with platen strains in [lo, hi].
double gauge_modulus(const fs::path& run, double speed, double lo, double hi) {
  const auto walls = read_columns(run / "walls.csv");
  const std::vector<double>&t = walls.at("t"), &f = walls.at("top_F_z");
  const std::string pvd = testing::read_file_text(run / "particles.pvd");
  std::vector<double> strains, stresses;
  std::vector<Vec3> x0;
  for (std::size_t at = pvd.find("timestep=\""); at != std::string::npos; at = pvd.find("timestep=\"", at + 1)) {
    const double time = std::strtod(pvd.c_str() + at + 10, nullptr);
    const std::size_t file = pvd.find("file=\"", at) + 6;
    const std::vector<Vec3> x = frame_positions(run / pvd.substr(file, pvd.find('"', file) - file));
    if (x0.empty()) x0 = x;
    const double e = speed * time / kHeight;
    if (e < lo || e > hi) continue;
    std::vector<double> z0, dz;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x0[i].z() > 0.25 * kHeight && x0[i].z() < 0.75 * kHeight) z0.push_back(x0[i].z()), dz.push_back(x[i].z() - x0[i].z());
    const std::size_t row = std::min_element(t.begin(), t.end(), [&](double a, double b) {
                              return std::abs(a - time) < std::abs(b - time);
                            }) - t.begin();
    strains.push_back(-fit_slope(z0, dz));
    stresses.push_back(std::abs(f[row]) / (std::numbers::pi * kRadius * kRadius));
  }
  EXPECT_GE(strains.size(), 4u) << run;
  return fit_slope(strains, stresses);
}

/// Young's modulus of a periodic cube of the same grains (the packing of
/// scenes/ucs_cylinder.toml filling a cell of 10 mm) and bonds, strained
/// along z at 2.5 /s with the servo holding s_xx = s_yy = 0: the slope of
/// -s_zz against the strain 2.5 t for strains in [lo, hi].
double periodic_modulus(double lo, double hi) {
  std::string text = testing::read_file_text(fs::path(DEM_SOURCE_DIR) / "scenes" / "ucs_cylinder.toml");
  text = text.substr(0, text.find("[[wall]]"));
  text = testing::replaced(text, "end_time = 0.012 ", "end_time = 0.0032 ");
  text = testing::replaced(text, "energy_every = 100", "energy_every = 20");
  text = testing::replaced(text, "vtk_every = 1600", "vtk_every = 0");
  text = testing::replaced(text, "region = \"cylinder\"\nbase = [0.0, 0.0, 0.0]\naxis = [0.0, 0.0, 1.0]\nradius = 0.005\nheight = 0.02",
                           "region = \"box\"\nlower = [0.0, 0.0, 0.0]\nupper = [0.01, 0.01, 0.01]");
  text += R"(
[domain]
lower = [0.0, 0.0, 0.0]
upper = [0.01, 0.01, 0.01]
periodic = [true, true, true]
velocity_gradient = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, -2.5]]
target_stress = [0.0, 0.0, 0.0]
servo_axes = [true, true, false]
servo_gain = 3e-4
max_strain_rate = 20.0
)";
  const fs::path dir = testing::scratch_folder("strength");
  testing::write_text(dir / "periodic.toml", text);
  const auto r = testing::run_command(std::string(DEM_BINARY_DIR) + "/apps/dem run " + (dir / "periodic.toml").string() +
                                      " --quiet --overwrite --output-dir " + (dir / "periodic").string());
  EXPECT_EQ(r.status, 0) << r.output;
  const auto stress = read_columns(dir / "periodic" / "stress.csv");
  std::vector<double> e, s;
  for (std::size_t k = 0; k < stress.at("t").size(); ++k) {
    const double strain = 2.5 * stress.at("t")[k];
    if (strain < lo || strain > hi) continue;
    e.push_back(strain), s.push_back(-stress.at("s_zz")[k]);
    EXPECT_LT(std::abs(stress.at("s_xx")[k]), 0.04 * s.back()) << "the servo holds the lateral stress near zero";
  }
  return fit_slope(e, s);
}

TEST(UniaxialCompression, TheInitialSlopeDoesNotDependOnThePlatenSpeedAndMatchesThePeriodicCellsModulus) {
  const double fast = slope(run_at(0.05, "fast"), 0.003, 0.008);
  const fs::path slow_walls = run_at(0.0125, "slow", 1600);
  const double slow = slope(slow_walls, 0.003, 0.008);
  const double gauge = gauge_modulus(slow_walls.parent_path(), 0.0125, 0.003, 0.008);
  const double cell = periodic_modulus(0.003, 0.008);
  std::printf("E: platens %.4g Pa at 0.05 m/s, %.4g Pa at 0.0125 m/s; middle half %.4g Pa; periodic cell %.4g Pa\n",
              fast, slow, gauge, cell);
  // The platens' strain includes their contact compliance (lower), the
  // middle half is denser than the specimen's mean (the layer along the
  // mantle is looser: higher); the periodic cell at the mean solid
  // fraction lies between, within 20% of both.
  EXPECT_LT(slow, cell);
  EXPECT_LT(cell, gauge);
  EXPECT_NEAR(cell / slow, 1.0, 0.2);
  EXPECT_NEAR(cell / gauge, 1.0, 0.2);
  EXPECT_NEAR(fast / slow, 1.0, 0.02) << "E at 0.05 m/s " << fast << " Pa, at 0.0125 m/s " << slow << " Pa";
  // A bonded specimen of E = 1e8 Pa grains and bonds: tens of MPa.
  EXPECT_GT(slow, 1e7);
  EXPECT_LT(slow, 1e8);
}

}  // namespace
}  // namespace dem
