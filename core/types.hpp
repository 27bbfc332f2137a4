#pragma once
/// \file types.hpp
/// Basic geometric types shared by every module: 3-vectors, 3x3 matrices and
/// unit quaternions (Eigen, double precision).

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace dem {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
/// Unit quaternion (w, x, y, z) representing a rotation matrix R.
using Quat = Eigen::Quaterniond;
/// A particle's 6 generalised coordinates or forces (translation, rotation),
/// and the blocks of second derivatives of the implicit integrator
/// (docs/model.md §12.4): 6x6 per particle pair of ends, 12x12 per two-particle
/// element in (delta x_i, phi_i, delta x_j, phi_j).
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Mat12 = Eigen::Matrix<double, 12, 12>;

}  // namespace dem
