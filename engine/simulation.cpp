#include "engine/simulation.hpp"

#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include <algorithm>

#include "core/format.hpp"
#include "core/parallel.hpp"
#include "engine/cell_work.hpp"
#include "engine/reorder.hpp"

namespace dem {

Simulation::Simulation(ParticleStore particles, ForceField forces, IntegratorMap map, double time_step)
    : Simulation(std::move(particles), std::move(forces), {}, map, time_step, 0) {}

Simulation::Simulation(ParticleStore particles, ForceField forces, IntegratorMap map, double time_step,
                       std::size_t steps_done)
    : Simulation(std::move(particles), std::move(forces), {}, map, time_step, steps_done) {}

Simulation::Simulation(ParticleStore particles, ForceField forces, std::vector<Clump> clumps, IntegratorMap map,
                       double time_step, std::size_t steps_done)
    : Simulation(std::move(particles), std::move(forces), std::move(clumps), map, time_step, steps_done, Start{}) {}

Simulation::Simulation(ParticleStore particles, ForceField forces, std::vector<Clump> clumps, IntegratorMap map,
                       double time_step, std::size_t steps_done, Start how)
    : particles_(std::move(particles)),
      forces_(std::move(forces)),
      clumps_(std::move(clumps)),
      map_(map),
      h_(time_step),
      steps_(steps_done),
      first_forces_(how.first_forces),
      restored_(!how.first_forces && how.restored) {
  if (how.collective != nullptr) set_collective(*how.collective);
  if (!(std::isfinite(h_) && h_ > 0.0))
    throw std::invalid_argument("time step must be a finite positive number, got " + format_g(h_));
  forces_.set_time_step(h_);  // the providers that integrate with h take this one
  time_ = time_origin_ + static_cast<double>(steps_ - step_origin_) * h_;
  start();
}

void Simulation::set_time_origin(double time_origin, std::size_t step_origin) {
  if (!std::isfinite(time_origin) || step_origin > steps_)
    throw std::invalid_argument("time origin must be finite and its step at most the steps done");
  time_origin_ = time_origin;
  step_origin_ = step_origin;
  time_ = time_origin_ + static_cast<double>(steps_ - step_origin_) * h_;
}

void Simulation::start() {
  boundaries_move_ = forces_.boundaries_move();
  moving_loads_valid_ = false;
  if (map_ == IntegratorMap::implicit && boundaries_move_)
    throw std::invalid_argument(
        "moving walls (velocity, servo_stress) need an explicit integrator map (23, 25 or 27), not the implicit one");
  if (map_ == IntegratorMap::implicit) require_implicit_support(forces_, !clumps_.empty());
  if (forces_.cell() != nullptr) {
    // What periodic cells do not support yet (docs/model.md §20.5).
    if (map_ == IntegratorMap::implicit)
      throw std::invalid_argument("a periodic cell ([domain] periodic) needs an explicit integrator: the implicit "
                                  "integrator does not support it yet");
    if (!clumps_.empty())
      throw std::invalid_argument("a periodic cell ([domain] periodic) does not support [[clump]]s yet");
    if (forces_.applies_filter())
      throw std::invalid_argument("a periodic cell ([domain] periodic) does not support velocity filters (the friction filter, [damping]) yet");
    forces_.set_cell_time(time_);
    deforming_ = !forces_.cell()->edge_rate.isZero(0.0) || forces_.cell_controls_stress();
  }
  for (const Clump& c : clumps_) validate_inertia(c.body.inertia);
  half_.resize(clumps_.size());
  index_clumps();
  // A part of a decomposed system is made from a step's state, whose
  // members were placed at its end; a set-up or restored system is placed.
  if (!particles_.is_part()) place_members();
  // Without any moment the gather does not write the moments: zero them
  // once (a checkpoint's are zero already).
  if (!forces_.gives_moments()) std::fill(particles_.moment.begin(), particles_.moment.end(), Vec3::Zero());
  ledger_on_ = forces_.dissipative();
  filter_on_ = forces_.applies_filter();
  if (!first_forces_) {
    // A template of parts: the particles as the first rebuild leaves them,
    // with no list and no forces (Start::first_forces); a checkpoint's as
    // it has them (Start::restored).
    if (!restored_ && !particles_.is_part() && rebuild_test()) order_for_rebuild();
    return;
  }
  // A part of a decomposed system (ghosts flagged, engine/partition.hpp)
  // comes with its records restored as the whole run has them; whether a
  // rebuild is due is decided by all ranks together at the next step.
  if (!particles_.is_part()) rebuild_phase();
  forces_.evaluate(particles_);
  reduce_forces();
  // Bonds over strength at the start fail before the first kick (10.2).
  ledger_.fracture += global_value(forces_.fracture(particles_));
  collect_events(steps_, time_);
}

void Simulation::set_groups(std::vector<ParticleGroup> groups) {
  groups_ = std::move(groups);
  index_groups();
  hold_kinematic(false);
}

void Simulation::index_groups() {
  kinematic_slot_.clear();
  kinematic_velocity_.clear();
  kinematic_.clear();
  // Whether the scene has kinematic groups, not whether this store holds
  // members of one (an MPI rank's part may hold none): every rank then
  // takes the same steps (and the same collective sums).
  has_kinematic_ = false;
  for (const ParticleGroup& g : groups_)
    if (g.motion != ParticleGroup::Motion::free && !g.ids.empty()) has_kinematic_ = true;
  group_slots_.clear();
  for (const ParticleGroup& g : groups_) {
    if (!particles_.is_part()) {
      group_slots_.push_back(slots_of_ids(particles_, g.ids, "group '" + g.name + "': id"));
      continue;
    }
    // A part of a decomposed system holds some of the members (or none).
    std::vector<std::uint32_t> present;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id(particles_.size());
    for (std::size_t i = 0; i < particles_.size(); ++i) by_id[i] = {particles_.id[i], static_cast<std::uint32_t>(i)};
    std::sort(by_id.begin(), by_id.end());
    for (const std::uint32_t id : g.ids) {
      const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(id, 0u));
      if (it != by_id.end() && it->first == id) present.push_back(it->second);
    }
    group_slots_.push_back(std::move(present));
  }
  for (std::size_t k = 0; k < groups_.size(); ++k) {
    const ParticleGroup& g = groups_[k];
    if (g.motion == ParticleGroup::Motion::free) continue;
    if (kinematic_.empty()) kinematic_.assign(particles_.size(), 0);
    const Vec3 v = g.motion == ParticleGroup::Motion::velocity ? g.velocity : Vec3::Zero();
    for (const std::uint32_t q : group_slots_[k]) {
      if (kinematic_[q])
        throw std::invalid_argument("particle " + std::to_string(particles_.id[q]) + " is in two fixed or velocity groups");
      kinematic_[q] = 1;
      kinematic_slot_.push_back(q);
      kinematic_velocity_.push_back(v);
    }
  }
  // The contact laws' view of the same (m* = the free particle's mass).
  particles_.kinematic.assign(kinematic_.begin(), kinematic_.end());
}

