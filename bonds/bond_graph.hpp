#pragma once
/// \file bond_graph.hpp
/// The bond graph of a bond provider as the engine's outputs read it (the
/// bond list, which bonds are live, broken bonds per particle, fragments):
/// a capability of a force provider (core/force_provider.hpp,
/// ProviderCapabilities::bond_graph), implemented by the Baker-Gonzalez
/// bonds (docs/model.md §4: they never fail) and the BDEM bonds
/// (docs/model.md §9.8, §10).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bonds/bond_list.hpp"
#include "core/particle_store.hpp"

namespace dem {

class BondGraph {
 public:
  virtual ~BondGraph() = default;
  /// The bonds (current order).
  virtual const BondList& bonds() const = 0;
  /// True if bonds can fail: the accessors below then describe them.
  virtual bool can_fail() const { return false; }
  /// Per bond (current order): 1 live, 0 failed; empty when none can fail.
  virtual std::span<const std::uint8_t> live_flags() const { return {}; }
  /// Per bond (current order): its index in the scene's bond list; empty
  /// when none can fail.
  virtual std::span<const std::uint32_t> scene_indices() const { return {}; }
  /// Per particle slot: the number of its failed bonds.
  virtual std::vector<std::uint32_t> broken_per_particle(std::size_t /*particle_count*/) const { return {}; }
  /// Per particle slot: the smallest particle id of its connected component
  /// of the live-bond graph.
  virtual std::vector<std::uint32_t> fragment_labels(const ParticleStore& /*particles*/) const { return {}; }
  /// Live bonds whose relative rotation passed 2pi/3 at the last evaluation
  /// (docs/model.md §9.1).
  virtual std::uint64_t overturned_count() const { return 0; }
};

}  // namespace dem
