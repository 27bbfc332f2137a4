#pragma once
/// \file mesh_contact_provider.hpp
/// Triangle-mesh walls for any wall law (docs/model.md §11.9) as a
/// one-body force provider. Each contact of the claiming rule
/// (contact/mesh_contact.hpp) is the law's plane-wall contact against a
/// local Wall: for a patch its plane, for an edge or a vertex the plane
/// through the closest point p normal to x_i - p, of the mesh's material
/// (or stiffness). Kinetic laws (WallLawContract of
/// contact/wall_contact_provider.hpp) keep their State per (particle,
/// feature); a stateless plane-wall law (contact/plane_wall_law.hpp) goes
/// through PlaneMeshLaw below.
///
/// Storage: the particles in fixed blocks of kBlock slots (the same for
/// any thread count); per block, for each particle its contacts sorted by
/// key = (mesh << 32) | feature with the law's State, the local wall and
/// the force and moment on the particle (for the meshes' loads), and its
/// broad-phase candidates (mesh << 32 | triangle, from each mesh's static
/// tree in the body frame). A particle's candidates are found again when it
/// has moved, relative to a mesh, farther than its allowance since they
/// were found (the skin, or more when it was far from the mesh's bounding
/// box); the contacts do not depend on when that happens, so restarts and
/// MPI parts give the same bits.
///
/// History: a contact keeps its State while its feature stays in contact;
/// a contact that appears on a feature adjacent (sharing a vertex) to one
/// of the particle's features of the same mesh that has just left
/// contact takes over that one's State (face -> edge -> face across a
/// rim, patch -> patch), so that friction stays continuous. Per particle
/// the contacts are summed in key order.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contact/contact_provider.hpp"
#include "contact/mesh_contact.hpp"
#include "contact/plane_wall_law.hpp"
#include "contact/wall_contact_provider.hpp"
#include "core/exact_sum.hpp"
#include "core/force_provider.hpp"
#include "core/parallel.hpp"

namespace dem {

/// Section bytes of the mesh walls (geometry, motion, material, stiffness).
void save_mesh_walls(ByteWriter& w, const std::vector<MeshWall>& meshes);
/// Throws StateError for what save_mesh_walls would not have written.
std::vector<MeshWall> load_mesh_walls(ByteReader& r);

/// A stateless plane-wall law (Hertz K^pw, penalty k_c: Wall::stiffness)
/// in the shape of a kinetic wall law, with an empty State.
struct PlaneMeshLaw {
  static constexpr bool kKinetic = false;
  static constexpr std::size_t kStateBytes = 0;
  struct State {};
  const PlaneWallLaw* law = nullptr;

