#pragma once
/// \file packing_contacts.hpp
/// The contact network of a delivered packing (docs/model.md §21.4): the
/// pairs that overlap, the particles touching the region's boundary, the
/// iterative stripping of particles with too few contacts (rattlers,
/// floaters) and the fabric tensor.

#include <array>
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "scene/packing_geometry.hpp"

namespace dem {

struct PackingContacts {
  /// Pairs (i < j) in increasing (i, j) whose overlap
  /// (d_i + d_j)/2 - |x_i - x_j| (minimum image) is above -tolerance times
  /// the smaller diameter.
  std::vector<std::array<std::uint32_t, 2>> pairs;
  std::vector<Vec3> normals;          ///< unit, from j to i, one per pair
  /// Per particle: the confining surfaces it touches (Confinement::walls
  /// of radius (1/2 + tolerance) d_i; a box's faces, a cylinder's mantle and
  /// caps each count).
  std::vector<std::uint8_t> wall;
};

/// The contacts of particles of diameters d at centres x in c (the same
/// list on any thread count).
PackingContacts find_contacts(const Confinement& c, const std::vector<double>& d, const std::vector<Vec3>& x,
                              double tolerance);

/// Strips, repeatedly until none is left, every particle with fewer than
/// `min_contacts` contacts with particles not stripped (plus its boundary
/// contact where count_walls); returns 1 per particle kept. Deterministic:
/// the result is the unique largest set in which every particle has
/// `min_contacts` (the k-core), whatever the order.
std::vector<std::uint8_t> strip_below(const PackingContacts& k, std::size_t n, int min_contacts, bool count_walls);

/// The contacts per particle among the kept ones (plus the boundary's where
/// count_walls).
std::vector<std::uint32_t> contact_counts(const PackingContacts& k, const std::vector<std::uint8_t>& keep,
                                          bool count_walls);

/// The fabric tensor F = <n ⊗ n> over the pairs between kept particles
/// (trace 1; zero without contacts).
Mat3 fabric_tensor(const PackingContacts& k, const std::vector<std::uint8_t>& keep);

/// The fabric's anisotropy sqrt(3/2 F':F'), F' = F - I/3: 0 if isotropic,
/// |F_1 - F_2| for an axisymmetric F with principal values F_1, F_2, F_2.
double fabric_anisotropy(const Mat3& f);

}  // namespace dem