void Simulation::hold_kinematic(bool clear_forces) {
  for (std::size_t k = 0; k < kinematic_slot_.size(); ++k) {
    const std::uint32_t q = kinematic_slot_[k];
    particles_.velocity[q] = kinematic_velocity_[k];
    particles_.angular_velocity[q] = Vec3::Zero();
    if (clear_forces) {
      particles_.force[q] = Vec3::Zero();
      particles_.moment[q] = Vec3::Zero();
    }
  }
}

ExactSum Simulation::kinematic_power() const {
  ExactSum p;  // few particles, serial
  for (std::size_t k = 0; k < kinematic_slot_.size(); ++k)
    if (particles_.owns(kinematic_slot_[k])) p.add(particles_.force[kinematic_slot_[k]].dot(kinematic_velocity_[k]));
  return p;
}

void Simulation::save_velocities() {
  v_before_ = particles_.velocity;
  w_before_ = particles_.angular_velocity;
}

ExactSum Simulation::kick_power() {
  // Every ledger per particle: one pass forms u and w as it sums.
  if (forces_.ledgers_by_particle()) return forces_.kick_power(particles_, v_before_, w_before_, kinematic_);
  // u = v^- + v^+, w = Omega^- + Omega^+ of the kick just made, kept in the
  // saved arrays. Kinematic particles keep their prescribed velocity
  // through the kick: u = 2 v^-. W_boundary books the whole force on them
  // at that velocity, and W_contact here takes its non-conservative part
  // back, so that what remains in W_contact is the dissipation at each
  // record's relative velocity (docs/model.md §16, kinematic groups).
  const std::size_t n = particles_.size();
  parallel_for_ranges(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      if (!kinematic_.empty() && kinematic_[i]) {
        v_before_[i] += v_before_[i];
        w_before_[i] += w_before_[i];
        continue;
      }
      v_before_[i] += particles_.velocity[i];
      w_before_[i] += particles_.angular_velocity[i];
    }
  });
  return forces_.nonconservative_power(particles_, v_before_, w_before_);
}

