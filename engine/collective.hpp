#pragma once
/// \file collective.hpp
/// What the stepper (engine/simulation.hpp) needs from the other parts of a
/// system split over MPI ranks (engine/partition.hpp), as one interface:
/// ghosts that take their owners' state or velocities, exact reductions,
/// the merge of energy reports and failure records, maxima, the ghosts'
/// entries of the implicit solver's vectors, and the rebuild decision.
/// SerialCollective is the one-rank system: nothing to exchange, every sum
/// already the whole; mpi/domain.hpp implements it over MPI. Every call is
/// collective: all ranks make it at the same point of the same step.
///
/// Why the results are the same bits on any layout: docs/model.md §5 (exact
/// sums of what each rank books) and the design note of engine/partition.hpp.

#include <optional>
#include <span>
#include <vector>

#include "contact/neighbour_search.hpp"
#include "core/diagnostics.hpp"
#include "core/exact_sum.hpp"
#include "core/force_provider.hpp"
#include "core/particle_store.hpp"
#include "engine/block_hessian.hpp"
#include "engine/force_field.hpp"
#include "engine/reorder.hpp"

namespace dem {

class Collective {
 public:
  virtual ~Collective() = default;

  // --- ghosts ---------------------------------------------------------------

  /// After the drift of a step: ghost copies take their owners' drifted
  /// state (x, R, v, Omega) where the step reads it before the clumps'
  /// members are placed; `ledger_reads`: the ledger's kick power reads it
  /// (members as drifted).
  virtual void exchange_drifted(ParticleStore& particles, bool ledger_reads) = 0;
  /// After the clumps' members are placed on their clumps, before the
  /// rebuild test: ghost copies take their owners' placed state.
  virtual void exchange_placed(ParticleStore& particles) = 0;
  /// Ghost copies take their owners' velocities (after a kick or the
  /// friction filter, where both ends of a record are read).
  virtual void exchange_velocities(ParticleStore& particles) = 0;
  /// Ghosts' entries of a per-slot vector <- their owners' (the implicit
  /// step's Newton direction and its CG directions).
  virtual void ghost_values(std::span<Vec6> values) = 0;

  // --- reductions -------------------------------------------------------------

  /// Exact sums of this rank's particles and records -> the whole system's
  /// (in place).
  virtual void reduce(std::span<ExactSum> sums) = 0;
  /// This rank's values -> every rank's maximum, element by element (in place).
  virtual void max(std::span<double> values) = 0;
  /// This rank's energy report -> the whole system's (exact columns merged,
  /// counts summed, fragments of the whole bond graph).
  virtual void reduce_report(EnergyReport& report) = 0;
  /// This rank's failure records (those it books) -> every rank's, in
  /// (step, time, bond) order.
  virtual void gather_failures(std::vector<BondFailure>& failures) = 0;

  /// The value of an exact sum over the whole system.
  double total(ExactSum s) {
    reduce(std::span<ExactSum>(&s, 1));
    return s.value();
  }
  /// Every rank's maximum of x.
  double maximum(double x) {
    max(std::span<double>(&x, 1));
    return x;
  }

  // --- rebuilds and re-ordering ---------------------------------------------------

  /// Where the drift pass of a step may do the neighbour list's rebuild-test
  /// scan (ForceField::drift_sink): an empty sink when the drifted
  /// positions are not yet final there (ghosts drift with partial forces
  /// until exchange_drifted()).
  virtual DriftSink drift_sink(ForceField& forces, std::size_t count) = 0;
  /// This rank's answer to "is a rebuild due" (ForceField::rebuild_due) ->
  /// every rank's, so that all ranks rebuild, and re-order, at the same
  /// steps.
  virtual bool rebuild_due(bool mine, const ParticleStore& particles, const ForceField& forces) = 0;
  /// The Morton frame of all particles of all ranks (engine/reorder.hpp);
  /// nullopt: the particles' own.
  virtual std::optional<MortonFrame> morton_frame(const ParticleStore& particles) = 0;

  /// The implicit solver's view (engine/block_hessian.hpp); empty members
  /// for one rank (the solver's serial paths).
  virtual SolverDomain solver_domain() = 0;
};

/// One rank: nothing to exchange, every sum already the whole, the rebuild
/// decision this rank's own. (Not final: a test may stand in for other
/// ranks' sums by overriding reduce().)
class SerialCollective : public Collective {
 public:
  void exchange_drifted(ParticleStore&, bool) override {}
  void exchange_placed(ParticleStore&) override {}
  void exchange_velocities(ParticleStore&) override {}
  void ghost_values(std::span<Vec6>) override {}
  void reduce(std::span<ExactSum>) override {}
  void max(std::span<double>) override {}
  void reduce_report(EnergyReport&) override {}
  void gather_failures(std::vector<BondFailure>&) override {}
  DriftSink drift_sink(ForceField& forces, std::size_t count) override { return forces.drift_sink(count); }
  bool rebuild_due(bool mine, const ParticleStore&, const ForceField&) override { return mine; }
  std::optional<MortonFrame> morton_frame(const ParticleStore&) override { return std::nullopt; }
  SolverDomain solver_domain() override { return {}; }
};

/// The one SerialCollective (it has no state).
SerialCollective& serial_collective();

/// The neighbour list's rebuild test (contact/neighbour_search.hpp) on the
/// displacements of every rank's particles: each rank's DriftSummary, and
/// when needed its spread about the common centre, merged by
/// Collective::max; the same decision, bit for bit, as the undivided run's.
bool whole_rebuild_due(Collective& collective, const NeighbourSearch& search, const ParticleStore& particles);

}  // namespace dem
