#pragma once
/// \file block_hessian.hpp
/// The linear algebra of the implicit integrator's Newton step
/// (docs/model.md §12.4 and §12.5 c): the Hessian H of the incremental
/// potential in the coordinates (delta x_i, phi_i), kept as one 6x6 diagonal
/// block per particle plus one 6x6 coupling block per pair record, from the
/// pair providers' 12x12 element blocks taken a chunk of records at a time
/// (never assembled into one sparse matrix), its product with a vector, and conjugate
/// gradients preconditioned by the inverses of the 6x6 diagonal blocks
/// (block Jacobi).
///
/// Design note: the product y = H x visits, for particle i, its diagonal
/// block and then each pair provider's records of i in the provider's
/// incidence order (core/force_provider.hpp), adding the record's 6x6
/// coupling block times x of the other end: the same pattern as the force
/// gather, so y is bitwise identical for any thread count. Every dot product
/// is an exact sum (core/exact_sum.hpp) over the particles a process owns,
/// so every CG iterate is the same bits for any thread count and, with a
/// SolverDomain, any MPI layout (engine/partition.hpp): a rank's part holds
/// each owned particle's records in the undivided order, and its ghosts'
/// entries of the vector multiplied are their owners'.
///
/// Particles whose coordinates are prescribed (fixed or moving groups) are
/// left out: their rows and columns are the identity, their right-hand side
/// is zero, so their part of the solution is zero.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/force_provider.hpp"
#include "core/particle_store.hpp"
#include "core/types.hpp"
#include "engine/force_field.hpp"

namespace dem {

/// A preconditioner of solve_pcg(): z = P r, P symmetric positive definite.
class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  /// r and z have one entry per particle.
  virtual void apply(std::span<const Vec6> r, std::span<Vec6> z) const = 0;
};

class BlockHessian {
 public:
  /// One coupling of a row of H: H_i,other = *block, or its transpose where
  /// `transposed` (i is the record's second end).
  struct Coupling {
    const Mat6* block;
    std::uint32_t other;
    std::uint32_t transposed;
  };

  /// H at the current configuration (the providers' last evaluate()):
  /// diag[i] = inertia[i] + the one-body providers' blocks + the own 6x6
  /// blocks of i's records of every pair provider (in incidence order);
  /// couplings from each pair provider's element Hessians in the form
  /// `blocks` (docs/model.md §12.4). `inertia` has one
  /// block per particle; `fixed` one flag per particle, or is empty. Throws
  /// std::invalid_argument if a provider gives no Hessian
  /// (require_implicit_support).
  void assemble(const ParticleStore& particles, const ForceField& forces, std::span<const Mat6> inertia,
                std::span<const char> fixed, HessianBlocks blocks);
  /// y = H x; x and y have one entry per particle.
  void multiply(std::span<const Vec6> x, std::span<Vec6> y) const;
  /// Row i of H x (the i-th entry of multiply()'s y, the same bits).
  Vec6 multiply_row(std::size_t i, std::span<const Vec6> x) const {
    if (!fixed_.empty() && fixed_[i]) return x[i];
    Vec6 sum = diagonal_[i] * x[i];
    for (std::uint32_t c = row_offsets_[i]; c < row_offsets_[i + 1]; ++c) {
      const Coupling& cp = rows_[c];
      prefetch_coupling(c + kPrefetchAhead);
      if (cp.transposed) sum += cp.block->transpose() * x[cp.other];
      else sum += *cp.block * x[cp.other];
    }
    return sum;
  }
  /// z = P r with P the inverses of the diagonal blocks (block Jacobi).
  void precondition(std::span<const Vec6> r, std::span<Vec6> z) const;
  /// H as a sparse matrix in compressed rows (CSR), 6 rows per particle
  /// slot in slot order (delta x then phi), the columns of each row
  /// ascending with the blocks of repeated pairs summed in incidence order
  /// (the same bits for any thread count); a fixed particle's rows are the
  /// identity and its couplings are left out, as in multiply(). For an
  /// undivided system (no ghosts). row_offsets has 6 n + 1 entries.
  void to_csr(std::vector<std::int64_t>& row_offsets, std::vector<std::int64_t>& columns,
              std::vector<double>& values) const;
  std::size_t size() const { return diagonal_.size(); }
  const std::vector<Mat6>& diagonal() const { return diagonal_; }
  /// The inverses of the diagonal blocks (block Jacobi; identity for fixed particles).
  const std::vector<Mat6>& inverse_diagonal() const { return inverse_; }
  /// Particle i's couplings in multiply()'s order, without those to fixed
  /// particles and zero blocks (none for a fixed particle).
  std::span<const Coupling> row(std::size_t i) const {
    return std::span<const Coupling>(rows_.data() + row_offsets_[i], row_offsets_[i + 1] - row_offsets_[i]);
  }
  /// True if particle i's coordinates are prescribed (its row is the identity).
  bool fixed(std::size_t i) const { return !fixed_.empty() && fixed_[i]; }

 private:
  /// Couplings ahead of the one multiplied whose block multiply_row()
  /// asks the cache for: a row's blocks lie wherever its records are, so
  /// the hardware prefetcher does not find them.
  /// The same bits; about 10% off the large plate's implicit step
  /// (docs/performance.md, "The large plate's step").
  static constexpr std::uint32_t kPrefetchAhead = 4;
  void prefetch_coupling(std::uint32_t c) const {
    if (c >= rows_.size()) return;
    const char* block = reinterpret_cast<const char*>(rows_[c].block);
    for (std::size_t line = 0; line < sizeof(Mat6); line += 64) __builtin_prefetch(block + line);
  }

