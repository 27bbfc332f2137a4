// Packing regions: validity, volume, bounds and depth (docs/model.md §21.2).
#include "scene/packing_region.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/format.hpp"
#include "scene/invalid_key.hpp"

namespace dem {

namespace {

void require_positive(const char* key, double v) {
  if (!(std::isfinite(v) && v > 0.0))
    throw InvalidKey(key, "must be finite and > 0 (a region with an interior), got " + format_g(v));
}

/// The axial coordinate and the distance from the axis of x.
std::pair<double, double> axial(const Vec3& origin, const Vec3& axis, const Vec3& x) {
  const Vec3 r = x - origin;
  const double s = r.dot(axis);
  return {s, (r - s * axis).norm()};
}

}  // namespace

void validate_region(const PackingRegion& r) {
  switch (r.kind) {
    case PackingRegionKind::box:
      for (int a = 0; a < 3; ++a)
        if (!(r.upper[a] > r.lower[a]))
          throw InvalidKey("upper", "must be above lower on every axis (a box with an interior); axis " +
                                        std::string(1, "xyz"[a]) + ": lower " + format_g(r.lower[a]) + ", upper " +
                                        format_g(r.upper[a]));
      return;
    case PackingRegionKind::cylinder:
      if (!(std::abs(r.axis.norm() - 1.0) < 1e-12)) throw InvalidKey("axis", "must be a unit vector (not zero)");
      require_positive("radius", r.radius);
      require_positive("height", r.height);
      return;
    case PackingRegionKind::sphere:
      require_positive("radius", r.radius);
      return;
    case PackingRegionKind::torus:
      if (!(std::abs(r.axis.norm() - 1.0) < 1e-12)) throw InvalidKey("axis", "must be a unit vector (not zero)");
      require_positive("major_radius", r.major_radius);
      require_positive("minor_radius", r.minor_radius);
      if (!(r.minor_radius < r.major_radius))
        throw InvalidKey("minor_radius", "must be below major_radius = " + format_g(r.major_radius) +
                                             " (a torus that does not cross its axis), got " +
                                             format_g(r.minor_radius));
      return;
    case PackingRegionKind::mesh:
      if (!r.mesh) throw InvalidKey("file", "the mesh region's surface was not read (load_mesh_region)");
      return;
  }
}

double region_volume(const PackingRegion& r) {
  constexpr double pi = std::numbers::pi;
  switch (r.kind) {
    case PackingRegionKind::box:
      return (r.upper - r.lower).prod();
    case PackingRegionKind::cylinder:
      return pi * r.radius * r.radius * r.height;
    case PackingRegionKind::sphere:
      return 4.0 / 3.0 * pi * r.radius * r.radius * r.radius;
    case PackingRegionKind::torus:
      return 2.0 * pi * pi * r.major_radius * r.minor_radius * r.minor_radius;
    case PackingRegionKind::mesh:
      return r.mesh ? r.mesh->volume() : 0.0;
  }
  return 0.0;
}

std::pair<Vec3, Vec3> region_bounds(const PackingRegion& r) {
  // A disc of radius a about unit n reaches sqrt(1 - n_k^2) a along axis k.
  const auto disc = [](const Vec3& n, double a) -> Vec3 {
    return Vec3(std::sqrt(std::max(0.0, 1.0 - n.x() * n.x())), std::sqrt(std::max(0.0, 1.0 - n.y() * n.y())),
                std::sqrt(std::max(0.0, 1.0 - n.z() * n.z()))) * a;
  };
  switch (r.kind) {
    case PackingRegionKind::box:
      return {r.lower, r.upper};
    case PackingRegionKind::cylinder: {
      const Vec3 e = disc(r.axis, r.radius), top = r.base + r.height * r.axis;
      return {r.base.cwiseMin(top) - e, r.base.cwiseMax(top) + e};
    }
    case PackingRegionKind::sphere:
      return {r.centre - Vec3::Constant(r.radius), r.centre + Vec3::Constant(r.radius)};
    case PackingRegionKind::torus: {
      // The tube's centre circle reaches R sqrt(1 - n_k^2), the tube m further.
      const Vec3 reach = disc(r.axis, r.major_radius) + Vec3::Constant(r.minor_radius);
      return {r.centre - reach, r.centre + reach};
    }
    case PackingRegionKind::mesh:
      if (r.mesh) return r.mesh->bounds();
      break;
  }
  return {Vec3::Zero(), Vec3::Zero()};
}

double region_depth(const PackingRegion& r, const Vec3& x) {
  switch (r.kind) {
    case PackingRegionKind::box:
      return std::min((x - r.lower).minCoeff(), (r.upper - x).minCoeff());
    case PackingRegionKind::cylinder: {
      const auto [s, rho] = axial(r.base, r.axis, x);
      return std::min({s, r.height - s, r.radius - rho});
    }
    case PackingRegionKind::sphere:
      return r.radius - (x - r.centre).norm();
    case PackingRegionKind::torus: {
      const auto [s, rho] = axial(r.centre, r.axis, x);
      return r.minor_radius - std::hypot(rho - r.major_radius, s);
    }
    case PackingRegionKind::mesh:
      return r.mesh ? r.mesh->depth(x) : -1.0;
  }
  return -1.0;
}

double region_inradius(const PackingRegion& r) {
  switch (r.kind) {
    case PackingRegionKind::box:
      return 0.5 * (r.upper - r.lower).minCoeff();
    case PackingRegionKind::cylinder:
      return std::min(r.radius, 0.5 * r.height);
    case PackingRegionKind::sphere:
      return r.radius;
    case PackingRegionKind::torus:
      return r.minor_radius;
    case PackingRegionKind::mesh:
      return r.mesh ? r.mesh->inradius() : 0.0;
  }
  return 0.0;
}

void load_mesh_region(PackingRegion& r) {
  if (r.kind != PackingRegionKind::mesh) return;
  if (!(r.scale > 0.0) || !std::isfinite(r.scale))
    throw InvalidKey("scale", "must be a finite number > 0, got " + format_g(r.scale));
  try {
    r.mesh = std::make_shared<const MeshRegion>(r.file, r.scale);
  } catch (const std::exception& e) {
    throw InvalidKey("file", e.what());
  }
}

}  // namespace dem
