#include "engine/amg_preconditioner.hpp"

#include <stdexcept>
#include <vector>

#ifdef DEM_WITH_HYPRE
#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
#include <mpi.h>
#endif

namespace dem {

#ifdef DEM_WITH_HYPRE

namespace {

/// MPI (hypre needs it) and hypre, initialised once per process; MPI is
/// finalised at exit only if this process initialised it here.
struct HypreRuntime {
  bool owns_mpi = false;
  HypreRuntime() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      owns_mpi = true;
    }
    HYPRE_Init();
  }
  ~HypreRuntime() {
    HYPRE_Finalize();
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (owns_mpi && !finalised) MPI_Finalize();
  }
};

void start_hypre() { static HypreRuntime runtime; }

void check(HYPRE_Int status, const char* what) {
  if (status != 0) {
    char message[256] = {};
    HYPRE_DescribeError(status, message);
    HYPRE_ClearAllErrors();
    throw std::runtime_error(std::string("hypre: ") + what + ": " + message);
  }
}

}  // namespace

struct AmgPreconditioner::Hypre {
  HYPRE_IJMatrix matrix = nullptr;
  HYPRE_IJVector rhs = nullptr, solution = nullptr;
  HYPRE_Solver amg = nullptr;
  HYPRE_BigInt rows = 0;
  std::vector<HYPRE_BigInt> row_index;
  mutable std::vector<double> buffer;

  void release() {
    if (amg != nullptr) HYPRE_BoomerAMGDestroy(amg);
    if (matrix != nullptr) HYPRE_IJMatrixDestroy(matrix);
    if (rhs != nullptr) HYPRE_IJVectorDestroy(rhs);
    if (solution != nullptr) HYPRE_IJVectorDestroy(solution);
    amg = nullptr;
    matrix = nullptr;
    rhs = solution = nullptr;
  }
  HYPRE_IJVector make_vector() const {
    HYPRE_IJVector v = nullptr;
    check(HYPRE_IJVectorCreate(MPI_COMM_SELF, 0, rows - 1, &v), "vector");
    check(HYPRE_IJVectorSetObjectType(v, HYPRE_PARCSR), "vector type");
    check(HYPRE_IJVectorInitialize(v), "vector initialise");
    return v;
  }
};

bool amg_available() { return true; }

AmgPreconditioner::AmgPreconditioner() : hypre_(std::make_unique<Hypre>()) { start_hypre(); }

AmgPreconditioner::~AmgPreconditioner() { hypre_->release(); }

