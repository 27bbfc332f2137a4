// The memory a scene will need, the limit it is held to, and the close
// pairs of built particles counted on a cell grid (scene_size.hpp).
#include "scene/scene_size.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/format.hpp"

namespace dem {

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

/// The program itself: code, libraries, thread stacks and the small
/// allocations of any run (dem run of the 80-particle ring: 18.3 MiB).
constexpr std::uint64_t kProgramBytes = 18 * kMiB;

// Bytes per particle, bond and contact pair (scene_size.hpp).
constexpr std::uint64_t kParticleBytes = 236;  // 6 Vec3, 2 Quat, 3 double, 1 uint32
constexpr std::uint64_t kBondListBytes = 44;   // first, second, rest_length, rest_direction, type
constexpr std::uint64_t kRunBytesPerParticle =
    kParticleBytes + 4 /* bond offsets */ + 8 /* contact offsets */ + 24 /* build positions */ + 12 /* kd-tree */;
constexpr std::uint64_t kVtkBytesPerParticle = 172, kVtkBytesPerBond = 28, kVtkCellMapBytes = 8;
/// Counts over this are taken as this: the estimates then stay below 2^64
/// and far above any memory.
constexpr std::uint64_t kMaxCount = 1000000000000000ull;
/// A bond's two particle ids as a pair key (engine/partition.hpp PartFactory).
constexpr std::uint64_t kBondKeyBytes = 8;

/// A std::vector<std::byte> grown by resize() as core/byte_stream.hpp's
/// ByteWriter grows it (libstdc++: new capacity = size + max(size, added)).
/// Remembers the most it held at once: the old and the new buffer while it
/// grows.
class GrowingBuffer {
 public:
  explicit GrowingBuffer(std::uint64_t initial = 0) : size_(initial), capacity_(initial), peak_(initial) {}

  /// `count` items of `item` bytes, written a number (8 bytes or less) at a time.
  void append_items(std::uint64_t count, std::uint64_t item) {
    std::uint64_t left = count * item;
    while (size_ + left > capacity_) {
      const std::uint64_t fit = capacity_ - size_;
      size_ += fit;
      left -= fit;
      grow(std::min<std::uint64_t>(8, left));
    }
    size_ += left;
  }
  /// One block of `bytes` (a string, or a provider's section).
  void append_block(std::uint64_t bytes) {
    if (size_ + bytes > capacity_) grow(bytes);
    size_ += bytes;
  }
  std::uint64_t size() const { return size_; }
  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t peak() const { return peak_; }

 private:
  void grow(std::uint64_t added) {
    const std::uint64_t next = size_ + std::max(size_, added);
    peak_ = std::max(peak_, capacity_ + next);
    capacity_ = next;
  }
  std::uint64_t size_, capacity_, peak_;
};

/// A field of a checkpoint section: name, type code, then its items.
void append_field(GrowingBuffer& b, std::uint64_t count, std::uint64_t item) {
  b.append_block(8 + 24);  // name (u64 length and bytes)
  b.append_block(1);       // type code
  b.append_items(count, item);
}

}  // namespace

MemoryEstimate estimate_memory(const SceneSizes& s, const OutputSpec& output, bool files) {
  const std::uint64_t n = std::min(s.particles, kMaxCount), bonds = std::min(s.bonds, kMaxCount),
                      pairs = std::min(s.contact_pairs, kMaxCount);
  MemoryEstimate e;
  e.program = kProgramBytes;
  e.build = n * kParticleBytes + bonds * kBondListBytes + std::min(s.build_scratch, kMaxCount);
  e.state = n * kRunBytesPerParticle + bonds * kStateBytesPerBond + pairs * kStateBytesPerPair;
  if (s.implicit)
    e.state += n * kImplicitBytesPerParticle + (bonds + pairs) * kImplicitBytesPerRecord +
               std::max(bonds, pairs) * kImplicitScratchBytesPerRecord;
  if (files) {
    const bool vtk = output.vtk_every > 0;
    const std::uint64_t frame = vtk ? n * kVtkBytesPerParticle + bonds * kVtkBytesPerBond : 0;
    const std::uint64_t cell_map = vtk ? (n + bonds) * kVtkCellMapBytes : 0;
    // The checkpoint: capture_simulation copies the particles and has each
    // provider write its section into a vector of its own ...
    GrowingBuffer bond_section, contact_section;
    for (const std::uint64_t item : {4, 4, 8, 24, 4}) append_field(bond_section, bonds, item);
    contact_section.append_items(n, 24);
    const std::uint64_t copy = n * kParticleBytes + bond_section.capacity() + contact_section.capacity();
    // ... then encode_checkpoint writes them all into one byte vector (the
    // scene file's text, at most 16 MiB and usually a few KiB, left out).
    GrowingBuffer file(32);
    file.append_block(4096);  // the "run" section
    for (const std::uint64_t item : {24, 24, 32, 24, 24, 24, 8, 8, 8, 24, 32, 4}) append_field(file, n, item);
    file.append_block(bond_section.size() + 64);
    file.append_block(contact_section.size() + 64);
    const std::uint64_t checkpoint = copy + file.peak();
    e.output = frame + std::max(cell_map, checkpoint);
  }
  e.peak = e.program + std::max(e.build, e.state + e.output);
  return e;
}