void Simulation::apply_friction_filter(double dt) {
  const std::size_t n = particles_.size();
  filter_dv_.assign(n, Vec3::Zero());
  filter_dw_.assign(n, Vec3::Zero());
  forces_.add_filter_changes(particles_, dt, filter_dv_, filter_dw_);
  // Each particle's summed change, projected on its velocity and clamped so
  // that the speed drops at most to zero (docs/model.md §11.1, engine reading).
  const auto clamp_along = [](const Vec3& x, const Vec3& d) -> Vec3 {
    const double speed = x.norm();
    if (speed == 0.0) return Vec3::Zero();
    const Vec3 dir = x / speed;
    const double a = std::clamp(d.dot(dir), -speed, 0.0);
    return a * dir;
  };
  const ExactSum removed = exact_sum(n, [&](std::size_t i) {
    if ((!kinematic_.empty() && kinematic_[i]) || !particles_.owns(i)) return 0.0;
    const Vec3 v0 = particles_.velocity[i], w0 = particles_.angular_velocity[i];
    const Vec3 v1 = v0 + clamp_along(v0, filter_dv_[i]);
    const Vec3 w1 = w0 + clamp_along(w0, filter_dw_[i]);
    return 0.5 * particles_.mass[i] * (v0.squaredNorm() - v1.squaredNorm()) +
           0.5 * particles_.inertia[i] * (w0.squaredNorm() - w1.squaredNorm());
  });
  parallel_for_ranges(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      if (!kinematic_.empty() && kinematic_[i]) continue;
      particles_.velocity[i] += clamp_along(particles_.velocity[i], filter_dv_[i]);
      particles_.angular_velocity[i] += clamp_along(particles_.angular_velocity[i], filter_dw_[i]);
    }
  });
  ledger_.filter += global_value(removed);
}

std::vector<GroupReport> Simulation::group_reports() const {
  // Exact sums over the members this process owns (with MPI ranks, reduced
  // over all of them): the same bits on any layout.
  std::vector<GroupReport> out;
  for (std::size_t k = 0; k < groups_.size(); ++k) {
    const std::vector<std::uint32_t>& slots = group_slots_[k];  // member slots, in id order
    GroupReport r;
    r.name = groups_[k].name;
    std::array<ExactSum, 7> place;  // count, centroid, reference centroid
    for (const std::uint32_t q : slots) {
      if (!particles_.owns(q)) continue;
      place[0].add(1.0);
      for (int a = 0; a < 3; ++a) {
        place[1 + a].add(particles_.position[q][a]);
        place[4 + a].add(particles_.reference_position[q][a]);
      }
    }
    collective_->reduce(place);
    const double count = std::max(place[0].value(), 1.0);
    const Vec3 c = Vec3(place[1].value(), place[2].value(), place[3].value()) / count;
    const Vec3 c0 = Vec3(place[4].value(), place[5].value(), place[6].value()) / count;
    std::array<ExactSum, 6> load;  // force, moment about c
    for (const std::uint32_t q : slots) {
      if (!particles_.owns(q)) continue;
      const Vec3 m = (particles_.position[q] - c).cross(particles_.force[q]) + particles_.moment[q];
      for (int a = 0; a < 3; ++a) {
        load[a].add(particles_.force[q][a]);
        load[3 + a].add(m[a]);
      }
    }
    collective_->reduce(load);
    r.force = Vec3(load[0].value(), load[1].value(), load[2].value());
    r.moment = Vec3(load[3].value(), load[4].value(), load[5].value());
    r.centroid = c;
    r.displacement = c - c0;
    out.push_back(std::move(r));
  }
  return out;
}

