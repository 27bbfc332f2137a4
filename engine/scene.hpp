#pragma once
/// \file scene.hpp
/// Everything a ForceField and a Simulation are built from: the particles,
/// the bonds, the contact settings, the walls and uniform gravity.

#include <vector>

#include "bonds/bond_list.hpp"
#include "contact/contact_potential.hpp"
#include "contact/contact_provider.hpp"
#include "core/particle_store.hpp"
#include "core/types.hpp"

namespace dem {

struct Scene {
  ParticleStore particles;
  BondList bonds;
  ContactSettings contact;
  std::vector<Wall> walls;
  /// Uniform gravitational acceleration g (length/time^2): force m_i g on
  /// every particle, potential U_gravity = -sum m_i g.x_i.
  Vec3 gravity = Vec3::Zero();
};

}  // namespace dem
