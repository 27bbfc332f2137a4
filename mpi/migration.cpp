// New parts point to point (issue 28 item 2): each rank sends each particle
// it owns, with its list build position, only to its new owner and to the
// ranks that will hold it as a ghost, its providers' histories to the ranks
// it sends to, and each clump to its new owner: one all-to-all of byte
// counts and one of the bytes, the volume of a ghost exchange. The owners
// come from the cut tree the ranks build together (engine/cut_tree.hpp),
// the ghost rule is part_layouts()'s (engine/partition.hpp), so the parts
// are the ones the gathered state gives, bit for bit.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "core/byte_stream.hpp"
#include "core/format.hpp"
#include "engine/cut_tree.hpp"
#include "mpi/domain.hpp"

namespace dem {

namespace {

/// Every rank's `mine` bytes to every rank (`mine[r]`: the bytes for rank
/// r), through one all-to-all of counts and one of bytes; out[r]: the
/// bytes from rank r.
std::vector<std::vector<std::byte>> all_to_all(MPI_Comm comm, const std::vector<std::vector<std::byte>>& mine) {
  const std::size_t ranks = mine.size();
  std::vector<int> send_counts(ranks), recv_counts(ranks), send_at(ranks), recv_at(ranks);
  long long total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (mine[r].size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
        total + static_cast<long long>(mine[r].size()) > std::numeric_limits<int>::max())
      throw std::runtime_error("MPI migration: a rank sends over 2 GiB");
    send_at[r] = static_cast<int>(total);
    send_counts[r] = static_cast<int>(mine[r].size());
    total += send_counts[r];
  }
  std::vector<std::byte> out_bytes;
  out_bytes.reserve(static_cast<std::size_t>(total));
  for (const auto& m : mine) out_bytes.insert(out_bytes.end(), m.begin(), m.end());
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  long long in_total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    recv_at[r] = static_cast<int>(in_total);
    in_total += recv_counts[r];
  }
  if (in_total > std::numeric_limits<int>::max()) throw std::runtime_error("MPI migration: a rank receives over 2 GiB");
  std::vector<std::byte> in_bytes(static_cast<std::size_t>(in_total));
  MPI_Alltoallv(out_bytes.data(), send_counts.data(), send_at.data(), MPI_BYTE, in_bytes.data(), recv_counts.data(),
                recv_at.data(), MPI_BYTE, comm);
  std::vector<std::vector<std::byte>> in(ranks);
  for (std::size_t r = 0; r < ranks; ++r)
    in[r].assign(in_bytes.begin() + recv_at[r], in_bytes.begin() + recv_at[r] + recv_counts[r]);
  return in;
}

}  // namespace

std::vector<std::uint32_t> Domain::new_owners(const CutTree& tree, const ParticleStore& s,
                                              const std::vector<Vec3>& x) const {
  std::vector<std::uint32_t> owner(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) owner[i] = tree.owner(x[i], s.id[i]);
  if (!clumps_) return owner;
  // A clump's members go with its first member, whose owner the clump's
  // owner (which holds every member) tells every rank.
  const std::vector<Clump>& clumps = factory_.whole().clumps();
  std::vector<std::uint32_t> first_owner(clumps.size(), 0);
  const IdIndex index(s);
  for (std::size_t c = 0; c < clumps.size(); ++c) {
    const std::uint32_t first = index.slot(clumps[c].members.front());
    if (first != PartMap::kNotInPart && s.owns(first)) first_owner[c] = owner[first] + 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, first_owner.data(), static_cast<int>(first_owner.size()), MPI_UINT32_T, MPI_MAX, comm_);
  for (std::size_t c = 0; c < clumps.size(); ++c)
    for (const std::uint32_t id : clumps[c].members)
      if (const std::uint32_t i = index.slot(id); i != PartMap::kNotInPart) owner[i] = first_owner[c] - 1;
  return owner;
}

