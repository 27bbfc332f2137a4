#include "contact/friction_wall_provider.hpp"

#include <algorithm>
#include <utility>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/parallel.hpp"

namespace dem {

FrictionWallProvider::FrictionWallProvider(std::vector<Wall> walls, HertzMindlinLaw law, std::size_t n)
    : walls_(std::move(walls)), law_(std::move(law)) {
  for (std::size_t w = 0; w < walls_.size(); ++w) {
    if (!walls_[w].point.allFinite()) throw std::invalid_argument("wall " + std::to_string(w) + ": point is not finite");
    if (!(std::abs(walls_[w].normal.norm() - 1.0) < 1e-12))
      throw std::invalid_argument("wall " + std::to_string(w) + ": normal must be a unit vector");
  }
  state_.assign(n * walls_.size(), HertzMindlinLaw::State{});
  force_.assign(n, Vec3::Zero());
  nc_force_.assign(n, Vec3::Zero());
  moment_.assign(n, Vec3::Zero());
}

void FrictionWallProvider::renumber(std::span<const std::uint32_t> new_slot) {
  const std::size_t walls = walls_.size();
  std::vector<HertzMindlinLaw::State> state(state_.size());
  std::vector<Vec3> f(force_.size()), nc(force_.size()), m(force_.size());
  for (std::size_t s = 0; s < new_slot.size(); ++s) {
    const std::size_t t = new_slot[s];
    for (std::size_t w = 0; w < walls; ++w) state[t * walls + w] = state_[s * walls + w];
    f[t] = force_[s];
    nc[t] = nc_force_[s];
    m[t] = moment_[s];
  }
  state_.swap(state);
  force_.swap(f);
  nc_force_.swap(nc);
  moment_.swap(m);
}

void FrictionWallProvider::evaluate(const ParticleStore& s) {
  if (skip_evaluate_) {
    skip_evaluate_ = false;
    return;
  }
  const std::size_t walls = walls_.size();
  parallel_for_ranges(s.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      Vec3 f = Vec3::Zero(), nc = Vec3::Zero(), m = Vec3::Zero();
      for (std::size_t w = 0; w < walls; ++w) {
        PairOutput out;
        law_.evaluate_wall(s, static_cast<std::uint32_t>(i), walls_[w].point, walls_[w].normal, state_[i * walls + w],
                           out);
        f += out.force;
        nc += out.nc_force;
        m += out.moment_i;
      }
      force_[i] = f;
      nc_force_[i] = nc;
      moment_[i] = m;
    }
  });
}

void FrictionWallProvider::add_body_forces(const ParticleStore&, std::size_t begin, std::size_t end,
                                           std::span<Vec3> force, std::span<Vec3> moment) const {
  for (std::size_t i = begin; i < end; ++i) {
    force[i] += force_[i];
    moment[i] += moment_[i];
  }
}

void FrictionWallProvider::add_potential_energies(const ParticleStore& s, EnergyReport& r) const {
  r.add("U_wall", exact_sum(s.size(), [&](std::size_t i) {
          double u = 0.0;
          if (!s.owns(i)) return u;
          for (const Wall& w : walls_) u += law_.wall_energy(s, static_cast<std::uint32_t>(i), w.point, w.normal);
          return u;
        }));
}

ExactSum FrictionWallProvider::nonconservative_power(const ParticleStore& s, std::span<const Vec3> u,
                                                     std::span<const Vec3> w) const {
  return exact_sum(s.size(), [&](std::size_t i) {
    return s.owns(i) ? nc_force_[i].dot(u[i]) + moment_[i].dot(w[i]) : 0.0;
  });
}

void FrictionWallProvider::pack_history(const ParticleStore& s, ByteWriter& w) const {
  const std::size_t walls = walls_.size();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s.owns(i)) continue;
    w.u32(s.id[i]);
    for (std::size_t k = 0; k < walls; ++k) HertzMindlinLaw::save_state(w, state_[i * walls + k]);
    w.vec3(force_[i]);
    w.vec3(nc_force_[i]);
    w.vec3(moment_[i]);
  }
}

std::unique_ptr<ForceProvider> FrictionWallProvider::make_part(const ParticleStore& part, const PartMap& map) const {
  auto p = std::make_unique<FrictionWallProvider>(walls_, law_, part.size());
  if (map.history.empty()) return p;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id(part.size());
  for (std::size_t i = 0; i < part.size(); ++i) by_id[i] = {part.id[i], static_cast<std::uint32_t>(i)};
  std::sort(by_id.begin(), by_id.end());
  const std::size_t walls = walls_.size();
  ByteReader r(map.history);
  std::vector<HertzMindlinLaw::State> st(walls);
  while (r.remaining() > 0) {
    const std::uint32_t id = r.u32("wall history particle id");
    for (HertzMindlinLaw::State& x : st) x = HertzMindlinLaw::load_state(r);
    const Vec3 f = r.vec3("wall force"), nc = r.vec3("wall force"), m = r.vec3("wall moment");
    const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(id, 0u));
    if (it == by_id.end() || it->first != id) continue;
    const std::uint32_t i = it->second;
    for (std::size_t k = 0; k < walls; ++k) p->state_[i * walls + k] = st[k];
    p->force_[i] = f;
    p->nc_force_[i] = nc;
    p->moment_[i] = m;
  }
  // The slots stand for the first evaluation (which would advance the history).
  p->skip_evaluate_ = true;
  return p;
}

void FrictionWallProvider::save(ByteWriter& w) const {
  law_.save(w);
  w.array(walls_, [](ByteWriter& ww, const Wall& wall) {
    ww.vec3(wall.point);
    ww.vec3(wall.normal);
  });
  w.u64(force_.size());
  for (const HertzMindlinLaw::State& st : state_) HertzMindlinLaw::save_state(w, st);
  for (std::size_t i = 0; i < force_.size(); ++i) {
    w.vec3(force_[i]);
    w.vec3(nc_force_[i]);
    w.vec3(moment_[i]);
  }
}

std::unique_ptr<FrictionWallProvider> FrictionWallProvider::load(ByteReader& r, const ParticleStore& s) {
  HertzMindlinLaw law = HertzMindlinLaw::load(r);
  std::vector<Wall> walls;
  r.array(walls, 48, "wall", [](ByteReader& rr) {
    Wall w;
    w.point = rr.vec3("walls");
    w.normal = rr.vec3("walls");
    return w;
  });
  const std::uint64_t n = r.u64("wall particle count");
  if (n != s.size())
    throw StateError("inconsistent: wall history for " + std::to_string(n) + " particles, the store has " +
                     std::to_string(s.size()));
  std::unique_ptr<FrictionWallProvider> p;
  try {
    p = std::make_unique<FrictionWallProvider>(std::move(walls), std::move(law), n);
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("inconsistent: ") + e.what());
  }
  if (p->state_.size() > r.remaining() / 48) throw StateError("truncated: the wall history is cut short");
  for (HertzMindlinLaw::State& st : p->state_) st = HertzMindlinLaw::load_state(r);
  if (n > r.remaining() / 72) throw StateError("truncated: the wall results are cut short");
  for (std::size_t i = 0; i < n; ++i) {
    p->force_[i] = r.vec3("wall force");
    p->nc_force_[i] = r.vec3("wall force");
    p->moment_[i] = r.vec3("wall moment");
  }
  p->skip_evaluate_ = true;
  return p;
}

}  // namespace dem
