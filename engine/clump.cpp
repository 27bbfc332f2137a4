#include "engine/clump.hpp"

#include <algorithm>
#include <utility>

#include <cmath>
#include <stdexcept>
#include <string>

namespace dem {

Clump clump_at_rest(const ParticleStore& s, const std::vector<std::uint32_t>& slots) {
  if (slots.empty()) throw std::invalid_argument("a clump needs at least one member");
  Clump c;
  double mass = 0.0;
  Vec3 centre = Vec3::Zero();
  for (std::size_t k = 0; k < slots.size(); ++k) {
    const std::uint32_t q = slots[k];
    if (q >= s.size()) throw std::invalid_argument("clump member " + std::to_string(q) + " is not a particle");
    for (std::size_t l = 0; l < k; ++l)
      if (slots[l] == q) throw std::invalid_argument("clump member " + std::to_string(q) + " is listed twice");
    mass += s.mass[q];
    centre += s.mass[q] * s.position[q];
  }
  centre /= mass;
  Mat3 j = Mat3::Zero();
  for (std::uint32_t q : slots) {
    const Vec3 r = s.position[q] - centre;
    j += s.inertia[q] * Mat3::Identity() + s.mass[q] * (r.squaredNorm() * Mat3::Identity() - r * r.transpose());
    c.members.push_back(s.id[q]);
    c.offsets.push_back(r);
    c.member_attitudes.push_back(s.attitude[q]);
  }
  validate_inertia(j);
  c.body.mass = mass;
  c.body.inertia = j;
  c.body.position = centre;
  return c;
}

Clump make_clump(ParticleStore& s, const std::vector<std::uint32_t>& slots, const Vec3& velocity,
                 const Vec3& angular_velocity) {
  Clump c = clump_at_rest(s, slots);
  c.body.velocity = velocity;
  c.body.momentum = c.body.inertia * angular_velocity;  // R = I: body frame = inertial frame
  for (std::size_t k = 0; k < slots.size(); ++k) {
    s.velocity[slots[k]] = velocity + angular_velocity.cross(c.offsets[k]);
    s.angular_velocity[slots[k]] = angular_velocity;
  }
  return c;
}

std::vector<std::uint32_t> slots_of_ids(const ParticleStore& s, const std::vector<std::uint32_t>& ids,
                                        const std::string& what) {
  const std::size_t n = s.size();
  std::vector<std::uint32_t> slots;
  slots.reserve(ids.size());
  if (s.is_part()) {
    // A part of a decomposed system (engine/partition.hpp): ids are any
    // subset of the whole system's.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id(n);
    for (std::size_t i = 0; i < n; ++i) by_id[i] = {s.id[i], static_cast<std::uint32_t>(i)};
    std::sort(by_id.begin(), by_id.end());
    for (const std::uint32_t id : ids) {
      const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(id, 0u));
      if (it == by_id.end() || it->first != id)
        throw std::invalid_argument(what + " " + std::to_string(id) + " is not a particle");
      slots.push_back(it->second);
    }
    return slots;
  }
  std::vector<std::uint32_t> slot_of_id(n, 0xffffffffu);
  for (std::size_t i = 0; i < n; ++i)
    if (s.id[i] < n) slot_of_id[s.id[i]] = static_cast<std::uint32_t>(i);
  for (const std::uint32_t id : ids) {
    if (id >= n || slot_of_id[id] == 0xffffffffu)
      throw std::invalid_argument(what + " " + std::to_string(id) + " is not a particle");
    slots.push_back(slot_of_id[id]);
  }
  return slots;
}

void save_clumps(ByteWriter& w, const std::vector<Clump>& clumps) {
  w.u64(clumps.size());
  for (const Clump& c : clumps) {
    const RigidBody& b = c.body;
    w.f64(b.mass);
    w.mat3(b.inertia);
    w.vec3(b.position);
    w.vec3(b.velocity);
    w.mat3(b.attitude);
    w.vec3(b.momentum);
    w.vec3(b.force);
    w.vec3(b.moment);
    w.array(c.members, [](ByteWriter& ww, std::uint32_t id) { ww.u32(id); });
    w.array(c.offsets, [](ByteWriter& ww, const Vec3& v) { ww.vec3(v); });
    w.array(c.member_attitudes, [](ByteWriter& ww, const Quat& q) { ww.quat(q); });
  }
}

std::vector<Clump> load_clumps(ByteReader& r, std::size_t particle_count) {
  // Fixed part of a clump: mass, two mat3, six vec3 (less the arrays' counts).
  const std::size_t n = r.count("clump", 8 + 2 * 72 + 5 * 24 + 24);
  std::vector<Clump> clumps(n);
  const auto fail = [](std::size_t k, const std::string& m) {
    throw StateError("inconsistent: clump " + std::to_string(k) + ": " + m);
  };
  for (std::size_t k = 0; k < n; ++k) {
    Clump& c = clumps[k];
    RigidBody& b = c.body;
    b.mass = r.f64("clump mass");
    b.inertia = r.mat3("clump inertia");
    b.position = r.vec3("clump position");
    b.velocity = r.vec3("clump velocity");
    b.attitude = r.mat3("clump attitude");
    b.momentum = r.vec3("clump momentum");
    b.force = r.vec3("clump force");
    b.moment = r.vec3("clump moment");
    r.array(c.members, 4, "clump member", [](ByteReader& rr) { return rr.u32("clump member ids"); });
    r.array(c.offsets, 24, "clump offset", [](ByteReader& rr) { return rr.vec3("clump offsets"); });
    r.array(c.member_attitudes, 32, "clump member attitude",
            [](ByteReader& rr) { return rr.quat("clump member attitudes"); });
    if (!(std::isfinite(b.mass) && b.mass > 0.0)) fail(k, "mass must be finite and > 0");
    if (!(b.position.allFinite() && b.velocity.allFinite() && b.attitude.allFinite() && b.momentum.allFinite()))
      fail(k, "its state is not finite");
    if (!((b.attitude.transpose() * b.attitude - Mat3::Identity()).norm() < 1e-6 && b.attitude.determinant() > 0.0))
      fail(k, "its attitude is not a rotation matrix");
    if (c.members.empty() || c.offsets.size() != c.members.size() || c.member_attitudes.size() != c.members.size())
      fail(k, "member arrays are empty or of different lengths");
    for (const std::uint32_t id : c.members)
      if (id >= particle_count) fail(k, "member id " + std::to_string(id) + " is not a particle");
    for (std::size_t q = 0; q < c.members.size(); ++q) {
      if (!c.offsets[q].allFinite()) fail(k, "offset of member " + std::to_string(q) + " is not finite");
      const Quat& a = c.member_attitudes[q];
      if (!a.coeffs().allFinite() || !(std::abs(a.norm() - 1.0) < 0.5))
        fail(k, "attitude of member " + std::to_string(q) + " is not a unit quaternion");
    }
    try {
      validate_inertia(b.inertia);
    } catch (const std::exception& e) {
      fail(k, e.what());
    }
  }
  return clumps;
}

}  // namespace dem