ParticleStore Simulation::release_work_taking_particles() {
  forces_.release_work();
  for (std::vector<Vec3>* v : {&v_before_, &w_before_, &filter_dv_, &filter_dw_}) std::vector<Vec3>().swap(*v);
  ParticleStore taken = std::move(particles_);
  // What the template keeps: the ids, and what is not a particle field
  // (ghost and kinematic flags, the part flag); not order_key.
  particles_ = ParticleStore();
  particles_.id = taken.id;
  particles_.ghost = taken.ghost;
  particles_.kinematic = taken.kinematic;
  particles_.decomposed = taken.decomposed;
  return taken;
}

void Simulation::index_clumps() {
  if (clumps_.empty()) return;
  std::vector<std::uint32_t> ids;
  for (const Clump& c : clumps_) ids.insert(ids.end(), c.members.begin(), c.members.end());
  member_slot_ = slots_of_ids(particles_, ids, "clump member id");  // (also in a part of a decomposed system)
  in_clump_.assign(particles_.size(), 0);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (in_clump_[member_slot_[k]]) throw std::invalid_argument("particle " + std::to_string(ids[k]) + " is in two clumps");
    in_clump_[member_slot_[k]] = 1;
  }
}

void Simulation::reorder() {
  // Ties by id, and with a decomposition the frame of all ranks: each rank's
  // order is then the order of the whole system restricted to its particles.
  std::vector<std::uint32_t> order;
  std::vector<std::uint64_t> codes;
  std::vector<std::uint64_t>* keep = particles_.order_key.empty() ? nullptr : &codes;
  const std::optional<MortonFrame> frame = collective_->morton_frame(particles_);
  order = morton_order(particles_.position, particles_.id, frame ? &*frame : nullptr, keep);
  // The new place of each particle in the whole system's order.
  if (keep != nullptr) particles_.order_key.swap(codes);
  bool sorted = true;
  for (std::size_t k = 0; k < order.size() && sorted; ++k) sorted = order[k] == k;
  if (sorted) return;
  permute_particles(particles_, order);
  forces_.renumber(inverse_permutation(order));
  index_clumps();
  index_groups();
  ++reorders_;
}

void Simulation::rebuild_phase() {
  if (!rebuild_test()) return;
  order_for_rebuild();
  StageClock clock(stage_times_, "neighbour-list and record rebuild");
  forces_.rebuild(particles_);
}

bool Simulation::rebuild_test() {
  StageClock clock(stage_times_, "rebuild test (drift scan)");
  const bool due = forces_.rebuild_due(particles_);
  const bool any = collective_->rebuild_due(due, particles_, forces_);
  if (any && !due) forces_.mark_due();
  return any;
}

void Simulation::order_for_rebuild() {
  wrap_into_cell();
  if (forces_.reorder_on_rebuild()) {
    StageClock clock(stage_times_, "re-ordering (Morton sort, permutation)");
    reorder();
  }
}

void Simulation::wrap_into_cell() {
  const PeriodicCell* cell = forces_.cell();
  if (cell == nullptr) return;
  // A particle m cells beyond a periodic face moves by -H m, and its
  // velocity by -Hdot m (Lees-Edwards): the particle it was seen as across
  // that face (docs/model.md §20.1).
  // The kinetic energy that gains is work of the cell (W_boundary).
  // A decomposed run wraps owned particles and ghosts alike (from their
  // positions alone, the same bits on every rank) and counts the owned ones.
  std::array<ExactSum, 2> moved = exact_sums<2>(particles_.size(), [&](std::size_t i, std::array<ExactSum, 2>& t) {
    const std::array<int, 3> m = cell->cells_out(particles_.position[i]);
    if (m[0] == 0 && m[1] == 0 && m[2] == 0) return;
    const bool owned = particles_.owns(i);
    if (owned) t[0].add(1.0);
    particles_.position[i] -= cell->offset(m);
    if (!deforming_) return;
    const Vec3 v = particles_.velocity[i];
    particles_.velocity[i] -= cell->velocity_offset(m);
    if (owned) t[1].add(0.5 * particles_.mass[i] * (particles_.velocity[i].squaredNorm() - v.squaredNorm()));
  });
  collective_->reduce(moved);  // every rank: the whole system's count
  if (deforming_) ledger_.boundary -= moved[1].value();
  // Every provider's records are rebuilt (the bonds find their images
  // again), on every rank if a particle anywhere was put back.
  if (moved[0].value() > 0.0) forces_.mark_due();
}