RankMemoryEstimate estimate_rank_memory(const SceneSizes& s, const OutputSpec& output, std::size_t ranks) {
  // An MPI rank's program: the code and libraries, Open MPI's own and its
  // shared-memory transport (dem run of the 80-particle ring under mpirun
  // at 1 thread: 38 MiB at 1 rank, 41 MiB at 4).
  constexpr std::uint64_t kMpiProgramBytes = 40 * kMiB;
  // The captured state: the particles (moved out of the whole system, then
  // held while the first part is made) and the list's build positions.
  constexpr std::uint64_t kCaptureBytesPerParticle = kParticleBytes + 24;
  constexpr std::uint64_t kTemplateBytesPerBond = kBondListBytes + kBondKeyBytes;  // the bond list and id keys
  const std::uint64_t p = std::max<std::size_t>(ranks, 1);
  SceneSizes whole = s;
  whole.particles = std::min(s.particles, kMaxCount);
  whole.bonds = std::min(s.bonds, kMaxCount);
  whole.contact_pairs = std::min(s.contact_pairs, kMaxCount);
  const std::uint64_t n = whole.particles;
  RankMemoryEstimate e;
  e.program = kMpiProgramBytes;
  const MemoryEstimate all = estimate_memory(whole, output, false);
  // The whole set up without its first forces (engine/simulation.hpp
  // Start): its particles, the bond list with the bond provider's scene
  // index, flags, live key and incidence (24 B a bond at most), the
  // template's bond keys made beside it and the build positions copied out
  // of it (its particles are moved, not copied: capture_and_release); no
  // contact list, records or result slots.
  constexpr std::uint64_t kTemplateBondBytes = kBondListBytes + 24 + kBondKeyBytes;
  e.setup = std::max(all.build, n * (kParticleBytes + 24) + whole.bonds * kTemplateBondBytes);
  const double owned = std::ceil(static_cast<double>(n) / static_cast<double>(p));
  const double ghosts = std::min(static_cast<double>(n) - owned, 14.8 * std::pow(owned, 2.0 / 3.0));
  e.part_particles = static_cast<std::uint64_t>(owned + std::max(ghosts, 0.0));
  const double share = n > 0 ? static_cast<double>(e.part_particles) / static_cast<double>(n) : 0.0;
  SceneSizes part = whole;
  part.particles = e.part_particles;
  part.bonds = static_cast<std::uint64_t>(std::ceil(share * static_cast<double>(whole.bonds)));
  part.contact_pairs = static_cast<std::uint64_t>(std::ceil(share * static_cast<double>(whole.contact_pairs)));
  const MemoryEstimate run = estimate_memory(part, output, true);
  // The template, and either the captured state with the part's particles
  // selected from it (the state is let go before the part's records are
  // made: PartFactory::make) or the part's run with its output.
  const std::uint64_t kept = n * 4 + whole.bonds * kTemplateBytesPerBond;
  e.part = kept + std::max(n * kCaptureBytesPerParticle + e.part_particles * kParticleBytes, run.state + run.output);
  e.peak = e.program + std::max(e.setup, e.part);
  return e;
}

MemoryLimit available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t value = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return MemoryLimit{value * 1024, "MemAvailable in /proc/meminfo"};
  }
  return MemoryLimit{0, "no limit (/proc/meminfo has no MemAvailable)"};
}

std::uint64_t parse_byte_size(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("'" + text + "' is not a memory size: " + why +
                                 " (bytes, or a number with K, M, G or T, e.g. 512M or 4G)");
  };
  std::size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw bad("no number");
  }
  if (!text.empty() && (std::isspace(static_cast<unsigned char>(text[0])) || text[0] == '+' || text[0] == '-'))
    throw bad("a size is a plain positive number");
  std::string unit = text.substr(used);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1.0;
  if (unit.empty() || unit == "B")
    scale = 1.0;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    scale = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    scale = 1024.0 * 1024.0;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    scale = 1024.0 * 1024.0 * 1024.0;
  else if (unit == "T" || unit == "TB" || unit == "TIB")
    scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  else
    throw bad("unknown unit '" + text.substr(used) + "'");
  const double bytes = v * scale;
  if (!(std::isfinite(bytes) && bytes >= 1.0)) throw bad("it must be at least 1 byte");
  if (bytes > 9.2e18) throw bad("it is over 2^63 bytes");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t n) {
  const double b = static_cast<double>(n);
  if (b < 1024.0) return std::to_string(n) + " bytes";
  if (b < 1024.0 * 1024.0) return format_g(b / 1024.0, 3) + " KiB";
  if (b < 1024.0 * 1024.0 * 1024.0) return format_g(b / (1024.0 * 1024.0), 3) + " MiB";
  if (b < 1024.0 * 1024.0 * 1024.0 * 1024.0) return format_g(b / (1024.0 * 1024.0 * 1024.0), 3) + " GiB";
  return format_g(b / (1024.0 * 1024.0 * 1024.0 * 1024.0), 3) + " TiB";
}

