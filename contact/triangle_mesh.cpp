#include "contact/triangle_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace dem {

TrianglePoint closest_point_on_triangle(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 ab = b - a, ac = c - a, ap = x - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return {a, TriangleRegion::vertex_a};
  const Vec3 bp = x - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return {b, TriangleRegion::vertex_b};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return {a + (d1 / (d1 - d3)) * ab, TriangleRegion::edge_ab};
  const Vec3 cp = x - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return {c, TriangleRegion::vertex_c};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return {a + (d2 / (d2 - d6)) * ac, TriangleRegion::edge_ca};
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0)
    return {b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b), TriangleRegion::edge_bc};
  const double denom = 1.0 / (va + vb + vc);
  return {a + ab * (vb * denom) + ac * (vc * denom), TriangleRegion::face};
}

// --- TriangleTree ------------------------------------------------------------------

TriangleTree::TriangleTree(std::span<const std::array<Vec3, 2>> boxes) {
  items_.resize(boxes.size());
  std::iota(items_.begin(), items_.end(), 0u);
  if (boxes.empty()) return;
  nodes_.reserve(boxes.size() / 2 + 2);
  nodes_.emplace_back();
  build(boxes, 0, 0, static_cast<std::uint32_t>(boxes.size()));
}

void TriangleTree::build(std::span<const std::array<Vec3, 2>> boxes, std::uint32_t node, std::uint32_t begin,
                         std::uint32_t end) {
  Vec3 lo = boxes[items_[begin]][0], hi = boxes[items_[begin]][1];
  Vec3 clo = lo + hi, chi = clo;  // bounds of the centroids (times 2)
  for (std::uint32_t k = begin; k < end; ++k) {
    const auto& b = boxes[items_[k]];
    lo = lo.cwiseMin(b[0]);
    hi = hi.cwiseMax(b[1]);
    clo = clo.cwiseMin(b[0] + b[1]);
    chi = chi.cwiseMax(b[0] + b[1]);
  }
  nodes_[node].lo = lo;
  nodes_[node].hi = hi;
  if (end - begin <= 4) {
    nodes_[node].first = begin;
    nodes_[node].count = end - begin;
    return;
  }
  int axis = 0;
  (chi - clo).maxCoeff(&axis);
  const std::uint32_t mid = begin + (end - begin) / 2;
  // A strict total order (ties by index): the same split on every run.
  std::nth_element(items_.begin() + begin, items_.begin() + mid, items_.begin() + end,
                   [&](std::uint32_t p, std::uint32_t q) {
                     const double cp = boxes[p][0][axis] + boxes[p][1][axis];
                     const double cq = boxes[q][0][axis] + boxes[q][1][axis];
                     return cp < cq || (cp == cq && p < q);
                   });
  const std::uint32_t left = static_cast<std::uint32_t>(nodes_.size());
  nodes_.resize(nodes_.size() + 2);
  nodes_[node].first = left;
  nodes_[node].count = 0;
  build(boxes, left, begin, mid);
  build(boxes, left + 1, mid, end);
}

void TriangleTree::query(const Vec3& x, double reach, std::vector<std::uint32_t>& out) const {
  if (nodes_.empty()) return;
  std::uint32_t stack[256];
  int top = 0;
  stack[top++] = 0;
  const double reach2 = reach * reach;
  while (top > 0) {
    const Node& n = nodes_[stack[--top]];
    const Vec3 d = (n.lo - x).cwiseMax(x - n.hi).cwiseMax(0.0);
    if (!(d.squaredNorm() <= reach2)) continue;
    if (n.count > 0) {
      for (std::uint32_t k = n.first; k < n.first + n.count; ++k) out.push_back(items_[k]);
    } else {
      stack[top++] = n.first + 1;
      stack[top++] = n.first;
    }
  }
}

}  // namespace dem

// --- TriangleMesh -------------------------------------------------------------------

