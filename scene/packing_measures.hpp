#pragma once
/// \file packing_measures.hpp
/// Solid fractions of a packing away from its confining faces
/// (docs/model.md §21.4).

#include <vector>

#include "core/types.hpp"
#include "scene/packing_geometry.hpp"

namespace dem {

/// The volume (length^3) of the points of c at depth >= m (the region
/// shrunk by m, periodic faces not moving); 0 if its inradius (half its
/// thinnest extent) is below min_inradius.
double interior_volume(const Confinement& c, double m, double min_inradius);

/// The volume of the spheres (diameters d, centres x) inside the points of
/// c at depth >= m: a sphere wholly inside counts whole, one wholly outside
/// not at all (depth - m is exact inside and at most the distance outside),
/// one crossing the boundary by the fraction of the points of a 16^3 grid
/// of cell midpoints over its bounding cube that lie in both the sphere and
/// the interior, times its volume. Summed in id order.
double interior_sphere_volume(const Confinement& c, const std::vector<double>& d, const std::vector<Vec3>& x,
                              double m);

}  // namespace dem
