// Domain decomposition without a transport (engine/partition.hpp): a part of
// the system (owned particles and ghosts, in the whole system's order,
// records of the part's providers) gives its owned particles the same F and
// tau bits as the undivided run, and the parts' energy reports merge into
// the whole's bits, for 1 to 4 parts of shipped scenes.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/partition.hpp"
#include "io/checkpoint.hpp"
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

BuiltScene built_scene(const std::string& path) { return build_scene(read_scene_file(std::string(DEM_SOURCE_DIR) + "/" + path)); }

/// The whole's first rebuild and forces, and a template of the same scene
/// set up without them (Simulation::Start): the template hands over the
/// state the first rebuild leaves (order, positions put back into the
/// cell, the list's first build), and its parts give the whole's first
/// forces and energies, for 1 to `max_ranks` parts.
void expect_template_parts_match(BuiltScene built, std::size_t max_ranks) {
  const Simulation whole = make_simulation(built);
  PartFactory factory(make_simulation(std::move(built), Simulation::Start{nullptr, false}));
  EXPECT_FALSE(factory.whole().first_forces());
  EXPECT_TRUE(whole.first_forces());
  const GlobalState expected = capture_global_state(whole);
  const GlobalState state = factory.take_state();
  expect_same_start(state, expected, "a template without first forces");
  EXPECT_EQ(state.clumps.size(), expected.clumps.size());
  for (std::size_t ranks = 1; ranks <= max_ranks; ++ranks) expect_made_parts_match(whole, factory, state, ranks);
}

/// One process's stand-in for the ranks' sums while parts are made one
/// after another: a first round records each part's exact sums (call by
/// call), a second hands every part, at each call, the total of the first
/// round's over all parts (what MPI's allreduce gives them at once).
class ReplayedSums final : public SerialCollective {
 public:
  explicit ReplayedSums(const std::vector<ExactSum>* totals = nullptr) : totals_(totals) {}
  std::vector<ExactSum> recorded;
  void reduce(std::span<ExactSum> sums) override {
    for (ExactSum& s : sums) {
      recorded.push_back(s);
      if (totals_ != nullptr) s = totals_->at(next_++);
    }
  }

 private:
  const std::vector<ExactSum>* totals_;
  std::size_t next_ = 0;
};

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

TEST(Partition, TemplateWithoutFirstForcesGivesTheWholeStartToTheParts) {
  expect_template_parts_match(built_scene("scenes/ring_torus.toml"), 4);
  expect_template_parts_match(built_scene("scenes/plate_drop.toml"), 3);
  expect_template_parts_match(built_scene("scenes/clumps.toml"), 3);
  expect_template_parts_match(built_scene("tests/scenes/periodic_gas.toml"), 3);
  expect_template_parts_match(built_scene("tests/scenes/mesh_box.toml"), 2);
  // Frictional and servo walls touching the specimen at the start.
  expect_template_parts_match(built_scene("scenes/confined_compression.toml"), 3);
}

TEST(Partition, CaptureAndReleaseKeepsTheListBuildOfARunningWhole) {
  // (Not the first build: a restarted whole handed to the parts.)
  Simulation whole = scene_simulation("ring_torus.toml", 960);
  const GlobalState copied = capture_global_state(whole);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < copied.particles.size(); ++i)
    moved += !same_bits(copied.build_positions[i], copied.particles.position[i]);
  ASSERT_GT(moved, 0u) << "every particle is where the list was built: the test shows nothing";
  const GlobalState taken = capture_and_release(whole);
  EXPECT_EQ(taken.rebuild_count, copied.rebuild_count);
  ASSERT_EQ(taken.build_positions.size(), copied.build_positions.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < copied.build_positions.size(); ++i)
    differ += !same_bits(taken.build_positions[i], copied.build_positions[i]);
  EXPECT_EQ(differ, 0u);
}

TEST(Partition, TemplateWithoutFirstForcesCannotStep) {
  Simulation t = make_simulation(built_scene("scenes/ring_torus.toml"), Simulation::Start{nullptr, false});
  EXPECT_THROW(t.step(), std::logic_error);
}

