// The force-provider architecture (core/force_provider.hpp,
// engine/force_field.hpp, engine/simulation.hpp):
//  - providers written only in this test (a linear spring between particle
//    pairs, a harmonic trap acting on each particle) plug into a ForceField
//    without touching engine/, and pass the finite-difference and momentum
//    tests the built-in providers pass;
//  - per-pair contact state survives neighbour-list rebuilds and
//    re-ordering, keyed by particle ids (a law that counts, per pair, the
//    evaluations since the pair entered the list, against a brute-force
//    model and a run that never re-orders);
//  - events are collected in a deterministic order;
//  - clump scenes re-ordered or not agree particle by particle (by id).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "bonds/bond_list.hpp"
#include "bonds/bond_provider.hpp"
#include "contact/contact_provider.hpp"
#include "contact/wall_provider.hpp"
#include "core/parallel.hpp"
#include "engine/force_field.hpp"
#include "engine/provider_registry.hpp"
#include "engine/simulation.hpp"
#include "engine/time_step.hpp"
#include "scene/ring_torus.hpp"
#include "scene/scene_builder.hpp"
#include "scene/solid_torus.hpp"

using namespace dem;

namespace {

/// Linear springs between particle pairs, U = k/2 (|x_i - x_j| - L)^2:
/// a pair provider written against core/force_provider.hpp only. Each
/// particle's springs are visited in ascending spring index. It emits an
/// event for every spring stretched past twice its rest length.
class LinearSprings final : public ForceProvider {
 public:
  struct Spring {
    std::uint32_t i, j;
    double k, rest;
  };
  LinearSprings(std::vector<Spring> springs, std::size_t n) : springs_(std::move(springs)) {
    for (const Spring& s : springs_) {
      first_.push_back(s.i);
      second_.push_back(s.j);
    }
    index(n);
    force_.resize(springs_.size());
  }
  std::string name() const override { return "springs"; }
  void renumber(std::span<const std::uint32_t> new_slot) override {
    for (std::size_t b = 0; b < springs_.size(); ++b) {
      first_[b] = springs_[b].i = new_slot[springs_[b].i];
      second_[b] = springs_[b].j = new_slot[springs_[b].j];
    }
    index(new_slot.size());
  }
  void evaluate(const ParticleStore& s) override {
    parallel_for_each(springs_.size(), [&](std::size_t b) {
      const Spring& sp = springs_[b];
      const Vec3 d = s.position[sp.i] - s.position[sp.j];
      const double r = d.norm();
      force_[b] = (-sp.k * (r - sp.rest) / r) * d;
    });
    for (std::size_t b = 0; b < springs_.size(); ++b) {
      const Spring& sp = springs_[b];
      if ((s.position[sp.i] - s.position[sp.j]).norm() > 2.0 * sp.rest)
        events_.push_back({0, name(), "overstretched", s.id[sp.i], s.id[sp.j], 0.0});
    }
  }
  PairResults pair_results() const override {
    PairResults r;
    r.first = first_;
    r.force = force_;
    return r;
  }
  Incidence incidence() const override {
    Incidence inc;
    inc.entry_offsets = offsets_;
    inc.entries = entries_;
    return inc;
  }
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override {
    r.add("U_spring", deterministic_sum(springs_.size(), 0.0, [&](std::size_t b) {
      const Spring& sp = springs_[b];
      const double stretch = (s.position[sp.i] - s.position[sp.j]).norm() - sp.rest;
      return 0.5 * sp.k * stretch * stretch;
    }));
  }
  void take_events(std::vector<InteractionEvent>& out) override {
    out.insert(out.end(), events_.begin(), events_.end());
    events_.clear();
  }
  void save(ByteWriter& w) const override {
    w.u64(springs_.size());
    for (const Spring& s : springs_) {
      w.u32(s.i);
      w.u32(s.j);
      w.f64(s.k);
      w.f64(s.rest);
    }
  }

