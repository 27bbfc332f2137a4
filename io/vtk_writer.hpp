#pragma once
/// \file vtk_writer.hpp
/// Time series of particle and bond states for ParaView, written through the
/// VTK library as XML PolyData files (binary, zlib-compressed, appended raw
/// data), one pair of files per output frame, plus `.pvd` collections that
/// list the frames with their times.
///
/// Files in the output folder:
///   particles_NNNNNN.vtp  points = particle centres, one vertex cell each;
///                         point data: id (creation index, int), diameter,
///                         velocity, angular_velocity (spatial Omega),
///                         rotation_vector (axis times angle of R_i R_i0^T),
///                         displacement (x_i - x_i0)
///   bonds_NNNNNN.vtp      the same points, one line cell per bond; cell data:
///                         axial_strain (r/r0 - 1), bend_angle (|theta_ij|, rad)
///   particles.pvd, bonds.pvd   collections with the frame times
/// Every file is written under a temporary name and renamed when complete, so
/// a reader or a crash never sees a half-written file.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "bonds/bond_list.hpp"
#include "engine/particle_store.hpp"

namespace dem {

class VtkSeriesWriter {
 public:
  /// Creates the folder if needed. Throws std::runtime_error naming the
  /// folder if it cannot be created or is not writable.
  explicit VtkSeriesWriter(std::filesystem::path folder);

  /// Writes frame number frame_count() at time t and updates both .pvd files.
  void write_frame(double t, const ParticleStore& particles, const BondList& bonds);

  std::size_t frame_count() const { return times_.size(); }
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
  std::vector<double> times_;
};

}  // namespace dem
