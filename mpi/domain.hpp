#pragma once
/// \file domain.hpp
/// The MPI transport of the domain decomposition (engine/partition.hpp):
/// one part of the system per rank, its ghosts kept up to date, the global
/// decisions and exact sums, new parts when particles have moved. Built with
/// -DDEM_WITH_MPI=ON (Open MPI).
///
/// Design note: what crosses the network, per step.
///
///     after the drift   each rank sends its owned particles that are ghosts
///                       elsewhere (x, R, v, Omega: 13 doubles) to those
///                       ranks, point to point (MPI_Isend/Irecv)
///     rebuild test      the neighbour list's displacement summary
///                       (contact/neighbour_search.hpp DriftSummary, 8
///                       doubles) max-allreduced, and one more max when
///                       the test needs the spread about the common centre
///                       (all ranks rebuild and re-order at the same steps)
///     after the kick    velocities again, only when the ledger or the
///                       friction filter reads both ends of a contact
///     ledger            exact sums (core/exact_sum.hpp) allreduced as
///                       integers, only in scenes that keep a ledger
///     failures          every rank's booked failures allgathered (usually
///                       none: a few bytes)
///     periodic cell     at each rebuild, the count (and, in a deforming
///                       cell, the kinetic energy) of the owned particles
///                       put back through the faces: one exact-sum
///                       allreduce; ghosts are put back by every rank alike
///     end of step       one max allreduce of the distance moved since the
///                       parts were made; past half the margin, new parts
///     implicit steps    per Newton iterate: exact sums, the residual's max
///                       and the distance moved since the parts were made
///                       (past the margin: an error) allreduced; per CG
///                       iteration: the ghosts' entries of the direction
///                       (6 doubles) point to point, and three exact sums
///                       (one allreduce each: the limbs and the count of
///                       non-finite terms; their values only if any)
///
/// New parts (re-partition, mpi/migration.cpp): the ranks build the cut
/// tree of a new recursive coordinate bisection together (engine/cut_tree.hpp,
/// so the counts are balanced again), and each rank sends each particle it
/// owns only to its new owner and the ranks that will hold it as a ghost,
/// in one all-to-all: no rank gathers the system. Every rank still sets the
/// whole scene up once at the start (docs/scaling.md).
///
/// Energy rows, failures and the clock are the same on every rank; tables
/// are written by rank 0 (run/observers.hpp), VTK frames by every rank in
/// pieces (io/vtk_writer.hpp), checkpoints in parts, one per rank, with an
/// index written by rank 0 (run/checkpoint_parts.hpp; gather_to_root()
/// collects only each part's length and CRC).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <optional>
#include <vector>

#include <mpi.h>

#include "engine/collective.hpp"
#include "engine/cut_tree.hpp"
#include "engine/partition.hpp"

namespace dem {

/// MPI_Init_thread / MPI_Finalize for the life of the program's main().
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

/// One rank's part of a decomposed run: the run loop's DecomposedRun and
/// its part's Collective (engine/collective.hpp).
class Domain final : public DecomposedRun, public Collective {
 public:
  /// Collective: every rank passes the same whole Simulation (set up from
  /// the same scene or checkpoint). Throws std::invalid_argument (on every
  /// rank) for a scene that cannot be split (PartFactory).
  Domain(MPI_Comm comm, Simulation whole);
  /// The parts of `state`, the whole state of a checkpoint in parts
  /// (run/checkpoint_parts.hpp read_checkpoint_parts), with `whole` as the
  /// template only (its providers' settings and static records; set up
  /// without first forces, Simulation::Start). Collective, as above.
  Domain(MPI_Comm comm, Simulation whole, GlobalState state);
  /// The part refers to its Domain (its Collective): neither copied nor moved.
  Domain(const Domain&) = delete;
  Domain& operator=(const Domain&) = delete;

  /// This rank's part of the system (replaced in place at re-partitions).
  Simulation& part() { return *part_; }

  int rank() const override { return rank_; }
  int ranks() const override { return size_; }
  void after_step() override;
  const Simulation& reference() const override { return factory_.whole(); }
  std::size_t particle_count() const override { return count_; }
  const std::vector<std::uint32_t>& failed_bonds() const override { return failed_; }
  std::vector<std::vector<std::byte>> gather_to_root(const std::vector<std::byte>& mine) override;
  std::uint64_t broadcast(std::uint64_t value) override;
  std::vector<std::uint32_t> fragment_labels(const ParticleStore& part) const override;
  bool any(bool mine) override;
  [[noreturn]] void abort(int status) override;
  /// Times the parts have been made (1 at the start).
  std::size_t partitions() const { return partitions_; }
  /// Ghosts held by this rank now.
  std::size_t ghost_count() const;

  /// Particles (owned and ghosts) and records (the pair records of every
  /// force provider: bonds, contacts, wall contacts) held at once.
  struct Holding {
    std::uint64_t particles = 0;
    std::uint64_t records = 0;
  };
  /// The most this rank's parts have held at once, particles and records
  /// each: sampled when a part is made (with its first forces) and after
  /// every step, through re-partitions (issue 28: a rank holds its part and
  /// its shell, never the system). The set-up is not included: every rank
  /// still builds the whole scene once (without its first forces).
  Holding part_high_water() const { return high_water_; }
  /// The whole system's particles, and its records when the first parts
  /// were made (each counted by the rank that owns its first end).
  Holding whole_holding() const { return whole_; }

