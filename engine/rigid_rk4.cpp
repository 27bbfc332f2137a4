#include "engine/rigid_rk4.hpp"

#include "core/rotation.hpp"

namespace dem {

namespace {

struct Rate {
  Vec3 dx, dv, dpi;
  Mat3 dr;
};

/// Time derivatives of every body at its current state (forces current).
std::vector<Rate> rates(const std::vector<RigidBody>& bodies) {
  std::vector<Rate> out(bodies.size());
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    const RigidBody& s = bodies[b];
    const Vec3 omega = s.inertia.ldlt().solve(s.momentum);
    out[b] = {s.velocity, s.force / s.mass, s.momentum.cross(omega) + s.moment, s.attitude * skew(omega)};
  }
  return out;
}

/// base + c * rate, then forces at that state.
std::vector<RigidBody> advanced(const std::vector<RigidBody>& base, const std::vector<Rate>& k, double c,
                                const RigidForces& forces) {
  std::vector<RigidBody> s = base;
  for (std::size_t b = 0; b < s.size(); ++b) {
    s[b].position += c * k[b].dx;
    s[b].velocity += c * k[b].dv;
    s[b].momentum += c * k[b].dpi;
    s[b].attitude += c * k[b].dr;
  }
  forces(s);
  return s;
}

}  // namespace

void rk4_step(std::vector<RigidBody>& bodies, const RigidForces& forces, double h) {
  const std::vector<Rate> k1 = rates(bodies);
  const std::vector<Rate> k2 = rates(advanced(bodies, k1, 0.5 * h, forces));
  const std::vector<Rate> k3 = rates(advanced(bodies, k2, 0.5 * h, forces));
  const std::vector<Rate> k4 = rates(advanced(bodies, k3, h, forces));
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    RigidBody& s = bodies[b];
    const double w = h / 6.0;
    s.position += w * (k1[b].dx + 2.0 * k2[b].dx + 2.0 * k3[b].dx + k4[b].dx);
    s.velocity += w * (k1[b].dv + 2.0 * k2[b].dv + 2.0 * k3[b].dv + k4[b].dv);
    s.momentum += w * (k1[b].dpi + 2.0 * k2[b].dpi + 2.0 * k3[b].dpi + k4[b].dpi);
    s.attitude += w * (k1[b].dr + 2.0 * k2[b].dr + 2.0 * k3[b].dr + k4[b].dr);
  }
  forces(bodies);
}

}  // namespace dem
