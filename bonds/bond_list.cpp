#include "bonds/bond_list.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dem {

std::size_t BondList::add(const ParticleStore& particles, std::uint32_t i, std::uint32_t j,
                          const BondStiffness& stiffness) {
  const std::string name = "bond " + std::to_string(size()) + " (" + std::to_string(i) + ", " +
                           std::to_string(j) + ")";
  if (i == j) throw std::invalid_argument(name + ": a particle cannot be bonded to itself");
  if (i >= particles.size() || j >= particles.size())
    throw std::invalid_argument(name + ": particle index out of range (" +
                                std::to_string(particles.size()) + " particles)");
  for (const auto& [k, what] : {std::pair{stiffness.bending, "bending stiffness K^m"},
                                std::pair{stiffness.axial, "axial stiffness K^a"},
                                std::pair{stiffness.shear, "shear stiffness K^s"}})
    if (!(std::isfinite(k) && k >= 0.0))
      throw std::invalid_argument(name + ": " + what + " must be finite and >= 0, got " +
                                  std::to_string(k));
  const Vec3 delta = particles.reference_position[i] - particles.reference_position[j];
  const double r0 = delta.norm();
  if (!(r0 > 0.0))
    throw std::invalid_argument(name + ": the two particles share a reference position");
  first.push_back(i);
  second.push_back(j);
  rest_length.push_back(r0);
  rest_direction.push_back(delta / r0);
  k_bending.push_back(stiffness.bending);
  k_axial.push_back(stiffness.axial);
  k_shear.push_back(stiffness.shear);
  return size() - 1;
}

}  // namespace dem
