#pragma once
/// \file agreement.hpp
/// What every MPI rank must share before a decomposed run: ranks started on
/// different scenes (`mpirun -np 2 dem run a.toml : -np 1 dem run b.toml`),
/// options or builds would otherwise run and write mixed results.

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

namespace dem {

/// Collective over `comm`. `values`: what must agree, by name (e.g. {"the
/// scene text", text}); each value's 64-bit hash (FNV-1a) is compared with
/// rank 0's. Returns, on every rank, "" when all agree, else one line naming
/// each value that differs and the ranks where it does ("the scene text
/// differs from rank 0's on ranks 2"). A rank whose value differs also
/// writes `its_own(name)` on its standard error, so that the user sees what
/// each rank had.
std::string disagreement(MPI_Comm comm, const std::vector<std::pair<std::string, std::string>>& values,
                         const std::vector<std::string>& its_own = {});

}  // namespace dem
