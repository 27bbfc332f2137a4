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
///     BuiltScene --assemble_scene--> AssembledScene: the built-in force
///       providers (validated) and the clumps; dem check stops here
///     BuiltScene --make_simulation--> Simulation (engine/): assembled, and
///       the stepper with its first forces, ready for the run loop (apps/)
///
/// Before anything is built, count_scene() sizes the scene and the memory
/// estimate of scene_size.hpp is held to the limit (BuildOptions).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/clump.hpp"
#include "engine/scene.hpp"
#include "engine/simulation.hpp"
#include "engine/time_step.hpp"
#include "scene/scene_size.hpp"
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
  ImplicitSettings implicit;        ///< [run] settings of integrator = "implicit"
  double time_step = 0.0;           ///< h (time)
  double critical_time_step = 0.0;  ///< h_crit of engine/time_step.hpp (+inf if nothing is stiff)
  bool automatic_time_step = false; ///< h = fraction h_crit
  double time_step_fraction = 0.0;  ///< h / h_crit
  std::uint64_t steps = 0;          ///< steps to the end time
  OutputSpec output;
  /// What sets the critical time step (engine/time_step.hpp), and the scene
  /// key that sets that stiffness, e.g. "wall K^pw of particle 3 (id 3),
  /// translation: [[wall]] stiffness".
  CriticalTimeStep critical;
  std::string critical_source;
  std::string file;    ///< the scene file, for messages
  SceneSizes sizes;    ///< counted: particles, bonds, contact pairs
  MemoryEstimate memory;  ///< estimated peak memory of dem run
  MemoryLimit memory_limit;  ///< the limit it was held to
  /// What was set right without refusing the scene (a mesh's degenerate
  /// triangles dropped), one line each, for dem check and dem run to print.
  std::vector<std::string> warnings;
  /// What a generator reports of what it made (a packing's solid fraction,
  /// overlaps and size distribution), one line each, for dem check and dem
  /// run to print.
  std::vector<std::string> notes;
  /// The packing report (scene/packing_report.hpp, docs/scene-format.md) of
  /// the [[particles]] source = "packing" tables as JSON: empty if there is
  /// none, one object for one, an array of objects in source order for
  /// several; dem run and dem pack write it to packing.json.
  std::string packing_json;
};

/// How build_scene sizes and limits a scene.
struct BuildOptions {
  /// Refuse a scene whose estimated peak memory (scene_size.hpp) is over
  /// this limit; nullopt: MemAvailable of /proc/meminfo (available_memory()).
  std::optional<MemoryLimit> memory_limit;
  /// The run writes an output folder (VTK frames, checkpoints), as dem run
  /// does: counted in the estimate.
  bool output_files = true;
  /// If set, gets a line of progress now and then during a long set-up
  /// (each relaxation of a "dense" packing's genesis).
  std::function<void(const std::string&)> progress;
};

/// The sizes of a scene before anything is built: particles and generator
/// bonds of every source exactly (ring: count; solid torus: counted row by
/// row of its lattice; box lattice: per_side^3; CSV: its rows, read line by
/// line; clumps: their centres; bonds from a CSV file: its rows), contact
/// pairs estimated from each generator's lattice (0 for CSV sources and
/// clumps, and no bonds by distance: build_scene counts those once the
/// particles exist). Allocates nothing per particle. Throws SceneError as
/// build_scene does for a source it cannot make.
SceneSizes count_scene(const SceneSpec& spec);

/// Builds the scene (docs/model.md §6 and §7 for the generators):
///  - particles from each [[particles]] source in turn, ids = creation order;
///  - bonds: the generators' neighbours, every pair closer than a distance,
///    or the pairs of a CSV file; stiffnesses from [bonds] or from
///    [material] (K^a = E_b pi r_b^2 r0, K^s = K^a, K^m = E_b pi r_b^4/(4 r0),
///    r_b = beta (r_i + r_j)/2);
///  - "auto" contact and wall stiffnesses from the Hertz formulas of
///    docs/model.md §7 for the smallest particle radius;
///  - clumps: member spheres appended after every source (not bonded),
///    masses from member_mass or [material] density, J = m d^2/10 each;
///  - the time step: a number, or fraction h_crit.
///
/// Memory: before building anything, count_scene() and estimate_memory()
/// give the peak memory of dem run; once the particles exist, a counting
/// pass (count_close_pairs) counts the contact pairs and the pairs of bonds
/// by distance exactly, stopping at the number the limit leaves room for,
/// and the estimate is made again. A scene over the limit is refused before
/// the part that would not fit is allocated, with the estimate, the limit
/// and the key to change.
///
/// Throws SceneError naming the file, the place and the key, and the
/// problem: a missing material value, an unreadable or malformed CSV file
/// (no rows, duplicate or reversed bond pairs), two particles at one place
/// (their rows or ids named), a length over 1e100 (its square overflows), a
/// particle so far from the origin that double precision cannot resolve its
/// motion (|x| over 4.5e9 radii, e.g. from a huge gap), an initial kinetic
/// energy or momentum that overflows, a stiffness that overflows (critical
/// time step 0), a particle behind a wall, a time step over the critical
/// step estimate, a scene over the memory limit. Nothing else: every
/// std::exception of the generators is turned into a SceneError.
BuiltScene build_scene(const SceneSpec& spec, const BuildOptions& options = {});

/// A built scene put together for the run, without its large run-time
/// arrays (no neighbour list, no forces yet): the force field with every
/// provider built and validated (engine/force_field.hpp), and the clumps
/// made from their members (by id). dem check stops here, so it refuses
/// everything dem run refuses before its first step.
struct AssembledScene {
  ParticleStore particles;
  ForceField forces;
  std::vector<Clump> clumps;
  IntegratorMap map = IntegratorMap::rrp25;
  ImplicitSettings implicit;
  double time_step = 0.0;
  std::vector<ParticleGroup> groups;  ///< for Simulation::set_groups
};

/// Assembles a built scene. Throws SceneError naming the scene file with
/// what a provider or a clump refuses.
AssembledScene assemble_scene(BuiltScene built);

/// The simulation of a built scene: assemble_scene(), then the Simulation
/// with the scene's map and time step, which computes the initial forces
/// (and may re-order the particles), or with `start.first_forces` false
/// only sets up the template of an MPI run's parts. Throws as those do.
Simulation make_simulation(BuiltScene built, Simulation::Start start = {});

/// Steps of size h to reach time t >= 0: ceil(t/h), with a relative
/// allowance of 1e-12 so that round-off in t/h adds no step. Throws
/// std::invalid_argument if t is not finite or that is 9e15 steps or more.
std::uint64_t steps_to_time(double t, double h);

/// The scene's last step at step size h: [run] steps, or steps_to_time of
/// end_time. Throws SceneError naming [run] for too many steps.
std::uint64_t end_step_of(const RunSpec& run, double h);


}  // namespace dem
