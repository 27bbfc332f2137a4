#pragma once
/// \file bond_list.hpp
/// Binder bonds between particle pairs (docs/model.md §4), stored as a
/// structure of arrays indexed by bond. Stiffnesses are stored once per
/// distinct (K^m, K^a, K^s) triple (a bond "type", as in LAMMPS), so a scene
/// of one binder costs 4 bytes a bond for them.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "core/particle_store.hpp"
#include "core/types.hpp"

namespace dem {

/// Stiffnesses of one bond, all with units of energy.
struct BondStiffness {
  double bending = 0.0;  ///< K^m: U^m = K^m |theta_ij|^2 / 2
  double axial = 0.0;    ///< K^a: U^a = K^a (r/r0 - 1)^2 / 2
  double shear = 0.0;    ///< K^s: U^s = K^s (s_i^2 + s_j^2) / 4
};

class BondList {
 public:
  /// Bonds particles i and j (slots of `particles`) in their reference
  /// configuration: r0 = |x_i0 - x_j0|, d0 = (x_i0 - x_j0)/r0. Throws
  /// std::invalid_argument if i == j, an index is out of range, r0 is zero or
  /// a stiffness is negative or not finite. In a periodic cell, `image`
  /// is where j's image lies from j (H n, core/periodic_cell.hpp): the bond
  /// joins x_i0 to x_j0 + image (zero: to j itself).
  std::size_t add(const ParticleStore& particles, std::uint32_t i, std::uint32_t j,
                  const BondStiffness& stiffness, const Vec3& image = Vec3::Zero());

  std::size_t size() const { return first.size(); }
  bool empty() const { return first.empty(); }
  void reserve(std::size_t n);

  /// Stiffnesses of bond b.
  const BondStiffness& stiffness(std::size_t b) const { return stiffness_types[type[b]]; }

  /// Moves bond order[k] to slot k in every array (order is a permutation
  /// of 0..size()-1; throws std::invalid_argument if its size differs).
  void permute(std::span<const std::uint32_t> order);

  /// Refills the private index from stiffness triple to type from
  /// stiffness_types, after the public arrays were filled directly (e.g. by
  /// decode_checkpoint), so that later add() calls reuse the existing types.
  /// Throws std::invalid_argument if two entries of stiffness_types are equal.
  void rebuild_type_index();

  /// The one list of per-bond arrays, f(name, array), in checkpoint order;
  /// reserve(), permute() and the checkpoint follow it.
  template <class F>
  void for_each_field(F&& f) {
    visit_fields(*this, f);
  }
  template <class F>
  void for_each_field(F&& f) const {
    visit_fields(*this, f);
  }

  std::vector<std::uint32_t> first;   ///< particle i of each bond
  std::vector<std::uint32_t> second;  ///< particle j of each bond
  std::vector<double> rest_length;    ///< r0 (length)
  std::vector<Vec3> rest_direction;   ///< d0, unit vector from j to i in the reference state
  std::vector<std::uint32_t> type;    ///< index of each bond's stiffnesses in stiffness_types
  std::vector<BondStiffness> stiffness_types;  ///< the distinct stiffness triples

 private:
  template <class Self, class F>
  static void visit_fields(Self& s, F& f) {
    f("first", s.first);
    f("second", s.second);
    f("rest_length", s.rest_length);
    f("rest_direction", s.rest_direction);
    f("type", s.type);
  }

  std::map<std::array<double, 3>, std::uint32_t> type_of_;
};

}  // namespace dem