namespace dem {

TriangleMesh::TriangleMesh(std::vector<Vec3> vertices, std::vector<std::array<std::uint32_t, 3>> triangles)
    : vertices_(std::move(vertices)) {
  for (std::size_t v = 0; v < vertices_.size(); ++v)
    if (!vertices_[v].allFinite())
      throw std::invalid_argument("mesh vertex " + std::to_string(v) + " is not finite");
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (const std::uint32_t v : triangles[t])
      if (v >= vertices_.size())
        throw std::invalid_argument("mesh triangle " + std::to_string(t) + " names vertex " + std::to_string(v) +
                                    " of " + std::to_string(vertices_.size()));
  merge_vertices(triangles);
  drop_degenerate(triangles);
  if (triangles_.empty())
    throw std::invalid_argument(dropped_.empty() ? std::string("the mesh has no triangles")
                                                 : "the mesh has no triangles of non-zero area (" +
                                                       std::to_string(dropped_.size()) + " degenerate ones dropped)");
  build_edges();
  build_patches();
  build_vertex_lists();
  build_geometry();
}

void TriangleMesh::merge_vertices(std::vector<std::array<std::uint32_t, 3>>& triangles) {
  const std::size_t n = vertices_.size();
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const auto key = [&](std::uint32_t v) { return std::make_tuple(vertices_[v].x(), vertices_[v].y(), vertices_[v].z()); };
  std::sort(order.begin(), order.end(), [&](std::uint32_t p, std::uint32_t q) {
    return key(p) < key(q) || (key(p) == key(q) && p < q);
  });
  // Each vertex to the first (lowest index) of its coordinates; then the
  // kept ones renumbered in their input order.
  std::vector<std::uint32_t> first(n);
  for (std::size_t k = 0; k < n; ++k)
    first[order[k]] = k > 0 && key(order[k]) == key(order[k - 1]) ? first[order[k - 1]] : order[k];
  std::vector<std::uint32_t> renamed(n, kNone);
  std::vector<Vec3> kept;
  for (std::uint32_t v = 0; v < n; ++v)
    if (first[v] == v) {
      renamed[v] = static_cast<std::uint32_t>(kept.size());
      kept.push_back(vertices_[v]);
    }
  for (auto& t : triangles)
    for (std::uint32_t& v : t) v = renamed[first[v]];
  vertices_.swap(kept);
}

void TriangleMesh::drop_degenerate(std::vector<std::array<std::uint32_t, 3>>& triangles) {
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const auto& f = triangles[t];
    const Vec3 &a = vertices_[f[0]], &b = vertices_[f[1]], &c = vertices_[f[2]];
    std::string reason;
    if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2]) {
      reason = "repeated vertex";
    } else {
      const double longest = std::max({(b - a).squaredNorm(), (c - b).squaredNorm(), (a - c).squaredNorm()});
      if (!((b - a).cross(c - a).norm() > 1e-14 * longest)) reason = "zero area";
    }
    if (reason.empty()) {
      triangles_.push_back(f);
      continue;
    }
    dropped_.push_back(DroppedTriangle{t, {a, b, c}, reason});
  }
}

void TriangleMesh::build_edges() {
  struct Side {
    std::uint32_t lo, hi, face, k;
  };
  std::vector<Side> sides;
  sides.reserve(3 * triangles_.size());
  for (std::uint32_t f = 0; f < triangles_.size(); ++f)
    for (std::uint32_t k = 0; k < 3; ++k) {
      const std::uint32_t p = triangles_[f][k], q = triangles_[f][(k + 1) % 3];
      sides.push_back({std::min(p, q), std::max(p, q), f, k});
    }
  std::sort(sides.begin(), sides.end(), [](const Side& x, const Side& y) {
    return std::tie(x.lo, x.hi, x.face, x.k) < std::tie(y.lo, y.hi, y.face, y.k);
  });
  face_edges_.assign(triangles_.size(), {kNone, kNone, kNone});
  for (std::size_t k = 0; k < sides.size();) {
    std::size_t end = k;
    while (end < sides.size() && sides[end].lo == sides[k].lo && sides[end].hi == sides[k].hi) ++end;
    Edge e;
    e.vertex = {sides[k].lo, sides[k].hi};
    e.face[0] = sides[k].face;
    if (end - k >= 2) e.face[1] = sides[k + 1].face;
    e.active = end - k != 2;  // a rim or a non-manifold edge; two faces: decided by the patches
    const std::uint32_t id = static_cast<std::uint32_t>(edges_.size());
    for (std::size_t s = k; s < end; ++s) face_edges_[sides[s].face][sides[s].k] = id;
    edges_.push_back(e);
    k = end;
  }
}

