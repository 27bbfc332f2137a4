#pragma once
// Shared by the partition tests and the law conformance suite: a Simulation
// split into MPI-style parts (engine/partition.hpp, no transport) must give
// each owned particle the whole run's F and tau bits, and the parts' energy
// reports must merge into the whole's bits.
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "contact/contact_provider.hpp"
#include "engine/partition.hpp"

namespace dem {

inline bool same_bits(const Vec3& a, const Vec3& b) {
  for (int c = 0; c < 3; ++c)
    if (std::bit_cast<std::uint64_t>(a[c]) != std::bit_cast<std::uint64_t>(b[c])) return false;
  return true;
}

inline bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

/// Two states that start parts alike: the same particles (ids, order keys,
/// positions and velocities, bit for bit), the same list build (positions,
/// count, cell edges) and the same failed bonds.
inline void expect_same_start(const GlobalState& state, const GlobalState& expected, const std::string& what) {
  ASSERT_EQ(state.particles.size(), expected.particles.size()) << what;
  EXPECT_EQ(state.particles.id, expected.particles.id) << what;
  EXPECT_EQ(state.particles.order_key, expected.particles.order_key) << what;
  std::size_t moved = 0;
  for (std::size_t i = 0; i < state.particles.size(); ++i)
    moved += !same_bits(state.particles.position[i], expected.particles.position[i]) ||
             !same_bits(state.particles.velocity[i], expected.particles.velocity[i]) ||
             !same_bits(state.particles.angular_velocity[i], expected.particles.angular_velocity[i]);
  EXPECT_EQ(moved, 0u) << what;
  ASSERT_EQ(state.build_positions.size(), expected.build_positions.size()) << what;
  for (std::size_t i = 0; i < state.build_positions.size(); ++i)
    moved += !same_bits(state.build_positions[i], expected.build_positions[i]);
  EXPECT_EQ(moved, 0u) << what;
  EXPECT_EQ(state.rebuild_count, expected.rebuild_count) << what;
  EXPECT_EQ(state.build_edges.has_value(), expected.build_edges.has_value()) << what;
  if (state.build_edges && expected.build_edges) {
    EXPECT_TRUE(*state.build_edges == *expected.build_edges) << what;
  }
  EXPECT_EQ(state.failed_bonds, expected.failed_bonds) << what;
}

/// The layouts of `ranks` parts of `state`, as a decomposed run makes them
/// (bisection, clumps whole, a halo of the interaction range).
inline std::vector<PartLayout> layouts_of(const PartFactory& factory, const GlobalState& state, std::size_t ranks) {
  const double halo = factory.interaction_range(state) * 1.0001;
  const PeriodicCell* cell = state.cell ? &*state.cell : nullptr;
  std::vector<std::uint32_t> owner = bisect_owners(state.particles.position, state.particles.id, ranks, cell);
  keep_clumps_whole(owner, state.particles, state.clumps);
  return part_layouts(state.particles, owner, ranks, halo, factory.bond_keys(), cell);
}

/// Makes `ranks` parts of `state` with `factory` (each on the terms of
/// `collective(r)`, nullptr: one rank's) and compares each owned particle's
/// F and tau, and the merged energy report, with `whole`'s.
inline void expect_made_parts_match(const Simulation& whole, const PartFactory& factory, const GlobalState& state,
                                    std::size_t ranks,
                                    const std::function<Collective*(std::size_t)>& collective = nullptr) {
  const std::vector<PartLayout> layouts = layouts_of(factory, state, ranks);
  std::map<std::uint32_t, std::size_t> whole_slot;
  for (std::size_t i = 0; i < whole.particles().size(); ++i) whole_slot[whole.particles().id[i]] = i;
  EnergyReport merged;
  std::size_t owned_total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const Simulation part = factory.make(state, layouts[r], collective ? collective(r) : nullptr);
    const ParticleStore& p = part.particles();
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (!p.owns(i)) continue;
      ++owned_total;
      const std::size_t w = whole_slot.at(p.id[i]);
      if (!same_bits(p.force[i], whole.particles().force[w]) || !same_bits(p.moment[i], whole.particles().moment[w]))
        ++mismatches;
    }
    EXPECT_EQ(mismatches, 0u) << "part " << r << " of " << ranks;
    if (r == 0 && !collective) {
      // Made from a state let go on the way: the same part, the state's
      // particles freed.
      GlobalState copy = state;
      const Simulation moved = factory.make(std::move(copy), layouts[r]);
      EXPECT_EQ(copy.particles.size(), 0u);
      EXPECT_TRUE(copy.build_positions.empty());
      ASSERT_EQ(moved.particles().size(), p.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < p.size(); ++i)
        differ += !same_bits(moved.particles().force[i], p.force[i]) || !same_bits(moved.particles().moment[i], p.moment[i]);
      EXPECT_EQ(differ, 0u);
    }
    EXPECT_TRUE(same_bits(part.ledger().fracture, whole.ledger().fracture)) << "part " << r << " of " << ranks;
    // The part's contact list as the whole's was built (in a deforming
    // periodic cell: at the cell's edges of that build).
    if (const NeighbourListOwner* c = whole.forces().neighbour_list()) {
      const NeighbourSearch& mine = part.forces().neighbours();
      EXPECT_EQ(mine.rebuild_count(), c->neighbours().rebuild_count());
      EXPECT_TRUE(mine.build_edges() == c->neighbours().build_edges()) << "part " << r << " of " << ranks;
    }
    merged.merge(part.energy_report());
  }
  EXPECT_EQ(owned_total, whole.particles().size());
  const EnergyReport w = whole.energy_report();
  EXPECT_TRUE(same_bits(merged.total(), w.total())) << merged.total() << " vs " << w.total();
  EXPECT_TRUE(same_bits(merged.kinetic_translation, w.kinetic_translation));
  EXPECT_TRUE(same_bits(merged.axial, w.axial));
  EXPECT_TRUE(same_bits(merged.contact, w.contact));
  EXPECT_TRUE(same_bits(merged.wall, w.wall));
  EXPECT_TRUE(same_bits(merged.linear_momentum.z(), w.linear_momentum.z()));
  EXPECT_TRUE(same_bits(merged.angular_momentum.x(), w.angular_momentum.x()));
}

