#pragma once
/// \file diagnostics.hpp
/// Energies and momenta of the whole system, docs/model.md §5.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/types.hpp"

namespace dem {

/// One row of the energy table. Energies in energy units, momenta in
/// mass length/time (P) and mass length^2/time (L, about the origin).
struct EnergyReport {
  double time = 0.0;             ///< t
  double kinetic_translation = 0.0;  ///< E_kin_trans = sum m |v|^2 / 2
  double kinetic_rotation = 0.0;     ///< E_kin_rot = sum J |Omega|^2 / 2
  double bending = 0.0;          ///< U_bend
  double axial = 0.0;            ///< U_axial
  double shear = 0.0;            ///< U_shear
  double contact = 0.0;          ///< U_contact (particle-particle)
  double wall = 0.0;             ///< U_wall
  double gravity = 0.0;          ///< U_gravity = -sum m g.x (zero without gravity)
  /// Potential energies of providers whose column is none of the above, by
  /// column name in the order first added (part of total()).
  std::vector<std::pair<std::string, double>> other;
  Vec3 linear_momentum = Vec3::Zero();   ///< P = sum m v
  Vec3 angular_momentum = Vec3::Zero();  ///< L = sum (x x m v + J Omega)

  // The dissipation ledger (docs/model.md §10.3 and §11.3): work taken
  // out of E_total since the run's start, each never negative in a
  // physical run, so that E_balance = E_total + W_fracture + W_contact +
  // W_filter stays at E_0 up to the integrator's error.
  double fracture_work = 0.0;  ///< W_fracture: potential energy released by failed bonds (10.3)
  double contact_work = 0.0;   ///< W_contact: work of the non-conservative contact forces (11.3)
  double filter_work = 0.0;    ///< W_filter: kinetic energy removed by the velocity filters: iBDEM's friction filter (11.1), viscous damping (11.10)
  /// W_boundary: work of the forces on kinematic particles (fixed and
  /// prescribed-velocity groups, engine/groups.hpp), the energy that leaves
  /// through them; 0 without such groups.
  double boundary_work = 0.0;
  std::uint64_t broken_bonds = 0;  ///< n_broken: failed bonds so far
  /// n_fragments: connected components of the live-bond graph (a particle
  /// without live bonds is one); the particle count when there are no bonds.
  std::uint64_t fragments = 0;
  /// S_field: the work the one-body fields (gravity, loads) do when every
  /// particle moves by its radius along them, sum_i (m_i |g| + |f_i|) r_i
  /// (energy; exact column "S_field", not part of E_total and not written to
  /// energy.csv). The floor of the run's energy scale (run/energy_check.hpp):
  /// it is independent of where the origin is and not zero while a field can
  /// move a particle at rest.
  double field_scale = 0.0;

  /// Exact sums behind the energy and momentum columns (core/exact_sum.hpp),
  /// by column name in the order first added: "U_*" potentials,
  /// "E_kin_trans", "E_kin_rot", "P_x" .. "P_z", "L_x" .. "L_z". Each such
  /// column holds its sum's value(), so that reports of parts of a system
  /// (an MPI rank's particles and records) merge() into the whole one with
  /// the same bits in whatever order or split.
  std::vector<std::pair<std::string, ExactSum>> exact;

  /// Adds an exact sum to its named column: "U_bend", "U_axial", "U_shear",
  /// "U_contact", "U_wall", "U_gravity", "E_kin_trans", "E_kin_rot",
  /// "P_x".."P_z", "L_x".."L_z", or any other name (a potential kept in
  /// `other`). Force providers report their energies through it.
  void add(std::string_view column, const ExactSum& value) {
    for (auto& [name, sum] : exact)
      if (name == column) {
        sum.merge(value);
        set_column(column, sum.value());
        return;
      }
    exact.emplace_back(std::string(column), value);
    set_column(column, exact.back().second.value());
  }
  /// Adds one term to its named column (as the exact sum of that one term).
  void add(std::string_view column, double value) { add(column, ExactSum(value)); }
  void add_momenta(const Vec3& p, const Vec3& l) {
    add("P_x", p.x());
    add("P_y", p.y());
    add("P_z", p.z());
    add("L_x", l.x());
    add("L_y", l.y());
    add("L_z", l.z());
  }
  /// Adds every exact column of `o` (a report of another part of the system).
  void merge(const EnergyReport& o) {
    for (const auto& [name, sum] : o.exact) add(name, sum);
  }

  double total() const {
    double t = kinetic_translation + kinetic_rotation + bending + axial + shear + contact + wall +
               gravity;
    for (const auto& [name, v] : other) t += v;
    return t;
  }

  /// Sets the double column named `column` (see add()).
  void set_column(std::string_view column, double value) {
    if (column == "U_bend") bending = value;
    else if (column == "U_axial") axial = value;
    else if (column == "U_shear") shear = value;
    else if (column == "U_contact") contact = value;
    else if (column == "U_wall") wall = value;
    else if (column == "U_gravity") gravity = value;
    else if (column == "S_field") field_scale = value;
    else if (column == "E_kin_trans") kinetic_translation = value;
    else if (column == "E_kin_rot") kinetic_rotation = value;
    else if (column == "P_x") linear_momentum.x() = value;
    else if (column == "P_y") linear_momentum.y() = value;
    else if (column == "P_z") linear_momentum.z() = value;
    else if (column == "L_x") angular_momentum.x() = value;
    else if (column == "L_y") angular_momentum.y() = value;
    else if (column == "L_z") angular_momentum.z() = value;
    else {
      for (auto& [name, v] : other)
        if (name == column) {
          v = value;
          return;
        }
      other.emplace_back(std::string(column), value);
    }
  }

  /// E_balance = E_total + W_fracture + W_contact + W_filter
  /// (docs/model.md §11.3) + W_boundary (zero without kinematic groups).
  double balance() const { return total() + fracture_work + contact_work + filter_work + boundary_work; }
};

/// The state of a run's energy check (run/energy_check.hpp), kept in its
/// checkpoints so that a restart checks exactly as the run would have.
struct EnergyCheckState {
  /// The reference below was taken; false: take it at the next start.
  bool measured = false;
  double initial_energy = 0.0;   ///< E_0: E_balance at the reference step (energy)
  double initial_gravity = 0.0;  ///< U_gravity at the reference step (energy)
  /// The energy scale so far: the largest energy in play at an energy row
  /// (run/energy_check.hpp), never below S_field; >= 0 (energy).
  double scale = 0.0;
  double highest = 0.0;  ///< largest E_balance at an energy row so far (energy)
  std::uint64_t reference_step = 0;  ///< the step of the reference
};

/// Default drift limits of a run (run/run_loop.hpp, docs/scene-format.md
/// [run] max_energy_drift and warn_energy_drift): |E_total - E_0| as a
/// fraction of the energy scale |E_0| + |U_gravity(0)| at which a run stops
/// (exit 2), and at which it warns once.
inline constexpr double kDefaultMaxEnergyDrift = 0.5;
inline constexpr double kDefaultWarnEnergyDrift = 0.05;
/// Default limit of an implicit run's energy rise (docs/scene-format.md [run]
/// implicit_energy_rise): E_balance above its largest earlier value by more
/// than this fraction of the energy scale stops the run (exit 2).
inline constexpr double kDefaultImplicitEnergyRise = 0.01;

}  // namespace dem
