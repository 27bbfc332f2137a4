#pragma once
/// \file wall_contact_provider.hpp
/// Plane walls for any kinetic contact law (one with per-contact history,
/// velocities and moments, contact/contact_provider.hpp) as a one-body force
/// provider. A wall is the law's pair contact against a body of infinite
/// radius and mass at rest, of the wall's material (Wall::material) or, by
/// default, of the touching particle's own (docs/model.md §11.2); the law
/// supplies it:
///
///   void evaluate_wall(const ParticleStore&, uint32 i, const Wall&, State&, PairOutput&) const;
///     (out.moment_j unused)
///   double wall_energy(const ParticleStore&, uint32 i, const Wall&) const;
///     (or, for a law whose energy depends on the contact's state, the same
///     with a last argument `const State&`)
///   std::size_t material_count() const;   (a wall's material is below it)
///   static constexpr std::size_t kStateBytes;   (bytes save_state writes), or
///   std::size_t saved_state_bytes() const;       (where they depend on the law's options)
///
/// and save/load/save_state/load_state/set_time_step as for its pairs. So a
/// law written for ContactProvider gets walls by defining these two
/// functions; the provider never names a law.
///
/// Per particle and wall it keeps the law's State, which follows the
/// particles when they are re-ordered and goes into checkpoints and MPI
/// parts. evaluate() advances the history and writes each particle's wall
/// force, its non-conservative part and its moment (walls in order) into
/// per-particle slots; the gather adds them. A checkpoint keeps these slots,
/// so that a restart does not advance the history a second time at the
/// checkpoint's configuration.
///
/// The walls may move (contact/wall_motion.hpp, docs/model.md §11.8): as a
/// MovingBoundary it reports each wall's load, from per-particle-and-wall
/// result slots kept beside the per-particle sums (where there are two
/// walls or more), and advances the moving walls; the law sees the wall's
/// velocity (Wall::velocity) in the contact's relative velocity.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/contact_provider.hpp"
#include "contact/wall_motion.hpp"
#include "core/force_provider.hpp"
#include "core/parallel.hpp"

