#pragma once
// The plate edge drop of MODEL.md 13.3 as scene text, at any size, step,
// integrator and strength (tests/test_plate_drop.cpp, test_implicit_plate.cpp).
#include <cstdio>
#include <string>

namespace dem::plate_test {

inline std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

inline std::string plate_scene(int cells_xy, double h, double end_time, const std::string& integrator = "rrp25",
                               double strength = 5e6) {
  return R"(
[run]
integrator = ")" + integrator + R"("
time_step = )" + num(h) + R"(
end_time = )" + num(end_time) + R"(
[[material]]
name = "ceramic"
density = 2400.0
E = 1e9
nu = 0.3
beta = 1.0
sigma_c = )" + num(strength) + R"(
tau_c = )" + num(strength) + R"(
[[particles]]
source = "fcc_block"
material = "ceramic"
spacing = 2e-3
cells = [)" + std::to_string(cells_xy) + ", " + std::to_string(cells_xy) + R"(, 2]
rotation_axis = [1.0, 0.0, 0.0]
rotation_angle = 30.0
lowest_z = 1.1e-3
velocity = [0.0, 0.0, -5.0]
[bonds]
law = "bdem"
[contact]
law = "penalty"
stiffness = 1e6
wall_stiffness = 1e6
[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
)";
}

}  // namespace dem::plate_test
