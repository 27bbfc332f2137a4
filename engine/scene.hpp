#pragma once
/// \file scene.hpp
/// Everything a ForceField and a Simulation are built from: the particles,
/// the bonds, the contact settings, the walls and uniform gravity.

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bonds/bond_laws.hpp"
#include "bonds/bond_list.hpp"
#include "contact/contact_laws.hpp"
#include "contact/contact_potential.hpp"
#include "contact/contact_provider.hpp"
#include "contact/wall_motion.hpp"
#include "core/particle_store.hpp"
#include "core/periodic_cell.hpp"
#include "engine/cell_provider.hpp"
#include "core/types.hpp"
#include "engine/groups.hpp"

namespace dem {

/// One [[material]] of a scene file (docs/scene-format.md), SI units.
struct SceneMaterial {
  std::string name;
  double density = 0.0;             ///< rho (kg/m^3); 0: not given (a material of walls alone)
  double youngs_modulus = 0.0;      ///< E (Pa)
  double poisson_ratio = 0.3;       ///< nu
  double bond_radius_factor = 1.0;  ///< beta: r_b = beta (r_i + r_j)/2
  double tensile_strength = std::numeric_limits<double>::infinity();  ///< sigma_c (Pa)
  double shear_strength = std::numeric_limits<double>::infinity();    ///< tau_c (Pa)
  bool tension_only = false;        ///< sigma from max(F_n, 0) (10.1)
  double restitution = 0.5;         ///< e in (0, 1]
  double sliding_friction = 0.5;    ///< mu_s >= 0
  double rolling_friction = 0.0;    ///< mu_r >= 0
};

struct Scene {
  ParticleStore particles;
  BondList bonds;
  ContactSettings contact;
  std::vector<Wall> walls;
  /// Per wall of `walls`, its name and motion (contact/wall_motion.hpp);
  /// empty: every wall at rest, named "wall<k>".
  std::vector<WallMotion> wall_motions;
  /// Triangle-mesh walls (contact/mesh_contact.hpp), after the plane walls
  /// in gather order; their stiffness or material as the contact law takes it.
  std::vector<MeshWall> meshes;
  /// Uniform gravitational acceleration g (length/time^2): force m_i g on
  /// every particle, potential U_gravity = -sum m_i g.x_i.
  Vec3 gravity = Vec3::Zero();
  /// Mass-proportional viscous damping rate alpha (1/time; 0: none):
  /// force -alpha m_i v_i, moment -alpha J_i Omega_i, applied as the decay
  /// exp(-alpha h) of the velocities after each step (docs/model.md §11.10,
  /// fields/viscous_damping_provider.hpp).
  double viscous_damping = 0.0;

  // Part II (docs/model.md §9-§11); the defaults are the scenes before it.
  /// The bond law's keyword (bonds/bond_laws.hpp) and its constants for
  /// this scene; nullptr: the law's own defaults (scenes made in code).
  std::string bond_law = "baker-gonzalez";
  std::shared_ptr<PreparedBondLaw> bond_setup;
  /// The contact law's keyword (contact/contact_laws.hpp) and its constants
  /// for this scene; nullptr: the frictionless Hertz law of `contact` and
  /// `walls` (scenes made in code).
  std::string contact_law = "hertz";
  std::shared_ptr<PreparedContactLaw> contact_setup;
  std::vector<SceneMaterial> materials;  ///< particles.material indexes this
  std::vector<ParticleGroup> groups;     ///< fixed, prescribed-velocity and loaded groups
  /// A periodic cell ([domain] periodic, docs/model.md §20; no periodic
  /// axis: none) and its velocity gradient L (1/time).
  PeriodicCell cell;
  Mat3 velocity_gradient = Mat3::Zero();
  /// The cell's servo (docs/model.md §20.6; no axis: none).
  CellServo cell_servo;
};

}  // namespace dem
