#pragma once
/// \file groups.hpp
/// Particle groups of a scene ([[group]], docs/scene-format.md): particles
/// held fixed or moved at a prescribed velocity (a clamp, a support, a
/// punch), and the constant external loads and reaction forces that a
/// bending test reports.
///
/// A fixed or velocity group is kinematic: its particles move at the
/// prescribed velocity with Omega = 0 whatever the forces on them; the
/// stepper (engine/simulation.hpp) sets v and Omega at every kick and books
/// the work the rest of the system does on them in W_boundary, so that
/// E_balance still closes. A group's force (total, split equally among its
/// members) is a constant external load: fields/load_provider.hpp, with its
/// potential U_load in E_total.

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace dem {

struct ParticleGroup {
  std::string name;
  enum class Motion { free, fixed, velocity } motion = Motion::free;
  Vec3 velocity = Vec3::Zero();    ///< prescribed velocity (Motion::velocity), length/time
  Vec3 force = Vec3::Zero();       ///< constant total external force, split equally (force)
  std::vector<std::uint32_t> ids;  ///< member particle ids, ascending
};

/// What groups.csv reports for one group at one time.
struct GroupReport {
  std::string name;
  Vec3 force = Vec3::Zero();         ///< sum of the members' F: the reaction on the group (force)
  Vec3 moment = Vec3::Zero();        ///< sum of (x - c) x F + tau about the centroid c (force length)
  Vec3 centroid = Vec3::Zero();      ///< c: mean member centre (length)
  Vec3 displacement = Vec3::Zero();  ///< c - c_0, c_0 from the reference positions (length)
};

}  // namespace dem
