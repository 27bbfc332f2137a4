#include "io/vtk_writer.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkXMLPolyDataWriter.h>

#include <malloc.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "bonds/bond_potential.hpp"
#include "engine/rotation.hpp"

namespace dem {

namespace fs = std::filesystem;

namespace {

/// `stem_NNNNNN.vtp`, the frame index zero-padded to six digits.
std::string frame_file_name(const char* stem, std::size_t frame) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%s_%06zu.vtp", stem, frame);
  return buffer;
}

/// Renames `tmp` to `path` (same folder, so atomic on POSIX). Throws
/// std::runtime_error naming both paths on failure.
void commit(const fs::path& tmp, const fs::path& path) {
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("VTK output: cannot rename '" + tmp.string() + "' to '" +
                             path.string() + "': " + ec.message());
  }
}

/// Writes a PolyData as appended raw binary, zlib-compressed XML to `path`
/// via `path.tmp`. Throws std::runtime_error naming the file on failure.
void write_polydata(vtkPolyData* data, const fs::path& path) {
  fs::path tmp = path;
  tmp += ".tmp";
  vtkNew<vtkXMLPolyDataWriter> writer;
  writer->SetFileName(tmp.c_str());
  writer->SetInputData(data);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();  // no 4 GiB limit on a block header
  if (writer->Write() != 1 || writer->GetErrorCode() != 0) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw std::runtime_error("VTK output: cannot write '" + tmp.string() + "'");
  }
  commit(tmp, path);
}

/// A named array of one double per entry.
vtkNew<vtkDoubleArray> scalar_array(const char* name, vtkIdType n) {
  vtkNew<vtkDoubleArray> a;
  a->SetName(name);
  a->SetNumberOfComponents(1);
  a->SetNumberOfTuples(n);
  return a;
}

/// A named array of one 3-vector per entry.
vtkNew<vtkDoubleArray> vector_array(const char* name, vtkIdType n) {
  vtkNew<vtkDoubleArray> a;
  a->SetName(name);
  a->SetNumberOfComponents(3);
  a->SetNumberOfTuples(n);
  return a;
}

void set_vector(vtkDoubleArray* a, vtkIdType i, const Vec3& v) {
  a->SetTypedTuple(i, v.data());
}

/// Rewrites the collection `stem.pvd` listing stem_NNNNNN.vtp for every time.
void write_collection(const fs::path& folder, const char* stem, const std::vector<double>& times) {
  const fs::path path = folder / (std::string(stem) + ".pvd");
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "<?xml version=\"1.0\"?>\n"
        << "<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n";
    for (std::size_t k = 0; k < times.size(); ++k) {
      char time[32];
      std::snprintf(time, sizeof time, "%.16e", times[k]);
      out << "    <DataSet timestep=\"" << time << "\" part=\"0\" file=\""
          << frame_file_name(stem, k) << "\"/>\n";
    }
    out << "  </Collection>\n</VTKFile>\n";
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error("VTK output: cannot write '" + tmp.string() + "'");
    }
  }
  commit(tmp, path);
}

}  // namespace

VtkSeriesWriter::VtkSeriesWriter(fs::path folder) : folder_(std::move(folder)) {
  const std::string name = "VTK output folder '" + folder_.string() + "'";
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec) throw std::runtime_error(name + ": cannot create it: " + ec.message());
  if (!fs::is_directory(folder_, ec))
    throw std::runtime_error(name + ": exists and is not a folder");
  // Probe: create and remove a small file.
  const fs::path probe = folder_ / ".dem_write_probe";
  bool writable = false;
  {
    std::ofstream out(probe, std::ios::trunc);
    out << "probe\n";
    out.flush();
    writable = static_cast<bool>(out);
  }
  const bool removed = fs::remove(probe, ec) && !ec;
  if (!writable || !removed) throw std::runtime_error(name + ": not writable");
  // VTK's zlib compressor allocates and frees large buffers for every file;
  // with glibc's defaults each one is a fresh mmap and its page faults cost
  // more than the stepping of a small scene. Keep such blocks in the heap.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

void VtkSeriesWriter::write_frame(double t, const ParticleStore& particles,
                                  const BondList& bonds) {
  const std::size_t frame = frame_count();
  const auto n = static_cast<vtkIdType>(particles.size());

  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(n);
  vtkNew<vtkIntArray> id;
  id->SetName("id");
  id->SetNumberOfTuples(n);
  auto diameter = scalar_array("diameter", n);
  auto velocity = vector_array("velocity", n);
  auto angular_velocity = vector_array("angular_velocity", n);
  auto rotation_vector = vector_array("rotation_vector", n);
  auto displacement = vector_array("displacement", n);
  // Relative attitudes Q_i = R_i R_i0^T, also used by the bond cells.
  std::vector<Quat> relative(particles.size());
  vtkNew<vtkCellArray> vertices;
  vertices->AllocateExact(n, n);
  for (vtkIdType i = 0; i < n; ++i) {
    points->SetPoint(i, particles.position[i].data());
    id->SetValue(i, static_cast<int>(particles.id[i]));
    diameter->SetValue(i, 2.0 * particles.radius[i]);
    set_vector(velocity, i, particles.velocity[i]);
    set_vector(angular_velocity, i, particles.angular_velocity[i]);
    relative[i] = particles.attitude[i] * particles.reference_attitude[i].conjugate();
    set_vector(rotation_vector, i, quaternion_rotation_vector(relative[i]));
    set_vector(displacement, i, particles.position[i] - particles.reference_position[i]);
    vertices->InsertNextCell(1, &i);
  }

  vtkNew<vtkPolyData> cloud;
  cloud->SetPoints(points);
  cloud->SetVerts(vertices);
  vtkPointData* point_data = cloud->GetPointData();
  point_data->AddArray(id);
  point_data->AddArray(diameter);
  point_data->AddArray(velocity);
  point_data->AddArray(angular_velocity);
  point_data->AddArray(rotation_vector);
  point_data->AddArray(displacement);

  const auto m = static_cast<vtkIdType>(bonds.size());
  vtkNew<vtkCellArray> lines;
  lines->AllocateExact(m, 2 * m);
  auto axial_strain = scalar_array("axial_strain", m);
  auto bend_angle = scalar_array("bend_angle", m);
  for (vtkIdType b = 0; b < m; ++b) {
    const std::uint32_t i = bonds.first[b], j = bonds.second[b];
    const vtkIdType ends[2] = {static_cast<vtkIdType>(i), static_cast<vtkIdType>(j)};
    lines->InsertNextCell(2, ends);
    const double r = (particles.position[i] - particles.position[j]).norm();
    axial_strain->SetValue(b, r / bonds.rest_length[b] - 1.0);
    bend_angle->SetValue(b, bond_rotation_vector(relative[i], relative[j]).norm());
  }
  vtkNew<vtkPolyData> network;
  network->SetPoints(points);
  network->SetLines(lines);
  network->GetCellData()->AddArray(axial_strain);
  network->GetCellData()->AddArray(bend_angle);

  write_polydata(cloud, folder_ / frame_file_name("particles", frame));
  write_polydata(network, folder_ / frame_file_name("bonds", frame));
  times_.push_back(t);
  try {
    write_collection(folder_, "particles", times_);
    write_collection(folder_, "bonds", times_);
  } catch (...) {
    times_.pop_back();
    throw;
  }
}

}  // namespace dem
