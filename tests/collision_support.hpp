#pragma once
// A head-on collision of two spheres through the engine, shared by the
// restitution tests of the contact laws.

#include <cmath>
#include <memory>
#include <utility>

#include "core/force_provider.hpp"
#include "engine/force_field.hpp"
#include "engine/groups.hpp"
#include "engine/simulation.hpp"
#include "support.hpp"

namespace dem::testing {

/// What a head-on collision measured: the restitution (the relative
/// velocity along x after over the one before) and the contact time (from
/// the first step that overlaps to the first that does not; NaN if the
/// spheres never part).
struct HeadOn {
  double restitution = NAN, duration = NAN;
};

/// Sphere p0 (on the left) hits sphere p1 along x at the relative speed
/// `speed` (their velocities are given in the specs), with `contact` the
/// only force provider and map (25) at step h; with `fixed`, p1 is held by
/// a fixed group (of infinite mass).
inline HeadOn head_on(ParticleSpec p0, ParticleSpec p1, std::unique_ptr<ForceProvider> contact, double h,
                      double speed, bool fixed) {
  ParticleStore s;
  s.add(p0);
  s.add(p1);
  ForceField f;
  f.add(std::move(contact));
  Simulation sim(std::move(s), std::move(f), IntegratorMap::rrp25, h);
  if (fixed) sim.set_groups({fixed_group("anvil", {1})});
  const double reach = 0.5 * (p0.diameter + p1.diameter);
  double t0 = -1.0;
  for (int k = 0; k < 10000000; ++k) {
    sim.step();
    const ParticleStore& p = sim.particles();
    const double gap = (p.position[1] - p.position[0]).norm() - reach;
    if (gap < 0 && t0 < 0) t0 = sim.time();
    if (t0 >= 0 && gap > 0) return {(p.velocity[1].x() - p.velocity[0].x()) / speed, sim.time() - t0};
  }
  return {};
}

}  // namespace dem::testing
