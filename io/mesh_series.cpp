#include "io/mesh_series.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/text_file.hpp"
#include "io/polydata_file.hpp"
#include "io/vtk_writer.hpp"

namespace dem {

namespace fs = std::filesystem;

namespace {

std::string frame_name(std::size_t frame) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "meshes_%06zu.vtp", frame);
  return buffer;
}

void write_collection(const fs::path& folder, const std::vector<double>& times) {
  std::string text = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n";
  for (std::size_t k = 0; k < times.size(); ++k) {
    char time[32];
    std::snprintf(time, sizeof time, "%.16e", times[k]);
    text += std::string("    <DataSet timestep=\"") + time + "\" part=\"0\" file=\"" + frame_name(k) + "\"/>\n";
  }
  text += "  </Collection>\n</VTKFile>\n";
  try {
    write_text_file(folder / "meshes.pvd", text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("VTK output: ") + e.what());
  }
}

}  // namespace

void MeshSeriesWriter::write_frame(double t, const std::vector<SurfaceFrame>& surfaces) {
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  vtkNew<vtkCellArray> cells;
  vtkNew<vtkIntArray> index;
  index->SetName("mesh");
  for (std::size_t m = 0; m < surfaces.size(); ++m) {
    const vtkIdType base = points->GetNumberOfPoints();
    for (const Vec3& p : surfaces[m].points) points->InsertNextPoint(p.x(), p.y(), p.z());
    for (const auto& tri : surfaces[m].triangles) {
      const vtkIdType ids[3] = {base + tri[0], base + tri[1], base + tri[2]};
      cells->InsertNextCell(3, ids);
      index->InsertNextValue(static_cast<int>(m));
    }
  }
  vtkNew<vtkPolyData> data;
  data->SetPoints(points);
  data->SetPolys(cells);
  data->GetCellData()->AddArray(index);
  write_polydata(data, folder_ / frame_name(times_.size()), VtkSeriesWriter::kDefaultCompressionLevel);
  times_.push_back(t);
  write_collection(folder_, times_);
}

void MeshSeriesWriter::resume(std::vector<double> times) {
  times_ = std::move(times);
  write_collection(folder_, times_);
}

}  // namespace dem