  // --- Collective (engine/collective.hpp) -------------------------------------
  /// Also bounds this rank's motion since the parts were made (the sum
  /// over steps of h max |v|, at the drift; with clumps in the scene, at
  /// the placement of their members, exchange_placed(); in a deforming
  /// periodic cell with the images' motion added).
  void exchange_drifted(ParticleStore& particles, bool ledger_reads) override;
  void exchange_placed(ParticleStore& particles) override;
  void exchange_velocities(ParticleStore& particles) override { exchange(particles, What::velocities); }
  void ghost_values(std::span<Vec6> values) override { exchange(values); }
  void reduce(std::span<ExactSum> sums) override { reduce_sums(sums); }
  void max(std::span<double> values) override;
  void reduce_report(EnergyReport& report) override;
  void gather_failures(std::vector<BondFailure>& failures) override;
  /// Empty: ghosts drift with partial forces until exchange_drifted(), so
  /// the rebuild test scans afterwards.
  DriftSink drift_sink(ForceField&, std::size_t) override { return {}; }
  /// The undivided run's neighbour-list test (whole_rebuild_due) on the
  /// whole system's displacements; implicit runs also measure the motion
  /// since the parts were made here, at every Newton iterate.
  bool rebuild_due(bool mine, const ParticleStore& particles, const ForceField& forces) override;
  std::optional<MortonFrame> morton_frame(const ParticleStore& particles) override;
  SolverDomain solver_domain() override;

 private:
  /// The rank, sizes and options, the first parts of `state` and the
  /// whole system's holding: the rest of either constructor.
  void start(GlobalState state);
  /// The first parts, from the whole state every rank holds.
  void make_parts(GlobalState state);
  /// New parts point to point (mpi/migration.cpp): each owned particle to
  /// its new owner (by `tree`) and the ranks that will hold it as a ghost.
  void migrate(const CutTree& tree);
  /// The part of the particles received by migrate() (`in[r]`: rank r's message).
  void install(const std::vector<std::vector<std::byte>>& in, const CutTree& tree);
  /// This rank's part of `state` (`layout`; the state is let go on the
  /// way: PartFactory::make), with the bookkeeping of new parts.
  void install_part(GlobalState&& state, const PartLayout& layout, const PeriodicCell* cell);
  /// The new owner of each particle of `s` (`x`: its positions put back
  /// into the cell), clumps with their first member. Collective.
  std::vector<std::uint32_t> new_owners(const CutTree& tree, const ParticleStore& s, const std::vector<Vec3>& x) const;
  /// This rank's part takes this Domain as its Collective.
  void join_part();
  /// moved_ += h max |v| over this rank's owned particles.
  void track_motion(const ParticleStore& s);
  void index_slots();
  enum class What { state, velocities };
  void exchange(ParticleStore& s, What what);
  /// Ghosts' entries of a per-slot vector <- their owners' (6 doubles each).
  void exchange(std::span<Vec6> values);
  /// Sends `per` doubles of each particle that is a ghost elsewhere (pack)
  /// and receives those of this part's ghosts (unpack), point to point.
  void transfer(std::size_t per, int tag, const std::function<void(std::uint32_t, std::vector<double>&)>& pack,
                const std::function<void(std::uint32_t, const double*)>& unpack);
  void reduce_sums(std::span<ExactSum> sums);
  std::uint64_t fragments() const;
  /// Per particle id: the smallest id of its live-bond component (a
  /// union-find over the whole system's bonds); `components` gets their count.
  std::vector<std::uint32_t> components(std::uint64_t* components) const;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  PartFactory factory_;
  std::optional<Simulation> part_;
  std::size_t count_ = 0;
  bool clumps_ = false;  ///< the scene has clumps
  std::vector<std::uint32_t> failed_;  ///< scene indices of every failed bond, ascending
  double margin_ = 0.0;                ///< M: a part stays valid while nothing moved more than M
  double moved_ = 0.0;                 ///< bound on this rank's owned particles' motion since the parts were made
  /// A deforming periodic cell: twice the sum of |Hdot e_a| over its
  /// periodic edges (length/time), added to max |v| in that bound.
  double image_speed_ = 0.0;
  /// Implicit runs: (id, position) of the owned particles when the parts
  /// were made, by id; the motion is measured against them at every force
  /// evaluation of the Newton iterations (trial iterates included).
  std::vector<std::pair<std::uint32_t, Vec3>> start_;
  /// Implicit runs: the whole system's largest distance from start_ (every
  /// rank's); throws std::runtime_error on every rank past the margin.
  void measure_motion(const ParticleStore& s);
  std::size_t partitions_ = 0;
  Holding high_water_, whole_;
  /// high_water_ raised to what the part holds now.
  void sample_holding();
  std::uint64_t repartition_every_ = 0;  ///< DEM_REPARTITION_EVERY (0: only when particles moved)
  /// Per other rank: ids of the particles to send (mine, ghosts there) and
  /// to receive (ghosts here, owned there), in the whole system's order;
  /// and their slots in the part (re-found after a re-ordering).
  std::vector<std::vector<std::uint32_t>> send_ids_, recv_ids_;
  std::vector<std::vector<std::uint32_t>> send_slots_, recv_slots_;
  std::size_t slots_at_reorder_ = 0;
  std::vector<std::vector<double>> send_buf_, recv_buf_;
};

}  // namespace dem