void Simulation::advance_cell() {
  // The cell at the end of this step, for the rebuild phase and the forces.
  if (deforming_) forces_.set_cell_time(time_origin_ + static_cast<double>(steps_ + 1 - step_origin_) * h_);
}

void Simulation::control_cell() {
  // The periodic-cell servo (docs/model.md §20.6): the rate of this step's
  // cell from the stress at its start (the forces of the last evaluation).
  if (!forces_.cell_controls_stress()) return;
  const StressMeasure m = cell_stress();
  const auto& s = m.sigma;  // xx, yy, zz, yz, xz, xy
  Mat3 sigma;
  sigma << s[0], s[5], s[4], s[5], s[1], s[3], s[4], s[3], s[2];
  forces_.control_cell(sigma, time_);
}

void Simulation::book_cell_work() {
  // h/2 of the cell's power at each evaluation (the trapezoid rule of the
  // kicks): W_boundary the work it does, W_contact the dissipation against
  // the images' velocities (engine/cell_work.hpp).
  if (!deforming_) return;
  const PeriodicCell& c = *forces_.cell();
  const Mat3 g = c.edge_rate * c.edges.inverse();
  std::array<ExactSum, 2> p = cross_face_power(forces_, particles_, g);
  collective_->reduce(p);
  ledger_.boundary -= 0.5 * h_ * p[0].value();
  ledger_.contact += 0.5 * h_ * p[1].value();
}

StressMeasure Simulation::cell_stress() const {
  const PeriodicCell* cell = forces_.cell();
  if (cell == nullptr) throw std::logic_error("cell_stress: the scene has no periodic cell");
  return stress(StressBox::cell(cell->volume()));
}

void Simulation::reduce_forces() {
  std::size_t m = 0;
  for (Clump& c : clumps_) {
    const Mat3 rt = c.body.attitude.transpose();
    Vec3 f = Vec3::Zero(), moment = Vec3::Zero();
    for (std::size_t k = 0; k < c.members.size(); ++k) {
      const std::uint32_t q = member_slot_[m++];
      const Vec3 fb = rt * particles_.force[q];
      f += particles_.force[q];
      moment += c.offsets[k].cross(fb) + rt * particles_.moment[q];
    }
    c.body.force = f;
    c.body.moment = moment;
  }
}

void Simulation::place_members() {
  std::size_t m = 0;
  for (const Clump& c : clumps_) {
    const RigidBody& b = c.body;
    const Quat r = Quat(b.attitude).normalized();
    const Vec3 omega = b.attitude * b.inertia.ldlt().solve(b.momentum);
    for (std::size_t k = 0; k < c.members.size(); ++k) {
      const std::uint32_t q = member_slot_[m++];
      const Vec3 arm = b.attitude * c.offsets[k];
      particles_.position[q] = b.position + arm;
      particles_.attitude[q] = r * c.member_attitudes[k];
      particles_.velocity[q] = b.velocity + omega.cross(arm);
      particles_.angular_velocity[q] = omega;
    }
  }
}

void Simulation::step_implicit() {
  // One step of the scene's h, made of implicit steps that the event
  // control may shorten (docs/model.md §12.8): each tries the control's
  // step, at most what is left of h (a sliver left over is taken with it).
  rebuild_phase();
  implicit_attempts_.clear();
  const double t0 = time_;
  double done = 0.0;
  for (bool last = false; !last;) {
    const double remaining = h_ - done;
    double dt = std::min(clock_.next_step > 0.0 ? clock_.next_step : h_, remaining);
    last = remaining - dt <= 1e-6 * h_;
    if (last) dt = remaining;
    const double taken = accepted_implicit_step(dt, t0 + done);
    if (taken < dt) last = false;  // shortened by an event: h goes on
    done += taken;
  }
  advance_clock();  // (each implicit step collected its own events and failures)
}

