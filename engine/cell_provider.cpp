#include "engine/cell_provider.hpp"

#include <algorithm>
#include <cmath>
#include <string>
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
  anchor_edges_ = start_.edges;
}

CellProvider::CellProvider(const PeriodicCell& start, const Mat3& velocity_gradient, const CellServo& servo)
    : CellProvider(start, velocity_gradient) {
  static const char* const kAxis[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    if (!servo.axes[a]) continue;
    const std::string axis = kAxis[a];
    if (!start.periodic[a])
      throw std::invalid_argument("periodic cell servo: axis " + axis + " is not periodic");
    if (velocity_gradient(a, a) != 0.0)
      throw std::invalid_argument("periodic cell servo: L_" + axis + axis +
                                  " is given, but the servo sets it (controls the stress along " + axis + ")");
    if (!std::isfinite(servo.target[a]))
      throw std::invalid_argument("periodic cell servo: the target stress along " + axis + " must be finite");
  }
  if (servo.any() && !(servo.gain > 0.0 && std::isfinite(servo.gain)))
    throw std::invalid_argument("periodic cell servo: the gain must be positive and finite");
  if (servo.any() && !(servo.max_strain_rate > 0.0 && std::isfinite(servo.max_strain_rate)))
    throw std::invalid_argument("periodic cell servo: the largest strain rate must be positive and finite");
  servo_ = servo;
}

bool CellProvider::set_time(double t) {
  if (!deforms() || t == time_) return false;
  time_ = t;
  if (servo_.any())
    cell_.edges = anchor_edges_ + (t - anchor_time_) * cell_.edge_rate;
  else
    cell_.edges = start_.edges + t * start_.edge_rate;
  return true;
}

std::unique_ptr<ForceProvider> CellProvider::make_part(const ParticleStore&, const PartMap& map) const {
  auto p = std::make_unique<CellProvider>(start_, gradient_, servo_);
  double time = time_;
  if (servo_.any()) {
    if (map.history.empty()) {
      p->restore_servo_state(anchor_time_, anchor_edges_, cell_.edge_rate);
    } else {
      ByteReader r(map.history);
      const double anchor_time = r.f64("cell servo time");
      const Mat3 anchor_edges = r.mat3("cell servo edges");
      const Mat3 rate = r.mat3("cell servo edge rate");
      time = r.f64("cell time");
      p->restore_servo_state(anchor_time, anchor_edges, rate);
    }
  }
  p->set_time(time);  // H(t) by the same formula: this cell's bits
  return p;
}

void CellProvider::pack_history(const ParticleStore&, ByteWriter& out) const {
  if (!servo_.any()) return;
  out.f64(anchor_time_);
  out.mat3(anchor_edges_);
  out.mat3(cell_.edge_rate);
  out.f64(time_);
}

bool CellProvider::control(const Mat3& stress, double t) {
  if (!servo_.any()) return false;
  set_time(t);
  anchor_time_ = t;
  anchor_edges_ = cell_.edges;
  // L_aa = clamp(g (s*_a - sigma_aa), +-rate_max): a stress more tensile
  // than the target shrinks the cell along a (docs/model.md §20.6).
  Mat3 gradient = gradient_;
  for (int a = 0; a < 3; ++a)
    if (servo_.axes[a])
      gradient(a, a) = std::clamp(servo_.gain * (servo_.target[a] - stress(a, a)), -servo_.max_strain_rate,
                                  servo_.max_strain_rate);
  const Mat3 rate = gradient * anchor_edges_;
  const bool changed = rate != cell_.edge_rate;
  cell_.edge_rate = rate;
  return changed;
}

void CellProvider::save(ByteWriter& w) const {
  w.vec3(start_.origin);
  w.mat3(start_.edges);
  w.u8(static_cast<std::uint8_t>((start_.periodic[0] ? 1 : 0) | (start_.periodic[1] ? 2 : 0) |
                                 (start_.periodic[2] ? 4 : 0)));
  w.mat3(gradient_);
  w.u8(static_cast<std::uint8_t>((servo_.axes[0] ? 1 : 0) | (servo_.axes[1] ? 2 : 0) | (servo_.axes[2] ? 4 : 0)));
  if (!servo_.any()) return;
  w.vec3(servo_.target);
  w.f64(servo_.gain);
  w.f64(servo_.max_strain_rate);
  w.f64(anchor_time_);
  w.mat3(anchor_edges_);
  w.mat3(cell_.edge_rate);
}

std::unique_ptr<CellProvider> CellProvider::load(ByteReader& r) {
  PeriodicCell c;
  c.origin = r.vec3("cell origin");
  c.edges = r.mat3("cell edges");
  const std::uint8_t flags = r.u8("cell periodic axes");
  if (flags > 7) throw StateError("inconsistent: cell periodic axes flags " + std::to_string(flags));
  for (int a = 0; a < 3; ++a) c.periodic[a] = (flags >> a) & 1;
  const Mat3 gradient = r.mat3("cell velocity gradient");
  CellServo servo;
  const std::uint8_t axes = r.u8("cell servo axes");
  if (axes > 7) throw StateError("inconsistent: cell servo axes flags " + std::to_string(axes));
  for (int a = 0; a < 3; ++a) servo.axes[a] = (axes >> a) & 1;
  double anchor_time = 0.0;
  Mat3 anchor_edges = c.edges, rate = gradient * c.edges;
  if (servo.any()) {
    servo.target = r.vec3("cell servo target stress");
    servo.gain = r.f64("cell servo gain");
    servo.max_strain_rate = r.f64("cell servo largest strain rate");
    anchor_time = r.f64("cell servo time");
    anchor_edges = r.mat3("cell servo edges");
    rate = r.mat3("cell servo edge rate");
    if (!std::isfinite(anchor_time) || !anchor_edges.allFinite() || !rate.allFinite() ||
        !(std::abs(anchor_edges.determinant()) > 0.0))
      throw StateError("inconsistent: cell servo state (edges, rate or time not finite, or no volume)");
  }
  try {
    auto p = std::make_unique<CellProvider>(c, gradient, servo);
    if (servo.any()) p->restore_servo_state(anchor_time, anchor_edges, rate);
    return p;
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("inconsistent: ") + e.what());
  }
}

void CellProvider::restore_servo_state(double anchor_time, const Mat3& anchor_edges, const Mat3& rate) {
  anchor_time_ = anchor_time;
  anchor_edges_ = anchor_edges;
  cell_.edge_rate = rate;
  cell_.edges = anchor_edges;
  time_ = anchor_time;
}

}  // namespace dem
