#include "engine/block_hessian.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>

#include "bonds/bond_laws.hpp"
#include "contact/contact_laws.hpp"
#include "core/parallel.hpp"

namespace dem {

namespace {
std::string bond_law_names_with_hessian() {
  std::vector<std::string> names;
  for (const BondLawEntry& e : bond_laws())
    if (e.hessian) names.push_back(e.keyword);
  return quoted_list(names);
}
}  // namespace

void require_implicit_support(const ForceField& forces, bool has_clumps) {
  if (has_clumps) throw std::invalid_argument("the implicit integrator does not support clumps (use map 23, 25 or 27)");
  for (std::size_t k = 0; k < forces.providers().size(); ++k)
    if (forces.capabilities(k).hessian == nullptr)
      throw std::invalid_argument("the implicit integrator needs the second derivatives of every interaction, and '" +
                                  forces.providers()[k]->name() +
                                  "' gives none (docs/model.md §12.4: bond law " + bond_law_names_with_hessian() +
                                  ", contact law " +
                                  contact_law_keywords([](const ContactLawEntry& e) { return e.hessian; }) +
                                  " and its walls, gravity and group loads have them); use integrator = \"rrp25\"");
}

void BlockHessian::assemble(const ParticleStore& s, const ForceField& forces, std::span<const Mat6> inertia,
                            std::span<const char> fixed, HessianBlocks blocks) {
  const std::size_t n = s.size();
  diagonal_.assign(inertia.begin(), inertia.end());
  fixed_.assign(fixed.begin(), fixed.end());
  require_implicit_support(forces, false);
  std::size_t pair_count = 0;
  for (std::size_t k = 0; k < forces.providers().size(); ++k) {
    const ForceProvider* p = forces.providers()[k].get();
    const HessianSource* hs = forces.capabilities(k).hessian;
    const Incidence inc = p->incidence();
    const bool has_pairs =
        !inc.entry_offsets.empty() || !inc.owned_offsets.empty() || !inc.incoming_offsets.empty();
    if (has_pairs) {
      const PairResults r = p->pair_results();
      if (pairs_.size() <= pair_count) pairs_.emplace_back();
      PairBlocks& b = pairs_[pair_count++];
      b.first = r.first;
      b.second = hs->record_second_ends();
      b.incidence = inc;
      const std::size_t m = b.first.size();
      if (b.second.size() != m)
        throw std::logic_error("provider '" + p->name() + "' gives " + std::to_string(b.second.size()) +
                               " second ends for " + std::to_string(m) + " records");
      b.coupling.resize(m);
      b.nonzero.resize(m);
      own_.resize(m);
      // The element Hessians a chunk of records at a time, split into the
      // record's coupling block and its two ends' own blocks.
      scratch_.resize(std::min(m, kElementChunk));
      for (std::size_t first = 0; first < m; first += kElementChunk) {
        const std::size_t count = std::min(kElementChunk, m - first);
        hs->element_hessians(s, first, std::span<Mat12>(scratch_.data(), count), blocks);
        parallel_for_ranges(count, [&](std::size_t begin, std::size_t end) {
          for (std::size_t c = begin; c < end; ++c) {
            const std::size_t k = first + c;
            b.coupling[k] = scratch_[c].block<6, 6>(0, 6);
            b.nonzero[k] = (b.coupling[k].array() != 0.0).any();  // NaN counts as nonzero
            own_[k][0] = scratch_[c].block<6, 6>(0, 0);
            own_[k][1] = scratch_[c].block<6, 6>(6, 6);
          }
        });
      }
      parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
          for_each_record_of(b.incidence, i, [&](std::uint32_t k, std::uint32_t e) { diagonal_[i] += own_[k][e]; });
      });
    }
    parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) { hs->add_body_hessians(s, begin, end, diagonal_); });
  }
  pairs_.resize(pair_count);
  inverse_.resize(n);
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (!fixed_.empty() && fixed_[i]) {
        diagonal_[i].setIdentity();
        inverse_[i].setIdentity();
        continue;
      }
      inverse_[i] = diagonal_[i].ldlt().solve(Mat6::Identity());
    }
  });
  build_rows();
}