double Simulation::accepted_implicit_step(double dt, double t_start) {
  const double tolerance = implicit_.settings().event_tolerance;
  const bool events = tolerance > 0.0 && forces_.failing_bonds() != nullptr;
  if (events) {
    forces_.stress_ratios(particles_, ratio_start_);
    saved_position_ = particles_.position;
    saved_attitude_ = particles_.attitude;
    saved_velocity_ = particles_.velocity;
    saved_angular_velocity_ = particles_.angular_velocity;
  }
  bool shortened = false;
  // W_boundary: the forces on kinematic particles at the end of a
  // backward-Euler step, at the midpoint of a midpoint step (§12.9).
  const bool midpoint = implicit_.settings().scheme == ImplicitScheme::midpoint;
  double midpoint_power = 0.0;
  const std::function<void()> at_midpoint = [&] {
    if (has_kinematic_) midpoint_power = global_value(kinematic_power());
  };
  for (std::size_t rejected = 0;; ++rejected) {
    if (has_kinematic_) hold_kinematic(false);
    ImplicitStepStats stats = implicit_.step(particles_, forces_, dt, kinematic_, at_midpoint);
    stats.time_step = dt;
    EventVerdict verdict;
    if (events) {
      forces_.stress_ratios(particles_, ratio_end_);
      verdict = judge_trial_step(ratio_start_, ratio_end_, dt, tolerance, *collective_);
      stats.stress_ratio = verdict.largest_ratio;
    }
    const bool accept = verdict.accept || rejected == kMaxEventRejections ||
                        verdict.retry_step < kMinEventStepFraction * h_;
    stats.accepted = accept;
    implicit_attempts_.push_back(std::move(stats));
    if (accept) break;
    particles_.position = saved_position_;
    particles_.attitude = saved_attitude_;
    particles_.velocity = saved_velocity_;
    particles_.angular_velocity = saved_angular_velocity_;
    implicit_.retry_last_step(verdict.retry_step / dt);
    dt = verdict.retry_step;
    shortened = true;
  }
  // The control's next step: grown back after an accepted step it chose; a
  // step cut only by the end of h leaves it as it was.
  if (shortened || dt >= clock_.next_step || clock_.next_step == 0.0)
    clock_.next_step = events ? grown_step(dt, h_) : 0.0;
  clock_.last_step = dt;
  if (has_kinematic_) {
    hold_kinematic(false);
    ledger_.boundary += dt * (midpoint ? midpoint_power : global_value(kinematic_power()));
  }
  friction_filter(dt);
  // Ghosts' velocities as their owners left them: the next prediction
  // x + Dt u places ghosts as their owners.
  if (filter_on_) collective_->exchange_velocities(particles_);
  fracture();
  collect_events(steps_ + 1, t_start + dt);
  return dt;
}

void Simulation::step() {
  if (!first_forces_)
    throw std::logic_error("a Simulation set up without its first forces (a template of parts) cannot be stepped");
  if (map_ == IntegratorMap::implicit) {
    step_implicit();
    return;
  }
  const KickPlan plan = kick_plan();
  control_cell();
  book_cell_work();
  hold_groups_before_kick(plan);
  drift(plan);
  place_clump_members();
  move_boundaries(plan);
  advance_cell();
  rebuild_phase();
  force(plan);
  book_cell_work();
  kick(plan);
  hold_groups_after_kick(plan);
  book_boundaries_after_kick(plan);
  advance_clumps();
  advance_clock();
  friction_filter(h_);
  fracture();
  collect_events(steps_, time_);
}