 private:
  void index(std::size_t n) {
    offsets_.assign(n + 1, 0);
    for (const Spring& s : springs_) {
      ++offsets_[s.i + 1];
      ++offsets_[s.j + 1];
    }
    for (std::size_t i = 0; i < n; ++i) offsets_[i + 1] += offsets_[i];
    entries_.resize(offsets_[n]);
    std::vector<std::uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
    for (std::size_t b = 0; b < springs_.size(); ++b) {
      entries_[fill[springs_[b].i]++] = static_cast<std::uint32_t>(2 * b);
      entries_[fill[springs_[b].j]++] = static_cast<std::uint32_t>(2 * b + 1);
    }
  }
  std::vector<Spring> springs_;
  std::vector<std::uint32_t> first_, second_, offsets_, entries_;
  std::vector<Vec3> force_;
  std::vector<InteractionEvent> events_;
};

/// A harmonic trap on every particle, U = k/2 |x - c|^2 and a twist moment
/// -kappa theta-free (a one-body provider; no moments, so angular momentum
/// about c is kept).
class HarmonicTrap final : public ForceProvider {
 public:
  HarmonicTrap(Vec3 centre, double k) : c_(centre), k_(k) {}
  std::string name() const override { return "trap"; }
  void renumber(std::span<const std::uint32_t>) override {}
  void evaluate(const ParticleStore&) override {}
  void add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<Vec3> force,
                       std::span<Vec3>) const override {
    for (std::size_t i = begin; i < end; ++i) force[i] += -k_ * (s.position[i] - c_);
  }
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override {
    r.add("U_trap", deterministic_sum(s.size(), 0.0, [&](std::size_t i) {
      return 0.5 * k_ * (s.position[i] - c_).squaredNorm();
    }));
  }
  void save(ByteWriter& w) const override {
    w.vec3(c_);
    w.f64(k_);
  }

 private:
  Vec3 c_;
  double k_;
};

double potential(ForceField& f, ParticleStore& s) {
  f.compute(s);
  const EnergyReport r = f.potential_energies(s);
  return r.total();  // kinetic parts are zero in a potential report
}

/// A small bonded ring with springs across it, contact and a wall.
struct Plugged {
  ParticleStore particles;
  ForceField field;
};

Plugged plugged_ring(bool trap) {
  RingTorusParameters p;
  p.particles = 12;
  p.gap = 0.05;
  p.spin = Vec3(0.2, -0.1, 0.4);
  Scene scene = make_ring_torus(p);
  scene.contact.reorder_on_rebuild = false;
  std::vector<LinearSprings::Spring> springs;
  for (std::uint32_t i = 0; i < 6; ++i) springs.push_back({i, i + 6, 3.0 + i, 2.5});
  Plugged out{scene.particles, ForceField(scene.particles, scene.bonds, scene.contact, scene.walls)};
  out.field.add(std::make_unique<LinearSprings>(springs, scene.particles.size()));
  if (trap) out.field.add(std::make_unique<HarmonicTrap>(Vec3(0.5, -0.2, 0.1), 0.7));
  return out;
}

}  // namespace

TEST(Providers, APluggedInProviderPassesTheFiniteDifferenceTest) {
  Plugged pl = plugged_ring(true);
  ParticleStore& s = pl.particles;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  for (std::size_t i = 0; i < s.size(); ++i) s.position[i] += Vec3(u(rng), u(rng), u(rng));
  pl.field.compute(s);
  const std::vector<Vec3> force = s.force;
  const EnergyReport r = pl.field.potential_energies(s);
  ASSERT_EQ(r.other.size(), 2u);
  EXPECT_EQ(r.other[0].first, "U_spring");
  EXPECT_GT(r.other[0].second, 0.0);
  EXPECT_EQ(r.other[1].first, "U_trap");
  const double eps = 1e-6;
  double worst = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (int a = 0; a < 3; ++a) {
      ParticleStore plus = s, minus = s;
      plus.position[i][a] += eps;
      minus.position[i][a] -= eps;
      const double fd = -(potential(pl.field, plus) - potential(pl.field, minus)) / (2 * eps);
      worst = std::max(worst, std::abs(fd - force[i][a]));
      scale = std::max(scale, std::abs(force[i][a]));
    }
  EXPECT_LT(worst, 1e-6 * scale) << worst << " of " << scale;
}

