#include "scene/dumbbells.hpp"

namespace dem {

std::vector<RigidBody> paper_dumbbells() {
  std::vector<RigidBody> b(2);
  b[0].mass = 1.5;
  b[0].inertia = Vec3(0.0004, 0.0238, 0.0238).asDiagonal();
  b[0].position = Vec3(0.67, 0.0, 0.2);
  b[0].velocity = Vec3(0.0, 0.67, 0.0);
  b[0].momentum = b[0].inertia * Vec3(0.0, 0.0, 9.0);
  b[1].mass = 3.0;
  b[1].inertia = Vec3(0.0030, 0.1905, 0.1905).asDiagonal();
  b[1].position = Vec3(-0.33, 0.0, -0.1);
  b[1].velocity = Vec3(0.0, -0.33, 0.0);
  return b;
}

namespace {

/// Inertial positions of the two point masses of body i, and their body offsets.
void ends(const DumbbellPair& p, const RigidBody& b, int i, Vec3 y[2], Vec3 rho[2]) {
  rho[0] = Vec3(0.5 * p.length[i], 0.0, 0.0);
  rho[1] = -rho[0];
  for (int q = 0; q < 2; ++q) y[q] = b.position + b.attitude * rho[q];
}

}  // namespace

void dumbbell_forces(const DumbbellPair& p, std::vector<RigidBody>& bodies) {
  Vec3 y1[2], r1[2], y2[2], r2[2];
  ends(p, bodies[0], 0, y1, r1);
  ends(p, bodies[1], 1, y2, r2);
  const double k = 0.25 * p.g_m1_m2;
  Vec3 f1[2] = {Vec3::Zero(), Vec3::Zero()}, f2[2] = {Vec3::Zero(), Vec3::Zero()};
  for (int q = 0; q < 2; ++q)
    for (int s = 0; s < 2; ++s) {
      const Vec3 d = y1[q] - y2[s];
      const double r = d.norm();
      const Vec3 f = -k * d / (r * r * r);  // on y1[q], attractive
      f1[q] += f;
      f2[s] -= f;
    }
  bodies[0].force = f1[0] + f1[1];
  bodies[1].force = f2[0] + f2[1];
  bodies[0].moment = r1[0].cross(bodies[0].attitude.transpose() * f1[0]) +
                     r1[1].cross(bodies[0].attitude.transpose() * f1[1]);
  bodies[1].moment = r2[0].cross(bodies[1].attitude.transpose() * f2[0]) +
                     r2[1].cross(bodies[1].attitude.transpose() * f2[1]);
}

double dumbbell_potential(const DumbbellPair& p, const std::vector<RigidBody>& bodies) {
  Vec3 y1[2], r1[2], y2[2], r2[2];
  ends(p, bodies[0], 0, y1, r1);
  ends(p, bodies[1], 1, y2, r2);
  double u = 0.0;
  for (int q = 0; q < 2; ++q)
    for (int s = 0; s < 2; ++s) u -= 0.25 * p.g_m1_m2 / (y1[q] - y2[s]).norm();
  return u;
}

}  // namespace dem
