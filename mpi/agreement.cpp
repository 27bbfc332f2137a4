#include "mpi/agreement.hpp"

#include <cstdint>
#include <iostream>

namespace dem {

namespace {

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string disagreement(MPI_Comm comm, const std::vector<std::pair<std::string, std::string>>& values,
                         const std::vector<std::string>& its_own) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const int n = static_cast<int>(values.size());
  std::vector<std::uint64_t> mine(values.size()), all(values.size() * static_cast<std::size_t>(ranks));
  for (std::size_t k = 0; k < values.size(); ++k) mine[k] = fnv1a(values[k].second);
  MPI_Allgather(mine.data(), n, MPI_UINT64_T, all.data(), n, MPI_UINT64_T, comm);
  std::string out;
  for (int k = 0; k < n; ++k) {
    std::string where;
    for (int r = 1; r < ranks; ++r)
      if (all[static_cast<std::size_t>(r * n + k)] != all[static_cast<std::size_t>(k)])
        where += (where.empty() ? "" : ", ") + std::to_string(r);
    if (where.empty()) continue;
    if (mine[static_cast<std::size_t>(k)] != all[static_cast<std::size_t>(k)] &&
        static_cast<std::size_t>(k) < its_own.size())
      std::cerr << "rank " << rank << ": " << values[static_cast<std::size_t>(k)].first << " here: "
                << its_own[static_cast<std::size_t>(k)] << "\n";
    out += (out.empty() ? "" : "; ") + values[static_cast<std::size_t>(k)].first + " differs from rank 0's on rank" +
           (where.find(',') != std::string::npos ? "s " : " ") + where;
  }
  return out;
}

}  // namespace dem