void TriangleMesh::build_patches() {
  face_normal_.resize(triangles_.size());
  Vec3 lo = vertices_[triangles_[0][0]], hi = lo;
  for (std::size_t f = 0; f < triangles_.size(); ++f) {
    const auto& t = triangles_[f];
    face_normal_[f] = (vertices_[t[1]] - vertices_[t[0]]).cross(vertices_[t[2]] - vertices_[t[0]]).normalized();
    for (const std::uint32_t v : t) {
      lo = lo.cwiseMin(vertices_[v]);
      hi = hi.cwiseMax(vertices_[v]);
    }
  }
  const double tolerance = kCoplanarDistance * (hi - lo).norm();
  patch_of_.assign(triangles_.size(), kNone);
  std::vector<std::uint32_t> queue;
  for (std::uint32_t seed = 0; seed < triangles_.size(); ++seed) {
    if (patch_of_[seed] != kNone) continue;
    const std::uint32_t p = static_cast<std::uint32_t>(patch_normal_.size());
    const Vec3 point = vertices_[triangles_[seed][0]], normal = face_normal_[seed];
    patch_point_.push_back(point);
    patch_normal_.push_back(normal);
    patch_of_[seed] = p;
    queue.assign(1, seed);
    // Faces join across edges of two faces, in breadth-first order from the
    // seed, when they lie in the seed's plane (either orientation).
    for (std::size_t q = 0; q < queue.size(); ++q)
      for (const std::uint32_t e : face_edges_[queue[q]]) {
        const Edge& edge = edges_[e];
        if (edge.face[1] == kNone || edge.active) continue;
        const std::uint32_t other = edge.face[0] == queue[q] ? edge.face[1] : edge.face[0];
        if (patch_of_[other] != kNone) continue;
        if (!(face_normal_[other].cross(normal).norm() <= kCoplanarAngle)) continue;
        bool flat = true;
        for (const std::uint32_t v : triangles_[other])
          flat = flat && std::abs((vertices_[v] - point).dot(normal)) <= tolerance;
        if (!flat) continue;
        patch_of_[other] = p;
        queue.push_back(other);
      }
  }
  for (Edge& e : edges_)
    if (e.face[1] != kNone && !e.active) e.active = patch_of_[e.face[0]] != patch_of_[e.face[1]];
}

void TriangleMesh::build_vertex_lists() {
  const std::size_t n = vertices_.size();
  // Edges at each vertex (ascending: edges are numbered in (lo, hi) order).
  vertex_edge_offset_.assign(n + 1, 0);
  for (const Edge& e : edges_)
    for (const std::uint32_t v : e.vertex) ++vertex_edge_offset_[v + 1];
  std::partial_sum(vertex_edge_offset_.begin(), vertex_edge_offset_.end(), vertex_edge_offset_.begin());
  vertex_edge_.resize(vertex_edge_offset_[n]);
  std::vector<std::uint32_t> fill(vertex_edge_offset_.begin(), vertex_edge_offset_.end() - 1);
  for (std::uint32_t e = 0; e < edges_.size(); ++e)
    for (const std::uint32_t v : edges_[e].vertex) vertex_edge_[fill[v]++] = e;
  vertex_active_.assign(n, 0);
  for (const Edge& e : edges_)
    if (e.active)
      for (const std::uint32_t v : e.vertex) vertex_active_[v] = 1;
  // Patches at each vertex (ascending, no repeats).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> vp;  // (vertex, patch)
  for (std::uint32_t f = 0; f < triangles_.size(); ++f)
    for (const std::uint32_t v : triangles_[f]) vp.emplace_back(v, patch_of_[f]);
  std::sort(vp.begin(), vp.end());
  vp.erase(std::unique(vp.begin(), vp.end()), vp.end());
  vertex_patch_offset_.assign(n + 1, 0);
  for (const auto& [v, p] : vp) ++vertex_patch_offset_[v + 1];
  std::partial_sum(vertex_patch_offset_.begin(), vertex_patch_offset_.end(), vertex_patch_offset_.begin());
  vertex_patch_.resize(vp.size());
  for (std::size_t k = 0; k < vp.size(); ++k) vertex_patch_[k] = vp[k].second;
  // Patches sharing a vertex.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pp;
  for (std::uint32_t v = 0; v < n; ++v) {
    const auto ps = vertex_patches(v);
    for (const std::uint32_t p : ps)
      for (const std::uint32_t q : ps)
        if (p != q) pp.emplace_back(p, q);
  }
  std::sort(pp.begin(), pp.end());
  pp.erase(std::unique(pp.begin(), pp.end()), pp.end());
  patch_adjacent_offset_.assign(patch_count() + 1, 0);
  for (const auto& [p, q] : pp) ++patch_adjacent_offset_[p + 1];
  std::partial_sum(patch_adjacent_offset_.begin(), patch_adjacent_offset_.end(), patch_adjacent_offset_.begin());
  patch_adjacent_.resize(pp.size());
  for (std::size_t k = 0; k < pp.size(); ++k) patch_adjacent_[k] = pp[k].second;
}

