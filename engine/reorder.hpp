#pragma once
/// \file reorder.hpp
/// Memory layout of a scene for speed: particles sorted along a Morton
/// (Z-order) curve of their positions, so that particles close in space sit
/// close in memory, and bonds sorted by their first end (the lower slot), so
/// that each particle's bonds are contiguous. The particle ids (creation
/// indices) travel with the particles, so output keeps them.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/scene.hpp"

namespace dem {

/// The box the Morton codes are taken in: the bounding box of the positions
/// (of all particles of all MPI ranks, for a decomposed run).
struct MortonFrame {
  Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
};
/// The bounding box of `positions`; throws std::invalid_argument for a
/// non-finite position.
MortonFrame morton_frame(std::span<const Vec3> positions);

/// Slots of the particles in Morton order of their positions: order[k] is
/// the old slot of the particle that goes to slot k. Deterministic: ties by
/// particle id (`ids`, one per position), or by slot when `ids` is empty.
/// The codes are taken in `frame` (default: the positions' own bounding
/// box), so that with the global frame and ids the order of any subset of
/// the particles (an MPI rank's owned and ghost particles) is the global
/// order restricted to it. Positions must be finite.
/// With `codes`, each position's Morton code (by its current slot) is
/// stored there.
std::vector<std::uint32_t> morton_order(std::span<const Vec3> positions, std::span<const std::uint32_t> ids = {},
                                        const MortonFrame* frame = nullptr, std::vector<std::uint64_t>* codes = nullptr);

/// Moves particle order[k] to slot k in every array of the store (its
/// field list, ParticleStore::for_each_field, and the ghost, order_key and
/// kinematic flags where present).
void permute_particles(ParticleStore& particles, std::span<const std::uint32_t> order);

/// The inverse of a permutation: new slot of old slot s (order[k] = s
/// gives inverse[s] = k).
std::vector<std::uint32_t> inverse_permutation(std::span<const std::uint32_t> order);

/// Morton order for a whole scene (particles, and bonds renumbered and
/// sorted by bonds/bond_provider.hpp renumber_and_sort_bonds), before a ForceField is built from it.
void sort_for_locality(Scene& scene);

}  // namespace dem