Simulation::KickPlan Simulation::kick_plan() const {
  KickPlan p;
  p.whole = map_ == IntegratorMap::rrp27;
  p.kick = p.whole ? h_ : 0.5 * h_;
  // Without any moment (frictionless spheres) the angular velocities are
  // left out of the kicks.
  p.moments = forces_.gives_moments();
  // Without the ledger's velocity snapshot or kinematic particles in
  // between, the second half kick runs inside the gather, range by range.
  p.fused = !p.whole && !ledger_on_ && !has_kinematic_;
  return p;
}

void Simulation::hold_groups_before_kick(const KickPlan& plan) {
  // W_boundary: the forces on kinematic groups at their prescribed
  // velocity, (kick) F.v at each kick (engine/groups.hpp).
  if (!has_kinematic_) return;
  ledger_.boundary += plan.kick * global_value(kinematic_power());
  hold_kinematic(true);
}

void Simulation::drift(const KickPlan& plan) {
  if (ledger_on_) {
    // Ghosts' velocities as their owners left them (friction filter included).
    collective_->exchange_velocities(particles_);
    save_velocities();
  }
  for (std::size_t i = 0; i < clumps_.size(); ++i) half_[i] = lgvi_advance(clumps_[i].body, h_);
  {
    StageClock clock(stage_times_, "integrator: kick and drift (+ rebuild-test scan)");
    // The drift pass also does the neighbour list's rebuild-test scan,
    // unless clumps move their members after it (or the collective says
    // the drifted positions are not final yet).
    DriftSink sink;
    if (clumps_.empty()) sink = collective_->drift_sink(forces_, particles_.size());
    advance_configuration(particles_, map_, h_, sink.reference != nullptr ? &sink : nullptr, plan.moments);
    if (sink.reference != nullptr) forces_.drift_sink_filled(particles_.position.data());
  }
  // Ghosts take their owners' drifted state (with clumps in the scene the
  // exchange after placing the members serves the rest of the step).
  collective_->exchange_drifted(particles_, ledger_on_);
  if (ledger_on_) ledger_.contact -= 0.5 * plan.kick * global_value(kick_power());
}

void Simulation::place_clump_members() {
  place_members();
  collective_->exchange_placed(particles_);
}

void Simulation::force(const KickPlan& plan) {
  if (!plan.fused) {
    forces_.evaluate(particles_, stage_times_);
    // Energy the evaluation took out of the potentials by state changes
    // (adhesive contacts that broke, docs/model.md §11.3, §11.7).
    if (ledger_on_) ledger_.contact += global_value(forces_.released_energy(particles_));
    return;
  }
  const bool moments = plan.moments;
  const ForceField::RangeHook kick_range = [this, moments](std::size_t b, std::size_t e) {
    complete_step_range(particles_, h_, b, e, moments);
  };
  forces_.evaluate(particles_, stage_times_, &kick_range);
}

void Simulation::kick(const KickPlan& plan) {
  if (ledger_on_ && !plan.whole) save_velocities();
  if (!plan.fused) {
    StageClock clock(stage_times_, "integrator: second kick");
    complete_step(particles_, map_, h_);
  }
  // Ghosts' velocities where the ledger or the friction filter reads both
  // ends of a record.
  if (ledger_on_ || filter_on_) collective_->exchange_velocities(particles_);
  if (ledger_on_ && !plan.whole) ledger_.contact -= 0.5 * plan.kick * global_value(kick_power());
}

void Simulation::hold_groups_after_kick(const KickPlan& plan) {
  if (!has_kinematic_) return;
  hold_kinematic(false);
  if (!plan.whole) ledger_.boundary += plan.kick * global_value(kinematic_power());
}

std::vector<BoundaryLoad> Simulation::boundary_loads() const {
  std::vector<BoundaryLoad> loads;
  forces_.boundary_loads(particles_, loads);
  std::vector<ExactSum> sums;
  sums.reserve(loads.size() * BoundaryLoad::kSums);
  for (const BoundaryLoad& l : loads) sums.insert(sums.end(), l.sums.begin(), l.sums.end());
  collective_->reduce(sums);
  for (std::size_t k = 0; k < loads.size(); ++k)
    std::copy_n(sums.begin() + static_cast<std::ptrdiff_t>(k * BoundaryLoad::kSums), BoundaryLoad::kSums,
                loads[k].sums.begin());
  return loads;
}

