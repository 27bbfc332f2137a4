#pragma once
/// \file clump.hpp
/// Rigid clumps of spheres (docs/model.md §8): a rigid body of general
/// inertia whose member spheres live in the particle store like any
/// particle, so that the neighbour search, contacts, walls and bonds see
/// them. Members are named by particle id, so the store may be re-ordered.
/// The stepper (engine/simulation.hpp) advances clumps by the LGVI beside
/// free spheres.

#include <cstdint>
#include <string>
#include <vector>

#include "core/byte_stream.hpp"
#include "core/particle_store.hpp"
#include "engine/lgvi.hpp"

namespace dem {

struct Clump {
  RigidBody body;                      ///< mass, J (body frame), x, v, R, Pi
  std::vector<std::uint32_t> members;  ///< particle ids of the member spheres
  std::vector<Vec3> offsets;           ///< rho_q, body frame (length)
  std::vector<Quat> member_attitudes;  ///< R_q0, members' attitudes relative to the clump's
};

/// The clump of the spheres in `slots` (already in the store, at rest
/// relative to each other): mass = sum of member masses, centre of mass, J =
/// sum (J_q I + m_q (|r|^2 I - r r^T)) about it (overlaps counted twice: give
/// the inertia yourself for strongly overlapping members), body frame = the
/// inertial frame (R = I), at rest; members recorded by id. Throws
/// std::invalid_argument for an empty or repeated slot list, a slot out of
/// range, or a non-physical inertia.
Clump clump_at_rest(const ParticleStore& particles, const std::vector<std::uint32_t>& slots);

/// clump_at_rest(), moving with velocity v and angular velocity omega
/// (spatial); sets the members' velocities to match. Throws as
/// clump_at_rest() does.
Clump make_clump(ParticleStore& particles, const std::vector<std::uint32_t>& slots, const Vec3& velocity,
                 const Vec3& angular_velocity);

/// The current slots of the particles with these ids. Throws
/// std::invalid_argument "WHAT ID is not a particle" for an id that is not
/// a particle (`what` names the list, e.g. "clump member").
std::vector<std::uint32_t> slots_of_ids(const ParticleStore& particles, const std::vector<std::uint32_t>& ids,
                                        const std::string& what = "clump member");

/// Checkpoint section of the clumps: u64 count, then per clump the rigid
/// body (f64 mass, mat3 J, vec3 x, vec3 v, mat3 R, vec3 Pi, vec3 F, vec3 M),
/// then arrays of u32 member ids, vec3 offsets and quat member attitudes.
void save_clumps(ByteWriter& out, const std::vector<Clump>& clumps);
/// Reads save_clumps(); throws StateError for anything inconsistent (ids
/// out of range for `particle_count`, arrays of different lengths,
/// non-finite values, a non-physical inertia).
std::vector<Clump> load_clumps(ByteReader& in, std::size_t particle_count);

}  // namespace dem
