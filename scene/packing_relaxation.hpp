#pragma once
/// \file packing_relaxation.hpp
/// Minimisation of the frictionless harmonic overlap energy of a packing
/// (docs/model.md §21.3): U = Σ_pairs ½ δ_ij² + Σ_i ½ δ_i,wall², with
/// δ_ij = s (d_i + d_j)/2 - |x_i - x_j| > 0 (minimum images on periodic
/// axes) and δ_i,wall = s d_i/2 - depth(x_i) > 0, by FIRE (Bitzek et al.
/// 2006, with the FIRE 2.0 corrections of Guénolé et al. 2020) on unit
/// masses and a Verlet neighbour list. Each particle's force is a sum over
/// its neighbours in a fixed order and the global sums are taken in id
/// order, so the result is the same bits on any thread count.

#include <cstdint>
#include <vector>

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
  double mean_overlap = 0.0;       ///< mean overlap (length) of the overlapping pairs and walls
  double max_force = 0.0;          ///< largest net force (length: unit stiffness) at the end
  std::uint64_t steps = 0;         ///< FIRE steps taken
};

/// The minimiser of one packing: diameters `d` (drawn, length) in the
/// confinement `c` (both must outlive it).
class OverlapRelaxation {
 public:
  OverlapRelaxation(const Confinement& c, const std::vector<double>& d);

  /// Minimises the energy at radius scale s (radii s d_i / 2) from the
  /// centres x, which it moves (wrapped on periodic axes), until one of
  /// `limits` ends it.
  RelaxResult relax(std::vector<Vec3>& x, double s, const RelaxLimits& limits);

 private:
  void build_neighbours(const std::vector<Vec3>& x, double s);
  /// Forces into f_, per-particle overlap data; returns the state's summary.
  RelaxResult forces(const std::vector<Vec3>& x, double s);

  const Confinement& c_;
  const std::vector<double>& d_;
  double d_max_ = 0.0, skin_ = 0.0;
  // Verlet list (CSR): the neighbours of i are ids_[start_[i] .. start_[i+1]).
  std::vector<std::uint64_t> start_;
  std::vector<std::uint32_t> ids_;
  std::vector<Vec3> moved_;     ///< displacement since the build
  double built_scale_ = 0.0;
  std::vector<Vec3> f_, v_;
  std::vector<double> worst_, overlap_sum_;
  std::vector<std::uint32_t> overlap_count_;
};

}  // namespace dem
