#include "mpi/domain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "contact/contact_provider.hpp"
#include "core/format.hpp"
#include "engine/cut_tree.hpp"

namespace dem {

namespace {

/// The cut tree's reductions over the ranks of `comm`.
class MpiReductions final : public RankReductions {
 public:
  explicit MpiReductions(MPI_Comm comm) : comm_(comm) {}
  void sum(std::span<std::uint64_t> v) override {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_SUM, comm_);
  }
  void min(std::span<double> v) override {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MIN, comm_);
  }
  void max(std::span<double> v) override {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, comm_);
  }

 private:
  MPI_Comm comm_;
};

constexpr int kTagState = 41;
constexpr int kTagVelocities = 42;
constexpr int kTagValues = 43;

/// Bytes of every rank, gathered on all of them (to_all) or on rank 0.
std::vector<std::vector<std::byte>> gather_bytes(MPI_Comm comm, const std::vector<std::byte>& mine, bool to_all) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const long long n = static_cast<long long>(mine.size());
  if (n > std::numeric_limits<int>::max()) throw std::runtime_error("MPI: a rank's piece is over 2 GiB");
  const int count = static_cast<int>(n);
  std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  if (to_all)
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  else
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<std::vector<std::byte>> pieces;
  if (!to_all && rank != 0) {
    MPI_Gatherv(mine.data(), count, MPI_BYTE, nullptr, nullptr, nullptr, MPI_BYTE, 0, comm);
    return pieces;
  }
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += counts[static_cast<std::size_t>(r)];
  }
  if (total > std::numeric_limits<int>::max()) throw std::runtime_error("MPI: the gathered state is over 2 GiB");
  std::vector<std::byte> all(static_cast<std::size_t>(total));
  if (to_all)
    MPI_Allgatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, comm);
  else
    MPI_Gatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, 0, comm);
  for (int r = 0; r < size; ++r) {
    const auto b = all.begin() + offsets[static_cast<std::size_t>(r)];
    pieces.emplace_back(b, b + counts[static_cast<std::size_t>(r)]);
  }
  return pieces;
}

