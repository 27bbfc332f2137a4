#include "scene/mesh_file.hpp"

#include <vtkCallbackCommand.h>
#include <vtkCellArray.h>
#include <vtkCommand.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkOBJReader.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSTLReader.h>
#include <vtkSmartPointer.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "scene/scene_spec.hpp"

namespace dem {

namespace {

/// Collects a reader's error and warning messages instead of letting VTK
/// print them.
void keep_message(vtkObject*, unsigned long, void* client, void* call) {
  std::string& text = *static_cast<std::string*>(client);
  if (text.empty() && call != nullptr) text = static_cast<const char*>(call);
}

/// The first line of a VTK message, without its "ERROR: In file, line"
/// preamble.
std::string reader_message(const std::string& text) {
  std::string s = text;
  const std::size_t nl = s.find('\n');
  if (nl != std::string::npos && nl + 1 < s.size()) s = s.substr(nl + 1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  const std::size_t end = s.find('\n');
  return end == std::string::npos ? s : s.substr(0, end);
}

}  // namespace

MeshFileData read_mesh_file(const std::filesystem::path& path) {
  const std::uint64_t size = regular_file_size(path);  // throws naming the path
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".stl" && ext != ".obj")
    throw SceneError(path.string() + ": expected a .stl (ASCII or binary) or .obj mesh file");
  if (size == 0) throw SceneError(path.string() + ": the file is empty: no triangles");
  std::string message;
  vtkNew<vtkCallbackCommand> listener;
  listener->SetCallback(keep_message);
  listener->SetClientData(&message);
  vtkSmartPointer<vtkPolyData> poly;
  if (ext == ".stl") {
    vtkNew<vtkSTLReader> reader;
    reader->AddObserver(vtkCommand::ErrorEvent, listener);
    reader->AddObserver(vtkCommand::WarningEvent, listener);
    reader->SetFileName(path.string().c_str());
    reader->MergingOff();  // TriangleMesh merges exactly equal vertices (VTK's locator would choke on NaN)
    reader->ScalarTagsOff();
    reader->Update();
    poly = reader->GetOutput();
  } else {
    vtkNew<vtkOBJReader> reader;
    reader->AddObserver(vtkCommand::ErrorEvent, listener);
    reader->AddObserver(vtkCommand::WarningEvent, listener);
    reader->SetFileName(path.string().c_str());
    reader->Update();
    poly = reader->GetOutput();
  }
  if (!message.empty()) throw SceneError(path.string() + ": cannot read the mesh: " + reader_message(message));
  MeshFileData out;
  vtkPoints* points = poly != nullptr ? poly->GetPoints() : nullptr;
  vtkCellArray* polys = poly != nullptr ? poly->GetPolys() : nullptr;
  if (points == nullptr || polys == nullptr || polys->GetNumberOfCells() == 0)
    throw SceneError(path.string() + ": the mesh has no triangles");
  out.vertices.resize(static_cast<std::size_t>(points->GetNumberOfPoints()));
  for (vtkIdType k = 0; k < points->GetNumberOfPoints(); ++k) {
    double p[3];
    points->GetPoint(k, p);
    out.vertices[static_cast<std::size_t>(k)] = Vec3(p[0], p[1], p[2]);
    if (!out.vertices[static_cast<std::size_t>(k)].allFinite())
      throw SceneError(path.string() + ": vertex " + std::to_string(k) + " is not finite (" + std::to_string(p[0]) +
                       ", " + std::to_string(p[1]) + ", " + std::to_string(p[2]) + ")");
  }
  vtkNew<vtkIdList> cell;
  polys->InitTraversal();
  while (polys->GetNextCell(cell) != 0) {
    const vtkIdType n = cell->GetNumberOfIds();
    for (vtkIdType k = 1; k + 1 < n; ++k)
      out.triangles.push_back({static_cast<std::uint32_t>(cell->GetId(0)), static_cast<std::uint32_t>(cell->GetId(k)),
                               static_cast<std::uint32_t>(cell->GetId(k + 1))});
  }
  if (out.triangles.empty()) throw SceneError(path.string() + ": the mesh has no triangles");
  return out;
}

}  // namespace dem