  struct PairBlocks {
    /// Per record: the coupling block d2U/(dz_first dz_second) (its
    /// transpose couples the second end to the first); the own blocks are
    /// in diagonal_.
    std::vector<Mat6> coupling;
    std::vector<char> nonzero;  ///< per record: its coupling block has an entry other than 0
    std::span<const std::uint32_t> first, second;
    Incidence incidence;
  };
  /// Lays out each particle's row for multiply(): its couplings in the
  /// order of for_each_record_of over the pair providers in turn, without
  /// those to fixed particles and those whose block is zero (adding them
  /// changes no bit of a finite product).
  void build_rows();

  std::vector<PairBlocks> pairs_;
  std::vector<std::uint32_t> row_offsets_;  ///< particle i's couplings: rows_[row_offsets_[i], row_offsets_[i + 1])
  std::vector<Coupling> rows_;
  /// Records whose element Hessians assemble() asks a provider for at a
  /// time: the 12x12 scratch stays at 150 MB however many records there
  /// are, where one for every record took 1.3 GB of the large plate's 3.1
  /// GB peak (docs/performance.md, "The large plate's step").
  static constexpr std::size_t kElementChunk = std::size_t{1} << 17;
  std::vector<Mat12> scratch_;  ///< one chunk of one provider's element Hessians
  /// Per record of the provider being assembled: its first and second
  /// end's own 6x6 blocks, gathered into diagonal_ in incidence order.
  std::vector<std::array<Mat6, 2>> own_;
  std::vector<Mat6> diagonal_;
  std::vector<Mat6> inverse_;  ///< inverses of the diagonal blocks
  std::vector<char> fixed_;
};

/// Throws std::invalid_argument naming the first interaction the implicit
/// integrator cannot run (a provider without second derivatives: Baker-
/// Gonzalez bonds, Hertz-Mindlin contact, friction walls) or clumps.
void require_implicit_support(const ForceField& forces, bool has_clumps);

/// What a domain decomposition (mpi/domain.hpp) adds to the implicit
/// solver on one MPI rank's part of the system; members empty: an undivided
/// system. Sums and maxima over the owned particles become the whole
/// system's, the same on every rank.
struct SolverDomain {
  std::function<void(std::span<ExactSum>)> reduce;    ///< this rank's exact sums -> the whole system's
  std::function<double(double)> max;                  ///< this rank's maximum -> every rank's
  std::function<void(std::span<Vec6>)> ghost_values;  ///< ghosts' entries <- their owners' (per slot)
  /// This rank's contact-list rebuild test -> every rank's (engine/simulation.hpp).
  std::function<bool(bool)> rebuild_due;

  /// The whole system's value of a sum over this rank's owned particles.
  double total(ExactSum s) const {
    if (reduce) reduce(std::span<ExactSum>(&s, 1));
    return s.value();
  }
  double maximum(double x) const { return max ? max(x) : x; }
};

/// Outcome of solve_pcg().
struct CgResult {
  std::size_t iterations = 0;
  double relative_residual = 0.0;  ///< |H d - b|_W / |b|_W at the end
  bool converged = false;          ///< the tolerance was met
};

/// Solves H d = b by preconditioned conjugate gradients from d = 0 until
/// |H d - b|_W <= tolerance |b|_W, where |r|_W² = sum_i r_iᵀ diag(w_i) r_i
/// (docs/model.md §12.5 c: W = M^-1, the inverse inertia diagonal), or for at most
/// max_iterations. d is resized by the caller (one entry per particle).
/// With `ghost` (per slot, 1 = a ghost copy, as ParticleStore::ghost) and a
/// domain, sums run over the owned particles of all ranks and the direction
/// is made whole on the ghosts before each product; d of a ghost is then
/// its owner's. With `preconditioner`, it replaces the block Jacobi one.
CgResult solve_pcg(const BlockHessian& h, std::span<const Vec6> b, std::span<Vec6> d, std::span<const Vec6> w,
                   double tolerance, std::size_t max_iterations, std::span<const std::uint8_t> ghost = {},
                   const SolverDomain& domain = {}, const Preconditioner* preconditioner = nullptr);

/// Calls f(record, end) for each record of particle i in the incidence's
/// gather order (end 0: i is the record's first end, 1: its second).
template <class F>
void for_each_record_of(const Incidence& inc, std::size_t i, F&& f) {
  if (!inc.entry_offsets.empty())
    for (std::uint32_t e = inc.entry_offsets[i]; e < inc.entry_offsets[i + 1]; ++e)
      f(inc.entries[e] >> 1, inc.entries[e] & 1u);
  if (!inc.owned_offsets.empty())
    for (std::uint32_t r = inc.owned_offsets[i]; r < inc.owned_offsets[i + 1]; ++r) f(r, 0u);
  if (!inc.incoming_offsets.empty())
    for (std::uint32_t e = inc.incoming_offsets[i]; e < inc.incoming_offsets[i + 1]; ++e) f(inc.incoming[e], 1u);
}

}  // namespace dem