ClosePairs count_close_pairs(std::span<const Vec3> x, std::span<const double> r, double skin, double distance,
                             std::uint64_t contact_cap, std::uint64_t within_cap, double coincidence) {
  ClosePairs out;
  const std::size_t n = x.size();
  if (n < 2) return out;
  double r_max = 0.0;
  Vec3 lo = x[0], hi = x[0];
  for (std::size_t i = 0; i < n; ++i) {
    r_max = std::max(r_max, r[i]);
    lo = lo.cwiseMin(x[i]);
    hi = hi.cwiseMax(x[i]);
  }
  // Cells at least as wide as the largest distance that counts, and at most
  // 2^20 along an axis (so that a cell key fits 63 bits).
  constexpr double kMaxCells = 1 << 20;
  double cell = std::max({2.0 * r_max + skin, distance, 2.0 * coincidence * r_max});
  for (int a = 0; a < 3; ++a) cell = std::max(cell, (hi[a] - lo[a]) / (kMaxCells - 1.0));
  if (!(cell > 0.0 && std::isfinite(cell))) cell = 1.0;
  const auto coord = [&](double v, int a) {
    return static_cast<std::uint64_t>(std::min(kMaxCells - 1.0, std::floor((v - lo[a]) / cell)));
  };
  const auto key_of = [](std::uint64_t cx, std::uint64_t cy, std::uint64_t cz) { return (cx << 42) | (cy << 21) | cz; };
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order(n);
  for (std::size_t i = 0; i < n; ++i)
    order[i] = {key_of(coord(x[i][0], 0), coord(x[i][1], 1), coord(x[i][2], 2)), static_cast<std::uint32_t>(i)};
  std::sort(order.begin(), order.end());

  const double within2 = distance * distance;
  const auto test = [&](std::uint32_t i, std::uint32_t j) {
    // The distance as contact/neighbour_search.cpp computes it.
    const double dx = x[i][0] - x[j][0], dy = x[i][1] - x[j][1], dz = x[i][2] - x[j][2];
    const double d2 = dx * dx + dy * dy + dz * dz;
    const double cutoff = r[i] + r[j] + skin;
    if (d2 < cutoff * cutoff) ++out.contact;
    if (d2 < within2) ++out.within;
    const double close = coincidence * (r[i] + r[j]);
    if (d2 <= close * close) {
      const std::pair<std::uint32_t, std::uint32_t> p{std::min(i, j), std::max(i, j)};
      if (!out.coincident || p < *out.coincident) out.coincident = p;
    }
  };
  const auto over = [&]() { return out.contact > contact_cap || out.within > within_cap; };
  // Cell by cell: pairs inside the cell, then with the 13 neighbours after
  // it; the caps are checked after every particle's row of tests. The key
  // of a neighbour, key + key_of(offset) where no coordinate is negative,
  // grows with the cell's key: each offset keeps a cursor into `order`
  // that only moves forward (time linear in the particles, no search).
  std::array<std::size_t, 13> cursor{};
  std::size_t begin = 0;
  while (begin < n) {
    const std::uint64_t key = order[begin].first;
    std::size_t end = begin;
    while (end < n && order[end].first == key) ++end;
    for (std::size_t a = begin; a < end; ++a) {
      for (std::size_t b = a + 1; b < end; ++b) test(order[a].second, order[b].second);
      if (over()) {
        out.over_cap = true;
        return out;
      }
    }
    const std::int64_t cx = static_cast<std::int64_t>(key >> 42),
                       cy = static_cast<std::int64_t>((key >> 21) & 0x1fffff),
                       cz = static_cast<std::int64_t>(key & 0x1fffff);
    std::size_t offset = 0;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          // The 13 offsets after (0, 0, 0) in key order.
          if (dx < 0 || (dx == 0 && (dy < 0 || (dy == 0 && dz <= 0)))) continue;
          std::size_t& at = cursor[offset++];
          const std::int64_t nx = cx + dx, ny = cy + dy, nz = cz + dz;
          if (ny < 0 || nz < 0 || ny >= (1 << 21) || nz >= (1 << 21)) continue;
          const std::uint64_t other =
              key_of(static_cast<std::uint64_t>(nx), static_cast<std::uint64_t>(ny), static_cast<std::uint64_t>(nz));
          // (A skipped neighbour's key is below the next one's: the cursor stays valid.)
          at = std::max(at, end);
          while (at < n && order[at].first < other) ++at;
          const auto first = order.begin() + static_cast<std::ptrdiff_t>(at);
          for (auto it = first; it != order.end() && it->first == other; ++it) {
            for (std::size_t a = begin; a < end; ++a) test(order[a].second, it->second);
            if (over()) {
              out.over_cap = true;
              return out;
            }
          }
        }
    begin = end;
  }
  return out;
}

}  // namespace dem
