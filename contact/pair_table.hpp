#pragma once
/// \file pair_table.hpp
/// Per-pair coefficients of the contact laws with materials (docs/model.md
/// §11.2): the scene's `[[interaction]]` tables. By default the pair of two
/// different materials takes the geometric mean sqrt(a b) of their
/// restitutions e and friction coefficients mu_s, mu_r (LAMMPS `pair
/// granular`'s mixing); a row of the table gives one unordered pair of
/// materials its own values instead (as LIGGGHTS's per-type-pair matrices
/// `coefficientRestitution` and `coefficientFriction` do). A row may also
/// name a material with itself. E* and G* always come from the two
/// materials' E and nu. The laws (hertz_mindlin.hpp,
/// linear_spring_dashpot.hpp, adhesive_contact.hpp) check a table against
/// their materials, apply it to their pair constants and keep it in their
/// checkpoint sections.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/byte_stream.hpp"

namespace dem {

/// One row: the coefficients of the unordered pair of materials (a, b)
/// that replace the mixed ones; an absent value keeps the mixing rule.
struct PairCoefficients {
  std::uint32_t a = 0, b = 0;               ///< material indices (ParticleStore::material)
  std::optional<double> restitution;        ///< e in (0, 1]
  std::optional<double> sliding_friction;   ///< mu_s >= 0, finite
  std::optional<double> rolling_friction;   ///< mu_r >= 0, finite
};

/// The rows of a law, in the scene's order.
using PairTable = std::vector<PairCoefficients>;

/// Throws std::invalid_argument, prefixed with `law` ("Hertz-Mindlin
/// contact: "), for a material index >= material_count, a pair given twice
/// (in either order), or a value out of the range above. O(n log n) in the
/// rows.
void check_pair_table(const PairTable& table, std::size_t material_count, const std::string& law);

/// Calls f(a, b) for the row's pair in both orders ((a, b) once where a == b):
/// the entries of a law's material-by-material matrix that the row sets.
template <class F>
void for_both_orders(const PairCoefficients& row, F&& f) {
  f(row.a, row.b);
  if (row.a != row.b) f(row.b, row.a);
}

/// u64 rows, each u32 a, u32 b, u8 given (bit 0 e, bit 1 mu_s, bit 2
/// mu_r), f64 e, f64 mu_s, f64 mu_r (0 where not given): 33 bytes a row.
void save_pair_table(ByteWriter& w, const PairTable& table);
/// The rows save_pair_table() wrote; throws StateError for a short input or
/// unknown bits (the law's constructor checks the values).
PairTable load_pair_table(ByteReader& r);

}  // namespace dem
