#pragma once
/// \file packing_genesis.hpp
/// A random packing of spheres in a region (docs/model.md §21): diameters
/// drawn from the size distribution until their volume is the target solid
/// fraction of the region's, then placed at random at reduced radii and
/// grown to their drawn sizes with frictionless relaxation (the genesis).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/scene.hpp"
#include "scene/packing_spec.hpp"

namespace dem {

/// The diameters of the packing (length), in id order: sample_diameters of
/// the distribution with the packing's seed, their total volume the target
/// solid fraction times the region's volume. Throws std::invalid_argument
/// (naming `region`) for more than max_count particles.
std::vector<double> packing_diameters(const PackingParameters& p, std::uint64_t max_count);

/// The number of particles of the packing (packing_diameters' size).
std::uint64_t packing_count(const PackingParameters& p, std::uint64_t max_count);

/// The build's scratch memory (bytes) for a packing of n particles.
std::uint64_t packing_scratch_bytes(std::uint64_t n);

/// How the genesis grows and relaxes (docs/model.md §21.3).
struct GenesisSettings {
  double initial_scale = 0.5;     ///< radii at placement, as a fraction of the drawn ones
  double growth = 1.04;           ///< radius factor per stage
  double stage_tolerance = 1e-2;  ///< overlap / smaller diameter that ends a growth stage
  double final_tolerance = 5e-4;  ///< ... that ends the last stage (the delivered specimen)
  int stage_sweeps = 400;         ///< relaxation sweeps at most per growth stage
  int final_sweeps = 20000;       ///< ... in the last stage
  /// Heavy-ball momentum of the sweeps' moves (0: plain steepest descent);
  /// the moves restart from rest when the largest overlap grows.
  double momentum = 0.9;
};

/// The genesis' result: centres in id order and what it reached.
struct GenesisResult {
  std::vector<Vec3> centres;      ///< length, inside the region (wrapped into a periodic box)
  double max_overlap_ratio = 0.0;  ///< largest overlap / smaller diameter (and wall overlap / diameter)
  std::uint64_t sweeps = 0;        ///< relaxation sweeps in all
};

/// Places and relaxes particles of `diameters` in `p.region`; on the axes
/// where `periodic` is true the region must be a box and is a periodic cell
/// (minimum images; centres wrapped into [lower, upper)). The same bits for
/// any thread count (Jacobi sweeps: each particle's displacement a sum over
/// its neighbours in a fixed order). Throws std::invalid_argument if the
/// last stage does not bring the overlaps below final_tolerance (a target
/// above what the region can hold), or for a periodic axis of a region
/// other than a box or a box narrower than 3 largest diameters.
GenesisResult run_genesis(const PackingParameters& p, const std::vector<double>& diameters,
                          const std::array<bool, 3>& periodic, const GenesisSettings& settings = {});

/// The packing's particles (density `density`, mass/length^3), at rest, no
/// bonds, in the region with the periodic axes of `periodic` (see
/// run_genesis). If `report` is given, appends lines saying what was made:
/// the count, the solid fraction against the requested one, the largest
/// overlap left, and for a sieve table the percent passing by mass at each
/// sieve size against the table (binder fines counted as passing). Throws
/// std::invalid_argument for what it cannot make.
Scene make_packing(const PackingParameters& p, double density, const std::array<bool, 3>& periodic,
                   std::vector<std::string>* report = nullptr);

}  // namespace dem
