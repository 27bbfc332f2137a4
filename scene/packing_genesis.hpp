#pragma once
/// \file packing_genesis.hpp
/// A random packing of spheres in a region (docs/model.md §21): diameters
/// drawn from the size distribution until their volume is the target solid
/// fraction of the region's (for "dense": 0.64), placed at random and
/// relaxed by minimising the frictionless overlap energy; "dense" grows or
/// shrinks the radii to the jamming point (the genesis).

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/scene.hpp"
#include "scene/packing_report.hpp"
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

/// How the genesis relaxes and finds the jamming point (docs/model.md §21.3).
/// Receives a line of progress after each relaxation of a "dense" genesis.
using GenesisProgress = std::function<void(const std::string&)>;

struct GenesisSettings {
  /// A numeric solid_fraction: the largest overlap / smaller diameter the
  /// relaxation may leave (else the target is refused).
  double tolerance = 1e-4;
  /// "dense": the solid fraction the centres are placed at (below jamming).
  double start_fraction = 0.58;
  /// "dense": the solid fraction first compressed to, above jamming for
  /// the usual size distributions; if it is not jammed there, the radii
  /// grow by `growth` until it is.
  double compress_fraction = 0.70;
  double growth = 0.03;
  /// "dense": the delivered state's mean overlap (of the contacts and the
  /// walls) over the mean drawn diameter times the scale: the small
  /// isotropic stress it is delivered at, reached within a relative
  /// `overlap_tolerance` by decompression.
  double target_overlap = 3e-5;
  double overlap_tolerance = 0.3;
  /// "dense": the decompression stops (delivering its jammed end) when
  /// its bracket of the scale [unjammed, jammed] is narrower than this,
  /// relative.
  double bracket = 1e-6;
  /// FIRE steps at most per relaxation.
  std::uint64_t max_steps = 200000;
  GenesisProgress progress;  ///< if set, a line after each "dense" relaxation
};

/// The genesis' result: centres in id order and what it reached.
struct GenesisResult {
  std::vector<Vec3> centres;  ///< length, inside the region (wrapped into a periodic box)
  /// The radius scale of the delivered specimen: its diameters are scale
  /// times the drawn ones (1 for a numeric solid_fraction; "dense": where
  /// the decompression reached the target overlap).
  double scale = 1.0;
  bool jammed = false;            ///< "dense": the delivered state is jammed (forces balanced with overlaps)
  double max_overlap_ratio = 0.0;  ///< largest overlap / smaller diameter (and wall overlap / diameter)
  std::uint64_t sweeps = 0;        ///< FIRE steps in all
  int relaxations = 0;             ///< energy minimisations in all
};

/// Places and relaxes particles of `diameters` in `p.region`; on the axes
/// where `periodic` is true the region must be a box and is a periodic cell
/// (minimum images; centres wrapped into [lower, upper)). A numeric
/// solid_fraction: random centres at the drawn sizes, relaxed until no
/// overlap is above settings.tolerance. "dense" (docs/model.md §21.3): from
/// random centres at start_fraction, compressed to compress_fraction (and
/// on, by `growth`, until jammed), then decompressed, each relaxation from
/// the last jammed state, by a secant on the mean overlap against the
/// radius scale, to the small isotropic stress of `target_overlap`; the
/// jammed state there is delivered. The same bits for any thread count.
/// Throws std::invalid_argument if a numeric target leaves overlaps
/// (jammed: the region cannot hold it), or for a periodic axis of a region
/// other than a box or a box narrower than 3 largest diameters.
GenesisResult run_genesis(const PackingParameters& p, const std::vector<double>& diameters,
                          const std::array<bool, 3>& periodic, const GenesisSettings& settings = {});

/// The packing's particles (density `density`, mass/length^3), at rest, no
/// bonds, in the region with the periodic axes of `periodic` (see
/// run_genesis), diameters the drawn ones times the genesis' scale. For
/// "dense" with confining faces (a region other than a box periodic on all
/// three axes), the floaters, particles with fewer than 3 contacts (overlap
/// > 0; the boundary's counting), are removed repeatedly (the k-core of
/// the contact graph); ids stay in drawn order. If `report` is given, fills
/// it (docs/model.md §21.4). Throws std::invalid_argument for what it
/// cannot make.
Scene make_packing(const PackingParameters& p, double density, const std::array<bool, 3>& periodic,
                   PackingReport* report = nullptr, const GenesisProgress& progress = {});

}  // namespace dem
