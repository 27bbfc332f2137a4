#pragma once
/// \file particle_store.hpp
/// Structure-of-arrays store of rigid spherical particles (docs/model.md §1).
///
/// Every per-particle quantity is a contiguous array indexed by the particle's
/// slot 0..size()-1, so hot loops stream through what they read. The original
/// creation index of each particle is kept in `id` (output keeps it when slots
/// are reordered).
///
/// Units are those of the scene (the ring torus is dimensionless, the solid
/// torus SI).

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/types.hpp"

namespace dem {

/// Initial state of one particle, for ParticleStore::add().
struct ParticleSpec {
  Vec3 position = Vec3::Zero();          ///< centre x (length)
  Vec3 velocity = Vec3::Zero();          ///< v (length/time)
  Quat attitude = Quat::Identity();      ///< R, body to inertial frame
  Vec3 angular_velocity = Vec3::Zero();  ///< spatial Omega (1/time)
  double mass = 1.0;                     ///< m (mass), > 0
  double inertia = 1.0;                  ///< scalar J (mass length^2), > 0
  double diameter = 1.0;                 ///< D (length), > 0
  std::uint32_t material = 0;            ///< index into the scene's material list
};

class ParticleStore {
 public:
  /// Appends a particle; its reference (stress-free) configuration is its
  /// initial position and attitude. Throws std::invalid_argument naming the
  /// particle and the value if mass, inertia or diameter is not a finite
  /// positive number, or any vector is not finite.
  std::size_t add(const ParticleSpec& spec);

  /// Appends every particle of `other` (state and reference configuration
  /// as they are); their ids become size(), size()+1, ... in order.
  void append(const ParticleStore& other);

  std::size_t size() const { return position.size(); }
  void reserve(std::size_t n);

  /// The one list of per-particle arrays: calls f(name, array) for each, in
  /// a fixed order (the checkpoint's). add(), append(), reserve(), the
  /// re-ordering of engine/reorder.hpp and the checkpoint's particle section
  /// all follow it, so a new per-particle field is one line here (plus its
  /// member and, if it is not zero at creation, its value in add()).
  template <class F>
  void for_each_field(F&& f) {
    visit_fields(*this, f);
  }
  template <class F>
  void for_each_field(F&& f) const {
    visit_fields(*this, f);
  }

  // Dynamic state, one entry per particle.
  std::vector<Vec3> position;          ///< x_i (length)
  std::vector<Vec3> velocity;          ///< v_i (length/time)
  std::vector<Quat> attitude;          ///< R_i as a unit quaternion
  std::vector<Vec3> angular_velocity;  ///< spatial Omega_i (1/time)
  std::vector<Vec3> force;             ///< F_i at the current configuration (force)
  std::vector<Vec3> moment;            ///< spatial moment tau_i (force length)

  // Constant properties.
  std::vector<double> mass;     ///< m_i (mass)
  std::vector<double> inertia;  ///< J_i (mass length^2)
  std::vector<double> radius;   ///< r_i = D_i/2 (length)

  // Reference (stress-free) configuration of the bonds.
  std::vector<Vec3> reference_position;  ///< x_i0 (length)
  std::vector<Quat> reference_attitude;  ///< R_i0

  std::vector<std::uint32_t> id;  ///< creation index of the particle in each slot
  /// Index of each particle's material in the scene's material list
  /// ([[material]], docs/scene-format.md); 0 in scenes with one material.
  std::vector<std::uint32_t> material;

  /// Per slot, 1 for a ghost: a copy of a particle that another MPI rank
  /// owns (mpi/domain.hpp), kept for the interactions of this rank's own
  /// particles. Empty (the default, and always without MPI): no ghosts.
  /// Not one of the fields above: ghosts are never written to a checkpoint
  /// or output; permute_particles() carries it along.
  std::vector<std::uint8_t> ghost;
  /// Per slot, with ghost: the particle's place in the order of the whole
  /// system (its slot there, or its Morton code since the last re-ordering;
  /// ties by id), so that MPI ranks can put their particles together in the
  /// undivided run's order. Empty without a decomposition; carried along
  /// like ghost.
  std::vector<std::uint64_t> order_key;
  /// Per slot, 1 for a kinematic particle: a member of a fixed or velocity
  /// group (engine/groups.hpp), which moves as prescribed whatever the
  /// forces, so that the contact laws take it as a body of infinite mass
  /// (effective_mass below, docs/model.md §11.2). Empty (the default): none.
  /// Not one of the fields above: the Simulation sets it from its groups
  /// (again after every re-ordering), so it is never in a checkpoint;
  /// permute_particles() carries it along.
  std::vector<std::uint8_t> kinematic;
  /// Set on a part of a decomposed system (engine/partition.hpp), also on
  /// one that holds no particle (more MPI ranks than particles), whose
  /// empty `ghost` would otherwise read as an undivided system.
  bool decomposed = false;
  /// A part of a decomposed system (decomposed, or any ghosts).
  bool is_part() const { return decomposed || !ghost.empty(); }

  /// True if this process owns the particle in slot i (its energy, momentum
  /// and one-body terms are booked here).
  bool owns(std::size_t i) const { return ghost.empty() || ghost[i] == 0; }
  /// True if this process books the record joining slots i and j (its
  /// energy, its failure): it owns the end with the lower id, so that each
  /// record is booked on exactly one rank.
  bool books(std::size_t i, std::size_t j) const {
    if (ghost.empty()) return true;
    return ghost[id[i] < id[j] ? i : j] == 0;
  }
  /// True if the particle in slot i is kinematic (see `kinematic`).
  bool is_kinematic(std::size_t i) const { return !kinematic.empty() && kinematic[i] != 0; }

 private:
  template <class Self, class F>
  static void visit_fields(Self& s, F& f) {
    f("position", s.position);
    f("velocity", s.velocity);
    f("attitude", s.attitude);
    f("angular_velocity", s.angular_velocity);
    f("force", s.force);
    f("moment", s.moment);
    f("mass", s.mass);
    f("inertia", s.inertia);
    f("radius", s.radius);
    f("reference_position", s.reference_position);
    f("reference_attitude", s.reference_attitude);
    f("id", s.id);
    f("material", s.material);
  }
};

/// The effective mass m* of a contact between slots i and j (mass,
/// docs/model.md §11.2): m_i m_j/(m_i + m_j), or the mass of the free one
/// where the other is kinematic (of infinite mass, as a wall; LAMMPS's
/// granular pairs do the same for a frozen particle). Two kinematic
/// particles keep m_i m_j/(m_i + m_j): neither responds to the force.
/// Symmetric in i and j.
inline double effective_mass(const ParticleStore& s, std::size_t i, std::size_t j) {
  const bool fixed_i = s.is_kinematic(i), fixed_j = s.is_kinematic(j);
  if (fixed_j && !fixed_i) return s.mass[i];
  if (fixed_i && !fixed_j) return s.mass[j];
  return s.mass[i] * s.mass[j] / (s.mass[i] + s.mass[j]);
}

/// The value a new entry of a field of type T starts with: zero vectors,
/// identity attitudes, zero numbers.
template <class T>
T zero_value() {
  if constexpr (std::is_same_v<T, Vec3>) return Vec3::Zero();
  else if constexpr (std::is_same_v<T, Quat>) return Quat::Identity();
  else return T{};
}

}  // namespace dem
