#include "bonds/bond_list.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dem {

namespace {
std::string bond_name(std::size_t b, std::uint32_t i, std::uint32_t j) {
  return "bond " + std::to_string(b) + " (" + std::to_string(i) + ", " + std::to_string(j) + ")";
}
}  // namespace

std::size_t BondList::add(const ParticleStore& particles, std::uint32_t i, std::uint32_t j,
                          const BondStiffness& stiffness, const Vec3& image) {
  if (i == j)
    throw std::invalid_argument(bond_name(size(), i, j) +
                                ": a particle cannot be bonded to itself");
  if (i >= particles.size() || j >= particles.size())
    throw std::invalid_argument(bond_name(size(), i, j) + ": particle index out of range (" +
                                std::to_string(particles.size()) + " particles)");
  for (const auto& [k, what] : {std::pair{stiffness.bending, "bending stiffness K^m"},
                                std::pair{stiffness.axial, "axial stiffness K^a"},
                                std::pair{stiffness.shear, "shear stiffness K^s"}})
    if (!(std::isfinite(k) && k >= 0.0))
      throw std::invalid_argument(bond_name(size(), i, j) + ": " + what +
                                  " must be finite and >= 0, got " + std::to_string(k));
  const Vec3& xj = particles.reference_position[j];
  const Vec3 delta = particles.reference_position[i] - ((image.array() == 0.0).all() ? xj : Vec3(xj + image));
  const double r0 = delta.norm();
  if (!(r0 > 0.0))
    throw std::invalid_argument(bond_name(size(), i, j) +
                                ": the two particles share a reference position");
  const std::array<double, 3> key{stiffness.bending, stiffness.axial, stiffness.shear};
  auto [it, inserted] = type_of_.try_emplace(key, static_cast<std::uint32_t>(stiffness_types.size()));
  if (inserted) stiffness_types.push_back(stiffness);
  first.push_back(i);
  second.push_back(j);
  rest_length.push_back(r0);
  rest_direction.push_back(delta / r0);
  type.push_back(it->second);
  return size() - 1;
}

void BondList::rebuild_type_index() {
  std::map<std::array<double, 3>, std::uint32_t> index;
  for (std::size_t t = 0; t < stiffness_types.size(); ++t) {
    const BondStiffness& k = stiffness_types[t];
    if (!index.try_emplace({k.bending, k.axial, k.shear}, static_cast<std::uint32_t>(t)).second)
      throw std::invalid_argument("bond stiffness type " + std::to_string(t) +
                                  " repeats an earlier type");
  }
  type_of_.swap(index);
}

void BondList::reserve(std::size_t n) {
  for_each_field([n](const char*, auto& v) { v.reserve(n); });
}

namespace {
template <class T>
void apply(std::vector<T>& v, std::span<const std::uint32_t> order) {
  std::vector<T> out(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) out[k] = v[order[k]];
  v.swap(out);
}
}  // namespace

void BondList::permute(std::span<const std::uint32_t> order) {
  if (order.size() != size())
    throw std::invalid_argument("BondList::permute: the order has " +
                                std::to_string(order.size()) + " entries for " +
                                std::to_string(size()) + " bonds");
  for_each_field([&](const char*, auto& v) { apply(v, order); });
}

}  // namespace dem
