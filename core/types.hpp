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

}  // namespace dem
