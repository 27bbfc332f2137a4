#pragma once
/// \file rigid_rk4.hpp
/// The classical fourth-order Runge-Kutta method on the continuous rigid
/// body equations, for comparison with the LGVI (as in the paper's
/// Figure 6): x' = v, v' = F/m, R' = R S(Omega), Pi' = Pi x Omega + M,
/// Omega = J^-1 Pi, with the attitude as a 3x3 matrix and no projection
/// back onto SO(3), so that |I - R^T R| shows how far it drifts.

#include <vector>

#include "engine/lgvi.hpp"

namespace dem {

/// One RK4 step of size h (four force evaluations). Forces must be current
/// on entry; they are current again on return.
void rk4_step(std::vector<RigidBody>& bodies, const RigidForces& forces, double h);

}  // namespace dem
