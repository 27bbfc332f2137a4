#include "contact/wall_provider.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "contact/contact_provider.hpp"
#include "core/parallel.hpp"

namespace dem {

namespace {
/// The reason `w` is not a valid wall, or empty.
std::string wall_problem(const Wall& w) {
  if (!w.point.allFinite()) return "point is not finite";
  if (!(std::abs(w.normal.norm() - 1.0) < 1e-12)) return "normal must be a unit vector";
  if (!(std::isfinite(w.stiffness) && w.stiffness >= 0.0))
    return "stiffness K^pw must be finite and >= 0, got " + std::to_string(w.stiffness);
  return {};
}
}  // namespace

namespace {
/// iBDEM's penalty wall (docs/model.md §11.1, eq. 33 with [.]_+).
inline ContactTerms penalty_wall(const Vec3& x, double r, const Wall& w) {
  const double overlap = r - (x - w.point).dot(w.normal);
  ContactTerms t;
  if (overlap > 0.0) {
    t.force_i = (w.stiffness * overlap) * w.normal;
    t.energy = 0.5 * w.stiffness * overlap * overlap;
  }
  return t;
}
}  // namespace

WallProvider::WallProvider(std::vector<Wall> walls, WallLaw law) : walls_(std::move(walls)), law_(law) {
  for (std::size_t w = 0; w < walls_.size(); ++w)
    if (const std::string p = wall_problem(walls_[w]); !p.empty())
      throw std::invalid_argument("wall " + std::to_string(w) + ": " + p);
}

void WallProvider::add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end,
                                   std::span<Vec3> force, std::span<Vec3>) const {
  if (law_ == WallLaw::penalty) {
    for (std::size_t i = begin; i < end; ++i)
      for (const Wall& w : walls_) force[i] += penalty_wall(s.position[i], s.radius[i], w).force_i;
    return;
  }
  for (std::size_t i = begin; i < end; ++i)
    for (const Wall& w : walls_) force[i] += wall_contact(s.position[i], s.radius[i], w).force_i;
}

void WallProvider::add_body_hessians(const ParticleStore& s, std::size_t begin, std::size_t end,
                                     std::span<Mat6> diag) const {
  for (std::size_t i = begin; i < end; ++i)
    for (const Wall& w : walls_) {
      const double r = s.radius[i], gap = (s.position[i] - w.point).dot(w.normal);
      if (!(gap < r)) continue;
      // U(g): penalty ½ k (r - g)², Hertz (2/5) K [1 - g/r]^{5/2}; U''(g) >= 0.
      const double curvature =
          law_ == WallLaw::penalty ? w.stiffness : 1.5 * w.stiffness / (r * r) * std::sqrt(1.0 - gap / r);
      diag[i].block<3, 3>(0, 0) += curvature * (w.normal * w.normal.transpose());
    }
}

void WallProvider::add_potential_energies(const ParticleStore& s, EnergyReport& r) const {
  r.add("U_wall", exact_sum(s.size(), [&](std::size_t i) {
    double u = 0.0;
    if (!s.owns(i)) return u;
    for (const Wall& w : walls_)
      u += law_ == WallLaw::penalty ? penalty_wall(s.position[i], s.radius[i], w).energy
                                    : wall_contact(s.position[i], s.radius[i], w).energy;
    return u;
  }));
}

void WallProvider::save(ByteWriter& w) const {
  w.array(walls_, [](ByteWriter& ww, const Wall& wall) {
    ww.vec3(wall.point);
    ww.vec3(wall.normal);
    ww.f64(wall.stiffness);
  });
  w.u8(static_cast<std::uint8_t>(law_));
  w.array(filter_sliding_, [](ByteWriter& ww, double x) { ww.f64(x); });
  w.array(filter_rolling_, [](ByteWriter& ww, double x) { ww.f64(x); });
}

void WallProvider::add_filter_changes(const ParticleStore& s, double h, std::span<Vec3> dv, std::span<Vec3> dw) const {
  if (!applies_filter()) return;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (const Wall& w : walls_) {
      const double overlap = s.radius[i] - (s.position[i] - w.point).dot(w.normal);
      if (!(overlap > 0.0)) continue;
      const std::uint32_t m = s.material[i];
      filter_change(s.velocity[i], s.angular_velocity[i], w.normal, w.stiffness * overlap, h, filter_sliding_[m],
                    filter_rolling_[m], s.mass[i], s.inertia[i], s.radius[i], dv[i], dw[i]);
    }
}

std::unique_ptr<WallProvider> WallProvider::load(ByteReader& r) {
  std::vector<Wall> walls;
  r.array(walls, 56, "wall", [](ByteReader& rr) {
    Wall w;
    w.point = rr.vec3("walls");
    w.normal = rr.vec3("walls");
    w.stiffness = rr.f64("walls");
    return w;
  });
  for (std::size_t i = 0; i < walls.size(); ++i)
    if (const std::string p = wall_problem(walls[i]); !p.empty())
      throw StateError("inconsistent: wall " + std::to_string(i) + ": " + p);
  WallLaw law = WallLaw::hertz;
  if (r.remaining() > 0) {
    const std::uint8_t code = r.u8("wall law");
    if (code > 1) throw StateError("inconsistent: wall law " + std::to_string(code) + " (0 Hertz, 1 penalty)");
    law = static_cast<WallLaw>(code);
  }
  auto p = std::make_unique<WallProvider>(std::move(walls), law);
  if (r.remaining() >= 16) {  // the filter's arrays (absent in older files)
    std::vector<double> sliding, rolling;
    r.array(sliding, 8, "filter friction", [](ByteReader& rr) { return rr.f64("filter friction"); });
    r.array(rolling, 8, "filter friction", [](ByteReader& rr) { return rr.f64("filter friction"); });
    if (sliding.size() != rolling.size()) throw StateError("inconsistent: the wall filter's coefficient arrays differ in size");
    p->set_filter(std::move(sliding), std::move(rolling));
  }
  return p;
}

}  // namespace dem
