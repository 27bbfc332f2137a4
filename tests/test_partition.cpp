// Domain decomposition without a transport (engine/partition.hpp): a part of
// the system (owned particles and ghosts, in the whole system's order,
// records of the part's providers) gives its owned particles the same F and
// tau bits as the undivided run, and the parts' energy reports merge into
// the whole's bits, for 1 to 4 parts of shipped scenes.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "engine/partition.hpp"
#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"

namespace dem {
namespace {

bool same_bits(const Vec3& a, const Vec3& b) {
  for (int c = 0; c < 3; ++c)
    if (std::bit_cast<std::uint64_t>(a[c]) != std::bit_cast<std::uint64_t>(b[c])) return false;
  return true;
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

Simulation scene_simulation(const std::string& name, std::uint64_t steps) {
  Simulation sim = make_simulation(build_scene(read_scene_file(std::string(DEM_SOURCE_DIR) + "/scenes/" + name)));
  for (std::uint64_t k = 0; k < steps; ++k) sim.step();
  return sim;
}

/// Splits `whole` into `ranks` parts and compares each owned particle's F
/// and tau, and the merged energy report, with the whole's.
void expect_parts_match(const Simulation& whole, std::size_t ranks) {
  const GlobalState state = capture_global_state(whole);
  PartFactory factory(Simulation(whole.particles(), whole.forces().make_part(whole.particles(), [&] {
                                   static std::vector<std::uint32_t> all;
                                   all.resize(whole.particles().size());
                                   for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint32_t>(i);
                                   return PartMap{all, state.failed_bonds, {}};
                                 }()),
                                 whole.clumps(), whole.map(), whole.time_step(), whole.step_count()));
  factory.release_work();  // as a decomposed run does: parts come from the captured state alone
  EXPECT_EQ(factory.whole().particles().size(), 0u);
  const double halo = factory.interaction_range(state) * 1.0001;
  std::vector<std::uint32_t> owner = bisect_owners(state.particles.position, state.particles.id, ranks);
  keep_clumps_whole(owner, state.particles, state.clumps);
  const std::vector<PartLayout> layouts = part_layouts(state.particles, owner, ranks, halo, factory.bond_keys());
  std::map<std::uint32_t, std::size_t> whole_slot;
  for (std::size_t i = 0; i < whole.particles().size(); ++i) whole_slot[whole.particles().id[i]] = i;
  EnergyReport merged;
  std::size_t owned_total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const Simulation part = factory.make(state, layouts[r]);
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

TEST(Partition, BisectionBalancesCounts) {
  ParticleStore s;
  for (int k = 0; k < 1001; ++k) {
    ParticleSpec p;
    p.position = Vec3(std::sin(k * 1.3), std::cos(k * 0.7), 0.01 * k);
    s.add(p);
  }
  for (std::size_t ranks = 1; ranks <= 7; ++ranks) {
    const std::vector<std::uint32_t> owner = bisect_owners(s.position, s.id, ranks);
    std::vector<std::size_t> count(ranks, 0);
    for (const std::uint32_t o : owner) ++count[o];
    EXPECT_LE(*std::max_element(count.begin(), count.end()) - *std::min_element(count.begin(), count.end()), ranks)
        << ranks << " ranks";
  }
}

TEST(Partition, RingTorusPartsGiveTheWholeForcesAndEnergies) {
  const Simulation whole = scene_simulation("ring_torus.toml", 960);  // in contact with the wall
  for (std::size_t ranks = 1; ranks <= 4; ++ranks) expect_parts_match(whole, ranks);
}

TEST(Partition, PlateDropPartsGiveTheWholeForcesAfterFracture) {
  const Simulation whole = scene_simulation("plate_drop.toml", 200);
  ASSERT_GT(whole.energy_report().broken_bonds, 0u);
  for (std::size_t ranks = 2; ranks <= 4; ++ranks) expect_parts_match(whole, ranks);
}

TEST(Partition, ClumpScenePartsGiveTheWholeForcesAndEnergies) {
  // Clumps (owned whole: their kinetic energies and momenta merge into the
  // whole's), bonded spheres at rest on a floor, whose round-off sized
  // moments show a bond taken the other way round.
  const Simulation whole = scene_simulation("clumps.toml", 400);
  ASSERT_EQ(whole.clumps().size(), 2u);
  for (std::size_t ranks = 2; ranks <= 4; ++ranks) expect_parts_match(whole, ranks);
}

TEST(Partition, ClumpsStayWhole) {
  const Simulation whole = scene_simulation("clumps.toml", 0);
  const GlobalState state = capture_global_state(whole);
  ASSERT_EQ(state.clumps.size(), 2u);
  bool bisection_splits = false, ghost_members = false;
  for (std::size_t ranks = 2; ranks <= 4; ++ranks) {
    std::vector<std::uint32_t> owner = bisect_owners(state.particles.position, state.particles.id, ranks);
    std::map<std::uint32_t, std::uint32_t> slot_of_id;
    for (std::size_t i = 0; i < owner.size(); ++i) slot_of_id[state.particles.id[i]] = static_cast<std::uint32_t>(i);
    for (const Clump& c : state.clumps)
      for (const std::uint32_t id : c.members)
        bisection_splits = bisection_splits || owner[slot_of_id.at(id)] != owner[slot_of_id.at(c.members.front())];
    keep_clumps_whole(owner, state.particles, state.clumps);
    for (const Clump& c : state.clumps)
      for (const std::uint32_t id : c.members)
        EXPECT_EQ(owner[slot_of_id.at(id)], owner[slot_of_id.at(c.members.front())]) << ranks << " ranks";
    // Some rank holds members of a clump it does not own, as ghosts.
    const std::vector<PartLayout> layouts = part_layouts(state.particles, owner, ranks, 3.0, {});  // about a run's halo
    for (std::size_t r = 0; r < ranks; ++r)
      for (std::size_t k = 0; k < layouts[r].members.size(); ++k)
        for (const Clump& c : state.clumps)
          for (const std::uint32_t id : c.members)
            ghost_members = ghost_members || (layouts[r].ghost[k] && state.particles.id[layouts[r].members[k]] == id);
  }
  EXPECT_TRUE(bisection_splits) << "the bisection alone never splits a clump here: the test shows nothing";
  EXPECT_TRUE(ghost_members);
}

}  // namespace
}  // namespace dem
