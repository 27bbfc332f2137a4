#pragma once
/// \file packing_report.hpp
/// What a packing source made (docs/model.md §21.4, docs/scene-format.md
/// "The packing report"): printed by dem check and dem run, written to
/// packing.json.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace dem {

/// The percent passing by mass at one sieve size, achieved and requested.
struct SievePassing {
  double size = 0.0;       ///< length
  double requested = 0.0;  ///< percent (the table's)
  double achieved = 0.0;   ///< percent, of the delivered specimen, binder fines counted as passing
};

struct PackingReport {
  std::uint64_t requested_count = 0;  ///< particles drawn (the count for the target solid fraction)
  std::uint64_t delivered_count = 0;  ///< particles delivered (after floater removal)
  std::optional<double> requested_solid_fraction;  ///< nullopt: "dense"
  double solid_fraction = 0.0;  ///< delivered sphere volume / region volume

  /// The interior region: the points at least interior_margin (2 largest
  /// diameters) from the confining faces (periodic faces do not count).
  double interior_margin = 0.0;  ///< length
  double interior_volume = 0.0;  ///< length^3; 0: the region has no such interior at least a largest diameter thick
  /// Sphere volume inside the interior region / its volume (NaN without an
  /// interior): spheres wholly inside count whole, those crossing its
  /// boundary by a 16^3-point quadrature of their bounding cube.
  double interior_solid_fraction = 0.0;

  std::uint64_t contacts = 0;  ///< particle pairs with overlap > 0 among the delivered
  double mean_coordination = 0.0;  ///< 2 contacts / delivered particles (particle-particle)
  /// The same over the non-rattlers: particles with fewer than 4 contacts
  /// (boundary contacts counting) stripped repeatedly.
  double mean_coordination_non_rattlers = 0.0;
  std::uint64_t rattlers = 0;

  std::uint64_t floaters_removed = 0;  ///< particles with fewer than 3 contacts removed
  double floater_fraction = 0.0;       ///< floaters_removed / requested_count
  std::uint64_t below_three = 0;       ///< delivered particles with fewer than 3 contacts (boundary counting)
  std::string floaters_note;           ///< why particles with fewer than 3 are left, if any

  Mat3 fabric = Mat3::Zero();     ///< <n ⊗ n> over the delivered contacts
  double fabric_anisotropy = 0.0;  ///< sqrt(3/2 F':F') (0: isotropic)

  double max_overlap_ratio = 0.0;  ///< largest overlap / smaller diameter left
  std::uint64_t sweeps = 0;        ///< FIRE steps of the genesis
  int relaxations = 0;             ///< its energy minimisations
  bool jammed = false;             ///< "dense": the delivered state is jammed
  double scale = 1.0;              ///< delivered / drawn diameters
  /// A tiled "dense" packing (scene/packing_tiling.hpp): the particles of
  /// its periodic tile (0: not tiled), the tile's edges (length) and the
  /// tiles along x, y, z.
  std::uint64_t tile_particles = 0;
  Vec3 tile_side = Vec3::Zero();
  std::array<std::uint32_t, 3> tiles{1, 1, 1};

  std::vector<SievePassing> sieve;  ///< a sieve table's sizes (empty for other distributions)
};

/// The report as lines for dem check and dem run, each starting "packing: ".
std::vector<std::string> report_lines(const PackingReport& r);

/// The report as one JSON object (docs/scene-format.md lists its fields;
/// NaN written as null).
std::string report_json(const PackingReport& r);

/// Appends r's lines to `notes` and its JSON to `json`: `json` empty: the
/// object; holding one object: an array of both; an array: one more
/// element (BuiltScene::packing_json).
void add_packing_report(const PackingReport& r, std::vector<std::string>& notes, std::string& json);

}  // namespace dem