namespace dem {

/// Laws whose wall energy depends on the contact's state (an adhesive
/// contact stretched beyond zero overlap, docs/model.md §11.7).
template <class Law>
concept StatefulWallEnergy = requires(const Law& law, const ParticleStore& s, const typename Law::State& st) {
  { law.wall_energy(s, std::uint32_t{0}, Wall{}, st) } -> std::convertible_to<double>;
};

/// The law's conservative energy of particle i's contact with `wall`, with
/// its contact state for laws whose energy reads it (StatefulWallEnergy).
template <class Law, class State>
double law_wall_energy(const Law& law, const ParticleStore& s, std::uint32_t i, const Wall& wall, const State& state) {
  if constexpr (StatefulWallEnergy<Law>)
    return law.wall_energy(s, i, wall, state);
  else
    return law.wall_energy(s, i, wall);
}

/// sum over the particles this process owns of F^nc_i . u_i + M_i . w_i:
/// the power of a wall provider's non-conservative forces and moments
/// (per-particle slots) at the velocities u, w. Particles touching no wall
/// (zero slots) add nothing, for finite u, w.
inline ExactSum wall_nonconservative_power(const ParticleStore& s, std::span<const Vec3> nc_force,
                                           std::span<const Vec3> moment, std::span<const Vec3> u,
                                           std::span<const Vec3> w) {
  return exact_sum(s.size(), [&](std::size_t i) {
    if (!s.owns(i) || ((nc_force[i].array() == 0.0).all() && (moment[i].array() == 0.0).all())) return 0.0;
    return nc_force[i].dot(u[i]) + moment[i].dot(w[i]);
  });
}

/// Laws whose saved state size depends on their options (a Hertz-Mindlin
/// contact with a twisting model, docs/model.md §11.6) give it per law.
template <class Law>
concept OptionalStateBytes = requires(const Law& law) {
  { law.saved_state_bytes() } -> std::convertible_to<std::size_t>;
};

/// The bytes the law's save_state writes per contact.
template <class Law>
std::size_t saved_state_bytes(const Law& law) {
  if constexpr (OptionalStateBytes<Law>) return law.saved_state_bytes();
  else return Law::kStateBytes;
}

/// Laws that give plane walls (see the file comment).
template <class Law>
concept WallLawContract = requires(const Law& law, const ParticleStore& s, typename Law::State& st, PairOutput& out) {
  law.evaluate_wall(s, std::uint32_t{0}, Wall{}, st, out);
  { law.material_count() } -> std::convertible_to<std::size_t>;
} && (OptionalStateBytes<Law> || requires {
  { Law::kStateBytes } -> std::convertible_to<std::size_t>;
}) && (StatefulWallEnergy<Law> || requires(const Law& law, const ParticleStore& s) {
  { law.wall_energy(s, std::uint32_t{0}, Wall{}) } -> std::convertible_to<double>;
});

/// Laws whose wall contact with a fresh State{} gives a zero output and
/// leaves State{} wherever the particle does not overlap the wall, that is
/// where (x_i - x_w).n - r_i >= 0 (no contact at a distance):
/// `static constexpr bool kWallContactOnOverlap = true`. The provider then
/// skips the particles that cannot have reached a wall since they were last
/// seen clear of all of them (WallContactProvider::evaluate).
template <class Law>
concept OverlapWallLaw = requires { requires Law::kWallContactOnOverlap; };

template <WallLawContract Law>
class WallContactProvider final : public ForceProvider,
                                  public DissipationLedger,
                                  public Decomposable,
                                  public MovingBoundary,
                                  public MovableWalls {
 public:
  using State = typename Law::State;
  using Sums = std::array<ExactSum, BoundaryLoad::kSums>;
  static constexpr bool kReleasing = ReleasingLaw<Law>;

  /// walls: points, unit normals and materials (Wall::stiffness is not
  /// used); particle_count: the store's size; name: the provider's
  /// (checkpoint section) name. Throws std::invalid_argument for a point
  /// that is not finite, a normal that is not a unit vector (to 1e-12) or a
  /// material that is not the law's (nor Wall::kParticleMaterial).
  WallContactProvider(std::vector<Wall> walls, Law law, std::size_t particle_count, std::string name)
      : walls_(std::move(walls)), law_(std::move(law)), name_(std::move(name)) {
    for (std::size_t w = 0; w < walls_.size(); ++w) {
      if (!walls_[w].point.allFinite()) throw std::invalid_argument("wall " + std::to_string(w) + ": point is not finite");
      if (!(std::abs(walls_[w].normal.norm() - 1.0) < 1e-12))
        throw std::invalid_argument("wall " + std::to_string(w) + ": normal must be a unit vector");
      const std::uint32_t m = walls_[w].material;
      if (m != Wall::kParticleMaterial && m >= law_.material_count())
        throw std::invalid_argument("wall " + std::to_string(w) + ": material " + std::to_string(m) +
                                    " (the law has " + std::to_string(law_.material_count()) + ")");
    }
    state_.assign(particle_count * walls_.size(), State{});
    force_.assign(particle_count, Vec3::Zero());
    nc_force_.assign(particle_count, Vec3::Zero());
    moment_.assign(particle_count, Vec3::Zero());
    if (walls_.size() > 1)
      for (std::vector<Vec3>* v : {&wall_force_, &wall_nc_, &wall_moment_})
        v->assign(particle_count * walls_.size(), Vec3::Zero());
    if constexpr (kReleasing) released_.assign(particle_count, 0.0);
    motions_ = WallMotions(walls_.size());
  }

  std::string name() const override { return name_; }
  /// The ledger of its non-conservative forces (docs/model.md §11.3) and
  /// per-particle histories that move with their particles.
  ProviderCapabilities capabilities() override { return {.ledger = this, .decomposable = this, .boundary = this}; }
  void set_time_step(double h) override { law_.set_time_step(h); }
  bool dissipative() const override { return true; }

  void renumber(std::span<const std::uint32_t> new_slot) override {
    clearance_.clear();  // every particle is looked at again
    const std::size_t walls = walls_.size();
    std::vector<State> state(state_.size());
    std::vector<Vec3> f(force_.size()), nc(force_.size()), m(force_.size());
    for (std::size_t s = 0; s < new_slot.size(); ++s) {
      const std::size_t t = new_slot[s];
      for (std::size_t w = 0; w < walls; ++w) state[t * walls + w] = state_[s * walls + w];
      f[t] = force_[s];
      nc[t] = nc_force_[s];
      m[t] = moment_[s];
    }
    state_.swap(state);
    force_.swap(f);
    nc_force_.swap(nc);
    moment_.swap(m);
    for (std::vector<Vec3>* v : {&wall_force_, &wall_nc_, &wall_moment_}) {
      if (v->empty()) continue;
      std::vector<Vec3> x(v->size());
      for (std::size_t q = 0; q < new_slot.size(); ++q)
        for (std::size_t w = 0; w < walls; ++w) x[new_slot[q] * walls + w] = (*v)[q * walls + w];
      v->swap(x);
    }
    if constexpr (kReleasing) {
      std::vector<double> r(released_.size());
      for (std::size_t q = 0; q < new_slot.size(); ++q) r[new_slot[q]] = released_[q];
      released_.swap(r);
    }
  }

  void evaluate(const ParticleStore& s) override {
    if (skip_evaluate_) {
      skip_evaluate_ = false;
      if (moves_) loads_ = sum_loads(s);
      return;
    }
    const std::size_t walls = walls_.size();
    if constexpr (kSkipsClear)
      if (clearance_.size() != s.size()) {
        clearance_.assign(s.size(), -1.0);
        clear_at_.assign(s.size(), Vec3::Zero());
        clear_travel_.assign(s.size(), 0.0);
      }
    parallel_for_ranges(s.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        if constexpr (kSkipsClear) {
          if (still_clear(s, i)) {  // what the walls would give: zero slots, fresh states
            force_[i] = nc_force_[i] = moment_[i] = Vec3::Zero();
            if (walls > 1)
              for (std::size_t w = 0; w < walls; ++w)
                wall_force_[i * walls + w] = wall_nc_[i * walls + w] = wall_moment_[i * walls + w] = Vec3::Zero();
            continue;
          }
        }
        Vec3 f = Vec3::Zero(), nc = Vec3::Zero(), m = Vec3::Zero();
        double released = 0.0;
        for (std::size_t w = 0; w < walls; ++w) {
          PairOutput out;
          law_.evaluate_wall(s, static_cast<std::uint32_t>(i), walls_[w], state_[i * walls + w], out);
          f += out.force;
          nc += out.nc_force;
          m += out.moment_i;
          released += out.released;
          if (walls > 1) {
            wall_force_[i * walls + w] = out.force;
            wall_nc_[i * walls + w] = out.nc_force;
            wall_moment_[i * walls + w] = out.moment_i;
          }
        }
        force_[i] = f;
        nc_force_[i] = nc;
        moment_[i] = m;
        if constexpr (kReleasing) released_[i] = released;
        if constexpr (kSkipsClear) note_clearance(s, i);
      }
    });
    if (moves_) loads_ = sum_loads(s);
  }

  void add_body_forces(const ParticleStore&, std::size_t begin, std::size_t end, std::span<Vec3> force,
                       std::span<Vec3> moment) const override {
    for (std::size_t i = begin; i < end; ++i) {
      force[i] += force_[i];
      moment[i] += moment_[i];
    }
  }

  bool books_body_nonconservative() const override { return true; }
  void add_body_nonconservative(const ParticleStore&, std::size_t begin, std::size_t end, std::span<Vec3> nc_force,
                                std::span<Vec3> nc_moment) const override {
    for (std::size_t i = begin; i < end; ++i) {
      nc_force[i] += nc_force_[i];
      nc_moment[i] += moment_[i];
    }
  }

  /// U_wall: the law's conservative wall energy of each particle-wall contact.
  void add_potential_energies(const ParticleStore& s, EnergyReport& r) const override {
    r.add("U_wall", exact_sum(s.size(), [&](std::size_t i) {
            double u = 0.0;
            if (!s.owns(i)) return u;
            for (std::size_t w = 0; w < walls_.size(); ++w)
              u += law_wall_energy(law_, s, static_cast<std::uint32_t>(i), walls_[w], state_[i * walls_.size() + w]);
            return u;
          }));
  }

  /// The energy the contacts of the particles this process owns released
  /// in the last evaluate() (ReleasingLaw; zero for other laws).
  ExactSum released_energy(const ParticleStore& s) const override {
    if constexpr (!kReleasing) return ExactSum();
    else return exact_sum(s.size(), [&](std::size_t i) { return s.owns(i) ? released_[i] : 0.0; });
  }

  ExactSum nonconservative_power(const ParticleStore& s, std::span<const Vec3> u,
                                 std::span<const Vec3> w) const override {
    return wall_nonconservative_power(s, nc_force_, moment_, u, w);
  }

  /// Where walls move, first their motion state (a record of id
  /// kMotionRecord: the walls' points and WallMotions::save, the same on
  /// every rank); then per particle this process owns: id, its history
  /// with each wall, its slots (and, with two walls or more, its slots per
  /// wall).
  void pack_history(const ParticleStore& s, ByteWriter& w) const override {
    const std::size_t walls = walls_.size();
    if (moves_) {
      w.u32(kMotionRecord);
      for (const Wall& wall : walls_) w.vec3(wall.point);
      motions_.save(w, walls_);
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!s.owns(i)) continue;
      w.u32(s.id[i]);
      for (std::size_t k = 0; k < walls; ++k) law_.save_state(w, state_[i * walls + k]);
      w.vec3(force_[i]);
      w.vec3(nc_force_[i]);
      w.vec3(moment_[i]);
      if (walls > 1)
        for (std::size_t k = 0; k < walls; ++k) {
          w.vec3(wall_force_[i * walls + k]);
          w.vec3(wall_nc_[i * walls + k]);
          w.vec3(wall_moment_[i * walls + k]);
        }
    }
  }

  /// The same walls and law; each particle of the part takes its history
  /// and result slots from map.history (engine/partition.hpp).
  std::unique_ptr<ForceProvider> make_part(const ParticleStore& part, const PartMap& map) const override {
    auto p = std::make_unique<WallContactProvider>(walls_, law_, part.size(), name_);
    p->motions_ = motions_;
    p->moves_ = moves_;
    if (map.history.empty()) return p;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id(part.size());
    for (std::size_t i = 0; i < part.size(); ++i) by_id[i] = {part.id[i], static_cast<std::uint32_t>(i)};
    std::sort(by_id.begin(), by_id.end());
    const std::size_t walls = walls_.size();
    ByteReader r(map.history);
    std::vector<State> st(walls);
    std::vector<Vec3> per_wall(walls > 1 ? 3 * walls : 0);
    bool motion_read = false;
    while (r.remaining() > 0) {
      const std::uint32_t id = r.u32("wall history particle id");
      if (id == kMotionRecord) {  // every rank's copy of the same state: take the first
        std::vector<Wall> moved = walls_;
        for (Wall& wall : moved) wall.point = r.vec3("wall point");
        WallMotions motions = WallMotions::load(r, moved);
        if (!motion_read) {
          p->walls_ = std::move(moved);
          p->motions_ = std::move(motions);
          motion_read = true;
        }
        continue;
      }
      for (State& x : st) x = law_.load_state(r);
      const Vec3 f = r.vec3("wall force"), nc = r.vec3("wall force"), m = r.vec3("wall moment");
      for (Vec3& x : per_wall) x = r.vec3("wall slot");
      const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(id, 0u));
      if (it == by_id.end() || it->first != id) continue;
      const std::uint32_t i = it->second;
      for (std::size_t k = 0; k < walls; ++k) p->state_[i * walls + k] = st[k];
      p->force_[i] = f;
      p->nc_force_[i] = nc;
      p->moment_[i] = m;
      for (std::size_t k = 0; k < per_wall.size() / 3; ++k) {
        p->wall_force_[i * walls + k] = per_wall[3 * k];
        p->wall_nc_[i * walls + k] = per_wall[3 * k + 1];
        p->wall_moment_[i * walls + k] = per_wall[3 * k + 2];
      }
    }
    // The slots stand for the first evaluation (which would advance the history).
    p->skip_evaluate_ = true;
    return p;
  }

  /// Section: the law, the walls, then per particle and wall the state, and
  /// per particle the force, non-conservative force and moment slots; then,
  /// only where a wall has a material of its own or the motions must be
  /// kept (WallMotions::worth_saving), per wall a u32 material
  /// (Wall::kParticleMaterial: the particle's). A section that ends after
  /// the slots (every file before wall materials) has none. Then, where the
  /// motions must be kept, their block (WallMotions::save) and, with two
  /// walls or more, the slots per particle and wall (force, non-conservative
  /// force, moment); a section without them has walls at rest with default
  /// names, whose loads until the next evaluation count each particle's
  /// slots at its nearest wall.
  void save(ByteWriter& w) const override {
    law_.save(w);
    w.array(walls_, [](ByteWriter& ww, const Wall& wall) {
      ww.vec3(wall.point);
      ww.vec3(wall.normal);
    });
    w.u64(force_.size());
    for (const State& st : state_) law_.save_state(w, st);
    for (std::size_t i = 0; i < force_.size(); ++i) {
      w.vec3(force_[i]);
      w.vec3(nc_force_[i]);
      w.vec3(moment_[i]);
    }
    const bool motions = motions_.worth_saving();
    if (motions ||
        std::any_of(walls_.begin(), walls_.end(), [](const Wall& x) { return x.material != Wall::kParticleMaterial; }))
      for (const Wall& wall : walls_) w.u32(wall.material);
    if (!motions) return;
    motions_.save(w, walls_);
    for (std::size_t k = 0; k < wall_force_.size(); ++k) {
      w.vec3(wall_force_[k]);
      w.vec3(wall_nc_[k]);
      w.vec3(wall_moment_[k]);
    }
  }

  /// The provider save() wrote. Throws StateError if anything is
  /// inconsistent with `s` or cut short.
  static std::unique_ptr<WallContactProvider> load(ByteReader& r, const ParticleStore& s, std::string name) {
    Law law = Law::load(r);
    std::vector<Wall> walls;
    r.array(walls, 48, "wall", [](ByteReader& rr) {
      Wall w;
      w.point = rr.vec3("walls");
      w.normal = rr.vec3("walls");
      return w;
    });
    const std::uint64_t n = r.u64("wall particle count");
    if (n != s.size())
      throw StateError("inconsistent: wall history for " + std::to_string(n) + " particles, the store has " +
                       std::to_string(s.size()));
    std::unique_ptr<WallContactProvider> p;
    try {
      p = std::make_unique<WallContactProvider>(std::move(walls), std::move(law), n, std::move(name));
    } catch (const std::invalid_argument& e) {
      throw StateError(std::string("inconsistent: ") + e.what());
    }
    if (p->state_.size() > r.remaining() / saved_state_bytes(p->law_))
      throw StateError("truncated: the wall history is cut short");
    for (State& st : p->state_) st = p->law_.load_state(r);
    if (n > r.remaining() / 72) throw StateError("truncated: the wall results are cut short");
    for (std::size_t i = 0; i < n; ++i) {
      p->force_[i] = r.vec3("wall force");
      p->nc_force_[i] = r.vec3("wall force");
      p->moment_[i] = r.vec3("wall moment");
    }
    if (r.remaining() > 0) p->load_wall_materials(r);
    if (WallMotions::block_follows(r)) {
      p->motions_ = WallMotions::load(r, p->walls_);
      p->moves_ = p->motions_.moves();
      if (p->wall_force_.size() > r.remaining() / 72) throw StateError("truncated: the wall slots are cut short");
      for (std::size_t k = 0; k < p->wall_force_.size(); ++k) {
        p->wall_force_[k] = r.vec3("wall slot");
        p->wall_nc_[k] = r.vec3("wall slot");
        p->wall_moment_[k] = r.vec3("wall slot");
      }
    } else {
      p->slots_at_nearest_wall(s);
    }
    p->skip_evaluate_ = true;
    return p;
  }

  /// Sets the walls' motions (one per wall; contact/wall_motion.hpp), from
  /// t = 0 at the walls' present points. Throws std::invalid_argument
  /// naming the wall for a bad motion.
  void set_motions(std::vector<WallMotion> motions) override {
    motions_ = WallMotions(walls_, std::move(motions));
    motions_.set_initial_velocities(walls_);
    moves_ = motions_.moves();
  }
  const WallMotions& motions() const { return motions_; }

  // MovingBoundary (core/force_provider.hpp)
  std::size_t boundary_count() const override { return walls_.size(); }
  void boundary_loads(const ParticleStore& s, std::vector<BoundaryLoad>& out) const override {
    const std::vector<Sums> now = moves_ ? std::vector<Sums>() : sum_loads(s);
    for (std::size_t w = 0; w < walls_.size(); ++w) {
      BoundaryLoad l;
      motions_.describe(walls_, w, l);
      if (!moves_) l.sums = now[w];
      else if (w < loads_.size()) l.sums = loads_[w];
      out.push_back(std::move(l));
    }
  }
  bool moves() const override { return moves_; }
  void advance(double t, double h, std::span<BoundaryLoad> loads) override {
    travel_ += motions_.advance(walls_, t, h, loads);
  }

  const std::vector<Wall>& walls() const { return walls_; }
  const Law& law() const { return law_; }
  /// Per particle and wall, particle-major: [slot * walls + wall].
  const std::vector<State>& state() const { return state_; }

 private:
  static constexpr bool kSkipsClear = OverlapWallLaw<Law>;
  /// The id of pack_history's motion record (never a particle's).
  static constexpr std::uint32_t kMotionRecord = 0xffffffffu;

  Vec3 slot_force(std::size_t i, std::size_t w) const { return wall_force_.empty() ? force_[i] : wall_force_[i * walls_.size() + w]; }
  Vec3 slot_nc(std::size_t i, std::size_t w) const { return wall_nc_.empty() ? nc_force_[i] : wall_nc_[i * walls_.size() + w]; }
  Vec3 slot_moment(std::size_t i, std::size_t w) const {
    return wall_moment_.empty() ? moment_[i] : wall_moment_[i * walls_.size() + w];
  }

  /// Per wall, the loads on it of the particles this process owns from
  /// their slots, moments about the wall's point at the present positions.
  std::vector<Sums> sum_loads(const ParticleStore& s) const {
    std::vector<Sums> out;
    for (std::size_t w = 0; w < walls_.size(); ++w) {
      const Vec3 c = walls_[w].point;
      out.push_back(exact_sums<BoundaryLoad::kSums>(s.size(), [&](std::size_t i, Sums& t) {
        if (!s.owns(i)) return;
        const Vec3 f = slot_force(i, w), nc = slot_nc(i, w), m = slot_moment(i, w);
        if ((f.array() == 0.0).all() && (nc.array() == 0.0).all() && (m.array() == 0.0).all()) return;
        const Vec3 arm = s.position[i] - c;
        const Vec3 mf = arm.cross(f) + m, mnc = arm.cross(nc) + m;  // every moment is non-conservative
        for (int a = 0; a < 3; ++a) {
          t[BoundaryLoad::kForce + a].add(-f[a]);
          t[BoundaryLoad::kMoment + a].add(-mf[a]);
          t[BoundaryLoad::kNcForce + a].add(-nc[a]);
          t[BoundaryLoad::kNcMoment + a].add(-mnc[a]);
        }
      }));
    }
    return out;
  }

  /// A section without slots per wall: each particle's slots count at the
  /// wall nearest to it (exact with one wall or one wall touched).
  void slots_at_nearest_wall(const ParticleStore& s) {
    const std::size_t walls = walls_.size();
    if (walls < 2) return;
    for (std::size_t i = 0; i < force_.size(); ++i) {
      std::size_t best = 0;
      double gap = std::numeric_limits<double>::infinity();
      for (std::size_t w = 0; w < walls; ++w) {
        const double g = (s.position[i] - walls_[w].point).dot(walls_[w].normal);
        if (g < gap) gap = g, best = w;
      }
      wall_force_[i * walls + best] = force_[i];
      wall_nc_[i * walls + best] = nc_force_[i];
      wall_moment_[i * walls + best] = moment_[i];
    }
  }

  /// Whether particle i is still clear of every wall: it was at clear_at_[i],
  /// by clearance_[i] > 0 (half its smallest gap there), and has moved less
  /// than that since. Its wall states are then fresh (the evaluation that
  /// found the gaps reset them), and an evaluation would give zero slots.
  /// Moving walls: less the distance the walls have moved since.
  bool still_clear(const ParticleStore& s, std::size_t i) const {
    const double c = clearance_[i] - (travel_ - clear_travel_[i]);
    return c > 0.0 && (s.position[i] - clear_at_[i]).squaredNorm() < c * c;
  }
  /// After particle i's evaluation: where it overlaps no wall, half its
  /// smallest gap (x_i - x_w).n - r_i, less a margin for the rounding of
  /// the gaps, becomes its clearance; else none (-1).
  void note_clearance(const ParticleStore& s, std::size_t i) {
    const Vec3& x = s.position[i];
    double gap = std::numeric_limits<double>::infinity(), scale = s.radius[i] + x.cwiseAbs().maxCoeff();
    for (const Wall& w : walls_) {
      gap = std::min(gap, (x - w.point).dot(w.normal) - s.radius[i]);
      scale = std::max(scale, s.radius[i] + x.cwiseAbs().maxCoeff() + w.point.cwiseAbs().maxCoeff());
    }
    const double margin = 1e-12 * scale;
    clearance_[i] = gap > 4.0 * margin ? 0.5 * gap - margin : -1.0;
    clear_at_[i] = x;
    clear_travel_[i] = travel_;
  }

  /// The walls' materials at the end of a section (save()).
  void load_wall_materials(ByteReader& r) {
    for (std::size_t w = 0; w < walls_.size(); ++w) {
      const std::uint32_t m = r.u32("wall material");
      if (m != Wall::kParticleMaterial && m >= law_.material_count())
        throw StateError("inconsistent: wall " + std::to_string(w) + " of material " + std::to_string(m) +
                         ", the law has " + std::to_string(law_.material_count()));
      walls_[w].material = m;
    }
  }

  std::vector<Wall> walls_;
  Law law_;
  std::string name_;
  std::vector<State> state_;                     ///< particle-major: [slot * walls + wall]
  std::vector<Vec3> force_, nc_force_, moment_;  ///< per particle slot
  /// Releasing laws: per particle slot, the energy its wall contacts
  /// released in the last evaluation (not in checkpoints, as for pairs).
  std::vector<double> released_;
  bool skip_evaluate_ = false;                   ///< restored slots stand for the next evaluate()
  /// OverlapWallLaw: per particle slot, the distance it may move from
  /// clear_at_ and still touch no wall (<= 0: evaluate it); empty after a
  /// re-ordering or a restore (all are evaluated). Walls that move take the
  /// distance they moved off (travel_, clear_travel_).
  std::vector<double> clearance_;
  std::vector<Vec3> clear_at_;
  std::vector<double> clear_travel_;  ///< travel_ when clear_at_ was noted
  /// The sum over steps of the largest distance a wall moved in each: an
  /// upper bound of any wall's approach since a particle was seen clear.
  double travel_ = 0.0;
  /// With two walls or more, per particle and wall ([slot * walls + wall]):
  /// the force, non-conservative force and moment of that wall alone (the
  /// walls' loads); empty with one wall (the per-particle slots are its).
  std::vector<Vec3> wall_force_, wall_nc_, wall_moment_;
  WallMotions motions_;
  bool moves_ = false;
  std::vector<Sums> loads_;  ///< where walls move: per wall, from the last evaluate()
};

}  // namespace dem