template <class T>
void put(std::vector<std::byte>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

template <class T>
T take(const std::vector<std::byte>& in, std::size_t& at) {
  T v;
  std::memcpy(static_cast<void*>(&v), in.data() + at, sizeof(T));
  at += sizeof(T);
  return v;
}

void put_failure(std::vector<std::byte>& out, const BondFailure& f) {
  put(out, f.step);
  put(out, f.time);
  put(out, f.bond);
  put(out, f.id_i);
  put(out, f.id_j);
  put(out, static_cast<std::uint8_t>(f.tensile ? 1 : 0));
  for (const double x : {f.sigma, f.tau, f.sigma_ratio, f.tau_ratio, f.axial_force, f.shear_force, f.bending_moment,
                         f.twist_moment, f.energy, f.bond_energy})
    put(out, x);
  put(out, f.midpoint);
}

BondFailure take_failure(const std::vector<std::byte>& in, std::size_t& at) {
  BondFailure f;
  f.step = take<std::uint64_t>(in, at);
  f.time = take<double>(in, at);
  f.bond = take<std::uint32_t>(in, at);
  f.id_i = take<std::uint32_t>(in, at);
  f.id_j = take<std::uint32_t>(in, at);
  f.tensile = take<std::uint8_t>(in, at) != 0;
  for (double* x : {&f.sigma, &f.tau, &f.sigma_ratio, &f.tau_ratio, &f.axial_force, &f.shear_force, &f.bending_moment,
                    &f.twist_moment, &f.energy, &f.bond_energy})
    *x = take<double>(in, at);
  f.midpoint = take<Vec3>(in, at);
  return f;
}

/// What a Simulation holds: its particles, and the pair records of its
/// providers (the sizes of their per-record results).
Domain::Holding holding(const Simulation& sim) {
  Domain::Holding h;
  h.particles = sim.particles().size();
  for (const auto& p : sim.forces().providers()) h.records += p->pair_results().first.size();
  return h;
}

/// The records of `part` whose first end it owns: every record of the
/// whole system once over all ranks (an owned particle's records are all
/// in its part, in the whole's orientation).
std::uint64_t records_of_owned(const Simulation& part) {
  const ParticleStore& s = part.particles();
  std::uint64_t n = 0;
  for (const auto& p : part.forces().providers())
    for (const std::uint32_t i : p->pair_results().first) n += s.owns(i) ? 1 : 0;
  return n;
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

Domain::Domain(MPI_Comm comm, Simulation whole) : comm_(comm), factory_(std::move(whole)) {
  // The whole system's state lives on in `state`, then in the parts.
  start(factory_.take_state());
}

Domain::Domain(MPI_Comm comm, Simulation whole, GlobalState state) : comm_(comm), factory_(std::move(whole)) {
  factory_.release_template();
  start(std::move(state));
}

void Domain::start(GlobalState state) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  clumps_ = !factory_.whole().clumps().empty();
  count_ = state.particles.size();
  // DEM_REPARTITION_EVERY=N: new parts every N steps as well (for tests of
  // the migration; the results are the same bits either way).
  if (const char* every = std::getenv("DEM_REPARTITION_EVERY")) repartition_every_ = std::strtoull(every, nullptr, 10);
  make_parts(std::move(state));
  // The whole system's records, counted by the parts (the template has
  // none: it was set up without its first forces).
  whole_.particles = count_;
  whole_.records = records_of_owned(*part_);
  MPI_Allreduce(MPI_IN_PLACE, &whole_.records, 1, MPI_UINT64_T, MPI_SUM, comm_);
}

std::size_t Domain::ghost_count() const {
  const ParticleStore& s = part_->particles();
  return static_cast<std::size_t>(std::count(s.ghost.begin(), s.ghost.end(), std::uint8_t{1}));
}

void Domain::make_parts(GlobalState state) {
  const double range = factory_.interaction_range(state);
  margin_ = 0.5 * range;
  const double halo = (range + 2.0 * margin_) * (1.0 + 1e-9);
  const PeriodicCell* cell = state.cell ? &*state.cell : nullptr;
  const std::size_t ranks = static_cast<std::size_t>(size_), me = static_cast<std::size_t>(rank_);
  const ParticleStore& p = state.particles;
  const std::vector<Vec3> x = positions_in_cell(p.position, cell);
  // The bisection's cuts found by the ranks together, each from a slice of
  // the particles (the tree of all of them: engine/cut_tree.hpp), then
  // every particle's owner from the cuts.
  const std::size_t from = p.size() * me / ranks, to = p.size() * (me + 1) / ranks;
  MpiReductions reductions(comm_);
  const CutTree tree = CutTree::build(std::span(x).subspan(from, to - from),
                                      std::span(p.id).subspan(from, to - from), ranks, reductions);
  std::vector<std::uint32_t> owner(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) owner[i] = tree.owner(x[i], p.id[i]);
  keep_clumps_whole(owner, p, state.clumps);
  RankLayout mine = rank_layout(p, owner, me, ranks, halo, factory_.bond_keys(), cell);
  send_ids_.assign(ranks, {});
  recv_ids_.assign(ranks, {});
  for (std::size_t q = 0; q < ranks; ++q)
    for (const std::uint32_t g : mine.held_by[q]) send_ids_[q].push_back(p.id[g]);
  for (std::size_t k = 0; k < mine.layout.members.size(); ++k)
    if (mine.layout.ghost[k]) recv_ids_[owner[mine.layout.members[k]]].push_back(p.id[mine.layout.members[k]]);
  std::vector<std::uint32_t>().swap(owner);
  install_part(std::move(state), mine.layout, cell);
}

void Domain::install_part(GlobalState&& state, const PartLayout& layout, const PeriodicCell* cell) {
  failed_ = state.failed_bonds;
  // A deforming cell moves the images a record reads, and those its ends
  // were put back through, by at most sum_a |Hdot e_a| per unit time each
  // (engine/partition.hpp, ghost shell).
  image_speed_ = 0.0;
  if (cell != nullptr)
    for (int a = 0; a < 3; ++a)
      if (cell->periodic[a]) image_speed_ += 2.0 * cell->edge_rate.col(a).norm();
  // (On all ranks' terms from its constructor on: the first parts of a
  // whole set up without its first forces find the bonds over strength at
  // the start, and their failures reach the log at the run's start.)
  if (part_)
    *part_ = factory_.make(std::move(state), layout, this);
  else
    part_.emplace(factory_.make(std::move(state), layout, this));
  moved_ = 0.0;
  start_.clear();
  if (part_->map() == IntegratorMap::implicit) {
    const ParticleStore& s = part_->particles();
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s.owns(i)) start_.emplace_back(s.id[i], s.position[i]);
    std::sort(start_.begin(), start_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  ++partitions_;
  join_part();
  index_slots();
  sample_holding();
}

void Domain::sample_holding() {
  const Holding now = holding(*part_);
  high_water_.particles = std::max(high_water_.particles, now.particles);
  high_water_.records = std::max(high_water_.records, now.records);
}

void Domain::index_slots() {
  const ParticleStore& s = part_->particles();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) by_id[i] = {s.id[i], static_cast<std::uint32_t>(i)};
  std::sort(by_id.begin(), by_id.end());
  const auto slot = [&](std::uint32_t id) {
    const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(id, 0u));
    if (it == by_id.end() || it->first != id) throw std::logic_error("Domain: a ghost or sent particle is not in the part");
    return it->second;
  };
  const std::size_t ranks = static_cast<std::size_t>(size_);
  send_slots_.assign(ranks, {});
  recv_slots_.assign(ranks, {});
  for (std::size_t q = 0; q < ranks; ++q) {
    for (const std::uint32_t id : send_ids_[q]) send_slots_[q].push_back(slot(id));
    for (const std::uint32_t id : recv_ids_[q]) recv_slots_[q].push_back(slot(id));
  }
  slots_at_reorder_ = part_->reorder_count();
}