void Domain::migrate(const CutTree& tree) {
  const ParticleStore& s = part_->particles();
  const PeriodicCell* cell = part_->cell();
  const std::size_t ranks = static_cast<std::size_t>(size_);
  // The halo, from the largest radius and the longest bond of every rank.
  double range = factory_.interaction_range(s, cell);
  MPI_Allreduce(MPI_IN_PLACE, &range, 1, MPI_DOUBLE, MPI_MAX, comm_);
  margin_ = 0.5 * range;
  const double halo = (range + 2.0 * margin_) * (1.0 + 1e-9);
  // New owners of every particle this rank holds, and the boxes of every rank's new owned particles.
  const std::vector<Vec3> x = positions_in_cell(s.position, cell);
  const std::vector<std::uint32_t> owner = new_owners(tree, s, x);
  std::vector<double> lo(3 * ranks, std::numeric_limits<double>::infinity()), hi(3 * ranks, -lo[0]);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s.owns(i)) continue;
    for (int a = 0; a < 3; ++a) {
      lo[3 * owner[i] + a] = std::min(lo[3 * owner[i] + a], x[i][a]);
      hi[3 * owner[i] + a] = std::max(hi[3 * owner[i] + a], x[i][a]);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), static_cast<int>(lo.size()), MPI_DOUBLE, MPI_MIN, comm_);
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), static_cast<int>(hi.size()), MPI_DOUBLE, MPI_MAX, comm_);
  const bool periodic = cell != nullptr && cell->any();
  const std::vector<Vec3> shifts = periodic ? image_offsets(*cell, halo) : std::vector<Vec3>{Vec3::Zero()};
  // Where each owned particle goes: its owner, the ranks whose box it is
  // near, and the owners of its bond partners (part_layouts' rule).
  std::vector<std::vector<std::uint32_t>> to(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s.owns(i)) continue;
    to[i].push_back(owner[i]);
    for (std::size_t r = 0; r < ranks; ++r)
      if (r != owner[i] && near_box(x[i], Vec3(lo[3 * r], lo[3 * r + 1], lo[3 * r + 2]),
                                    Vec3(hi[3 * r], hi[3 * r + 1], hi[3 * r + 2]), shifts, halo))
        to[i].push_back(static_cast<std::uint32_t>(r));
  }
  const IdIndex index(s);
  if (!factory_.bond_keys().empty())
    visit_cut_bonds(index, factory_.bond_keys(), owner, [&](std::uint32_t i, std::uint32_t j) {
      if (s.owns(i)) to[i].push_back(owner[j]);
      if (s.owns(j)) to[j].push_back(owner[i]);
    });
  // One message per rank: the particles it gets, which ranks hold as
  // ghosts those it will own, the histories, the clumps it will own.
  std::vector<std::vector<std::uint32_t>> slots(ranks);
  std::vector<std::vector<std::byte>> holders(ranks);
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::vector<std::uint32_t>& d = to[i];
    if (d.empty()) continue;  // (a ghost here: its owner sends it)
    std::sort(d.begin() + 1, d.end());
    d.erase(std::unique(d.begin() + 1, d.end()), d.end());
    for (const std::uint32_t r : d) slots[r].push_back(static_cast<std::uint32_t>(i));
    ByteWriter w(holders[d[0]]);
    for (std::size_t k = 1; k < d.size(); ++k) {
      w.u32(s.id[i]);
      w.u32(d[k]);
    }
  }
  std::vector<std::vector<Clump>> clumps(ranks);
  for (const Clump& c : part_->clumps()) clumps[owner[index.slot(c.members.front())]].push_back(c);
  std::vector<std::vector<std::byte>> out(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    // (Every rank gets its own piece, empty or not: the walls' and the
    // cell's state are in every rank's histories.)
    if (slots[r].empty() && clumps[r].empty() && holders[r].empty() && r != static_cast<std::size_t>(rank_)) continue;
    const std::vector<std::byte> piece = pack_piece(*part_, slots[r], clumps[r]);
    ByteWriter(out[r]).u64(piece.size());
    out[r].insert(out[r].end(), piece.begin(), piece.end());
    out[r].insert(out[r].end(), holders[r].begin(), holders[r].end());
  }
  const std::vector<std::vector<std::byte>> in = all_to_all(comm_, out);
  out.clear();
  install(in, tree);
}

void Domain::install(const std::vector<std::vector<std::byte>>& in, const CutTree& tree) {
  std::vector<std::vector<std::byte>> pieces;
  std::map<std::uint32_t, std::vector<std::uint32_t>> held_by;  // my new particle id -> ghost holders
  for (const std::vector<std::byte>& m : in) {
    if (m.empty()) continue;
    ByteReader r(m);
    const std::size_t length = r.count("migrated piece byte", 1);
    const std::span<const std::byte> piece = r.bytes(length, "migrated piece");
    pieces.emplace_back(piece.begin(), piece.end());
    while (r.remaining() > 0) {
      const std::uint32_t id = r.u32("ghost holder id");
      held_by[id].push_back(r.u32("ghost holder rank"));
    }
  }
  GlobalState state = unpack_state(std::move(pieces), part_->forces().providers().size(), shared_state(*part_, failed_));
  const PeriodicCell* cell = state.cell ? &*state.cell : nullptr;
  const std::vector<Vec3> x = positions_in_cell(state.particles.position, cell);
  // (Owned on every rank: new_owners() is collective for the clumps.)
  ParticleStore& p = state.particles;
  const std::vector<std::uint32_t> owner = new_owners(tree, p, x);
  PartLayout layout;
  const std::size_t ranks = static_cast<std::size_t>(size_);
  send_ids_.assign(ranks, {});
  recv_ids_.assign(ranks, {});
  for (std::size_t i = 0; i < p.size(); ++i) {
    layout.members.push_back(static_cast<std::uint32_t>(i));
    const bool ghost = owner[i] != static_cast<std::uint32_t>(rank_);
    layout.ghost.push_back(ghost ? 1 : 0);
    if (ghost) {
      recv_ids_[owner[i]].push_back(p.id[i]);
    } else if (const auto it = held_by.find(p.id[i]); it != held_by.end()) {
      for (const std::uint32_t q : it->second) send_ids_[q].push_back(p.id[i]);
    }
  }
  install_part(std::move(state), layout, cell);
}

}  // namespace dem
