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
#include "part_support.hpp"
#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"

namespace dem {
namespace {

Simulation scene_simulation(const std::string& name, std::uint64_t steps) {
  Simulation sim = make_simulation(build_scene(read_scene_file(std::string(DEM_SOURCE_DIR) + "/scenes/" + name)));
  for (std::uint64_t k = 0; k < steps; ++k) sim.step();
  return sim;
}

}  // namespace

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

}  // namespace dem