void Domain::transfer(std::size_t per, int tag, const std::function<void(std::uint32_t, std::vector<double>&)>& pack,
                      const std::function<void(std::uint32_t, const double*)>& unpack) {
  if (part_->reorder_count() != slots_at_reorder_) index_slots();
  const std::size_t ranks = static_cast<std::size_t>(size_);
  send_buf_.resize(ranks);
  recv_buf_.resize(ranks);
  std::vector<MPI_Request> requests;
  for (std::size_t q = 0; q < ranks; ++q) {
    if (!recv_slots_[q].empty()) {
      recv_buf_[q].resize(per * recv_slots_[q].size());
      requests.emplace_back();
      MPI_Irecv(recv_buf_[q].data(), static_cast<int>(recv_buf_[q].size()), MPI_DOUBLE, static_cast<int>(q), tag,
                comm_, &requests.back());
    }
  }
  for (std::size_t q = 0; q < ranks; ++q) {
    if (send_slots_[q].empty()) continue;
    std::vector<double>& b = send_buf_[q];
    b.clear();
    for (const std::uint32_t i : send_slots_[q]) pack(i, b);
    requests.emplace_back();
    MPI_Isend(b.data(), static_cast<int>(b.size()), MPI_DOUBLE, static_cast<int>(q), tag, comm_, &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (std::size_t q = 0; q < ranks; ++q) {
    const double* p = recv_buf_[q].data();
    for (const std::uint32_t i : recv_slots_[q]) {
      unpack(i, p);
      p += per;
    }
  }
}

void Domain::exchange(ParticleStore& s, What what) {
  const bool state = what == What::state;
  transfer(
      state ? 13 : 6, state ? kTagState : kTagVelocities,
      [&](std::uint32_t i, std::vector<double>& b) {
        if (state) {
          b.insert(b.end(), s.position[i].data(), s.position[i].data() + 3);
          b.insert(b.end(), s.attitude[i].coeffs().data(), s.attitude[i].coeffs().data() + 4);
        }
        b.insert(b.end(), s.velocity[i].data(), s.velocity[i].data() + 3);
        b.insert(b.end(), s.angular_velocity[i].data(), s.angular_velocity[i].data() + 3);
      },
      [&](std::uint32_t i, const double* p) {
        if (state) {
          s.position[i] = Vec3(p[0], p[1], p[2]);
          std::copy(p + 3, p + 7, s.attitude[i].coeffs().data());
          p += 7;
        }
        s.velocity[i] = Vec3(p[0], p[1], p[2]);
        s.angular_velocity[i] = Vec3(p[3], p[4], p[5]);
      });
}

void Domain::exchange(std::span<Vec6> values) {
  transfer(
      6, kTagValues, [&](std::uint32_t i, std::vector<double>& b) { b.insert(b.end(), values[i].data(), values[i].data() + 6); },
      [&](std::uint32_t i, const double* p) { std::copy(p, p + 6, values[i].data()); });
}

void Domain::reduce_sums(std::span<ExactSum> sums) {
  // One allreduce of the limbs and the counts of non-finite terms (int64
  // sums); the non-finite values themselves only when some term was one.
  const std::size_t n = sums.size(), limbs_end = n * ExactSum::kLimbs;
  std::vector<std::int64_t> limbs(limbs_end + n);
  for (std::size_t k = 0; k < n; ++k) {
    sums[k].normalize();
    std::copy(sums[k].limbs().begin(), sums[k].limbs().end(), limbs.begin() + static_cast<std::ptrdiff_t>(k * ExactSum::kLimbs));
    limbs[limbs_end + k] = sums[k].has_special() ? 1 : 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, limbs.data(), static_cast<int>(limbs.size()), MPI_INT64_T, MPI_SUM, comm_);
  const bool any_special = std::any_of(limbs.begin() + static_cast<std::ptrdiff_t>(limbs_end), limbs.end(),
                                       [](std::int64_t c) { return c != 0; });
  std::vector<double> special(n, 0.0);
  if (any_special) {
    for (std::size_t k = 0; k < n; ++k) special[k] = sums[k].special();
    MPI_Allreduce(MPI_IN_PLACE, special.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, comm_);
  }
  for (std::size_t k = 0; k < n; ++k) {
    std::copy(limbs.begin() + static_cast<std::ptrdiff_t>(k * ExactSum::kLimbs),
              limbs.begin() + static_cast<std::ptrdiff_t>((k + 1) * ExactSum::kLimbs), sums[k].limbs().begin());
    sums[k].set_special(special[k], limbs[limbs_end + k] != 0);
  }
}

std::uint64_t Domain::fragments() const {
  if (factory_.whole().forces().bond_live().empty()) return count_;
  std::uint64_t n = 0;
  (void)components(&n);
  return n;
}

std::vector<std::uint32_t> Domain::fragment_labels(const ParticleStore& part) const {
  const std::vector<std::uint32_t> label = components(nullptr);
  std::vector<std::uint32_t> out(part.size());
  for (std::size_t i = 0; i < part.size(); ++i) out[i] = label[part.id[i]];
  return out;
}

std::vector<std::uint32_t> Domain::components(std::uint64_t* count) const {
  // Components of the live-bond graph of the whole system, by id (ids are
  // 0 .. N-1); a bond's scene index is the rank of its pair key.
  std::vector<std::uint64_t> keys = factory_.bond_keys();
  std::sort(keys.begin(), keys.end());
  std::vector<std::uint32_t> parent(count_);
  std::iota(parent.begin(), parent.end(), 0u);
  const auto find = [&](std::uint32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  std::uint64_t components = count_;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (std::binary_search(failed_.begin(), failed_.end(), static_cast<std::uint32_t>(k))) continue;
    const auto [i, j] = pair_key_ids(keys[k]);
    const std::uint32_t a = find(i), b = find(j);
    if (a != b) {
      parent[std::max(a, b)] = std::min(a, b);
      --components;
    }
  }
  if (count != nullptr) *count = components;
  for (std::uint32_t a = 0; a < parent.size(); ++a) parent[a] = find(a);  // roots are the smallest ids
  return parent;
}

void Domain::join_part() { part_->set_collective(*this); }

void Domain::track_motion(const ParticleStore& s) {
  // A bound on how far an owned particle has moved since the parts were
  // made: the sum over steps of h max |v| (the drift of maps 23/25/27; with
  // clumps the members' velocities once placed).
  double v2 = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.owns(i)) v2 = std::max(v2, s.velocity[i].squaredNorm());
  moved_ += part_->time_step() * (std::sqrt(v2) + image_speed_);
}

void Domain::exchange_drifted(ParticleStore& s, bool ledger_reads) {
  // With clumps in the scene the exchange after placing the members serves
  // the rest of the step, and this one only the ledger's kick power.
  if (!clumps_) {
    track_motion(s);
    exchange(s, What::state);
  } else if (ledger_reads) {
    exchange(s, What::state);
  }
}

void Domain::exchange_placed(ParticleStore& s) {
  if (!clumps_) return;
  track_motion(s);
  exchange(s, What::state);
}

void Domain::max(std::span<double> values) {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, comm_);
}