void TriangleMesh::build_geometry() {
  std::vector<std::array<Vec3, 2>> boxes(triangles_.size());
  lower_ = upper_ = vertices_[triangles_[0][0]];
  Vec3 weighted = Vec3::Zero();
  double area = 0.0;
  for (std::size_t f = 0; f < triangles_.size(); ++f) {
    const Vec3 &a = vertices_[triangles_[f][0]], &b = vertices_[triangles_[f][1]], &c = vertices_[triangles_[f][2]];
    boxes[f] = {a.cwiseMin(b).cwiseMin(c), a.cwiseMax(b).cwiseMax(c)};
    lower_ = lower_.cwiseMin(boxes[f][0]);
    upper_ = upper_.cwiseMax(boxes[f][1]);
    const double w = 0.5 * (b - a).cross(c - a).norm();
    weighted += w * (a + b + c) / 3.0;
    area += w;
  }
  centroid_ = weighted / area;
  tree_ = TriangleTree(boxes);
}

std::uint32_t TriangleMesh::feature_of(std::uint32_t f, TriangleRegion region) const {
  const std::uint32_t patch = patch_of_[f];
  const int r = static_cast<int>(region);
  if (r == 0) return patch;
  if (r <= 3) {
    const std::uint32_t e = face_edges_[f][r - 1];
    return edges_[e].active ? edge_feature(e) : patch;
  }
  const std::uint32_t v = triangles_[f][r - 4];
  return vertex_active_[v] ? vertex_feature(v) : patch;
}

bool TriangleMesh::adjacent(std::uint32_t f, std::uint32_t g) const {
  if (f == g) return true;
  if (is_patch(f) && is_patch(g)) {
    const auto b = patch_adjacent_.begin() + patch_adjacent_offset_[f];
    const auto e = patch_adjacent_.begin() + patch_adjacent_offset_[f + 1];
    return std::binary_search(b, e, g);
  }
  if (is_patch(f)) std::swap(f, g);  // f: an edge or a vertex
  std::array<std::uint32_t, 2> own{kNone, kNone};
  if (is_edge(f)) own = edges_[f - patch_count()].vertex;
  else own[0] = f - vertex_feature(0);
  for (const std::uint32_t v : own) {
    if (v == kNone) continue;
    if (is_patch(g)) {
      const auto ps = vertex_patches(v);
      if (std::binary_search(ps.begin(), ps.end(), g)) return true;
    } else if (is_edge(g)) {
      const Edge& e = edges_[g - patch_count()];
      if (e.vertex[0] == v || e.vertex[1] == v) return true;
    } else if (g - vertex_feature(0) == v) {
      return true;
    }
  }
  return false;
}

}  // namespace dem