/// Splits `whole` into `ranks` parts and compares each owned particle's F
/// and tau, and the merged energy report, with the whole's.
inline void expect_parts_match(const Simulation& whole, std::size_t ranks) {
  const GlobalState state = capture_global_state(whole);
  PartFactory factory(Simulation(whole.particles(), whole.forces().make_part(whole.particles(), [&] {
                                   static std::vector<std::uint32_t> all;
                                   all.resize(whole.particles().size());
                                   for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint32_t>(i);
                                   return PartMap{all, state.failed_bonds, {}};
                                 }()),
                                 whole.clumps(), whole.map(), whole.time_step(), whole.step_count()));
  // As a decomposed run does: parts come from the captured state alone. The
  // state the factory hands over (its particles moved out, not copied) is
  // the one capture_global_state() copies, and the template keeps the ids.
  const GlobalState copied = capture_global_state(factory.whole());
  const GlobalState taken = factory.take_state();
  EXPECT_EQ(factory.whole().particles().size(), 0u);
  EXPECT_EQ(factory.whole().particles().id, copied.particles.id);
  ASSERT_EQ(taken.particles.size(), copied.particles.size());
  EXPECT_EQ(taken.particles.id, copied.particles.id);
  EXPECT_EQ(taken.particles.order_key, copied.particles.order_key);
  for (std::size_t i = 0; i < copied.particles.size(); ++i) {
    EXPECT_TRUE(same_bits(taken.particles.position[i], copied.particles.position[i])) << i;
    EXPECT_TRUE(same_bits(taken.particles.velocity[i], copied.particles.velocity[i])) << i;
  }
  EXPECT_EQ(taken.failed_bonds, copied.failed_bonds);
  EXPECT_EQ(taken.histories, copied.histories);
  ASSERT_EQ(taken.build_positions.size(), copied.build_positions.size());
  for (std::size_t i = 0; i < copied.build_positions.size(); ++i)
    EXPECT_TRUE(same_bits(taken.build_positions[i], copied.build_positions[i])) << i;
  EXPECT_EQ(taken.rebuild_count, copied.rebuild_count);
  expect_made_parts_match(whole, factory, state, ranks);
}

}  // namespace dem