TEST(Partition, PartsOfATemplateFailTheBondsOverStrengthAtTheStartAsTheWholeDoes) {
  // Every 7th particle of the plate moved by 0.4 of its radius: its bonds
  // are far past their strength at the start.
  BuiltScene built = built_scene("scenes/plate_drop.toml");
  ParticleStore& p = built.scene.particles;
  for (std::size_t i = 0; i < p.size(); i += 7) p.position[i].x() += 0.4 * p.radius[i];
  Simulation whole = make_simulation(built);
  const std::vector<BondFailure> expected = whole.take_failures();
  ASSERT_GT(expected.size(), 10u);
  ASSERT_GT(whole.ledger().fracture, 0.0);
  PartFactory factory(make_simulation(std::move(built), Simulation::Start{nullptr, false}));
  const GlobalState state = factory.take_state();
  EXPECT_TRUE(state.failed_bonds.empty());  // (the template found none: it evaluated nothing)
  for (std::size_t ranks = 1; ranks <= 3; ++ranks) {
    const std::vector<PartLayout> layouts = layouts_of(factory, state, ranks);
    // On one rank's terms the other ranks' fracture work would be missing.
    EXPECT_THROW((void)factory.make(state, layouts[0]), std::logic_error) << ranks << " ranks";
    // Round 1: each part's sums; their totals are what every rank gets.
    std::vector<ReplayedSums> first(ranks);
    for (std::size_t r = 0; r < ranks; ++r) (void)factory.make(state, layouts[r], &first[r]);
    std::vector<ExactSum> totals = first[0].recorded;
    for (std::size_t r = 1; r < ranks; ++r) {
      ASSERT_EQ(first[r].recorded.size(), totals.size());
      for (std::size_t k = 0; k < totals.size(); ++k) totals[k].merge(first[r].recorded[k]);
    }
    // Round 2: the failures each part books are the whole's, once each.
    std::vector<BondFailure> found;
    for (std::size_t r = 0; r < ranks; ++r) {
      ReplayedSums sums(&totals);
      Simulation part = factory.make(state, layouts[r], &sums);
      for (const BondFailure& f : part.take_failures()) found.push_back(f);
    }
    std::sort(found.begin(), found.end(), [](const BondFailure& a, const BondFailure& b) { return a.bond < b.bond; });
    ASSERT_EQ(found.size(), expected.size()) << ranks << " ranks";
    for (std::size_t k = 0; k < found.size(); ++k) {
      EXPECT_EQ(found[k].bond, expected[k].bond);
      EXPECT_EQ(found[k].id_i, expected[k].id_i);
      EXPECT_EQ(found[k].step, 0u);
      EXPECT_TRUE(same_bits(found[k].energy, expected[k].energy)) << found[k].bond;
    }
    // Round 3: forces, energies and the ledger's fracture work are the whole's.
    std::vector<ReplayedSums> replay;
    for (std::size_t r = 0; r < ranks; ++r) replay.emplace_back(&totals);
    expect_made_parts_match(whole, factory, state, ranks, [&](std::size_t r) { return &replay[r]; });
  }
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

namespace dem {

// A rank's own layout (rank_layout, what mpi/domain.cpp makes the first
// parts from) is its entry of part_layouts(), and the particles it sends
// each other rank are those that rank holds as ghosts in its layout.
TEST(Partition, RankLayoutIsItsEntryOfTheLayoutsAndSendsWhatTheOthersHoldAsGhosts) {
  bool cut_bonds = false, periodic = false;
  for (const char* path : {"scenes/ring_torus.toml", "scenes/plate_drop.toml", "scenes/clumps.toml",
                           "tests/scenes/periodic_gas.toml"}) {
    PartFactory factory(make_simulation(built_scene(path), Simulation::Start{nullptr, false}));
    const GlobalState state = factory.take_state();
    const ParticleStore& p = state.particles;
    const PeriodicCell* cell = state.cell ? &*state.cell : nullptr;
    periodic = periodic || (cell != nullptr && cell->any());
    // A run's halo, and one short of the bonds (where only the bond rule
    // makes the far ends ghosts).
    for (const double share : {1.0001, 0.3})
    for (std::size_t ranks = 1; ranks <= 4; ++ranks) {
      const double halo = factory.interaction_range(state) * share;
      std::vector<std::uint32_t> owner = bisect_owners(p.position, p.id, ranks, cell);
      keep_clumps_whole(owner, p, state.clumps);
      const std::vector<PartLayout> all = part_layouts(p, owner, ranks, halo, factory.bond_keys(), cell);
      for (std::size_t r = 0; r < ranks; ++r) {
        const RankLayout mine = rank_layout(p, owner, r, ranks, halo, factory.bond_keys(), cell);
        EXPECT_EQ(mine.layout.members, all[r].members) << path << ", rank " << r << " of " << ranks;
        EXPECT_EQ(mine.layout.ghost, all[r].ghost) << path << ", rank " << r << " of " << ranks;
        ASSERT_EQ(mine.held_by.size(), ranks);
        for (std::size_t q = 0; q < ranks; ++q) {
          std::vector<std::uint32_t> expected;
          for (std::size_t k = 0; k < all[q].members.size(); ++k)
            if (all[q].ghost[k] && owner[all[q].members[k]] == r) expected.push_back(all[q].members[k]);
          EXPECT_EQ(mine.held_by[q], expected) << path << ", rank " << r << " to " << q << " of " << ranks;
        }
      }
      // Some ghost is there only through a bond (beyond the halo of the owner's box).
      if (!factory.bond_keys().empty() && ranks > 1) {
        const std::vector<PartLayout> unbonded = part_layouts(p, owner, ranks, halo, {}, cell);
        for (std::size_t r = 0; r < ranks; ++r) cut_bonds = cut_bonds || unbonded[r].members != all[r].members;
      }
    }
  }
  EXPECT_TRUE(periodic);
  EXPECT_TRUE(cut_bonds) << "no ghost is held through a bond alone: the bond rule is not exercised";
}

TEST(Partition, IdIndexFindsDenseAndSparseIds) {
  for (const std::uint32_t stride : {1u, 3u}) {  // ids 0..n-1 shuffled (a table), or spread out (sorted pairs)
    ParticleStore s;
    const std::size_t n = 40;
    for (std::size_t k = 0; k < n; ++k) s.add(ParticleSpec{});
    for (std::size_t k = 0; k < n; ++k) s.id[k] = static_cast<std::uint32_t>(((k * 17) % n) * stride + 5 * (stride - 1));
    const IdIndex index(s);
    for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(index.slot(s.id[k]), k) << "stride " << stride;
    std::size_t absent = 0;
    for (std::uint32_t id = 0; id < 4 * n * stride; ++id)
      if (std::find(s.id.begin(), s.id.end(), id) == s.id.end()) {
        ++absent;
        EXPECT_EQ(index.slot(id), PartMap::kNotInPart) << "id " << id << ", stride " << stride;
      }
    EXPECT_GT(absent, 0u);
    EXPECT_EQ(index.slot(0xfffffffeu), PartMap::kNotInPart);
  }
}

}  // namespace dem

namespace dem {
namespace {

/// Every field of two stores with the same bits (one failure per field that differs).
void expect_same_particles(const ParticleStore& a, const ParticleStore& b, const std::string& what) {
  a.for_each_field([&](const char* name, const auto& x) {
    b.for_each_field([&](const char* other, const auto& y) {
      if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::decay_t<decltype(y)>>) {
        if (std::string_view(name) != other) return;
        using T = typename std::decay_t<decltype(x)>::value_type;
        EXPECT_TRUE(x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0)
            << what << ": particle field " << name;
      }
    });
  });
  EXPECT_EQ(a.order_key, b.order_key) << what;
}

/// A whole run `steps` steps, checkpointed and read back as the template of
/// MPI parts (Simulation::Start restored): the template hands over the
/// running whole's state bit for bit (particles, the list's build, every
/// provider's history, failed bonds, clumps, clock and ledger), without
/// building a list, and its parts give the running whole's forces.
void expect_restored_template_matches(const std::string& path, std::uint64_t steps, std::size_t max_ranks) {
  Simulation whole = make_simulation(built_scene(path));
  for (std::uint64_t k = 0; k < steps; ++k) whole.step();
  const GlobalState expected = capture_global_state(whole);
  CheckpointState c = decode_checkpoint(encode_checkpoint(capture_simulation(whole)));
  PartFactory factory(simulation_from(std::move(c), Simulation::Start{nullptr, false, true}));
  EXPECT_TRUE(factory.whole().restored()) << path;
  EXPECT_FALSE(factory.whole().first_forces()) << path;
  if (const NeighbourListOwner* list = factory.whole().forces().neighbour_list()) {
    EXPECT_EQ(list->neighbours().list().pair_count(), 0u) << path << ": the template built the whole list";
  }
  const GlobalState state = factory.take_state();
  expect_same_particles(state.particles, expected.particles, path);
  expect_same_start(state, expected, path);
  EXPECT_GT(state.rebuild_count, 0u) << path;
  EXPECT_EQ(state.histories, expected.histories) << path;
  EXPECT_EQ(state.clumps.size(), expected.clumps.size()) << path;
  EXPECT_EQ(state.steps, expected.steps) << path;
  EXPECT_TRUE(same_bits(state.time_origin, expected.time_origin)) << path;
  EXPECT_TRUE(same_bits(state.ledger.fracture, expected.ledger.fracture) &&
              same_bits(state.ledger.contact, expected.ledger.contact) &&
              same_bits(state.ledger.boundary, expected.ledger.boundary))
      << path;
  for (std::size_t ranks = 1; ranks <= max_ranks; ++ranks) expect_made_parts_match(whole, factory, state, ranks);
}

}  // namespace

TEST(Partition, TemplateOfACheckpointHandsOverTheRunningWholesState) {
  std::size_t histories = 0;
  // Contact friction (Hertz-Mindlin), frictional and servo walls, meshes,
  // a periodic cell, bonds broken by an impact.
  for (const auto& [path, steps] : std::vector<std::pair<std::string, std::uint64_t>>{
           {"tests/scenes/friction_box.toml", 60},
           {"scenes/confined_compression.toml", 40},
           {"tests/scenes/mesh_box.toml", 60},
           {"tests/scenes/periodic_gas.toml", 50},
           {"scenes/plate_drop.toml", 400}}) {
    expect_restored_template_matches(path, steps, 3);
    // (Counted from a run of its own: the template's are compared above.)
    Simulation again = make_simulation(built_scene(path));
    for (std::uint64_t k = 0; k < steps; ++k) again.step();
    for (const std::vector<std::byte>& h : capture_global_state(again).histories) histories += h.empty() ? 0 : 1;
  }
  EXPECT_GE(histories, 4u) << "too few providers with a history: the test shows little";
}

}  // namespace dem
