#pragma once
/// \file force_field.hpp
/// Assembles the force F_i and spatial moment tau_i on every particle from
/// the bonds, the particle-particle contacts and the walls (MODEL.md
/// sections 2 and 4), in parallel and deterministically.
///
/// Data flow of compute():
///
///     neighbour list update (kd-tree, Verlet skin)
///       -> per-bond terms    (parallel over bonds: F_i and tau_i of each bond
///                             written to the bond's slot)
///       -> per-particle sums (parallel over particles, fixed order: bonds by
///                             bond index, contacts as owner by pair index,
///                             contacts as partner by pair index, walls in order)
///
/// The second end of a bond takes F_j = -F_i and tau_j = -tau_i -
/// (x_i - x_j) x F_i (the bond's total torque vanishes, MODEL.md section 4),
/// so a bond keeps 48 bytes of scratch. In bonded scenes contact forces are
/// computed in the gather from both sides, with the owner's argument order,
/// so both ends see bitwise opposite forces and no per-pair scratch exists
/// (memory per particle is what limits their size). Scenes without bonds
/// compute each pair's force once into a per-pair slot (24 bytes a pair),
/// which the gather adds in the same fixed order.
/// No thread ever adds into another particle's slot, so F and tau are
/// bitwise identical for any number of threads, and nothing is allocated per
/// step once the neighbour list has reached its size.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bonds/bond_list.hpp"
#include "contact/contact_potential.hpp"
#include "contact/neighbour_search.hpp"
#include "engine/diagnostics.hpp"
#include "engine/particle_store.hpp"

namespace dem {

/// Particle-particle contact settings.
struct ContactSettings {
  double stiffness = 0.0;  ///< K^pp (energy), >= 0; 0 disables contact
  double skin = 0.0;       ///< Verlet skin of the neighbour list (length), >= 0
  /// Sort the particles along a Morton curve (and renumber the bonds) each
  /// time the neighbour list is rebuilt, so that neighbours stay close in
  /// memory. Particle slots then change during a run; ParticleStore::id
  /// keeps each particle's identity.
  bool reorder_on_rebuild = true;
};

class ForceField {
 public:
  /// Takes the bonds and walls of a scene. Throws std::invalid_argument if a
  /// bond refers to a particle outside `particles`, a contact setting is
  /// negative or not finite, or a wall normal is not a unit vector or a wall
  /// stiffness is negative.
  /// gravity: uniform acceleration g (length/time^2), finite, else
  /// std::invalid_argument; each particle feels m_i g.
  ForceField(const ParticleStore& particles, BondList bonds, ContactSettings contact,
             std::vector<Wall> walls, Vec3 gravity = Vec3::Zero());

  /// Writes F and tau at the current configuration into particles.force and
  /// particles.moment (overwriting them), updating the neighbour list first
  /// if needed (and, with contact().reorder_on_rebuild, re-ordering the
  /// particles and bonds just before that rebuild). Throws
  /// std::runtime_error if a position is not finite.
  void compute(ParticleStore& particles);

  /// Potential energies (bending, axial, shear, contact, wall, gravity) at the current
  /// configuration; deterministic block sums. The neighbour list must be
  /// current (compute() was called at this configuration).
  EnergyReport potential_energies(const ParticleStore& particles) const;

  const BondList& bonds() const { return bonds_; }
  const std::vector<Wall>& walls() const { return walls_; }
  const Vec3& gravity() const { return gravity_; }
  const ContactSettings& contact() const { return contact_; }
  const NeighbourSearch& neighbours() const { return search_; }

  /// Rebuilds the neighbour list from the positions of its last build in an
  /// earlier run (a checkpoint), before the first compute(), so that the
  /// continued run rebuilds and re-orders at the same steps. Throws
  /// std::invalid_argument if the sizes differ from the particle count.
  void restore_neighbour_list(const ParticleStore& particles, std::span<const Vec3> build_positions,
                              std::size_t rebuild_count);

 private:
  /// Rebuilds the compressed rows of bonds per particle from bonds_.
  void index_bonds(std::size_t particle_count);
  /// Morton order of the particles, bonds renumbered and sorted to match.
  void reorder(ParticleStore& particles);

  BondList bonds_;
  ContactSettings contact_;
  std::vector<Wall> walls_;
  Vec3 gravity_ = Vec3::Zero();
  NeighbourSearch search_;
  // Bonds of each particle (compressed rows): entry = 2 * bond + (0 if the
  // particle is the bond's first end, 1 if its second), ascending.
  std::vector<std::uint32_t> bond_offsets_;
  std::vector<std::uint32_t> bond_entries_;
  // Per-bond scratch, reused every step.
  std::vector<Vec3> bond_force_;   ///< force on the first end
  std::vector<Vec3> bond_moment_;  ///< moment on the first end
  std::vector<Vec3> pair_force_;   ///< per contact pair, scenes without bonds only
  bool identity_reference_ = false;  ///< every reference attitude is the identity
};

/// Kinetic energies and momenta of the particles (MODEL.md section 5), in
/// deterministic block sums; the potential fields are left zero. Particles
/// whose entry in `skip` is non-zero (clump members, whose motion their
/// clump carries) are left out; an empty `skip` leaves out none.
EnergyReport kinetic_energies_and_momenta(const ParticleStore& particles,
                                          std::span<const char> skip = {});

}  // namespace dem