  void evaluate_wall(const ParticleStore& s, std::uint32_t i, const Wall& w, State&, PairOutput& out) const {
    out = PairOutput{};
    out.force = law->terms(s.position[i], s.radius[i], w).force_i;
  }
  double wall_energy(const ParticleStore& s, std::uint32_t i, const Wall& w) const {
    return law->terms(s.position[i], s.radius[i], w).energy;
  }
  std::size_t material_count() const { return 0; }
  void set_time_step(double) {}
  void save(ByteWriter& w) const { w.u8(law->code()); }
  /// Throws StateError for a code no registry entry lists.
  static PlaneMeshLaw load(ByteReader& r);
  static void save_state(ByteWriter&, const State&) {}
  static State load_state(ByteReader&) { return {}; }
};

template <WallLawContract Law>
class MeshContactProvider final : public ForceProvider,
                                  public DissipationLedger,
                                  public Decomposable,
                                  public SurfaceSource,
                                  public MovingBoundary {
 public:
  using State = typename Law::State;
  static constexpr bool kReleasing = ReleasingLaw<Law>;
  static constexpr bool kKinetic = Law::kKinetic;
  static constexpr std::size_t kBlock = 256;

  /// meshes: each with a mesh; law: the scene's; particle_count: the
  /// store's size; skin (length, > 0): how far a particle may move
  /// relative to a mesh before its candidates are found again; reach
  /// (length, >= 0): how far beyond touching the law's contact lasts.
  /// Throws std::invalid_argument for a mesh without geometry, a material
  /// that is not the law's, or a skin or reach out of range.
  MeshContactProvider(std::vector<MeshWall> meshes, Law law, std::size_t particle_count, double skin, double reach,
                      std::string name)
      : meshes_(std::move(meshes)), law_(std::move(law)), name_(std::move(name)), skin_(skin), reach_(reach) {
    for (std::size_t m = 0; m < meshes_.size(); ++m) {
      const std::string what = "mesh " + std::to_string(m) + " (" + meshes_[m].name + ")";
      if (!meshes_[m].mesh) throw std::invalid_argument(what + ": no geometry");
      const std::uint32_t mat = meshes_[m].material;
      if (mat != Wall::kParticleMaterial && mat >= law_.material_count())
        throw std::invalid_argument(what + ": material " + std::to_string(mat) + " (the law has " +
                                    std::to_string(law_.material_count()) + ")");
      if (!std::isfinite(meshes_[m].stiffness) || meshes_[m].stiffness < 0.0)
        throw std::invalid_argument(what + ": stiffness must be finite and >= 0");
    }
    if (!(std::isfinite(skin_) && skin_ > 0.0)) throw std::invalid_argument("mesh walls: the skin must be > 0");
    if (!(std::isfinite(reach_) && reach_ >= 0.0)) throw std::invalid_argument("mesh walls: the reach must be >= 0");
    resize(particle_count);
    for (const MeshWall& m : meshes_) moves_ = moves_ || m.motion.moves();
    set_time(0.0);
  }

  std::string name() const override { return name_; }
  ProviderCapabilities capabilities() override {
    return {.ledger = this, .decomposable = this, .boundary = this, .surfaces = this};
  }
  /// Each mesh at its pose (SurfaceSource).
  void surfaces(std::vector<SurfaceFrame>& out) const override {
    for (std::size_t m = 0; m < meshes_.size(); ++m) {
      SurfaceFrame f;
      f.name = meshes_[m].name;
      for (const Vec3& v : meshes_[m].mesh->vertices()) f.points.push_back(poses_[m].to_world(v));
      f.triangles = meshes_[m].mesh->triangles();
      out.push_back(std::move(f));
    }
  }
  void set_time_step(double h) override { law_.set_time_step(h); }
  bool dissipative() const override { return kKinetic; }
  bool gives_moments() const override { return kKinetic; }

  /// The meshes' poses at time t (their prescribed motion).
  void set_time(double t) {
    time_ = t;
    poses_.clear();
    for (const MeshWall& m : meshes_) poses_.push_back(mesh_pose(m.motion, t));
  }
  double time() const { return time_; }
  const std::vector<MeshWall>& meshes() const { return meshes_; }
  const MeshPose& pose(std::size_t m) const { return poses_.at(m); }
  const Law& law() const { return law_; }

  void renumber(std::span<const std::uint32_t> new_slot) override {
    const std::size_t n = force_.size();
    std::vector<std::uint32_t> old_of(n);
    for (std::size_t s = 0; s < new_slot.size(); ++s) old_of[new_slot[s]] = static_cast<std::uint32_t>(s);
    std::vector<Block> blocks(blocks_.size());
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      Block& nb = blocks[b];
      nb.offset.assign(1, 0);
      nb.cand_offset.assign(kBlock + 1, 0);
      for (std::size_t t = b * kBlock; t < std::min(n, (b + 1) * kBlock); ++t) {
        const std::uint32_t s = old_of[t];
        const Block& ob = blocks_[s / kBlock];
        const std::size_t k = s % kBlock;
        nb.entries.insert(nb.entries.end(), ob.entries.begin() + ob.offset[k], ob.entries.begin() + ob.offset[k + 1]);
        nb.offset.push_back(static_cast<std::uint32_t>(nb.entries.size()));
      }
      nb.offset.resize(kBlock + 1, nb.offset.back());
    }
    blocks_.swap(blocks);
    permute(force_, old_of);
    permute(nc_force_, old_of);
    permute(moment_, old_of);
    if constexpr (kReleasing) permute(released_, old_of);
    std::fill(allowance_.begin(), allowance_.end(), -1.0);  // every candidate list is found again
  }

