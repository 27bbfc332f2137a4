#include "contact/wall_motion.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "core/format.hpp"

namespace dem {

namespace {

std::string default_name(std::size_t w) { return "wall" + std::to_string(w); }

bool positive(double x) { return std::isfinite(x) && x > 0.0; }

/// The servo's speed along the normal for the loads `l` (docs/model.md §11.8).
double servo_speed(const WallMotion& m, const Wall& wall, const BoundaryLoad& l) {
  const double f_n = -l.force().dot(wall.normal);
  const double v = m.servo_gain * (m.servo_stress * m.servo_area - f_n);
  return std::clamp(v, -m.servo_max_speed, m.servo_max_speed);
}

}  // namespace

std::string wall_motion_problem(const WallMotion& m) {
  switch (m.kind) {
    case WallMotion::Kind::fixed:
      return {};
    case WallMotion::Kind::velocity:
      if (!m.velocity.allFinite()) return "velocity is not finite";
      return {};
    case WallMotion::Kind::servo:
      if (!(std::isfinite(m.servo_stress) && m.servo_stress >= 0.0))
        return "servo_stress must be finite and >= 0 (Pa), got " + format_g(m.servo_stress);
      if (!positive(m.servo_area)) return "servo_area must be finite and > 0 (m^2), got " + format_g(m.servo_area);
      if (!positive(m.servo_gain)) return "servo_gain must be finite and > 0 (m/(N s)), got " + format_g(m.servo_gain);
      if (!positive(m.servo_max_speed))
        return "servo_max_speed must be finite and > 0 (m/s), got " + format_g(m.servo_max_speed);
      return {};
  }
  return "unknown motion kind " + std::to_string(static_cast<int>(m.kind));
}

WallMotions::WallMotions(std::size_t walls) : motions_(walls), origin_(walls, Vec3::Zero()), displacement_(walls, 0.0) {
  for (std::size_t w = 0; w < walls; ++w) motions_[w].name = default_name(w);
}

WallMotions::WallMotions(std::span<const Wall> walls, std::vector<WallMotion> motions)
    : motions_(std::move(motions)), displacement_(walls.size(), 0.0) {
  if (motions_.size() != walls.size())
    throw std::invalid_argument(std::to_string(motions_.size()) + " wall motions for " + std::to_string(walls.size()) +
                                " walls");
  std::set<std::string> names;
  for (std::size_t w = 0; w < walls.size(); ++w) {
    WallMotion& m = motions_[w];
    if (m.name.empty()) m.name = default_name(w);
    if (const std::string p = wall_motion_problem(m); !p.empty())
      throw std::invalid_argument("wall " + std::to_string(w) + " (" + m.name + "): " + p);
    if (!names.insert(m.name).second)
      throw std::invalid_argument("wall " + std::to_string(w) + ": name \"" + m.name + "\" is already another wall's");
    origin_.push_back(walls[w].point);
  }
}

void WallMotions::set_initial_velocities(std::span<Wall> walls) const {
  for (std::size_t w = 0; w < walls.size() && w < motions_.size(); ++w)
    walls[w].velocity = motions_[w].kind == WallMotion::Kind::velocity ? motions_[w].velocity : Vec3::Zero();
}

bool WallMotions::moves() const {
  return std::any_of(motions_.begin(), motions_.end(),
                     [](const WallMotion& m) { return m.kind != WallMotion::Kind::fixed; });
}

double WallMotions::advance(std::span<Wall> walls, double t, double h, std::span<BoundaryLoad> loads) {
  if (walls.size() != motions_.size() || loads.size() != motions_.size())
    throw std::logic_error("WallMotions::advance: the walls, motions and loads differ in number");
  double moved = 0.0;
  for (std::size_t w = 0; w < motions_.size(); ++w) {
    const WallMotion& m = motions_[w];
    Wall& wall = walls[w];
    const Vec3 before = wall.point;
    if (m.kind == WallMotion::Kind::velocity) {
      // From the origin at the exact time, so that no rounding accumulates.
      wall.velocity = m.velocity;
      wall.point = origin_[w] + m.velocity * t;
      displacement_[w] = m.velocity.dot(wall.normal) * t;
    } else if (m.kind == WallMotion::Kind::servo) {
      const double v = servo_speed(m, wall, loads[w]);
      wall.velocity = v * wall.normal;
      displacement_[w] += v * h;
      wall.point = origin_[w] + displacement_[w] * wall.normal;
    }
    loads[w].velocity = wall.velocity;
    loads[w].angular_velocity = Vec3::Zero();
    moved = std::max(moved, (wall.point - before).norm());
  }
  return moved;
}

void WallMotions::describe(std::span<const Wall> walls, std::size_t w, BoundaryLoad& load) const {
  load.name = motions_.at(w).name;
  load.centre = walls[w].point;
  load.normal = walls[w].normal;
  load.velocity = walls[w].velocity;
  load.angular_velocity = Vec3::Zero();
  load.displacement = displacement_.at(w);
}

bool WallMotions::worth_saving() const {
  for (std::size_t w = 0; w < motions_.size(); ++w)
    if (motions_[w].kind != WallMotion::Kind::fixed || motions_[w].name != default_name(w)) return true;
  return false;
}

void WallMotions::save(ByteWriter& out, std::span<const Wall> walls) const {
  std::vector<std::byte> block;
  ByteWriter w(block);
  for (std::size_t k = 0; k < motions_.size(); ++k) {
    const WallMotion& m = motions_[k];
    w.string(m.name);
    w.u8(static_cast<std::uint8_t>(m.kind));
    w.vec3(m.velocity);
    for (const double x : {m.servo_stress, m.servo_area, m.servo_gain, m.servo_max_speed}) w.f64(x);
    w.vec3(origin_[k]);
    w.f64(displacement_[k]);
    w.vec3(walls[k].velocity);
  }
  out.u32(static_cast<std::uint32_t>(block.size()));
  out.bytes(block);
}

WallMotions WallMotions::load(ByteReader& r, std::span<Wall> walls) {
  const std::uint32_t length = r.u32("wall motions");
  ByteReader b(r.bytes(length, "wall motions"));
  WallMotions out;
  for (std::size_t k = 0; k < walls.size(); ++k) {
    WallMotion m;
    m.name = b.string("wall name", 4096);
    const std::uint8_t kind = b.u8("wall motion kind");
    if (kind > static_cast<std::uint8_t>(WallMotion::Kind::servo))
      throw StateError("inconsistent: wall motion kind " + std::to_string(kind) + " (0 fixed, 1 velocity, 2 servo)");
    m.kind = static_cast<WallMotion::Kind>(kind);
    m.velocity = b.vec3("wall velocity");
    m.servo_stress = b.f64("wall servo");
    m.servo_area = b.f64("wall servo");
    m.servo_gain = b.f64("wall servo");
    m.servo_max_speed = b.f64("wall servo");
    if (const std::string p = wall_motion_problem(m); !p.empty())
      throw StateError("inconsistent: wall " + std::to_string(k) + " (" + m.name + "): " + p);
    out.motions_.push_back(std::move(m));
    out.origin_.push_back(b.vec3("wall origin"));
    out.displacement_.push_back(b.f64("wall displacement"));
    walls[k].velocity = b.vec3("wall velocity");
    if (!out.origin_.back().allFinite() || !std::isfinite(out.displacement_.back()) || !walls[k].velocity.allFinite())
      throw StateError("inconsistent: wall " + std::to_string(k) + ": its motion state is not finite");
  }
  // Later versions may add to the block: what follows is theirs.
  return out;
}

}  // namespace dem
