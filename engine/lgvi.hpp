#pragma once
/// \file lgvi.hpp
/// Rigid bodies of general inertia and the Lie group variational integrator
/// (LGVI) of Lee, Leok & McClamroch in inertial Hamiltonian form,
/// docs/model.md §8 (paper eqs. (92)-(96) and section 4.4).
///
/// A body has a mass m, a body-frame inertia tensor J (symmetric, positive
/// definite), an attitude R in SO(3) (body to inertial), a position x, a
/// velocity v and a body-frame angular momentum Pi = J Omega. One step:
///
///     x_{k+1}  = x_k + h v_k + h^2/(2m) F_k
///     solve    S(g) = F_k J_d - J_d F_k^T,  g = h (Pi_k + h/2 M_k), J_d = tr(J)/2 I - J
///     R_{k+1}  = R_k F_k
///     v_{k+1}  = v_k + h/(2m) (F_k + F_{k+1})
///     Pi_{k+1} = F_k^T (Pi_k + h/2 M_k) + h/2 M_{k+1}
///
/// with F the inertial force and M the body-frame moment.

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

#include "core/types.hpp"

namespace dem {

struct RigidBody {
  double mass = 1.0;              ///< m (mass), > 0
  Mat3 inertia = Mat3::Identity();  ///< J, body frame (mass length^2), symmetric positive definite
  Vec3 position = Vec3::Zero();   ///< x (length), centre of mass
  Vec3 velocity = Vec3::Zero();   ///< v (length/time)
  Mat3 attitude = Mat3::Identity();  ///< R, body to inertial frame
  Vec3 momentum = Vec3::Zero();   ///< Pi = J Omega, body-frame angular momentum
  Vec3 force = Vec3::Zero();      ///< F at the current configuration (inertial)
  Vec3 moment = Vec3::Zero();     ///< M at the current configuration (body frame)
};

/// Newton's method did not reach the tolerance.
class LgviSolveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws std::invalid_argument unless J is symmetric with positive
/// principal moments that satisfy the triangle inequality (each at most the
/// sum of the other two), i.e. J_d = tr(J)/2 I - J is positive semidefinite,
/// as for any physical body; the LGVI equation is then uniquely solvable for
/// small steps.
void validate_inertia(const Mat3& inertia);

/// G(f) = (sin|f|/|f|) J f + ((1 - cos|f|)/|f|^2) f x J f (series near 0).
Vec3 lgvi_residual_map(const Mat3& inertia, const Vec3& f);

/// Solves g = G(f) for f by Newton's method (Jacobian of section 4.4,
/// start f_0 = J^-1 g) to |G(f) - g| <= 1e-15 (1 + |g|), or until a Newton
/// step changes f only in its last bits, and returns
/// F = exp(S(f)). `iterations`, if given, receives the Newton iterations.
/// Throws LgviSolveError after 50 iterations.
Mat3 lgvi_rotation_increment(const Mat3& inertia, const Vec3& g, int* iterations = nullptr);

/// exp(S(f)) by Rodrigues' formula (series near 0).
Mat3 rotation_from_vector(const Vec3& f);

/// What the first part of an LGVI step keeps for the second.
struct LgviHalfStep {
  Vec3 half_kick = Vec3::Zero();       ///< Pi_k + h/2 M_k
  Mat3 increment = Mat3::Identity();  ///< F_k
  int iterations = 0;                  ///< Newton iterations
};

/// First part of a step, before the forces at the new configuration:
/// x, R and the first half kick of v. Throws LgviSolveError.
LgviHalfStep lgvi_advance(RigidBody& body, double h);

/// Second part, with body.force and body.moment at the new configuration:
/// the second half kicks of v and Pi.
void lgvi_complete(RigidBody& body, const LgviHalfStep& half, double h);

/// Forces and body-frame moments of every body at their current
/// configuration, written into each body's force and moment.
using RigidForces = std::function<void(std::vector<RigidBody>&)>;

/// One LGVI step of size h for all bodies (forces must be current; they are
/// current again on return). Returns the largest Newton iteration count.
int lgvi_step(std::vector<RigidBody>& bodies, const RigidForces& forces, double h);

/// Rotational kinetic energy Pi.J^-1 Pi/2 of one body.
double rotational_kinetic_energy(const RigidBody& body);
/// Angular momentum of one body about the origin: x x m v + R Pi.
Vec3 angular_momentum(const RigidBody& body);

/// Kinetic energy sum m|v|^2/2 + Pi.J^-1 Pi/2.
double rigid_kinetic_energy(const std::vector<RigidBody>& bodies);
/// Linear momentum sum m v.
Vec3 rigid_linear_momentum(const std::vector<RigidBody>& bodies);
/// Angular momentum about the origin: sum x x m v + R Pi.
Vec3 rigid_angular_momentum(const std::vector<RigidBody>& bodies);
/// |I - R^T R| (Frobenius norm).
double orthogonality_error(const Mat3& attitude);

}  // namespace dem