void Simulation::book_boundary_work(double kick) {
  // The work the particles do on the boundaries leaves E_total; the
  // non-conservative part of it was booked in W_contact at the particles'
  // own velocities, so W_contact takes it back: what remains there is the
  // dissipation at each contact's relative velocity (docs/model.md §11.8).
  double power = 0.0, nc_power = 0.0;
  for (const BoundaryLoad& l : moving_loads_) {
    power += l.power();
    nc_power += l.nonconservative_power();
  }
  ledger_.boundary += kick * power;
  if (ledger_on_) ledger_.contact -= kick * nc_power;
}

void Simulation::move_boundaries(const KickPlan& plan) {
  if (!boundaries_move_) return;
  // The loads of the evaluation at t_n: kept from the last step, or (the
  // first step of a run, a restart or a new part) taken now; a moving
  // provider keeps them from its evaluate(), so the drift does not matter.
  if (!moving_loads_valid_) {
    moving_loads_ = boundary_loads();
    moving_loads_valid_ = true;
  }
  const double t = time_origin_ + static_cast<double>(steps_ + 1 - step_origin_) * h_;
  forces_.advance_boundaries(t, h_, moving_loads_);
  book_boundary_work(plan.kick);
}

void Simulation::book_boundaries_after_kick(const KickPlan& plan) {
  if (!boundaries_move_) return;
  moving_loads_ = boundary_loads();
  if (!plan.whole) book_boundary_work(plan.kick);
}

void Simulation::advance_clumps() {
  reduce_forces();
  for (std::size_t i = 0; i < clumps_.size(); ++i) lgvi_complete(clumps_[i].body, half_[i], h_);
  place_members();
}

void Simulation::advance_clock() {
  ++steps_;
  // t = k h rather than a running sum, so that long runs keep exact times.
  time_ = time_origin_ + static_cast<double>(steps_ - step_origin_) * h_;
}

void Simulation::friction_filter(double dt) {
  if (filter_on_) apply_friction_filter(dt);
}

void Simulation::fracture() {
  StageClock clock(stage_times_, "fracture");
  ledger_.fracture += global_value(forces_.fracture(particles_));
}

void Simulation::collect_events(std::size_t step, double time) {
  const std::size_t before = events_.size();
  forces_.take_events(events_);
  for (std::size_t e = before; e < events_.size(); ++e) events_[e].step = step;
  const std::size_t failed_before = failures_.size();
  forces_.take_failures(failures_);
  for (std::size_t e = failed_before; e < failures_.size(); ++e) {
    failures_[e].step = step;
    failures_[e].time = time;
  }
}

std::vector<BondFailure> Simulation::take_failures() {
  std::vector<BondFailure> out;
  out.swap(failures_);
  collective_->gather_failures(out);
  return out;
}

std::vector<InteractionEvent> Simulation::take_events() {
  std::vector<InteractionEvent> out;
  out.swap(events_);
  return out;
}

EnergyReport Simulation::energy_report() const {
  EnergyReport r = forces_.potential_energies(particles_);
  r.merge(kinetic_energies_and_momenta(particles_, in_clump_));
  r.time = time_;
  r.fracture_work = ledger_.fracture;
  r.contact_work = ledger_.contact;
  r.filter_work = ledger_.filter;
  r.boundary_work = ledger_.boundary;
  forces_.add_bond_counts(particles_, r);
  // Backward Euler's kinetic energy is 2 J |w|² (docs/model.md §12.1); the
  // midpoint rule's ½ J |Omega|² (§12.9).
  if (map_ == IntegratorMap::implicit && implicit_.settings().scheme == ImplicitScheme::backward_euler)
    r.add("E_kin_rot", implicit_rotational_energy_excess(particles_, clock_.last_step > 0.0 ? clock_.last_step : h_));
  for (const Clump& c : clumps_) {
    const RigidBody& b = c.body;
    r.add("E_kin_trans", 0.5 * b.mass * b.velocity.squaredNorm());
    r.add("E_kin_rot", rotational_kinetic_energy(b));
    r.add_momenta(b.mass * b.velocity, angular_momentum(b));
  }
  collective_->reduce_report(r);
  return r;
}

}  // namespace dem
