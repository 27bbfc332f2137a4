#pragma once
/// \file integrator.hpp
/// Explicit variational integrators in rescaled Rodrigues parameters,
/// docs/model.md §3 (Baker & Gonzalez 2021, maps (23), (25) and (27)).
///
/// One time step of size h is split around the single force evaluation:
///
///     advance_configuration(store, map, h);   // x_k, R_k -> x_{k+1}, R_{k+1}
///     (caller computes F_{k+1}, tau_{k+1} into store.force / store.moment)
///     complete_step(store, map, h);           // v, Omega -> v_{k+1}, Omega_{k+1}
///
/// On entry to advance_configuration the store holds F_k and tau_k at x_k, R_k
/// (kept from the previous step). For maps (23) and (25) the first call also
/// applies the half kick v + h/(2m) F_k, Omega + h/(2J) tau_k (so that
/// x_{k+1} = x_k + h v_k + h^2/(2m) F_k and w_k = Omega_k + h/(2J) tau_k), and
/// complete_step applies the second half kick with F_{k+1}. For map (27) the
/// first call applies the whole kick, then the drift with the new velocities,
/// and complete_step does nothing.

#include <cstddef>
#include <stdexcept>
#include <string>

#include "contact/neighbour_search.hpp"
#include "core/particle_store.hpp"

namespace dem {

enum class IntegratorMap {
  rrp23,  ///< map (23): explicit, second order, closed-form increment (needs h|w| < 1)
  rrp25,  ///< map (25): explicit, second order, Newmark / velocity-Verlet form
  rrp27,  ///< map (27): first order, symplectic Euler form
  /// docs/model.md §12: iBDEM's implicit integrator, backward Euler by
  /// Newton's method on the manifold of positions and rotations
  /// (engine/implicit_step.hpp); the stepper runs it, not the two functions
  /// below.
  implicit,
};

/// Parses "23", "25", "27" or "implicit"; throws std::invalid_argument
/// otherwise.
IntegratorMap parse_integrator_map(const std::string& name);
/// "23", "25", "27" or "implicit".
std::string integrator_map_name(IntegratorMap map);

/// Thrown by map (23) when h |w_k| >= 1 for some particle (the incremental
/// rotation would reach 90 degrees). The store is then partly advanced.
class StabilityError : public std::runtime_error {
 public:
  StabilityError(std::size_t particle, double largest_stable_step, double step);
  std::size_t particle;        ///< slot of the first particle that failed
  double largest_stable_step;  ///< largest h with h |Omega + h tau/(2J)| < 1 for it
};

/// First part of a step; see the file comment. Throws StabilityError (map 23)
/// naming the lowest failing slot.
/// With `drift`, the same pass fills the neighbour list's rebuild-test
/// blocks (contact/neighbour_search.hpp, DriftSink) at the new positions.
/// moments = false: every moment is known to be zero
/// (ForceField::gives_moments), and the angular velocities are not kicked
/// (adding a zero kick would leave them as they are, except that it turns a
/// -0.0 component into +0.0).
void advance_configuration(ParticleStore& store, IntegratorMap map, double h, const DriftSink* drift = nullptr,
                           bool moments = true);

/// Second half kick with the forces at the new configuration (maps 23, 25).
void complete_step(ParticleStore& store, IntegratorMap map, double h);

/// complete_step of maps (23) and (25) on particles [begin, end) only: the
/// stepper runs it inside the gather, range by range, while the forces are
/// in cache (the same arithmetic per particle, so the same bits).
void complete_step_range(ParticleStore& store, double h, std::size_t begin, std::size_t end, bool moments = true);

/// Largest h' with h' |Omega + h' tau/(2J)| < 1 (map 23's condition), found by
/// bisection on [0, h_hint] (or beyond it if the condition holds there).
double largest_stable_step_rrp23(const Vec3& omega, const Vec3& moment, double inertia,
                                 double h_hint);

}  // namespace dem