TEST(Providers, APluggedInPairProviderKeepsMomentaAndEnergy) {
  Plugged pl = plugged_ring(false);
  // Free flight: no wall, so P and L are conserved; springs are central.
  RingTorusParameters p;
  p.particles = 12;
  p.wall = false;
  p.spin = Vec3(0.2, -0.1, 0.4);
  Scene scene = make_ring_torus(p);
  ForceField field(scene.particles, scene.bonds, scene.contact, scene.walls);
  std::vector<LinearSprings::Spring> springs;
  for (std::uint32_t i = 0; i < 6; ++i) springs.push_back({i, i + 6, 3.0 + i, 2.5});
  field.add(std::make_unique<LinearSprings>(springs, scene.particles.size()));
  Simulation sim(scene.particles, std::move(field), IntegratorMap::rrp25, 1e-3);
  const EnergyReport r0 = sim.energy_report();
  double de = 0.0;
  for (int k = 0; k < 2000; ++k) {
    sim.step();
    de = std::max(de, std::abs(sim.energy_report().total() - r0.total()));
  }
  const EnergyReport r1 = sim.energy_report();
  EXPECT_LT((r1.linear_momentum - r0.linear_momentum).norm(), 1e-12 * (1 + r0.linear_momentum.norm()));
  EXPECT_LT((r1.angular_momentum - r0.angular_momentum).norm(), 1e-12 * (1 + r0.angular_momentum.norm()));
  EXPECT_LT(de, 1e-3 * std::abs(r0.total()));
  EXPECT_GT(sim.reorder_count(), 0u) << "the springs must have been renumbered";
  (void)pl;
}

TEST(Providers, EventsAreCollectedInTheSameOrderForAnyThreadCount) {
  std::vector<std::vector<InteractionEvent>> runs;
  for (std::size_t threads : {1, 2, 3}) {
    ThreadLimit limit(threads);
    RingTorusParameters p;
    p.particles = 12;
    p.wall = false;
    p.speed = 0.0;
    Scene scene = make_ring_torus(p);
    ForceField field(scene.particles, scene.bonds, scene.contact, scene.walls);
    std::vector<LinearSprings::Spring> springs;
    // Short rest lengths: every spring is overstretched from the start.
    for (std::uint32_t i = 0; i < 6; ++i) springs.push_back({i, i + 6, 0.1, 1.0});
    field.add(std::make_unique<LinearSprings>(springs, scene.particles.size()));
    Simulation sim(scene.particles, std::move(field), IntegratorMap::rrp25, 1e-3);
    for (int k = 0; k < 5; ++k) sim.step();
    runs.push_back(sim.take_events());
  }
  ASSERT_EQ(runs[0].size(), 6u * 6u);  // the initial evaluation and five steps
  EXPECT_EQ(runs[0].front().step, 0u);
  EXPECT_EQ(runs[0].back().step, 5u);
  for (std::size_t r = 1; r < runs.size(); ++r) {
    ASSERT_EQ(runs[r].size(), runs[0].size());
    for (std::size_t e = 0; e < runs[0].size(); ++e) {
      EXPECT_EQ(runs[r][e].step, runs[0][e].step);
      EXPECT_EQ(runs[r][e].id_first, runs[0][e].id_first);
      EXPECT_EQ(runs[r][e].id_second, runs[0][e].id_second);
      EXPECT_EQ(runs[r][e].provider, "springs");
    }
  }
}

