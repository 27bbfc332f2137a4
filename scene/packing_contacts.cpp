// The contact network of a packing (docs/model.md §21.4).
#include "scene/packing_contacts.hpp"

#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "contact/neighbour_search.hpp"
#include "core/periodic_cell.hpp"

namespace dem {

PackingContacts find_contacts(const Confinement& c, const std::vector<double>& d, const std::vector<Vec3>& x,
                              double tolerance) {
  const std::size_t n = x.size();
  const double d_max = n ? *std::max_element(d.begin(), d.end()) : 0.0;
  // The engine's neighbour list (radii d/2) with a skin of the largest
  // tolerance holds every pair that can qualify; the test below picks them.
  std::vector<double> radii(n);
  for (std::size_t i = 0; i < n; ++i) radii[i] = 0.5 * d[i];
  const PeriodicCell cell = PeriodicCell::box(c.lower, c.upper, c.periodic);
  NeighbourSearch search(tolerance * d_max);
  search.set_cell(cell);
  search.rebuild(x, radii);
  const NeighbourList& list = search.list();
  const auto image_of = [&](std::size_t k) { return partner_image(list, cell, x, k); };
  std::vector<std::uint8_t> touching(list.pair_count(), 0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, list.pair_count(), 1024),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t k = r.begin(); k < r.end(); ++k) {
                        const std::uint32_t i = list.owner[k], j = list.partner[k];
                        touching[k] = radii[i] + radii[j] - (x[i] - image_of(k)).norm() >
                                      -tolerance * std::min(d[i], d[j]);
                      }
                    });
  PackingContacts k;
  k.wall.assign(n, 0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 256), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i)
      c.walls(x[i], (0.5 + tolerance) * d[i], [&](double, const Vec3&) { ++k.wall[i]; });
  });
  for (std::size_t q = 0; q < list.pair_count(); ++q)
    if (touching[q]) {
      k.pairs.push_back({list.owner[q], list.partner[q]});
      k.normals.push_back((x[list.owner[q]] - image_of(q)).normalized());
    }
  return k;
}

std::vector<std::uint32_t> contact_counts(const PackingContacts& k, const std::vector<std::uint8_t>& keep,
                                          bool count_walls) {
  std::vector<std::uint32_t> z(keep.size(), 0);
  for (const auto& [i, j] : k.pairs)
    if (keep[i] && keep[j]) ++z[i], ++z[j];
  if (count_walls)
    for (std::size_t i = 0; i < keep.size(); ++i) z[i] += keep[i] ? k.wall[i] : 0;
  return z;
}

std::vector<std::uint8_t> strip_below(const PackingContacts& k, std::size_t n, int min_contacts, bool count_walls) {
  std::vector<std::uint8_t> keep(n, 1);
  // Neighbours of each particle (CSR) for the peeling.
  std::vector<std::uint64_t> start(n + 1, 0);
  for (const auto& [i, j] : k.pairs) ++start[i + 1], ++start[j + 1];
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<std::uint32_t> other(start[n]);
  std::vector<std::uint64_t> fill(start.begin(), start.end() - 1);
  for (const auto& [i, j] : k.pairs) other[fill[i]++] = j, other[fill[j]++] = i;
  std::vector<std::uint32_t> z = contact_counts(k, keep, count_walls), stack;
  for (std::size_t i = 0; i < n; ++i)
    if (z[i] < static_cast<std::uint32_t>(min_contacts)) keep[i] = 0, stack.push_back(static_cast<std::uint32_t>(i));
  while (!stack.empty()) {
    const std::uint32_t i = stack.back();
    stack.pop_back();
    for (std::uint64_t q = start[i]; q < start[i + 1]; ++q) {
      const std::uint32_t j = other[q];
      if (keep[j] && --z[j] < static_cast<std::uint32_t>(min_contacts)) keep[j] = 0, stack.push_back(j);
    }
  }
  return keep;
}

Mat3 fabric_tensor(const PackingContacts& k, const std::vector<std::uint8_t>& keep) {
  Mat3 f = Mat3::Zero();
  std::uint64_t count = 0;
  for (std::size_t c = 0; c < k.pairs.size(); ++c)
    if (keep[k.pairs[c][0]] && keep[k.pairs[c][1]]) f += k.normals[c] * k.normals[c].transpose(), ++count;
  return count ? Mat3(f / double(count)) : f;
}

double fabric_anisotropy(const Mat3& f) {
  const Mat3 dev = f - f.trace() / 3.0 * Mat3::Identity();
  return std::sqrt(1.5 * dev.cwiseProduct(dev).sum());
}

}  // namespace dem
