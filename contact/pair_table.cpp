#include "contact/pair_table.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

namespace dem {

namespace {
constexpr std::size_t kRowBytes = 33;

void check_value(const std::optional<double>& v, bool fraction, const std::string& what) {
  if (!v) return;
  const bool ok = fraction ? (*v > 0.0 && *v <= 1.0) : (std::isfinite(*v) && *v >= 0.0);
  if (!ok) throw std::invalid_argument(what + (fraction ? " must be in (0, 1]" : " must be finite and >= 0"));
}
}  // namespace

void check_pair_table(const PairTable& table, std::size_t material_count, const std::string& law) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  for (std::size_t k = 0; k < table.size(); ++k) {
    const PairCoefficients& row = table[k];
    const std::string what = law + "pair " + std::to_string(k) + " (materials " + std::to_string(row.a) + ", " +
                             std::to_string(row.b) + "): ";
    if (row.a >= material_count || row.b >= material_count)
      throw std::invalid_argument(what + "a material index is not below " + std::to_string(material_count));
    if (!seen.insert(std::minmax(row.a, row.b)).second) throw std::invalid_argument(what + "the pair is given twice");
    check_value(row.restitution, true, what + "e");
    check_value(row.sliding_friction, false, what + "mu_s");
    check_value(row.rolling_friction, false, what + "mu_r");
  }
}

void save_pair_table(ByteWriter& w, const PairTable& table) {
  w.array(table, [](ByteWriter& ww, const PairCoefficients& row) {
    ww.u32(row.a);
    ww.u32(row.b);
    ww.u8(static_cast<std::uint8_t>((row.restitution ? 1 : 0) | (row.sliding_friction ? 2 : 0) |
                                    (row.rolling_friction ? 4 : 0)));
    ww.f64(row.restitution.value_or(0.0));
    ww.f64(row.sliding_friction.value_or(0.0));
    ww.f64(row.rolling_friction.value_or(0.0));
  });
}

PairTable load_pair_table(ByteReader& r) {
  PairTable table;
  r.array(table, kRowBytes, "contact pair", [](ByteReader& rr) {
    PairCoefficients row;
    row.a = rr.u32("contact pair material");
    row.b = rr.u32("contact pair material");
    const std::uint8_t given = rr.u8("contact pair flags");
    if (given > 7) throw StateError("inconsistent: contact pair flags " + std::to_string(given));
    const double e = rr.f64("contact pair e"), mu_s = rr.f64("contact pair mu_s"), mu_r = rr.f64("contact pair mu_r");
    if (given & 1) row.restitution = e;
    if (given & 2) row.sliding_friction = mu_s;
    if (given & 4) row.rolling_friction = mu_r;
    return row;
  });
  return table;
}

}  // namespace dem
