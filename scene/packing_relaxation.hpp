#pragma once
/// \file packing_relaxation.hpp
/// Minimisation of the frictionless harmonic overlap energy of a packing
/// (docs/model.md §21.3): U = Σ_pairs ½ δ_ij² + Σ_i ½ δ_i,wall², with
/// δ_ij = s (d_i + d_j)/2 - |x_i - (x_j + H n_ij)| > 0 (the pair's image on
/// periodic axes) and δ_i,wall = s d_i/2 - depth(x_i) > 0, by FIRE (Bitzek
/// et al. 2006, with the FIRE 2.0 corrections of Guénolé et al. 2020) on
/// unit masses. The pairs are the engine's own: its Verlet neighbour list
/// (contact/neighbour_search.hpp, with its skin rule and periodic images)
/// and its harmonic penalty contact law of unit stiffness
/// (PenaltyContactLaw, docs/model.md §11.1), evaluated as the engine's force
/// loop does: each pair's force into its own slot in parallel, then
/// gathered per particle in a fixed order (the pairs a particle owns, then
/// those it is the partner of), the confining surfaces added last. The
/// global sums are taken in id order, so the result is the same bits on any
/// thread count.

#include <cstdint>
#include <vector>

#include "contact/contact_provider.hpp"
#include "contact/neighbour_search.hpp"
#include "core/periodic_cell.hpp"
#include "core/types.hpp"
#include "scene/packing_geometry.hpp"

namespace dem {

/// How a minimisation ended.
enum class RelaxOutcome {
  unjammed,   ///< every overlap below `zero_overlap` (the energy vanishes)
  jammed,     ///< the forces balanced (below `force_ratio` times the mean overlap) with overlaps left
  unfinished  ///< `max_steps` reached first
};

/// When a minimisation stops (ratios: overlap / smaller diameter).
struct RelaxLimits {
  double zero_overlap = 1e-9;  ///< largest overlap ratio counted as none
  double force_ratio = 1e-4;   ///< largest net force / mean overlap of a balanced state
  std::uint64_t max_steps = 100000;
};

struct RelaxResult {
  RelaxOutcome outcome = RelaxOutcome::unfinished;
  double max_overlap_ratio = 0.0;  ///< largest overlap ratio at the end (walls: / diameter)
  /// Mean overlap (length) of the overlapping pairs (each once) and walls.
  double mean_overlap = 0.0;
  double max_force = 0.0;          ///< largest net force (length: unit stiffness) at the end
  std::uint64_t steps = 0;         ///< FIRE steps taken
};

/// The minimiser of one packing: diameters `d` (drawn, length) in the
/// confinement `c` (both must outlive it).
class OverlapRelaxation {
 public:
  OverlapRelaxation(const Confinement& c, const std::vector<double>& d);

  /// Minimises the energy at radius scale s (radii s d_i / 2) from the
  /// centres x, which it moves, until one of `limits` ends it; x is
  /// returned wrapped into the cell on periodic axes. Throws
  /// std::invalid_argument when a periodic axis is narrower than two
  /// largest scaled diameters (the neighbour list's one-image condition).
  RelaxResult relax(std::vector<Vec3>& x, double s, const RelaxLimits& limits);

 private:
  /// Wraps x into the cell and rebuilds the neighbour list there.
  void rebuild(std::vector<Vec3>& x);
  /// Forces into f_, per-particle overlap data; returns the state's summary.
  RelaxResult forces(const std::vector<Vec3>& x, double s);
  /// The pair slots: force on each pair's first end, and its overlap.
  void pair_forces(const std::vector<Vec3>& x);

  const Confinement& c_;
  const std::vector<double>& d_;
  PeriodicCell cell_;
  PenaltyContactLaw law_;  ///< unit stiffness: forces and energies in units of length
  NeighbourSearch search_{0.0};
  double d_max_ = 0.0, skin_ratio_ = 0.0;
  std::vector<double> radii_;
  std::vector<Vec3> pair_force_;
  std::vector<double> pair_overlap_;
  std::vector<Vec3> f_, v_;
  std::vector<double> worst_, overlap_sum_;
  std::vector<std::uint32_t> overlap_count_;
};

}  // namespace dem
