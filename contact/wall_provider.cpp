#include "contact/wall_provider.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "contact/contact_laws.hpp"
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
  if (w.material != Wall::kParticleMaterial) return "a plane wall of a stiffness law takes no material";
  return {};
}
}  // namespace

WallProvider::WallProvider(std::vector<Wall> walls, const PlaneWallLaw& law)
    : walls_(std::move(walls)), law_(&law), motions_(walls_.size()) {
  for (std::size_t w = 0; w < walls_.size(); ++w)
    if (const std::string p = wall_problem(walls_[w]); !p.empty())
      throw std::invalid_argument("wall " + std::to_string(w) + ": " + p);
}

void WallProvider::set_motions(std::vector<WallMotion> motions) {
  motions_ = WallMotions(walls_, std::move(motions));
  motions_.set_initial_velocities(walls_);
  moves_ = motions_.moves();
}

void WallProvider::evaluate(const ParticleStore& s) {
  if (moves_) loads_ = sum_loads(s);
}

std::vector<WallProvider::Sums> WallProvider::sum_loads(const ParticleStore& s) const {
  std::vector<Sums> out;
  for (const Wall& wall : walls_)
    out.push_back(exact_sums<BoundaryLoad::kSums>(s.size(), [&](std::size_t i, Sums& t) {
      if (!s.owns(i) || !((s.position[i] - wall.point).dot(wall.normal) < s.radius[i])) return;
      // On the wall: -F_i, and its moment about the wall's point (these
      // laws give no moments and nothing non-conservative).
      const Vec3 f = law_->force(s, i, wall);
      const Vec3 m = (s.position[i] - wall.point).cross(f);
      for (int a = 0; a < 3; ++a) {
        t[BoundaryLoad::kForce + a].add(-f[a]);
        t[BoundaryLoad::kMoment + a].add(-m[a]);
      }
    }));
  return out;
}

void WallProvider::boundary_loads(const ParticleStore& s, std::vector<BoundaryLoad>& out) const {
  const std::vector<Sums> now = moves_ ? std::vector<Sums>() : sum_loads(s);
  for (std::size_t w = 0; w < walls_.size(); ++w) {
    BoundaryLoad l;
    motions_.describe(walls_, w, l);
    if (moves_ && w < loads_.size()) l.sums = loads_[w];
    else if (!moves_) l.sums = now[w];
    out.push_back(std::move(l));
  }
}

void WallProvider::advance(double t, double h, std::span<BoundaryLoad> loads) {
  motions_.advance(walls_, t, h, loads);
}

void WallProvider::pack_history(const ParticleStore&, ByteWriter& w) const {
  if (!moves_) return;
  for (const Wall& wall : walls_) w.vec3(wall.point);
  motions_.save(w, walls_);
}

std::unique_ptr<ForceProvider> WallProvider::make_part(const ParticleStore&, const PartMap& map) const {
  auto p = std::make_unique<WallProvider>(*this);
  if (map.history.empty()) return p;
  // Every rank's copy of the same motion state: the first one.
  ByteReader r(map.history);
  for (Wall& wall : p->walls_) wall.point = r.vec3("wall point");
  p->motions_ = WallMotions::load(r, p->walls_);
  return p;
}

void WallProvider::add_body_forces(const ParticleStore& s, std::size_t begin, std::size_t end,
                                   std::span<Vec3> force, std::span<Vec3>) const {
  law_->add_forces(s, begin, end, walls_, force);
}

void WallProvider::add_body_hessians(const ParticleStore& s, std::size_t begin, std::size_t end,
                                     std::span<Mat6> diag) const {
  law_->add_hessians(s, begin, end, walls_, diag);
}

void WallProvider::add_potential_energies(const ParticleStore& s, EnergyReport& r) const {
  r.add("U_wall", exact_sum(s.size(), [&](std::size_t i) {
    if (!s.owns(i)) return 0.0;
    return law_->energy(s, i, walls_);
  }));
}

void WallProvider::save(ByteWriter& w) const {
  w.array(walls_, [](ByteWriter& ww, const Wall& wall) {
    ww.vec3(wall.point);
    ww.vec3(wall.normal);
    ww.f64(wall.stiffness);
  });
  w.u8(law_->code());
  w.array(filter_sliding_, [](ByteWriter& ww, double x) { ww.f64(x); });
  w.array(filter_rolling_, [](ByteWriter& ww, double x) { ww.f64(x); });
  if (motions_.worth_saving()) motions_.save(w, walls_);
}

void WallProvider::add_filter_changes(const ParticleStore& s, double h, std::span<Vec3> dv, std::span<Vec3> dw) const {
  if (!applies_filter()) return;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (const Wall& w : walls_) {
      const double overlap = s.radius[i] - (s.position[i] - w.point).dot(w.normal);
      if (!(overlap > 0.0)) continue;
      const std::uint32_t m = s.material[i];
      filter_change(s.velocity[i] - w.velocity, s.angular_velocity[i], w.normal, law_->normal_force(overlap, s.radius[i], w), h, filter_sliding_[m],
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
  const PlaneWallLaw* law = &hertz_plane_wall();
  if (r.remaining() > 0) {
    const std::uint8_t code = r.u8("wall law");
    law = find_plane_wall_law(code);
    if (!law) throw StateError("inconsistent: wall law " + std::to_string(code) + " (" + plane_wall_law_codes() + ")");
  }
  auto p = std::make_unique<WallProvider>(std::move(walls), *law);
  if (r.remaining() >= 16) {  // the filter's arrays (absent in older files)
    std::vector<double> sliding, rolling;
    r.array(sliding, 8, "filter friction", [](ByteReader& rr) { return rr.f64("filter friction"); });
    r.array(rolling, 8, "filter friction", [](ByteReader& rr) { return rr.f64("filter friction"); });
    if (sliding.size() != rolling.size()) throw StateError("inconsistent: the wall filter's coefficient arrays differ in size");
    p->set_filter(std::move(sliding), std::move(rolling));
  }
  if (r.remaining() > 0) {  // the motion block (absent: walls at rest)
    p->motions_ = WallMotions::load(r, p->walls_);
    p->moves_ = p->motions_.moves();
  }
  return p;
}

}  // namespace dem