bool Domain::rebuild_due(bool, const ParticleStore& s, const ForceField& forces) {
  // Implicit runs evaluate here at every Newton iterate: no iterate may
  // move a particle past the ghost margin, and the parts are made again
  // past half of it (after_step).
  if (part_->map() == IntegratorMap::implicit) measure_motion(s);
  const NeighbourListOwner* c = forces.neighbour_list();
  if (c == nullptr) return false;
  return whole_rebuild_due(*this, c->neighbours(), s);
}

std::optional<MortonFrame> Domain::morton_frame(const ParticleStore& s) {
  MortonFrame f = dem::morton_frame(s.position);
  double box[6] = {-f.lo.x(), -f.lo.y(), -f.lo.z(), f.hi.x(), f.hi.y(), f.hi.z()};
  if (s.size() == 0) std::fill(box, box + 6, -std::numeric_limits<double>::infinity());
  max(box);
  f.lo = Vec3(-box[0], -box[1], -box[2]);
  f.hi = Vec3(box[3], box[4], box[5]);
  return f;
}

SolverDomain Domain::solver_domain() {
  SolverDomain d;
  d.reduce = [this](std::span<ExactSum> sums) { reduce_sums(sums); };
  d.max = [this](double x) { return maximum(x); };
  d.ghost_values = [this](std::span<Vec6> v) { exchange(v); };
  d.rebuild_due = [this](bool mine) { return rebuild_due(mine, part_->particles(), part_->forces()); };
  return d;
}

