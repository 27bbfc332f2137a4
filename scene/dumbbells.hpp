#pragma once
/// \file dumbbells.hpp
/// The two-dumbbell full body problem of Lee, Leok & McClamroch section 5
/// (docs/model.md §8), normalized units: dumbbell i is two point masses
/// m_i/2 at +-l_i/2 on its body x axis; U = -sum_{p,q} (G m1 m2/4)/|y_1q - y_2p|.

#include <vector>

#include "engine/lgvi.hpp"

namespace dem {

struct DumbbellPair {
  double g_m1_m2 = 1.0;           ///< G m1 m2
  double length[2] = {0.25, 0.5};  ///< l_1, l_2
};

/// The paper's section 5.2 bodies and initial state (docs/model.md §8).
std::vector<RigidBody> paper_dumbbells();

/// Writes the gravitational force (inertial) and moment (body frame) on
/// both bodies.
void dumbbell_forces(const DumbbellPair& p, std::vector<RigidBody>& bodies);

/// U at the current configuration.
double dumbbell_potential(const DumbbellPair& p, const std::vector<RigidBody>& bodies);

}  // namespace dem