void BlockHessian::build_rows() {
  const std::size_t n = diagonal_.size();
  const bool any_fixed = !fixed_.empty();
  // visit(i, f): f(coupling) for each coupling of particle i's row, in order.
  const auto visit = [&](std::size_t i, auto&& f) {
    if (any_fixed && fixed_[i]) return;
    for (const PairBlocks& b : pairs_)
      for_each_record_of(b.incidence, i, [&](std::uint32_t k, std::uint32_t e) {
        const std::uint32_t other = e == 0 ? b.second[k] : b.first[k];
        if ((any_fixed && fixed_[other]) || !b.nonzero[k]) return;
        f(Coupling{&b.coupling[k], other, e});
      });
  };
  row_offsets_.assign(n + 1, 0);
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t count = 0;
      visit(i, [&](const Coupling&) { ++count; });
      row_offsets_[i + 1] = count;
    }
  });
  for (std::size_t i = 0; i < n; ++i) row_offsets_[i + 1] += row_offsets_[i];
  rows_.resize(row_offsets_[n]);
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      Coupling* out = rows_.data() + row_offsets_[i];
      visit(i, [&](const Coupling& c) { *out++ = c; });
    }
  });
}

void BlockHessian::multiply(std::span<const Vec6> x, std::span<Vec6> y) const {
  parallel_for_ranges(diagonal_.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) y[i] = multiply_row(i, x);
  });
}

void BlockHessian::to_csr(std::vector<std::int64_t>& row_offsets, std::vector<std::int64_t>& columns,
                          std::vector<double>& values) const {
  const std::size_t n = diagonal_.size();
  const bool any_fixed = !fixed_.empty();
  // Particle i's row block: i and the particles it is coupled to, ascending.
  const auto neighbours_of = [&](std::size_t i, std::vector<std::uint32_t>& out) {
    out.assign(1, static_cast<std::uint32_t>(i));
    if (any_fixed && fixed_[i]) return;
    for (const PairBlocks& b : pairs_)
      for_each_record_of(b.incidence, i, [&](std::uint32_t k, std::uint32_t e) {
        const std::uint32_t other = e == 0 ? b.second[k] : b.first[k];
        if (!(any_fixed && fixed_[other])) out.push_back(other);
      });
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  // Blocks before particle i's row block, then entries before each row.
  std::vector<std::int64_t> blocks_before(n + 1, 0);
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    std::vector<std::uint32_t> neighbours;
    for (std::size_t i = begin; i < end; ++i) {
      neighbours_of(i, neighbours);
      blocks_before[i + 1] = static_cast<std::int64_t>(neighbours.size());
    }
  });
  for (std::size_t i = 0; i < n; ++i) blocks_before[i + 1] += blocks_before[i];
  row_offsets.resize(6 * n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t count = blocks_before[i + 1] - blocks_before[i];
    for (int a = 0; a < 6; ++a) row_offsets[6 * i + a] = 36 * blocks_before[i] + 6 * a * count;
  }
  row_offsets[6 * n] = 36 * blocks_before[n];
  columns.resize(static_cast<std::size_t>(row_offsets[6 * n]));
  values.assign(columns.size(), 0.0);
  // Each row block written in place: the blocks of repeated pairs summed in
  // incidence order (the same bits for any thread count).
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    std::vector<std::uint32_t> neighbours;
    for (std::size_t i = begin; i < end; ++i) {
      neighbours_of(i, neighbours);
      const std::size_t count = neighbours.size();
      for (int a = 0; a < 6; ++a) {
        std::int64_t* col = columns.data() + row_offsets[6 * i + a];
        for (std::size_t p = 0; p < count; ++p)
          for (int c = 0; c < 6; ++c) col[6 * p + c] = 6 * static_cast<std::int64_t>(neighbours[p]) + c;
      }
      const auto add = [&](std::uint32_t j, const auto& block) {
        const auto p = static_cast<std::size_t>(std::lower_bound(neighbours.begin(), neighbours.end(), j) -
                                                neighbours.begin());
        for (int a = 0; a < 6; ++a) {
          double* row = values.data() + row_offsets[6 * i + a] + 6 * p;
          for (int c = 0; c < 6; ++c) row[c] += block(a, c);
        }
      };
      add(static_cast<std::uint32_t>(i), diagonal_[i]);
      if (any_fixed && fixed_[i]) continue;
      for (const PairBlocks& b : pairs_)
        for_each_record_of(b.incidence, i, [&](std::uint32_t k, std::uint32_t e) {
          const std::uint32_t other = e == 0 ? b.second[k] : b.first[k];
          if (any_fixed && fixed_[other]) return;
          if (e == 0) add(other, b.coupling[k]);
          else add(other, b.coupling[k].transpose());
        });
    }
  });
}

