// A closed surface mesh as a packing region (scene/mesh_region.hpp).
#include "scene/mesh_region.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <tbb/enumerable_thread_specific.h>
#include <vtkCellArray.h>
#include <vtkCleanPolyData.h>
#include <vtkFeatureEdges.h>
#include <vtkImplicitPolyDataDistance.h>
#include <vtkMassProperties.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataNormals.h>
#include <vtkSmartPointer.h>

#include "core/format.hpp"
#include "scene/mesh_file.hpp"

namespace dem {

struct MeshRegion::Impl {
  vtkSmartPointer<vtkPolyData> surface;
  /// One distance query per thread: vtkImplicitPolyDataDistance's locator
  /// is not safe to share between threads.
  mutable tbb::enumerable_thread_specific<vtkSmartPointer<vtkImplicitPolyDataDistance>> query;

  vtkImplicitPolyDataDistance& local() const {
    bool exists = false;
    auto& q = query.local(exists);  // exists: this thread had made its query before
    if (!exists || !q) {
      vtkNew<vtkPolyData> copy;
      copy->DeepCopy(surface);
      q = vtkSmartPointer<vtkImplicitPolyDataDistance>::New();
      q->SetInput(copy);
    }
    return *q;
  }
};

MeshRegion::~MeshRegion() = default;

MeshRegion::MeshRegion(const std::filesystem::path& file, double scale) : impl_(std::make_unique<Impl>()) {
  if (!(scale > 0.0) || !std::isfinite(scale))
    throw std::invalid_argument("scale: must be a finite number > 0, got " + format_g(scale));
  const MeshFileData data = read_mesh_file(file);
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  for (const Vec3& v : data.vertices) points->InsertNextPoint(scale * v.x(), scale * v.y(), scale * v.z());
  vtkNew<vtkCellArray> triangles;
  for (const auto& t : data.triangles) {
    const vtkIdType ids[3] = {t[0], t[1], t[2]};
    triangles->InsertNextCell(3, ids);
  }
  vtkNew<vtkPolyData> raw;
  raw->SetPoints(points);
  raw->SetPolys(triangles);
  // Merge the repeated vertices of STL files (exactly equal ones).
  vtkNew<vtkCleanPolyData> clean;
  clean->SetInputData(raw);
  clean->SetTolerance(0.0);
  clean->Update();
  // Closed: every edge shared by exactly two triangles.
  vtkNew<vtkFeatureEdges> open;
  open->SetInputConnection(clean->GetOutputPort());
  open->BoundaryEdgesOn();
  open->NonManifoldEdgesOn();
  open->FeatureEdgesOff();
  open->ManifoldEdgesOff();
  open->Update();
  if (const vtkIdType n = open->GetOutput()->GetNumberOfCells(); n > 0)
    throw std::invalid_argument(file.string() + ": not a closed surface (" + std::to_string(n) +
                                " edges belong to one triangle or to more than two): the region must be the "
                                "inside of a closed, manifold surface");
  // Outward normals, consistently oriented (the signed distance's sign).
  vtkNew<vtkPolyDataNormals> normals;
  normals->SetInputConnection(clean->GetOutputPort());
  normals->ConsistencyOn();
  normals->AutoOrientNormalsOn();
  normals->SplittingOff();
  normals->ComputeCellNormalsOn();
  normals->Update();
  impl_->surface = normals->GetOutput();
  vtkNew<vtkMassProperties> mass;
  mass->SetInputData(impl_->surface);
  mass->Update();
  volume_ = mass->GetVolume();
  if (!(volume_ > 0.0)) throw std::invalid_argument(file.string() + ": the surface encloses no volume");
  double b[6];
  impl_->surface->GetBounds(b);
  lower_ = Vec3(b[0], b[2], b[4]);
  upper_ = Vec3(b[1], b[3], b[5]);
  constexpr int kGrid = 32;
  for (int i = 0; i < kGrid; ++i)
    for (int j = 0; j < kGrid; ++j)
      for (int k = 0; k < kGrid; ++k) {
        const Vec3 f((i + 0.5) / kGrid, (j + 0.5) / kGrid, (k + 0.5) / kGrid);
        inradius_ = std::max(inradius_, depth(lower_ + f.cwiseProduct(upper_ - lower_)));
      }
}

double MeshRegion::depth(const Vec3& x) const {
  double p[3] = {x.x(), x.y(), x.z()};
  return -impl_->local().EvaluateFunction(p);
}

}  // namespace dem