void Domain::reduce_report(EnergyReport& r) {
  int columns[2] = {static_cast<int>(r.exact.size()), -static_cast<int>(r.exact.size())};
  MPI_Allreduce(MPI_IN_PLACE, columns, 2, MPI_INT, MPI_MAX, comm_);
  if (columns[0] != -columns[1]) throw std::logic_error("Domain: the ranks' energy reports have different columns");
  std::vector<ExactSum> sums;
  for (const auto& [name, sum] : r.exact) sums.push_back(sum);
  reduce_sums(sums);
  for (std::size_t k = 0; k < sums.size(); ++k) {
    r.exact[k].second = sums[k];
    r.set_column(r.exact[k].first, sums[k].value());
  }
  std::uint64_t broken = r.broken_bonds;
  MPI_Allreduce(MPI_IN_PLACE, &broken, 1, MPI_UINT64_T, MPI_SUM, comm_);
  r.broken_bonds = broken;
  r.fragments = fragments();
}

void Domain::gather_failures(std::vector<BondFailure>& f) {
  std::vector<std::byte> mine;
  for (const BondFailure& x : f) put_failure(mine, x);
  const std::vector<std::vector<std::byte>> pieces = gather_bytes(comm_, mine, true);
  f.clear();
  for (const auto& p : pieces)
    for (std::size_t at = 0; at < p.size();) f.push_back(take_failure(p, at));
  // (The time orders the implicit steps within one step of h, docs/model.md §12.8.)
  std::sort(f.begin(), f.end(), [](const BondFailure& a, const BondFailure& b) {
    if (a.step != b.step) return a.step < b.step;
    return a.time != b.time ? a.time < b.time : a.bond < b.bond;
  });
  for (const BondFailure& x : f) failed_.push_back(x.bond);
  std::sort(failed_.begin(), failed_.end());
  failed_.erase(std::unique(failed_.begin(), failed_.end()), failed_.end());
}