  void evaluate(const ParticleStore& s) override {
    if (skip_evaluate_) {
      skip_evaluate_ = false;
      return;
    }
    if (s.size() != force_.size())
      throw std::logic_error("mesh walls: the store has " + std::to_string(s.size()) + " particles, the provider " +
                             std::to_string(force_.size()));
    parallel_for_ranges(blocks_.size(), [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        refresh_candidates(s, b);
        evaluate_block(s, b);
      }
    }, 1);
    if (moves_) loads_ = sum_loads(s);  // at the positions of this evaluation
  }

  void add_body_forces(const ParticleStore&, std::size_t begin, std::size_t end, std::span<Vec3> force,
                       std::span<Vec3> moment) const override {
    for (std::size_t i = begin; i < end; ++i) {
      force[i] += force_[i];
      if constexpr (kKinetic) moment[i] += moment_[i];
    }
  }
  bool books_body_nonconservative() const override { return true; }
  void add_body_nonconservative(const ParticleStore&, std::size_t begin, std::size_t end, std::span<Vec3> nc_force,
                                std::span<Vec3> nc_moment) const override {
    if constexpr (kKinetic)
      for (std::size_t i = begin; i < end; ++i) {
        nc_force[i] += nc_force_[i];
        nc_moment[i] += moment_[i];
      }
  }

  /// U_wall: the law's conservative energy of every mesh contact.
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override {
    r.add("U_wall", exact_sum(s.size(), [&](std::size_t i) {
            double u = 0.0;
            if (!s.owns(i)) return u;
            const Block& b = blocks_[i / kBlock];
            const std::size_t k = i % kBlock;
            for (std::uint32_t c = b.offset[k]; c < b.offset[k + 1]; ++c) {
              const Entry& e = b.entries[c];
              u += law_wall_energy(law_, s, static_cast<std::uint32_t>(i), local_wall(e), e.state);
            }
            return u;
          }));
  }

  ExactSum released_energy(const ParticleStore& s) const override {
    if constexpr (!kReleasing) return ExactSum();
    else return exact_sum(s.size(), [&](std::size_t i) { return s.owns(i) ? released_[i] : 0.0; });
  }

  ExactSum nonconservative_power(const ParticleStore& s, std::span<const Vec3> u,
                                 std::span<const Vec3> w) const override {
    if constexpr (!kKinetic) return ExactSum();
    else return wall_nonconservative_power(s, nc_force_, moment_, u, w);
  }

  // MovingBoundary (core/force_provider.hpp): one boundary per mesh, its
  // moments about its rotation centre c(t).
  std::size_t boundary_count() const override { return meshes_.size(); }
  void boundary_loads(const ParticleStore& s, std::vector<BoundaryLoad>& out) const override {
    const std::vector<Sums> now = moves_ ? std::vector<Sums>() : sum_loads(s);
    for (std::size_t m = 0; m < meshes_.size(); ++m) {
      BoundaryLoad l;
      l.name = meshes_[m].name;
      if (!moves_) l.sums = now[m];
      else if (m < loads_.size()) l.sums = loads_[m];
      l.centre = poses_[m].centre;
      l.velocity = meshes_[m].motion.velocity;
      l.angular_velocity = meshes_[m].motion.angular_velocity;
      l.displacement = meshes_[m].motion.velocity.norm() * time_;
      out.push_back(std::move(l));
    }
  }
  bool moves() const override { return moves_; }
  /// The meshes' poses at t; their velocities are constant.
  void advance(double t, double, std::span<BoundaryLoad> loads) override {
    set_time(t);
    for (std::size_t m = 0; m < meshes_.size() && m < loads.size(); ++m) {
      loads[m].velocity = meshes_[m].motion.velocity;
      loads[m].angular_velocity = meshes_[m].motion.angular_velocity;
    }
  }

  /// Contacts in the last evaluation (all particles).
  std::size_t contact_count() const {
    std::size_t c = 0;
    for (const Block& b : blocks_) c += b.entries.size();
    return c;
  }
  /// The contacts of particle slot i: (key, local wall point, normal).
  std::vector<std::pair<std::uint64_t, Wall>> contacts_of(std::size_t i) const {
    std::vector<std::pair<std::uint64_t, Wall>> out;
    const Block& b = blocks_[i / kBlock];
    for (std::uint32_t c = b.offset[i % kBlock]; c < b.offset[i % kBlock + 1]; ++c)
      out.emplace_back(b.entries[c].key, local_wall(b.entries[c]));
    return out;
  }

  /// Where meshes move, first their clock (a record of id kTimeRecord: the
  /// same on every rank); then per particle this process owns: id, its
  /// contacts and slots as save() writes them.
  void pack_history(const ParticleStore& s, ByteWriter& w) const override {
    if (moves_) {
      w.u32(kTimeRecord);
      w.f64(time_);
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!s.owns(i)) continue;
      w.u32(s.id[i]);
      write_particle(w, i);
    }
  }

  std::unique_ptr<ForceProvider> make_part(const ParticleStore& part, const PartMap& map) const override {
    auto p = std::make_unique<MeshContactProvider>(meshes_, law_, part.size(), skin_, reach_, name_);
    p->set_time(time_);
    if (map.history.empty()) return p;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id(part.size());
    for (std::size_t i = 0; i < part.size(); ++i) by_id[i] = {part.id[i], static_cast<std::uint32_t>(i)};
    std::sort(by_id.begin(), by_id.end());
    // Each particle's record, by its slot in the part.
    std::vector<std::vector<Entry>> entries(part.size());
    ByteReader r(map.history);
    bool timed = false;
    while (r.remaining() > 0) {
      const std::uint32_t id = r.u32("mesh history particle id");
      if (id == kTimeRecord) {  // every rank's copy of the same clock: take the first
        const double t = r.f64("mesh time");
        if (!timed) p->set_time(t);
        timed = true;
        continue;
      }
      std::vector<Entry> mine;
      Vec3 f, nc, m;
      read_particle(r, mine, f, nc, m);
      const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(id, 0u));
      if (it == by_id.end() || it->first != id) continue;
      entries[it->second] = std::move(mine);
      p->force_[it->second] = f;
      p->nc_force_[it->second] = nc;
      p->moment_[it->second] = m;
    }
    p->fill_blocks(entries);
    if (p->moves_) p->loads_ = p->sum_loads(part);
    p->skip_evaluate_ = true;
    return p;
  }

  /// Section: the law, the meshes, skin, reach, time; the particle count,
  /// then per particle its contacts (u64 count; per contact u64 key, the
  /// law's State, the local wall's point and normal, the force and moment
  /// on the particle) and its force, non-conservative force and moment.
  void save(ByteWriter& w) const override {
    law_.save(w);
    save_mesh_walls(w, meshes_);
    w.f64(skin_);
    w.f64(reach_);
    w.f64(time_);
    w.u64(force_.size());
    for (std::size_t i = 0; i < force_.size(); ++i) write_particle(w, i);
  }

  /// The provider save() wrote; StateError if anything is inconsistent with `s`.
  static std::unique_ptr<MeshContactProvider> load(ByteReader& r, const ParticleStore& s, std::string name) {
    Law law = Law::load(r);
    std::vector<MeshWall> meshes = load_mesh_walls(r);
    const double skin = r.f64("mesh skin"), reach = r.f64("mesh reach"), t = r.f64("mesh time");
    const std::uint64_t n = r.u64("mesh particle count");
    if (n != s.size())
      throw StateError("inconsistent: mesh contacts for " + std::to_string(n) + " particles, the store has " +
                       std::to_string(s.size()));
    std::unique_ptr<MeshContactProvider> p;
    try {
      p = std::make_unique<MeshContactProvider>(std::move(meshes), std::move(law), n, skin, reach, std::move(name));
    } catch (const std::invalid_argument& e) {
      throw StateError(std::string("inconsistent: ") + e.what());
    }
    p->set_time(t);
    std::vector<std::vector<Entry>> entries(n);
    for (std::size_t i = 0; i < n; ++i) {
      p->read_particle(r, entries[i], p->force_[i], p->nc_force_[i], p->moment_[i]);
      for (const Entry& e : entries[i])
        if ((e.key >> 32) >= p->meshes_.size() ||
            (e.key & 0xffffffffu) >= p->meshes_[e.key >> 32].mesh->feature_count())
          throw StateError("inconsistent: a mesh contact names a feature the meshes do not have");
    }
    p->fill_blocks(entries);
    if (p->moves_) p->loads_ = p->sum_loads(s);
    p->skip_evaluate_ = true;
    return p;
  }

 private:
  /// The id of pack_history's clock record (never a particle's).
  static constexpr std::uint32_t kTimeRecord = 0xffffffffu;
  struct Entry {
    std::uint64_t key = 0;
    State state{};
    Vec3 point = Vec3::Zero(), normal = Vec3::UnitZ();  ///< the local wall (world frame)
    Vec3 force = Vec3::Zero(), nc = Vec3::Zero(), moment = Vec3::Zero();  ///< on the particle
  };
  using Sums = std::array<ExactSum, BoundaryLoad::kSums>;

  /// Per mesh, the loads on it of the particles this process owns
  /// (BoundaryLoad::sums), moments about its centre c(t), at the present
  /// positions.
  std::vector<Sums> sum_loads(const ParticleStore& s) const {
    std::vector<BoundaryLoad> acc(meshes_.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!s.owns(i)) continue;
      const Block& b = blocks_[i / kBlock];
      const std::size_t k = i % kBlock;
      for (std::uint32_t c = b.offset[k]; c < b.offset[k + 1]; ++c) {
        const Entry& e = b.entries[c];
        const std::size_t m = e.key >> 32;
        const Vec3 arm = s.position[i] - poses_[m].centre;
        acc[m].add(-e.force, -(arm.cross(e.force) + e.moment), -e.nc, -(arm.cross(e.nc) + e.moment));
      }
    }
    std::vector<Sums> out;
    for (BoundaryLoad& l : acc) out.push_back(l.sums);
    return out;
  }
  struct Block {
    std::vector<std::uint32_t> offset;  ///< kBlock + 1: contacts of each slot in entries
    std::vector<Entry> entries, next;
    std::vector<std::uint32_t> next_offset;
    std::vector<std::uint32_t> cand_offset;  ///< kBlock + 1: candidates of each slot in cand
    std::vector<std::uint64_t> cand, cand_next;
    std::vector<std::uint32_t> cand_next_offset;
    MeshContactScratch scratch;
    std::vector<MeshContact> found;
    std::vector<Vec3> contact;  ///< moving meshes: the contact points of the slot being evaluated (world)
    std::vector<std::uint8_t> taken;
  };

  template <class T>
  static void permute(std::vector<T>& v, const std::vector<std::uint32_t>& old_of) {
    std::vector<T> out(v.size());
    for (std::size_t t = 0; t < out.size(); ++t) out[t] = v[old_of[t]];
    v.swap(out);
  }

  void resize(std::size_t n) {
    force_.assign(n, Vec3::Zero());
    nc_force_.assign(n, Vec3::Zero());
    moment_.assign(n, Vec3::Zero());
    if constexpr (kReleasing) released_.assign(n, 0.0);
    blocks_.assign((n + kBlock - 1) / kBlock, Block{});
    for (Block& b : blocks_) {
      b.offset.assign(kBlock + 1, 0);
      b.cand_offset.assign(kBlock + 1, 0);
    }
    built_at_.assign(n * meshes_.size(), Vec3::Zero());
    allowance_.assign(n * meshes_.size(), -1.0);
  }

  /// Puts each particle's contacts (by slot) into the blocks.
  void fill_blocks(std::vector<std::vector<Entry>>& entries) {
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      Block& blk = blocks_[b];
      blk.entries.clear();
      for (std::size_t k = 0; k < kBlock; ++k) {
        const std::size_t i = b * kBlock + k;
        if (i < entries.size()) blk.entries.insert(blk.entries.end(), entries[i].begin(), entries[i].end());
        blk.offset[k + 1] = static_cast<std::uint32_t>(blk.entries.size());
      }
    }
  }

  Wall local_wall(const Entry& e) const {
    const MeshWall& m = meshes_[e.key >> 32];
    Wall w;
    w.point = e.point;
    w.normal = e.normal;
    w.stiffness = m.stiffness;
    w.material = m.material;
    return w;
  }

  void write_particle(ByteWriter& w, std::size_t i) const {
    const Block& b = blocks_[i / kBlock];
    const std::size_t k = i % kBlock;
    w.u64(b.offset[k + 1] - b.offset[k]);
    for (std::uint32_t c = b.offset[k]; c < b.offset[k + 1]; ++c) {
      const Entry& e = b.entries[c];
      w.u64(e.key);
      law_.save_state(w, e.state);
      for (const Vec3* v : {&e.point, &e.normal, &e.force, &e.nc, &e.moment}) w.vec3(*v);
    }
    w.vec3(force_[i]);
    w.vec3(nc_force_[i]);
    w.vec3(moment_[i]);
  }

  void read_particle(ByteReader& r, std::vector<Entry>& out, Vec3& f, Vec3& nc, Vec3& m) const {
    const std::size_t count = r.count("mesh contacts", 8 + saved_state_bytes(law_) + 120);
    out.resize(count);
    for (Entry& e : out) {
      e.key = r.u64("mesh contact key");
      e.state = law_.load_state(r);
      e.point = r.vec3("mesh contact point");
      e.normal = r.vec3("mesh contact normal");
      e.force = r.vec3("mesh contact force");
      e.nc = r.vec3("mesh contact force");
      e.moment = r.vec3("mesh contact moment");
    }
    for (std::size_t k = 1; k < count; ++k)
      if (!(out[k - 1].key < out[k].key)) throw StateError("inconsistent: mesh contacts out of order");
    f = r.vec3("mesh force");
    nc = r.vec3("mesh force");
    m = r.vec3("mesh moment");
  }

  /// Finds the candidates again of the particles of block b that moved
  /// beyond their allowance relative to a mesh.
  void refresh_candidates(const ParticleStore& s, std::size_t b) {
    Block& blk = blocks_[b];
    const std::size_t begin = b * kBlock, end = std::min(s.size(), begin + kBlock);
    const std::size_t meshes = meshes_.size();
    std::array<std::uint8_t, kBlock> due{};
    bool any = false;
    for (std::size_t i = begin; i < end; ++i)
      for (std::size_t m = 0; m < meshes; ++m) {
        const double a = allowance_[i * meshes + m];
        const Vec3 y = poses_[m].to_body(s.position[i]);
        if (!(a >= 0.0 && (y - built_at_[i * meshes + m]).squaredNorm() <= a * a)) {
          due[i - begin] = 1;
          any = true;
        }
      }
    if (!any) return;
    blk.cand_next.clear();
    blk.cand_next_offset.assign(1, 0);
    for (std::size_t i = begin; i < begin + kBlock; ++i) {
      const std::size_t k = i - begin;
      if (i >= end || !due[k]) {
        blk.cand_next.insert(blk.cand_next.end(), blk.cand.begin() + blk.cand_offset[k],
                             blk.cand.begin() + blk.cand_offset[k + 1]);
      } else {
        for (std::size_t m = 0; m < meshes; ++m) {
          const TriangleMesh& mesh = *meshes_[m].mesh;
          const Vec3 y = poses_[m].to_body(s.position[i]);
          const double contact = s.radius[i] + reach_;
          auto& tri = blk.scratch.triangles;
          tri.clear();
          mesh.tree().query(y, contact + skin_, tri);
          std::sort(tri.begin(), tri.end());
          for (const std::uint32_t t : tri) blk.cand_next.push_back((static_cast<std::uint64_t>(m) << 32) | t);
          double allowance = skin_;
          if (tri.empty()) {
            const Vec3 gap = (mesh.lower() - y).cwiseMax(y - mesh.upper()).cwiseMax(0.0);
            allowance = std::max(skin_, gap.norm() - contact);
          }
          built_at_[i * meshes + m] = y;
          allowance_[i * meshes + m] = allowance;
        }
      }
      blk.cand_next_offset.push_back(static_cast<std::uint32_t>(blk.cand_next.size()));
    }
    blk.cand.swap(blk.cand_next);
    blk.cand_offset.swap(blk.cand_next_offset);
  }

  /// Contacts, history and forces of the particles of block b.
  void evaluate_block(const ParticleStore& s, std::size_t b) {
    Block& blk = blocks_[b];
    const std::size_t begin = b * kBlock, end = std::min(s.size(), begin + kBlock);
    blk.next.clear();
    blk.next_offset.assign(1, 0);
    for (std::size_t i = begin; i < begin + kBlock; ++i) {
      if (i < end) evaluate_particle(s, blk, i);
      blk.next_offset.push_back(static_cast<std::uint32_t>(blk.next.size()));
    }
    blk.entries.swap(blk.next);
    blk.offset.swap(blk.next_offset);
  }

  void evaluate_particle(const ParticleStore& s, Block& blk, std::size_t i) {
    const std::size_t k = i % kBlock;
    const std::size_t first_new = blk.next.size();
    if (moves_) blk.contact.clear();
    const std::uint32_t c0 = blk.cand_offset[k], c1 = blk.cand_offset[k + 1];
    // The contacts, mesh by mesh (keys ascending).
    for (std::uint32_t c = c0; c < c1;) {
      const std::uint64_t m = blk.cand[c] >> 32;
      auto& tri = blk.scratch.triangles;
      tri.clear();
      for (; c < c1 && (blk.cand[c] >> 32) == m; ++c) tri.push_back(static_cast<std::uint32_t>(blk.cand[c]));
      const MeshPose& pose = poses_[m];
      blk.found.clear();
      mesh_contacts(*meshes_[m].mesh, pose.to_body(s.position[i]), s.radius[i], reach_, tri, blk.scratch, blk.found);
      for (const MeshContact& mc : blk.found) {
        if (moves_) blk.contact.push_back(pose.to_world(mc.contact));
        Entry e;
        e.key = (m << 32) | mc.feature;
        e.point = pose.to_world(mc.point);
        e.normal = pose.direction_to_world(mc.normal);
        blk.next.push_back(e);
      }
    }
    carry_history(blk, k, first_new);
    Vec3 f = Vec3::Zero(), nc = Vec3::Zero(), mo = Vec3::Zero();
    double released = 0.0;
    for (std::size_t c = first_new; c < blk.next.size(); ++c) {
      Entry& e = blk.next[c];
      PairOutput out;
      Wall w = local_wall(e);
      if (moves_) w.velocity = poses_[e.key >> 32].velocity_at(blk.contact[c - first_new]);
      law_.evaluate_wall(s, static_cast<std::uint32_t>(i), w, e.state, out);
      e.force = out.force;
      e.nc = out.nc_force;
      e.moment = out.moment_i;
      f += out.force;
      nc += out.nc_force;
      mo += out.moment_i;
      released += out.released;
    }
    force_[i] = f;
    nc_force_[i] = nc;
    moment_[i] = mo;
    if constexpr (kReleasing) released_[i] = released;
  }

  /// The new contacts blk.next[first_new ..] of slot k take the State of the
  /// same key from the last evaluation, or else of an adjacent feature of the
  /// same mesh that left contact (the first in key order not yet taken).
  void carry_history(Block& blk, std::size_t k, std::size_t first_new) {
    if constexpr (!kKinetic) return;
    const std::uint32_t o0 = blk.offset[k], o1 = blk.offset[k + 1];
    if (o0 == o1) return;
    blk.taken.assign(o1 - o0, 0);
    std::uint32_t o = o0;
    bool unmatched = false;
    for (std::size_t c = first_new; c < blk.next.size(); ++c) {
      Entry& e = blk.next[c];
      while (o < o1 && blk.entries[o].key < e.key) ++o;
      if (o < o1 && blk.entries[o].key == e.key) {
        e.state = blk.entries[o].state;
        blk.taken[o - o0] = 2;  // matched: 2 marks "still in contact"
      } else {
        unmatched = true;
      }
    }
    if (!unmatched) return;
    for (std::size_t c = first_new; c < blk.next.size(); ++c) {
      Entry& e = blk.next[c];
      bool same = false;
      for (std::uint32_t q = o0; q < o1 && !same; ++q) same = blk.entries[q].key == e.key;
      if (same) continue;
      const std::uint64_t mesh = e.key >> 32;
      const TriangleMesh& geometry = *meshes_[mesh].mesh;
      for (std::uint32_t q = o0; q < o1; ++q) {
        const Entry& old = blk.entries[q];
        if (blk.taken[q - o0] != 0 || (old.key >> 32) != mesh) continue;
        if (!geometry.adjacent(static_cast<std::uint32_t>(old.key), static_cast<std::uint32_t>(e.key))) continue;
        e.state = old.state;
        blk.taken[q - o0] = 1;
        break;
      }
    }
  }

  std::vector<MeshWall> meshes_;
  Law law_;
  std::string name_;
  double skin_ = 0.0, reach_ = 0.0, time_ = 0.0;
  std::vector<MeshPose> poses_;
  std::vector<Block> blocks_;
  std::vector<Vec3> force_, nc_force_, moment_;  ///< per particle slot
  std::vector<double> released_;                 ///< per particle slot (releasing laws)
  std::vector<Vec3> built_at_;                   ///< [slot * meshes + mesh]: body position when the candidates were found
  std::vector<double> allowance_;                ///< [slot * meshes + mesh]: < 0: find them again
  bool skip_evaluate_ = false;                   ///< restored slots stand for the next evaluate()
  bool moves_ = false;                           ///< some mesh has a motion
  std::vector<Sums> loads_;                      ///< moving meshes: the loads of the last evaluate()
};

/// The providers the registry's laws make for a scene's meshes.
using PlaneMeshProvider = MeshContactProvider<PlaneMeshLaw>;

}  // namespace dem
