#pragma once
// Shared helpers for the tests that build scenes from TOML text.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scene/scene_builder.hpp"

namespace dem::testing {

/// `text` with its first `from` replaced by `to` (a test failure if absent).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

/// A run's state for bit-for-bit comparisons: positions, velocities and
/// spins by particle id (the particles this process owns), the energy
/// ledger, and every moving boundary's load sums, displacement and centre.
struct StateSnapshot {
  std::vector<Vec3> x, v, w;
  Simulation::Ledger ledger;
  std::vector<double> loads;
  bool operator==(const StateSnapshot& o) const {
    return x == o.x && v == o.v && w == o.w && ledger.boundary == o.ledger.boundary &&
           ledger.contact == o.ledger.contact && ledger.fracture == o.ledger.fracture &&
           ledger.filter == o.ledger.filter && loads == o.loads;
  }
};

inline StateSnapshot snapshot(const Simulation& sim) {
  const ParticleStore& p = sim.particles();
  StateSnapshot s;
  s.x.resize(p.size());
  s.v.resize(p.size());
  s.w.resize(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!p.owns(i)) continue;
    s.x[p.id[i]] = p.position[i];
    s.v[p.id[i]] = p.velocity[i];
    s.w[p.id[i]] = p.angular_velocity[i];
  }
  s.ledger = sim.ledger();
  for (const BoundaryLoad& l : sim.boundary_loads()) {
    for (const ExactSum& x : l.sums) s.loads.push_back(x.value());
    s.loads.push_back(l.displacement);
    for (int a = 0; a < 3; ++a) s.loads.push_back(l.centre[a]);
  }
  return s;
}

/// The SceneError message of making a Simulation of `text` (parsed as
/// "s.toml" in "."), or "" when it is made: every check `dem run` does
/// before its first step.
inline std::string simulation_error(const std::string& text) {
  try {
    (void)make_simulation(build_scene(parse_scene_text(text, "s.toml", ".")));
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

/// A folder of this test process for the files its scenes read (CSV
/// tables), created on first use: the system's temporary folder /
/// "dem_test_<tag>_<pid>".
inline std::filesystem::path scratch_folder(const std::string& tag) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("dem_test_" + tag + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(p);
  return p;
}

/// Writes `text` to `path` (replacing it).
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace dem::testing
