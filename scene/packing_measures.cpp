// Interior solid fractions of a packing (docs/model.md §21.4).
#include "scene/packing_measures.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace dem {

double interior_volume(const Confinement& c, double m, double min_inradius) {
  constexpr double pi = std::numbers::pi;
  const PackingRegion& r = c.region;
  // The interior's inradius: too thin an interior is none.
  double inradius = INFINITY;
  if (r.kind == PackingRegionKind::box) {
    for (int a = 0; a < 3; ++a)
      if (!c.periodic[a]) inradius = std::min(inradius, 0.5 * (c.upper[a] - c.lower[a]) - m);
  } else {
    inradius = region_inradius(r) - m;
  }
  if (!(inradius >= min_inradius)) return 0.0;
  const auto cube = [](double x) { return x * x * x; };
  switch (r.kind) {
    case PackingRegionKind::box: {
      double v = 1.0;
      for (int a = 0; a < 3; ++a) v *= std::max(0.0, c.upper[a] - c.lower[a] - (c.periodic[a] ? 0.0 : 2.0 * m));
      return v;
    }
    case PackingRegionKind::cylinder:
      return r.radius > m && r.height > 2.0 * m ? pi * (r.radius - m) * (r.radius - m) * (r.height - 2.0 * m) : 0.0;
    case PackingRegionKind::sphere:
      return r.radius > m ? 4.0 / 3.0 * pi * cube(r.radius - m) : 0.0;
    case PackingRegionKind::torus:
      return r.minor_radius > m ? 2.0 * pi * pi * r.major_radius * (r.minor_radius - m) * (r.minor_radius - m) : 0.0;
    case PackingRegionKind::mesh:
      break;
  }
  return 0.0;
}

double interior_sphere_volume(const Confinement& c, const std::vector<double>& d, const std::vector<Vec3>& x,
                              double m) {
  constexpr int kGrid = 16;
  std::vector<double> inside(x.size(), 0.0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, x.size(), 256), [&](const tbb::blocked_range<std::size_t>& b) {
    for (std::size_t i = b.begin(); i < b.end(); ++i) {
      const double a = 0.5 * d[i], h = c.depth(x[i]) - m, volume = std::numbers::pi / 6.0 * d[i] * d[i] * d[i];
      if (h >= a) {
        inside[i] = volume;
        continue;
      }
      if (h <= -a) continue;
      int in_sphere = 0, in_both = 0;
      for (int p = 0; p < kGrid; ++p)
        for (int q = 0; q < kGrid; ++q)
          for (int s = 0; s < kGrid; ++s) {
            const Vec3 u = (Vec3(p, q, s) + Vec3::Constant(0.5)) * (2.0 / kGrid) - Vec3::Ones();
            if (u.squaredNorm() > 1.0) continue;
            ++in_sphere;
            in_both += c.depth(x[i] + a * u) >= m;
          }
      inside[i] = volume * in_both / in_sphere;
    }
  });
  double sum = 0.0;
  for (const double v : inside) sum += v;
  return sum;
}

}  // namespace dem