void BlockHessian::precondition(std::span<const Vec6> r, std::span<Vec6> z) const {
  parallel_for_ranges(inverse_.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) z[i] = inverse_[i] * r[i];
  });
}

namespace {

/// Sums of owned particles' terms, over every rank.
struct OwnedSums {
  std::span<const std::uint8_t> ghost;
  const SolverDomain& domain;
  template <class Term>
  double operator()(std::size_t n, Term&& term) const {
    return domain.total(exact_sum(n, [&](std::size_t i) { return !ghost.empty() && ghost[i] ? 0.0 : term(i); }));
  }
  double weighted_norm2(std::span<const Vec6> r, std::span<const Vec6> w) const {
    return (*this)(r.size(), [&](std::size_t i) { return r[i].cwiseProduct(r[i]).dot(w[i]); });
  }
  double dot(std::span<const Vec6> a, std::span<const Vec6> b) const {
    return (*this)(a.size(), [&](std::size_t i) { return a[i].dot(b[i]); });
  }
};

}  // namespace

CgResult solve_pcg(const BlockHessian& h, std::span<const Vec6> b, std::span<Vec6> d, std::span<const Vec6> w,
                   double tolerance, std::size_t max_iterations, std::span<const std::uint8_t> ghost,
                   const SolverDomain& domain, const Preconditioner* preconditioner) {
  const std::size_t n = h.size();
  const OwnedSums sums{ghost, domain};
  const auto owned = [&](std::size_t i) { return ghost.empty() || !ghost[i]; };
  std::vector<Vec6> r(b.begin(), b.end()), z(n), p(n), hp(n);
  // z = P r and the whole system's r.z, in one pass for block Jacobi.
  const auto precondition_dot = [&] {
    if (preconditioner != nullptr) {
      preconditioner->apply(r, z);
      return sums.dot(r, z);
    }
    return domain.total(exact_sum(n, [&](std::size_t i) {
      z[i] = h.inverse_diagonal()[i] * r[i];
      return owned(i) ? r[i].dot(z[i]) : 0.0;
    }));
  };
  for (Vec6& x : d.first(n)) x.setZero();
  CgResult out;
  const double b_norm2 = sums.weighted_norm2(b, w);
  if (!(b_norm2 > 0.0)) {
    out.converged = true;
    return out;
  }
  const double goal2 = tolerance * tolerance * b_norm2;
  double rz = precondition_dot();
  p = z;
  double r_norm2 = b_norm2;
  while (out.iterations < max_iterations) {
    if (domain.ghost_values) domain.ghost_values(p);  // ghosts' p: their owners'
    // hp = H p and p.hp in one pass; each term as sums.dot() forms it.
    const double php = domain.total(exact_sum(n, [&](std::size_t i) {
      hp[i] = h.multiply_row(i, p);
      return owned(i) ? p[i].dot(hp[i]) : 0.0;
    }));
    if (!(php > 0.0)) break;  // H is positive definite; round-off only
    const double alpha = rz / php;
    // d += alpha p, r -= alpha hp and |r|_W², in one pass.
    r_norm2 = domain.total(exact_sum(n, [&](std::size_t i) {
      d[i] += alpha * p[i];
      r[i] -= alpha * hp[i];
      return owned(i) ? r[i].cwiseProduct(r[i]).dot(w[i]) : 0.0;
    }));
    ++out.iterations;
    if (r_norm2 <= goal2) {
      out.converged = true;
      break;
    }
    const double rz_next = precondition_dot();
    const double beta = rz_next / rz;
    rz = rz_next;
    parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) p[i] = z[i] + beta * p[i];
    });
  }
  out.relative_residual = std::sqrt(r_norm2 / b_norm2);
  return out;
}

}  // namespace dem