void Domain::measure_motion(const ParticleStore& s) {
  double d2 = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s.owns(i)) continue;
    const auto it = std::lower_bound(start_.begin(), start_.end(), s.id[i],
                                     [](const auto& e, std::uint32_t id) { return e.first < id; });
    if (it == start_.end() || it->first != s.id[i]) throw std::logic_error("Domain: an owned particle has no start position");
    d2 = std::max(d2, (s.position[i] - it->second).squaredNorm());
  }
  double moved = std::sqrt(d2);
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_DOUBLE, MPI_MAX, comm_);
  if (moved > margin_)
    throw std::runtime_error("a particle moved " + format_g(moved) + " since the MPI parts were made, past their ghost "
                             "margin " + format_g(margin_) + ": the time step is too large for the speeds");
  moved_ = std::max(moved_, moved);
}

void Domain::after_step() {
  sample_holding();
  double moved = moved_;
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_DOUBLE, MPI_MAX, comm_);
  if (moved > margin_)
    throw std::runtime_error("a particle moved " + format_g(moved) + " in the steps since the MPI parts were made, past "
                             "their ghost margin " + format_g(margin_) + "; the time step is too large for the speeds");
  const bool forced = repartition_every_ > 0 && part_->step_count() % repartition_every_ == 0;
  if (moved > 0.5 * margin_ || forced) {
    // The new owners' cuts from the particles each rank owns (no rank needs
    // the others' positions for them: engine/cut_tree.hpp), then each
    // particle straight to its new owner and ghost holders (mpi/migration.cpp).
    const ParticleStore& s = part_->particles();
    std::vector<Vec3> x;
    std::vector<std::uint32_t> ids;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s.owns(i)) x.push_back(s.position[i]), ids.push_back(s.id[i]);
    MpiReductions reduce(comm_);
    const CutTree tree = CutTree::build(positions_in_cell(x, part_->cell()), ids, static_cast<std::size_t>(size_), reduce);
    migrate(tree);
  }
}

std::uint64_t Domain::broadcast(std::uint64_t value) {
  MPI_Bcast(&value, 1, MPI_UINT64_T, 0, comm_);
  return value;
}

std::vector<std::vector<std::byte>> Domain::gather_to_root(const std::vector<std::byte>& mine) {
  return gather_bytes(comm_, mine, false);
}

void Domain::abort(int status) {
  std::fflush(nullptr);
  MPI_Abort(comm_, status);
  std::abort();
}

bool Domain::any(bool mine) {
  int v = mine ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, comm_);
  return v != 0;
}

}  // namespace dem
