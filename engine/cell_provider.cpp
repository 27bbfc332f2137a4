#include "engine/cell_provider.hpp"

#include <cmath>
#include <stdexcept>

namespace dem {

CellProvider::CellProvider(const PeriodicCell& start, const Mat3& velocity_gradient)
    : start_(start), gradient_(velocity_gradient), cell_(start) {
  if (!start.any()) throw std::invalid_argument("periodic cell: no axis is periodic");
  if (!start.origin.allFinite() || !start.edges.allFinite())
    throw std::invalid_argument("periodic cell: the origin and edges must be finite");
  if (!(start.volume() > 0.0)) throw std::invalid_argument("periodic cell: the edges span no volume");
  if (!velocity_gradient.allFinite()) throw std::invalid_argument("periodic cell: the velocity gradient must be finite");
  start_.edge_rate = gradient_ * start_.edges;
  cell_ = start_;
}

bool CellProvider::set_time(double t) {
  if (!deforms() || t == time_) return false;
  time_ = t;
  cell_.edges = start_.edges + t * start_.edge_rate;
  return true;
}

std::unique_ptr<ForceProvider> CellProvider::make_part(const ParticleStore&, const PartMap&) const {
  auto p = std::make_unique<CellProvider>(start_, gradient_);
  p->set_time(time_);  // H(t) from t alone: this cell's bits
  return p;
}

void CellProvider::save(ByteWriter& w) const {
  w.vec3(start_.origin);
  w.mat3(start_.edges);
  w.u8(static_cast<std::uint8_t>((start_.periodic[0] ? 1 : 0) | (start_.periodic[1] ? 2 : 0) |
                                 (start_.periodic[2] ? 4 : 0)));
  w.mat3(gradient_);
}

std::unique_ptr<CellProvider> CellProvider::load(ByteReader& r) {
  PeriodicCell c;
  c.origin = r.vec3("cell origin");
  c.edges = r.mat3("cell edges");
  const std::uint8_t flags = r.u8("cell periodic axes");
  if (flags > 7) throw StateError("inconsistent: cell periodic axes flags " + std::to_string(flags));
  for (int a = 0; a < 3; ++a) c.periodic[a] = (flags >> a) & 1;
  const Mat3 gradient = r.mat3("cell velocity gradient");
  try {
    return std::make_unique<CellProvider>(c, gradient);
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("inconsistent: ") + e.what());
  }
}

}  // namespace dem