namespace {

/// The Hertz law of docs/model.md §4 with a per-pair counter: the number
/// of evaluations since the pair entered the neighbour list.
struct CountingLaw {
  struct State {
    std::uint32_t evaluations = 0;
  };
  static constexpr const char* energy_column = "U_contact";
  double stiffness = 0.0;
  Vec3 force(const Vec3& xi, const Vec3& xj, double ri, double rj, State& st) const {
    ++st.evaluations;
    return contact_force(xi, xj, ri, rj, stiffness);
  }
  double energy(const Vec3& xi, const Vec3& xj, double ri, double rj, const State&) const {
    return particle_contact(xi, xj, ri, rj, stiffness).energy;
  }
  void save(ByteWriter& w) const { w.f64(stiffness); }
  static CountingLaw load(ByteReader& r) { return CountingLaw{r.f64("stiffness")}; }
  static void save_state(ByteWriter& w, const State& s) { w.u32(s.evaluations); }
  static State load_state(ByteReader& r) { return State{r.u32("evaluations")}; }
};
using CountingContact = ContactProvider<CountingLaw>;

/// Counts by pair key (ids) of the counting provider.
std::map<std::uint64_t, std::uint32_t> counts_of(const Simulation& sim) {
  const auto* c = dynamic_cast<const CountingContact*>(sim.forces().find("contact"));
  std::map<std::uint64_t, std::uint32_t> out;
  for (std::size_t k = 0; k < c->keys().size(); ++k) out[c->keys()[k]] = c->state()[k].evaluations;
  return out;
}

Simulation counting_torus(bool reorder) {
  SolidTorusParameters p;
  p.particle_diameter = 2.5e-3;  // a few thousand particles
  p.gap = 0.0;
  p.spin = Vec3(0.0, 300.0, 100.0);
  Scene scene = make_solid_torus(p);
  const double h = 0.3 * critical_time_step(scene.particles, scene.bonds, scene.contact);
  ForceField field;
  field.set_reorder_on_rebuild(reorder);
  field.add(std::make_unique<BondProvider>(scene.particles, scene.bonds));
  field.add(std::make_unique<CountingContact>(CountingLaw{scene.contact.stiffness}, scene.contact.skin));
  field.add(std::make_unique<WallProvider>(scene.walls));
  return Simulation(scene.particles, std::move(field), IntegratorMap::rrp25, h);
}

}  // namespace

TEST(Providers, PerPairStateSurvivesRebuildsAndReordering) {
  Simulation a = counting_torus(true), b = counting_torus(false);
  // Brute-force model of the counter, driven by run a's rebuilds: at each
  // rebuild the candidate pairs are found from scratch (by ids), pairs that
  // stay keep their count, new ones start at 0; each evaluation adds 1.
  std::map<std::uint64_t, std::uint32_t> model;
  std::size_t builds = 0;
  const auto model_step = [&](const Simulation& s) {
    if (s.forces().neighbours().rebuild_count() != builds) {
      builds = s.forces().neighbours().rebuild_count();
      // The list was built at the build positions; rebuild the model there.
      ParticleStore at_build = s.particles();
      at_build.position = s.forces().neighbours().build_positions();
      const auto pairs = brute_force_pairs(at_build.position, at_build.radius, s.forces().neighbours().skin());
      std::map<std::uint64_t, std::uint32_t> next;
      for (const auto& [i, j] : pairs) {
        const std::uint64_t key = pair_key(at_build.id[i], at_build.id[j]);
        const auto it = model.find(key);
        next[key] = it == model.end() ? 0 : it->second;
      }
      model.swap(next);
    }
    for (auto& [key, n] : model) ++n;
  };
  model_step(a);
  EXPECT_EQ(counts_of(a), model);
  for (int k = 0; k < 400; ++k) {
    a.step();
    b.step();
    model_step(a);
  }
  ASSERT_GT(a.forces().neighbours().rebuild_count(), 3u);
  ASSERT_GT(a.reorder_count(), 0u);
  EXPECT_EQ(b.reorder_count(), 0u);
  const auto ca = counts_of(a);
  EXPECT_EQ(ca, model);
  EXPECT_EQ(ca, counts_of(b)) << "re-ordered and not re-ordered runs keep the same state per pair";
  std::size_t kept = 0;
  for (const auto& [key, n] : ca) kept += n > 100 ? 1 : 0;
  EXPECT_GT(kept, 0u) << "some pairs must have lived through rebuilds";
}

