#include "engine/lgvi.hpp"

#include <cmath>
#include <Eigen/Eigenvalues>
#include <string>

#include "core/format.hpp"
#include "core/rotation.hpp"

namespace dem {

namespace {

/// The four scalar functions of |f| of section 4.4, with their series below
/// n = 1e-3 (errors below 1e-16 there).
struct Coefficients {
  double a, b, c, d;  // sin n/n, (1-cos n)/n^2, (n cos n - sin n)/n^3, (n sin n - 2(1-cos n))/n^4
};

Coefficients coefficients(double n) {
  if (n < 1e-3) {
    const double n2 = n * n;
    return {1.0 - n2 / 6.0, 0.5 - n2 / 24.0, -1.0 / 3.0 + n2 / 30.0, -1.0 / 12.0 + n2 / 180.0};
  }
  const double s = std::sin(n), co = std::cos(n), n2 = n * n;
  return {s / n, (1.0 - co) / n2, (n * co - s) / (n2 * n), (n * s - 2.0 * (1.0 - co)) / (n2 * n2)};
}

}  // namespace

void validate_inertia(const Mat3& j) {
  if (!j.allFinite() || (j - j.transpose()).norm() > 1e-12 * j.norm())
    throw std::invalid_argument("inertia tensor must be finite and symmetric");
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(j);
  const Vec3 m = eig.eigenvalues();  // ascending
  if (!(m[0] > 0.0))
    throw std::invalid_argument("inertia tensor must be positive definite; smallest principal moment " +
                                format_g(m[0]));
  if (m[2] > (m[0] + m[1]) * (1.0 + 1e-12))
    throw std::invalid_argument("inertia tensor is not that of a body: its largest principal moment " +
                                format_g(m[2]) + " exceeds the sum of the other two, " +
                                format_g(m[0] + m[1]));
}

Mat3 rotation_from_vector(const Vec3& f) {
  const Coefficients k = coefficients(f.norm());
  const Mat3 s = skew(f);
  return Mat3::Identity() + k.a * s + k.b * s * s;
}

Vec3 lgvi_residual_map(const Mat3& inertia, const Vec3& f) {
  const Coefficients k = coefficients(f.norm());
  const Vec3 jf = inertia * f;
  return k.a * jf + k.b * f.cross(jf);
}

Mat3 lgvi_rotation_increment(const Mat3& inertia, const Vec3& g, int* iterations) {
  Vec3 f = inertia.ldlt().solve(g);
  const double tolerance = 1e-15 * (1.0 + g.norm());
  for (int it = 0; it <= 50; ++it) {
    const Coefficients k = coefficients(f.norm());
    const Vec3 jf = inertia * f;
    const Vec3 fxjf = f.cross(jf);
    const Vec3 residual = k.a * jf + k.b * fxjf - g;
    if (residual.norm() <= tolerance) {
      if (iterations != nullptr) *iterations = it;
      return rotation_from_vector(f);
    }
    const Mat3 jacobian = k.a * inertia + k.b * (skew(f) * inertia - skew(jf)) +
                          k.c * jf * f.transpose() + k.d * fxjf * f.transpose();
    const Vec3 step = jacobian.partialPivLu().solve(residual);
    f -= step;
    if (!f.allFinite()) break;
    // At round-off the residual may not fall below the tolerance for a stiff
    // J; a step at the last bits of f is convergence too.
    if (step.norm() <= 4e-16 * f.norm()) {
      if (iterations != nullptr) *iterations = it + 1;
      return rotation_from_vector(f);
    }
  }
  throw LgviSolveError("LGVI: Newton's method did not converge for |g| = " + format_g(g.norm()) +
                       "; the time step is probably too large for the spin");
}

LgviHalfStep lgvi_advance(RigidBody& body, double h) {
  LgviHalfStep half;
  body.position += h * body.velocity + (h * h / (2.0 * body.mass)) * body.force;
  half.half_kick = body.momentum + 0.5 * h * body.moment;
  half.increment = lgvi_rotation_increment(body.inertia, h * half.half_kick, &half.iterations);
  body.attitude = body.attitude * half.increment;
  body.velocity += (h / (2.0 * body.mass)) * body.force;
  return half;
}

void lgvi_complete(RigidBody& body, const LgviHalfStep& half, double h) {
  body.velocity += (h / (2.0 * body.mass)) * body.force;
  body.momentum = half.increment.transpose() * half.half_kick + 0.5 * h * body.moment;
}

int lgvi_step(std::vector<RigidBody>& bodies, const RigidForces& forces, double h) {
  int worst = 0;
  std::vector<LgviHalfStep> half(bodies.size());
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    half[b] = lgvi_advance(bodies[b], h);
    worst = std::max(worst, half[b].iterations);
  }
  forces(bodies);
  for (std::size_t b = 0; b < bodies.size(); ++b) lgvi_complete(bodies[b], half[b], h);
  return worst;
}

double rotational_kinetic_energy(const RigidBody& b) {
  return 0.5 * b.momentum.dot(b.inertia.ldlt().solve(b.momentum));
}

Vec3 angular_momentum(const RigidBody& b) {
  return b.position.cross(b.mass * b.velocity) + b.attitude * b.momentum;
}

double rigid_kinetic_energy(const std::vector<RigidBody>& bodies) {
  double e = 0.0;
  for (const RigidBody& b : bodies) e += 0.5 * b.mass * b.velocity.squaredNorm() + rotational_kinetic_energy(b);
  return e;
}

Vec3 rigid_linear_momentum(const std::vector<RigidBody>& bodies) {
  Vec3 p = Vec3::Zero();
  for (const RigidBody& b : bodies) p += b.mass * b.velocity;
  return p;
}

Vec3 rigid_angular_momentum(const std::vector<RigidBody>& bodies) {
  Vec3 l = Vec3::Zero();
  for (const RigidBody& b : bodies) l += angular_momentum(b);
  return l;
}

double orthogonality_error(const Mat3& r) { return (Mat3::Identity() - r.transpose() * r).norm(); }

}  // namespace dem