void AmgPreconditioner::setup(const BlockHessian& h) {
  Hypre& x = *hypre_;
  x.release();
  std::vector<std::int64_t> offsets, columns;
  std::vector<double> values;
  h.to_csr(offsets, columns, values);
  x.rows = static_cast<HYPRE_BigInt>(offsets.size() - 1);
  if (x.rows == 0) return;
  check(HYPRE_IJMatrixCreate(MPI_COMM_SELF, 0, x.rows - 1, 0, x.rows - 1, &x.matrix), "matrix");
  check(HYPRE_IJMatrixSetObjectType(x.matrix, HYPRE_PARCSR), "matrix type");
  std::vector<HYPRE_Int> sizes(static_cast<std::size_t>(x.rows));
  for (std::size_t r = 0; r < sizes.size(); ++r) sizes[r] = static_cast<HYPRE_Int>(offsets[r + 1] - offsets[r]);
  check(HYPRE_IJMatrixSetRowSizes(x.matrix, sizes.data()), "row sizes");
  check(HYPRE_IJMatrixInitialize(x.matrix), "matrix initialise");
  x.row_index.resize(sizes.size());
  for (std::size_t r = 0; r < sizes.size(); ++r) x.row_index[r] = static_cast<HYPRE_BigInt>(r);
  const std::vector<HYPRE_BigInt> cols(columns.begin(), columns.end());
  check(HYPRE_IJMatrixSetValues(x.matrix, x.rows, sizes.data(), x.row_index.data(), cols.data(), values.data()),
        "matrix values");
  check(HYPRE_IJMatrixAssemble(x.matrix), "matrix assemble");
  x.rhs = x.make_vector();
  x.solution = x.make_vector();
  check(HYPRE_IJVectorAssemble(x.rhs), "vector assemble");
  check(HYPRE_IJVectorAssemble(x.solution), "vector assemble");
  HYPRE_ParCSRMatrix a = nullptr;
  HYPRE_ParVector b = nullptr, z = nullptr;
  HYPRE_IJMatrixGetObject(x.matrix, reinterpret_cast<void**>(&a));
  HYPRE_IJVectorGetObject(x.rhs, reinterpret_cast<void**>(&b));
  HYPRE_IJVectorGetObject(x.solution, reinterpret_cast<void**>(&z));
  check(HYPRE_BoomerAMGCreate(&x.amg), "BoomerAMG");
  HYPRE_BoomerAMGSetPrintLevel(x.amg, 0);
  HYPRE_BoomerAMGSetMaxIter(x.amg, 1);  // one V-cycle per application
  HYPRE_BoomerAMGSetTol(x.amg, 0.0);
  // (Measured on the bending beams and the plates, docs/performance.md
  // "Algebraic multigrid": aggressive coarsening on the first level halves
  // the set-up and takes fewer CG iterations, 17.8 against 21.4 a step on
  // the middle beam; forward/backward Gauss-Seidel in place of the
  // symmetric sweep halves a V-cycle's cost but takes 2.5 times the
  // iterations.)
  HYPRE_BoomerAMGSetNumFunctions(x.amg, 6);  // (delta x, phi) of each particle
  HYPRE_BoomerAMGSetStrongThreshold(x.amg, 0.5);
  HYPRE_BoomerAMGSetAggNumLevels(x.amg, 1);
  HYPRE_BoomerAMGSetRelaxType(x.amg, 6);  // symmetric hybrid Gauss-Seidel: P stays symmetric
  check(HYPRE_BoomerAMGSetup(x.amg, a, b, z), "BoomerAMG set-up");
}

void AmgPreconditioner::apply(std::span<const Vec6> r, std::span<Vec6> z) const {
  const Hypre& x = *hypre_;
  const std::size_t n = r.size();
  if (x.rows == 0) return;
  if (static_cast<HYPRE_BigInt>(6 * n) != x.rows) throw std::logic_error("AmgPreconditioner: size changed since setup");
  x.buffer.resize(6 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (int a = 0; a < 6; ++a) x.buffer[6 * i + a] = r[i][a];
  check(HYPRE_IJVectorSetValues(x.rhs, x.rows, x.row_index.data(), x.buffer.data()), "right-hand side");
  std::fill(x.buffer.begin(), x.buffer.end(), 0.0);
  check(HYPRE_IJVectorSetValues(x.solution, x.rows, x.row_index.data(), x.buffer.data()), "initial guess");
  HYPRE_ParCSRMatrix a = nullptr;
  HYPRE_ParVector b = nullptr, s = nullptr;
  HYPRE_IJMatrixGetObject(x.matrix, reinterpret_cast<void**>(&a));
  HYPRE_IJVectorGetObject(x.rhs, reinterpret_cast<void**>(&b));
  HYPRE_IJVectorGetObject(x.solution, reinterpret_cast<void**>(&s));
  HYPRE_BoomerAMGSolve(x.amg, a, b, s);  // (a V-cycle that does not reach Tol reports an error code)
  HYPRE_ClearAllErrors();
  check(HYPRE_IJVectorGetValues(x.solution, x.rows, x.row_index.data(), x.buffer.data()), "solution");
  for (std::size_t i = 0; i < n; ++i)
    for (int a = 0; a < 6; ++a) z[i][a] = x.buffer[6 * i + a];
}

#else

struct AmgPreconditioner::Hypre {};

bool amg_available() { return false; }

AmgPreconditioner::AmgPreconditioner() {
  throw std::runtime_error("preconditioner \"amg\" (hypre BoomerAMG) is not in this build: install libhypre-dev and rebuild");
}
AmgPreconditioner::~AmgPreconditioner() = default;
void AmgPreconditioner::setup(const BlockHessian&) {}
void AmgPreconditioner::apply(std::span<const Vec6>, std::span<Vec6>) const {}

#endif

}  // namespace dem
