#pragma once
/// \file mesh_series.hpp
/// The mesh walls of a run as a VTK time series for ParaView
/// (docs/scene-format.md [[mesh]]): meshes_NNNNNN.vtp, one file per frame
/// with every mesh's triangles at their place at the frame's time (points
/// in the world frame; cell data "mesh": the mesh's index in the scene),
/// and meshes.pvd listing the frames with their times. Each file is written
/// under a temporary name and renamed when complete. Frames are numbered
/// as the particle frames (particles.pvd), so ParaView shows both together.

#include <filesystem>
#include <vector>

#include "core/force_provider.hpp"

namespace dem {

class MeshSeriesWriter {
 public:
  /// The folder must exist.
  explicit MeshSeriesWriter(std::filesystem::path folder) : folder_(std::move(folder)) {}
  /// Frame frame_count() at time t of these surfaces. Throws
  /// std::runtime_error naming the file it could not write.
  void write_frame(double t, const std::vector<SurfaceFrame>& surfaces);
  /// Continues a series of an earlier run (its frame times): the next frame
  /// gets number times.size() and meshes.pvd lists the earlier ones too.
  void resume(std::vector<double> times);
  std::size_t frame_count() const { return times_.size(); }

 private:
  std::filesystem::path folder_;
  std::vector<double> times_;
};

}  // namespace dem