TEST(Providers, PerPairStateRoundTripsThroughItsCheckpointSection) {
  Simulation a = counting_torus(true);
  for (int k = 0; k < 150; ++k) a.step();
  register_provider_loader("contact", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
    return CountingContact::load(r, s);
  });
  const std::vector<ProviderSection> sections = save_providers(a.forces());
  ForceField f = load_providers(sections, a.particles(), true);
  register_provider_loader("contact", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
    return HertzContactProvider::load(r, s);
  });
  f.update_records(a.particles());  // builds the restored list and places the state on it
  const auto* before = dynamic_cast<const CountingContact*>(a.forces().find("contact"));
  const auto* after = dynamic_cast<const CountingContact*>(f.find("contact"));
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->keys(), before->keys());
  ASSERT_EQ(after->state().size(), before->state().size());
  for (std::size_t k = 0; k < before->state().size(); ++k)
    EXPECT_EQ(after->state()[k].evaluations, before->state()[k].evaluations);
}

TEST(Providers, ClumpScenesReorderedOrNotAgreeParticleByParticle) {
  const auto run = [](bool reorder) {
    SceneSpec spec = read_scene_file(std::string(DEM_SOURCE_DIR) + "/scenes/clumps.toml");
    spec.contact.reorder_on_rebuild = reorder;
    Simulation sim = make_simulation(build_scene(spec));
    for (int k = 0; k < 3000; ++k) sim.step();
    return sim;
  };
  const Simulation a = run(true), b = run(false);
  ASSERT_GT(a.reorder_count(), 0u);
  EXPECT_EQ(b.reorder_count(), 0u);
  const ParticleStore &pa = a.particles(), &pb = b.particles();
  std::vector<std::uint32_t> slot_b(pb.size());
  for (std::uint32_t i = 0; i < pb.size(); ++i) slot_b[pb.id[i]] = i;
  double dx = 0.0, dv = 0.0, scale_v = 0.0;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const std::uint32_t j = slot_b[pa.id[i]];
    dx = std::max(dx, (pa.position[i] - pb.position[j]).norm());
    dv = std::max(dv, (pa.velocity[i] - pb.velocity[j]).norm());
    scale_v = std::max(scale_v, pb.velocity[j].norm());
  }
  EXPECT_LT(dx, 1e-11);
  EXPECT_LT(dv, 1e-9 * scale_v);
  for (std::size_t c = 0; c < a.clumps().size(); ++c)
    EXPECT_LT((a.clumps()[c].body.position - b.clumps()[c].body.position).norm(), 1e-11);
}

TEST(Providers, ClumpScenesAreBitwiseIdenticalForOneTwoAndThreeThreads) {
  std::vector<ParticleStore> ends;
  for (std::size_t threads : {1, 2, 3}) {
    ThreadLimit limit(threads);
    SceneSpec spec = read_scene_file(std::string(DEM_SOURCE_DIR) + "/scenes/clumps.toml");
    spec.contact.reorder_on_rebuild = true;
    Simulation sim = make_simulation(build_scene(spec));
    for (int k = 0; k < 1500; ++k) sim.step();
    ASSERT_GT(sim.reorder_count(), 0u);
    ends.push_back(sim.particles());
  }
  for (std::size_t r = 1; r < ends.size(); ++r) {
    EXPECT_EQ(ends[r].id, ends[0].id);
    for (std::size_t i = 0; i < ends[0].size(); ++i) {
      EXPECT_EQ(std::memcmp(ends[r].position[i].data(), ends[0].position[i].data(), 24), 0) << i;
      EXPECT_EQ(std::memcmp(ends[r].angular_velocity[i].data(), ends[0].angular_velocity[i].data(), 24), 0) << i;
    }
  }
}
