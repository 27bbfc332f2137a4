#pragma once
/// \file scene_builder.hpp
/// Turns a validated SceneSpec into particles, bonds, contact settings, walls
/// and gravity, and resolves the time step and the step count.
///
/// Design note: what flows through the scene layer.
///
///     scene file (TOML) --parse_scene_text--> SceneSpec (checked values,
///       each with its file:line:column for errors)
///     SceneSpec --build_scene--> BuiltScene: the generators of this folder
///       (ring_torus, solid_torus, lattice_scene, CSV tables) fill a Scene
///       (particles, bonds, contact settings, walls, gravity), clumps by
///       particle id, the time step and the step count
///     BuiltScene --make_simulation--> Simulation (engine/): the built-in
///       force providers and the stepper, ready for the run loop (apps/)

#include <cstdint>

#include "engine/scene.hpp"
#include "engine/simulation.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

/// A clump's members (particle ids) and initial motion.
struct ClumpStart {
  std::vector<std::uint32_t> ids;
  Vec3 velocity = Vec3::Zero();
  Vec3 angular_velocity = Vec3::Zero();
};

/// A scene ready to run.
struct BuiltScene {
  Scene scene;
  /// Clumps ([[clump]]): their members are the last particles created (ids
  /// after every [[particles]] source); the store may be re-ordered.
  std::vector<ClumpStart> clumps;
  IntegratorMap map = IntegratorMap::rrp25;
  double time_step = 0.0;           ///< h (time)
  double critical_time_step = 0.0;  ///< h_crit of engine/time_step.hpp (+inf if nothing is stiff)
  bool automatic_time_step = false; ///< h = fraction h_crit
  double time_step_fraction = 0.0;  ///< h / h_crit
  std::uint64_t steps = 0;          ///< steps to the end time
  OutputSpec output;
};

/// Builds the scene (MODEL.md sections 6 and 7 for the generators):
///  - particles from each [[particles]] source in turn, ids = creation order;
///  - bonds: the generators' neighbours, every pair closer than a distance,
///    or the pairs of a CSV file; stiffnesses from [bonds] or from
///    [material] (K^a = E_b pi r_b^2 r0, K^s = K^a, K^m = E_b pi r_b^4/(4 r0),
///    r_b = beta (r_i + r_j)/2);
///  - "auto" contact and wall stiffnesses from the Hertz formulas of MODEL.md
///    section 7 for the smallest particle radius;
///  - clumps: member spheres appended after every source (not bonded),
///    masses from member_mass or [material] density, J = m d^2/10 each;
///  - the time step: a number, or fraction h_crit.
/// Throws SceneError naming the file, the place and the problem: a missing
/// material value, an unreadable or malformed CSV file, a particle behind a
/// wall, a time step over the critical step estimate, a scene too large.
BuiltScene build_scene(const SceneSpec& spec);

/// The simulation of a built scene: clumps made from their members (by id),
/// the built-in force providers, the scene's map and time step. Computes the
/// initial forces (and may re-order the particles). Throws as Simulation's
/// constructor does.
Simulation make_simulation(BuiltScene built);

/// Steps of size h to reach time t >= 0: ceil(t/h), with a relative
/// allowance of 1e-12 so that round-off in t/h adds no step. Throws
/// std::invalid_argument if t is not finite or that is 9e15 steps or more.
std::uint64_t steps_to_time(double t, double h);

/// The scene's last step at step size h: [run] steps, or steps_to_time of
/// end_time. Throws SceneError naming [run] for too many steps.
std::uint64_t end_step_of(const RunSpec& run, double h);

/// Memory the engine will need for the scene, estimated from its sizes
/// (bytes): about 1 KiB per particle at 6 bonds per particle (README).
std::uint64_t estimated_memory_bytes(std::uint64_t particles, std::uint64_t bonds);

}  // namespace dem
