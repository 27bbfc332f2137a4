#include "io/vtk_writer.hpp"
#include "io/polydata_file.hpp"

#include <vtkCallbackCommand.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCommand.h>
#include <vtkDataCompressor.h>
#include <vtkDoubleArray.h>
#include <vtkExecutive.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkTypeInt32Array.h>
#include <vtkTypeInt64Array.h>
#include <vtkXMLPolyDataWriter.h>
#include <vtkZLibDataCompressor.h>

#ifdef DEM_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <malloc.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "bonds/bond_potential.hpp"
#include "core/parallel.hpp"
#include "core/text_file.hpp"
#include "core/rotation.hpp"

namespace dem {

namespace fs = std::filesystem;

namespace {

/// Items per task of the snapshot loops (each item writes only its own slots,
/// so the snapshot is the same for any thread count).
constexpr std::size_t kGrain = 8192;

/// `stem_NNNNNN.EXT` (the frame index zero-padded to six digits) or, for
/// piece K >= 0 of a parallel frame, `stem_NNNNNN_K.vtp`.
std::string frame_file_name(const char* stem, std::size_t frame, const char* ext = "vtp", int piece = -1) {
  char buffer[96];
  if (piece >= 0)
    std::snprintf(buffer, sizeof buffer, "%s_%06zu_%d.vtp", stem, frame, piece);
  else
    std::snprintf(buffer, sizeof buffer, "%s_%06zu.%s", stem, frame, ext);
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

/// Keeps the last error message a VTK object reports (instead of printing it
/// through the global output window, which is not meant for several threads).
/// VTK's text is "ERROR: In file, line N\nClass (address): message\n\n"; the
/// message alone is kept.
void keep_error_message(vtkObject*, unsigned long, void* client_data, void* call_data) {
  if (call_data == nullptr || client_data == nullptr) return;
  std::string text = static_cast<const char*>(call_data);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  const std::size_t at = text.rfind("): ");
  if (at != std::string::npos) text.erase(0, at + 3);
  *static_cast<std::string*>(client_data) = text;
}

/// core/text_file.hpp's write_text_file, its error prefixed "VTK output: ".
void write_vtk_text(const fs::path& path, const std::string& text) {
  try {
    write_text_file(path, text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("VTK output: ") + e.what());
  }
}

/// The XML type name of a VTK array's values (the types the frames hold).
const char* xml_type_name(vtkDataArray* a) {
  switch (a->GetDataType()) {
    case VTK_DOUBLE: return "Float64";
    case VTK_FLOAT: return "Float32";
    case VTK_INT: return "Int32";
    case VTK_LONG_LONG: return "Int64";
    default: throw std::logic_error(std::string("VTK output: no XML type for array ") + a->GetName());
  }
}

/// Declarations of the arrays of one attribute set: `<PDataArray .../>` lines.
std::string declare_arrays(vtkFieldData* arrays) {
  std::string text;
  for (int k = 0; k < arrays->GetNumberOfArrays(); ++k) {
    vtkDataArray* a = arrays->GetArray(k);
    text += std::string("      <PDataArray type=\"") + xml_type_name(a) + "\" Name=\"" + a->GetName() +
            "\" NumberOfComponents=\"" + std::to_string(a->GetNumberOfComponents()) + "\"/>\n";
  }
  return text;
}

/// Writes stem_NNNNNN.pvtp: the arrays `data` (any piece) holds and the
/// files of all `count` pieces of frame `frame`.
void write_summary(const fs::path& folder, const char* stem, std::size_t frame, int count, vtkPolyData* data) {
  std::string text =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"PPolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
      "  <PPolyData GhostLevel=\"0\">\n";
  text += "    <PPointData>\n" + declare_arrays(data->GetPointData()) + "    </PPointData>\n";
  text += "    <PCellData>\n" + declare_arrays(data->GetCellData()) + "    </PCellData>\n";
  text += "    <PPoints>\n      <PDataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\"/>\n    </PPoints>\n";
  for (int k = 0; k < count; ++k) text += "    <Piece Source=\"" + frame_file_name(stem, frame, "vtp", k) + "\"/>\n";
  text += "  </PPolyData>\n</VTKFile>\n";
  write_vtk_text(folder / frame_file_name(stem, frame, "pvtp"), text);
}

/// Rewrites the collection `stem.pvd` listing the first `count` frames:
/// stem_NNNNNN.pvtp where `parallel` says so, else stem_NNNNNN.vtp.
void write_collection(const fs::path& folder, const char* stem, const std::vector<double>& times,
                      const std::vector<std::uint8_t>& parallel, std::size_t count) {
  std::string text = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n";
  for (std::size_t k = 0; k < count; ++k) {
    char time[32];
    std::snprintf(time, sizeof time, "%.16e", times[k]);
    text += std::string("    <DataSet timestep=\"") + time + "\" part=\"0\" file=\"" + frame_file_name(stem, k, parallel[k] ? "pvtp" : "vtp") +
            "\"/>\n";
  }
  text += "  </Collection>\n</VTKFile>\n";
  write_vtk_text(folder / (std::string(stem) + ".pvd"), text);
}

/// The frames [listed, frames) of a series, from `listed` on, while each is
/// whole on disk: a .vtp (written by the one writer), or a parallel frame
/// of `pieces` pieces each of whose particles and bonds files exists (pieces
/// are renamed into place once complete). Returns the new count.
std::size_t complete_frames(const fs::path& folder, std::size_t listed, std::size_t frames,
                            const std::vector<std::uint8_t>& parallel, int pieces) {
  std::error_code ec;
  for (; listed < frames; ++listed) {
    if (!parallel[listed]) continue;
    for (int p = 0; p < pieces; ++p)
      for (const char* stem : {"particles", "bonds"})
        if (!fs::exists(folder / frame_file_name(stem, listed, "vtp", p), ec)) return listed;
  }
  return listed;
}

/// A named, empty VTK array of `components` values per tuple.
template <class Array>
vtkSmartPointer<Array> named_array(const char* name, int components) {
  auto a = vtkSmartPointer<Array>::New();
  if (name != nullptr) a->SetName(name);
  a->SetNumberOfComponents(components);
  return a;
}

/// Sizes a kept array to n tuples and returns its buffer. VTK keeps the
/// allocation when n does not grow, so a series of frames of one scene
/// writes into the same (already mapped) memory every time; the contents are
/// left as they are, for the caller to overwrite.
template <class Array>
typename Array::ValueType* resize(Array* a, std::size_t n) {
  a->SetNumberOfTuples(static_cast<vtkIdType>(n));
  a->Modified();  // the cached value ranges (written in the file header) are stale
  return a->GetPointer(0);
}

/// `a` as an array of the given type, replaced by a new one (same name and
/// components) when it is of the other integer width.
template <class Array>
Array* as_int_array(vtkSmartPointer<vtkDataArray>& a, const char* name, int components) {
  if (Array* typed = Array::FastDownCast(a)) return typed;
  auto fresh = named_array<Array>(name, components);
  a = fresh;
  return fresh;
}

static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 arrays are copied as packed doubles");

/// Copies items [b, e) of a vector of Vec3 into packed triples.
void copy_vectors(const std::vector<Vec3>& from, double* to, std::size_t b, std::size_t e) {
  if (e > b) std::memcpy(to + 3 * b, from[b].data(), (e - b) * sizeof(Vec3));
}

/// Point k of packed triples, as the Vec3 it was copied from.
Vec3 vec3_at(const double* p, std::size_t k) { return Vec3(p[3 * k], p[3 * k + 1], p[3 * k + 2]); }

#ifdef DEM_HAVE_LIBDEFLATE
/// VTK's zlib compressor with the compression done by libdeflate, which
/// writes the same zlib streams (RFC 1950) about 2.5 times faster than zlib
/// at level 1, and smaller. Decompression is zlib's, as in any VTK reader.
/// Deliberately no vtkTypeMacro: GetClassName() stays
/// "vtkZLibDataCompressor", the name the file header gives its readers.
class DeflateCompressor : public vtkZLibDataCompressor {
 public:
  static DeflateCompressor* New() {
    auto* result = new DeflateCompressor;
    result->InitializeObjectBase();
    return result;
  }

  size_t GetMaximumCompressionSpace(size_t size) override {
    return libdeflate_zlib_compress_bound(nullptr, size);  // any level
  }

 protected:
  DeflateCompressor() = default;
  ~DeflateCompressor() override {
    if (compressor_ != nullptr) libdeflate_free_compressor(compressor_);
  }

  size_t CompressBuffer(unsigned char const* in, size_t in_size, unsigned char* out,
                        size_t out_space) override {
    const int level = GetCompressionLevel();
    if (compressor_ == nullptr || level != level_) {
      if (compressor_ != nullptr) libdeflate_free_compressor(compressor_);
      compressor_ = libdeflate_alloc_compressor(level);
      level_ = level;
      if (compressor_ == nullptr) {
        vtkErrorMacro("cannot allocate a libdeflate compressor of level " << level);
        return 0;
      }
    }
    const size_t written = libdeflate_zlib_compress(compressor_, in, in_size, out, out_space);
    if (written == 0) vtkErrorMacro("libdeflate: the compressed block does not fit");
    return written;
  }

 private:
  libdeflate_compressor* compressor_ = nullptr;
  int level_ = 0;
};
#endif

}  // namespace

void write_polydata(vtkPolyData* data, const fs::path& path, int compression_level) {
  fs::path tmp = path;
  tmp += ".tmp";
  std::string vtk_message;
  vtkNew<vtkCallbackCommand> on_error;
  on_error->SetCallback(keep_error_message);
  on_error->SetClientData(&vtk_message);
  // The executive repeats the writer's failure in general terms: dropped.
  std::string executive_message;
  vtkNew<vtkCallbackCommand> on_executive_error;
  on_executive_error->SetCallback(keep_error_message);
  on_executive_error->SetClientData(&executive_message);
  vtkNew<vtkXMLPolyDataWriter> writer;
  writer->AddObserver(vtkCommand::ErrorEvent, on_error);
  writer->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, on_executive_error);
  writer->SetFileName(tmp.c_str());
  writer->SetInputData(data);
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
#ifdef DEM_HAVE_LIBDEFLATE
  vtkNew<DeflateCompressor> compressor;
  compressor->AddObserver(vtkCommand::ErrorEvent, on_error);
  writer->SetCompressor(compressor);
#else
  writer->SetCompressorTypeToZLib();
#endif
  writer->SetCompressionLevel(compression_level);
  writer->GetCompressor()->SetCompressionLevel(compression_level);
  writer->SetHeaderTypeToUInt64();  // no 4 GiB limit on a block header
  if (writer->Write() != 1 || writer->GetErrorCode() != 0) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw std::runtime_error("VTK output: cannot write '" + tmp.string() + "'" +
                             (vtk_message.empty() ? std::string() : ": " + vtk_message));
  }
  commit(tmp, path);
}

/// One frame: its snapshot and how to write it. The writer keeps one and
/// reuses its buffers for every frame. The caller's part (take_snapshot) only
/// copies, in parallel; what is derived per bond (strain, bend angle) and
/// the cell offsets are computed on the background thread (derive), from the
/// snapshot alone and with the same arithmetic as on the store.
struct VtkSeriesWriter::FrameJob {
  fs::path folder;
  std::size_t index = 0;
  std::vector<double> times;  ///< the series' times up to this frame
  std::vector<std::uint8_t> parallel;  ///< per frame of the series: a .pvtp (else a .vtp)
  std::size_t listed = 0;  ///< frames the collections list, every piece on disk (in and out)
  int compression_level = kDefaultCompressionLevel;
  VtkPieces pieces;
  bool narrow = true;  ///< cell connectivity and offsets as Int32 (else Int64)

  // Buffers, kept from one frame to the next.
  vtkSmartPointer<vtkDoubleArray> position = named_array<vtkDoubleArray>("Points", 3);
  vtkSmartPointer<vtkIntArray> id = named_array<vtkIntArray>("id", 1);
  vtkSmartPointer<vtkDoubleArray> diameter = named_array<vtkDoubleArray>("diameter", 1);
  vtkSmartPointer<vtkDoubleArray> velocity = named_array<vtkDoubleArray>("velocity", 3);
  vtkSmartPointer<vtkDoubleArray> angular_velocity =
      named_array<vtkDoubleArray>("angular_velocity", 3);
  vtkSmartPointer<vtkDoubleArray> rotation_vector =
      named_array<vtkDoubleArray>("rotation_vector", 3);
  vtkSmartPointer<vtkDoubleArray> displacement = named_array<vtkDoubleArray>("displacement", 3);
  vtkSmartPointer<vtkDoubleArray> axial_strain = named_array<vtkDoubleArray>("axial_strain", 1);
  vtkSmartPointer<vtkDoubleArray> bend_angle = named_array<vtkDoubleArray>("bend_angle", 1);
  vtkSmartPointer<vtkIntArray> n_broken = named_array<vtkIntArray>("n_broken", 1);
  vtkSmartPointer<vtkIntArray> fragment = named_array<vtkIntArray>("fragment", 1);
  std::vector<std::uint32_t> live_bonds;  ///< indices of the bonds shown (with FrameExtras::bond_live)
  /// With FrameExtras::shown: the slot of each point (the shown particles,
  /// then the other ends of the shown bonds), and the point of each slot
  /// (kNoPoint: none). Empty otherwise: point k is slot k.
  std::vector<std::uint32_t> point_slot, point_of;
  static constexpr std::uint32_t kNoPoint = 0xffffffffu;
  std::size_t shown_count = 0;  ///< points that are particles of the particles file (the first ones)
  bool mapped = false;          ///< point_slot and point_of are in use
  vtkSmartPointer<vtkDataArray> vertex_ids, vertex_offsets;  ///< Int32 or Int64
  vtkSmartPointer<vtkDataArray> bond_ends, bond_offsets;     ///< Int32 or Int64
  std::vector<Quat> relative;  ///< Q_i = R_i R_i0^T, for the bend angles
  /// The points of the two files: VTK arrays over position's buffer (no
  /// copy), the particles' the first shown_count points, the bonds' all, so
  /// that the two files can be written at once without sharing a VTK object
  /// (VTK caches value ranges inside each array).
  vtkNew<vtkDoubleArray> particle_position, bond_position;
  vtkNew<vtkPoints> points, bond_points;
  vtkNew<vtkCellArray> vertices, lines;
  vtkNew<vtkPolyData> cloud;    ///< particles_NNNNNN.vtp
  vtkNew<vtkPolyData> network;  ///< bonds_NNNNNN.vtp

  FrameJob() {
    for (vtkDoubleArray* a : {particle_position.Get(), bond_position.Get()}) {
      a->SetName("Points");
      a->SetNumberOfComponents(3);
    }
    points->SetData(particle_position);
    bond_points->SetData(bond_position);
    cloud->SetPoints(points);
    vtkPointData* point_data = cloud->GetPointData();
    point_data->AddArray(id);
    point_data->AddArray(diameter);
    point_data->AddArray(velocity);
    point_data->AddArray(angular_velocity);
    point_data->AddArray(rotation_vector);
    point_data->AddArray(displacement);
    network->SetPoints(bond_points);
    network->GetCellData()->AddArray(axial_strain);
    network->GetCellData()->AddArray(bend_angle);
  }

  /// Copies everything the frame shows out of the store and the bonds.
  void take_snapshot(const ParticleStore& particles, const BondList& bonds, const FrameExtras& extras) {
    constexpr auto int32_max = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
    const std::size_t n = particles.size();
    const auto check = [&](std::size_t size, std::size_t want, const char* what) {
      if (size != 0 && size != want)
        throw std::invalid_argument(std::string("VTK output: ") + what + " has " + std::to_string(size) +
                                    " entries for " + std::to_string(want));
    };
    check(extras.bond_live.size(), bonds.size(), "the bond live flags");
    check(extras.broken.size(), n, "n_broken");
    check(extras.fragment.size(), n, "fragment");
    check(extras.shown.size(), n, "the shown flags");
    live_bonds.clear();
    if (!extras.bond_live.empty())
      for (std::size_t k = 0; k < bonds.size(); ++k)
        if (extras.bond_live[k]) live_bonds.push_back(static_cast<std::uint32_t>(k));
    map_points(particles, bonds, extras);
    const auto extra_array = [&](vtkIntArray* a, std::span<const std::uint32_t> v) {
      vtkPointData* pd = cloud->GetPointData();
      if (v.empty() && !(extras.fracture && n == 0)) {
        pd->RemoveArray(a->GetName());
        return;
      }
      int* p = resize(a, shown_count);
      for (std::size_t k = 0; k < shown_count; ++k) p[k] = static_cast<int>(v[slot(k)]);
      if (!pd->HasArray(a->GetName())) pd->AddArray(a);
    };
    extra_array(n_broken, extras.broken);
    extra_array(fragment, extras.fragment);
    narrow = point_count(n) <= int32_max && 2 * bonds.size() <= int32_max;
    if (narrow)
      take_snapshot<vtkTypeInt32Array>(particles, bonds, !extras.bond_live.empty());
    else
      take_snapshot<vtkTypeInt64Array>(particles, bonds, !extras.bond_live.empty());
  }

  /// The slot of point k.
  std::size_t slot(std::size_t k) const { return mapped ? point_slot[k] : k; }
  /// Points of a frame of a store of n particles.
  std::size_t point_count(std::size_t n) const { return mapped ? point_slot.size() : n; }

  /// Fills point_slot, point_of and shown_count from FrameExtras::shown.
  void map_points(const ParticleStore& particles, const BondList& bonds, const FrameExtras& extras) {
    const std::size_t n = particles.size();
    point_slot.clear();
    point_of.clear();
    shown_count = n;
    mapped = !extras.shown.empty();
    if (!mapped) return;
    point_of.assign(n, kNoPoint);
    for (std::size_t i = 0; i < n; ++i)
      if (extras.shown[i]) {
        point_of[i] = static_cast<std::uint32_t>(point_slot.size());
        point_slot.push_back(static_cast<std::uint32_t>(i));
      }
    shown_count = point_slot.size();
    const std::size_t m = extras.bond_live.empty() ? bonds.size() : live_bonds.size();
    for (std::size_t k = 0; k < m; ++k) {
      const std::size_t bond = extras.bond_live.empty() ? k : live_bonds[k];
      for (const std::uint32_t end : {bonds.first[bond], bonds.second[bond]})
        if (end < n && point_of[end] == kNoPoint) {
          point_of[end] = static_cast<std::uint32_t>(point_slot.size());
          point_slot.push_back(end);
        }
    }
  }

  template <class IntArray>
  void take_snapshot(const ParticleStore& particles, const BondList& bonds, bool filtered) {
    using Int = typename IntArray::ValueType;
    const std::size_t n = particles.size();
    const std::size_t point_total = point_count(n);
    const std::size_t shown = shown_count;
    const std::size_t m = filtered ? live_bonds.size() : bonds.size();
    double* px = resize(position.Get(), point_total);
    int* pid = resize(id.Get(), shown);
    double* pd = resize(diameter.Get(), shown);
    double* pv = resize(velocity.Get(), shown);
    double* pw = resize(angular_velocity.Get(), shown);
    double* pr = resize(rotation_vector.Get(), shown);
    double* pu = resize(displacement.Get(), shown);
    relative.resize(point_total);
    parallel_for_ranges(
        point_total,
        [&](std::size_t b, std::size_t e) {
          if (!mapped) {
            copy_vectors(particles.position, px, b, e);
            copy_vectors(particles.velocity, pv, b, e);
            copy_vectors(particles.angular_velocity, pw, b, e);
          }
          for (std::size_t k = b; k < e; ++k) {
            const std::size_t i = slot(k);
            relative[k] = particles.attitude[i] * particles.reference_attitude[i].conjugate();
            if (mapped)
              for (int c = 0; c < 3; ++c) px[3 * k + c] = particles.position[i][c];
            if (k >= shown) continue;  // an end of a bond only
            if (mapped)
              for (int c = 0; c < 3; ++c) {
                pv[3 * k + c] = particles.velocity[i][c];
                pw[3 * k + c] = particles.angular_velocity[i][c];
              }
            pid[k] = static_cast<int>(particles.id[i]);
            pd[k] = 2.0 * particles.radius[i];
            const Vec3 rv = quaternion_rotation_vector(relative[k]);
            const Vec3 u = particles.position[i] - particles.reference_position[i];
            for (int c = 0; c < 3; ++c) {
              pr[3 * k + c] = rv[c];
              pu[3 * k + c] = u[c];
            }
          }
        },
        kGrain);

    // Bonds: the ends, and r0 in the strain array until derive() divides.
    Int* pe = resize(as_int_array<IntArray>(bond_ends, "connectivity", 1), 2 * m);
    double* ps = resize(axial_strain.Get(), m);
    resize(bend_angle.Get(), m);
    parallel_for_ranges(
        m,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t k = b; k < e; ++k) {
            const std::size_t bond = filtered ? live_bonds[k] : k;  // failed bonds are not shown
            const std::uint32_t i = bonds.first[bond], j = bonds.second[bond];
            if (i >= n || j >= n)
              throw std::invalid_argument("VTK output: bond " + std::to_string(bond) + " joins particles " +
                                          std::to_string(i) + " and " + std::to_string(j) +
                                          " of a store of " + std::to_string(n));
            pe[2 * k] = static_cast<Int>(mapped ? point_of[i] : i);
            pe[2 * k + 1] = static_cast<Int>(mapped ? point_of[j] : j);
            if (filtered) ps[k] = bonds.rest_length[bond];
          }
          if (!filtered) std::memcpy(ps + b, bonds.rest_length.data() + b, (e - b) * sizeof(double));
        },
        kGrain);
  }

  /// Background part of the snapshot: the cells, then per bond
  /// axial_strain = r/r0 - 1 and bend_angle = |theta_ij|.
  template <class IntArray>
  void derive() {
    using Int = typename IntArray::ValueType;
    const std::size_t n = static_cast<std::size_t>(id->GetNumberOfTuples());  // particles shown
    const std::size_t point_total = static_cast<std::size_t>(position->GetNumberOfTuples());
    const std::size_t m = static_cast<std::size_t>(axial_strain->GetNumberOfTuples());
    Int* pc = resize(as_int_array<IntArray>(vertex_ids, "connectivity", 1), n);
    Int* po = resize(as_int_array<IntArray>(vertex_offsets, "offsets", 1), n + 1);
    for (std::size_t i = 0; i < n; ++i) pc[i] = po[i] = static_cast<Int>(i);
    po[n] = static_cast<Int>(n);
    vertices->SetData(IntArray::FastDownCast(vertex_offsets), IntArray::FastDownCast(vertex_ids));
    cloud->SetVerts(vertices);

    Int* pb = resize(as_int_array<IntArray>(bond_offsets, "offsets", 1), m + 1);
    for (std::size_t k = 0; k <= m; ++k) pb[k] = static_cast<Int>(2 * k);
    lines->SetData(IntArray::FastDownCast(bond_offsets), IntArray::FastDownCast(bond_ends));
    network->SetLines(lines);

    double* px = position->GetPointer(0);
    particle_position->SetArray(px, static_cast<vtkIdType>(3 * n), /*save=*/1);  // alias, not owner
    bond_position->SetArray(px, static_cast<vtkIdType>(3 * point_total), /*save=*/1);
    particle_position->Modified();
    bond_position->Modified();
    points->Modified();
    bond_points->Modified();

    const Int* pe = IntArray::FastDownCast(bond_ends)->GetPointer(0);
    double* ps = axial_strain->GetPointer(0);
    double* pa = bend_angle->GetPointer(0);
    for (std::size_t k = 0; k < m; ++k) {
      const auto i = static_cast<std::size_t>(pe[2 * k]);
      const auto j = static_cast<std::size_t>(pe[2 * k + 1]);
      const double r = (vec3_at(px, i) - vec3_at(px, j)).norm();
      ps[k] = r / ps[k] - 1.0;
      pa[k] = bond_rotation_vector(relative[i], relative[j]).norm();
    }
    cloud->Modified();
    network->Modified();
  }

  /// Derives, writes both files (at once, on two threads: the compression
  /// is nearly all of the time), then both collections.
  void run() {
    if (narrow)
      derive<vtkTypeInt32Array>();
    else
      derive<vtkTypeInt64Array>();
    const int piece = pieces.count > 1 ? pieces.piece : -1;
    const fs::path particles_file = folder / frame_file_name("particles", index, "vtp", piece);
    const fs::path bonds_file = folder / frame_file_name("bonds", index, "vtp", piece);
    std::exception_ptr particles_error, bonds_error;
    std::thread particles_writer;
    try {
      particles_writer = std::thread([&] {
        try {
          write_polydata(cloud, particles_file, compression_level);
        } catch (...) {
          particles_error = std::current_exception();
        }
      });
    } catch (const std::system_error&) {  // no second thread: one file after the other
      try {
        write_polydata(cloud, particles_file, compression_level);
      } catch (...) {
        particles_error = std::current_exception();
      }
    }
    try {
      write_polydata(network, bonds_file, compression_level);
    } catch (...) {
      bonds_error = std::current_exception();
    }
    if (particles_writer.joinable()) particles_writer.join();
    // The writer made each PolyData build its cell map (8 bytes a cell):
    // not kept between frames.
    cloud->DeleteCells();
    network->DeleteCells();
    if (particles_error) std::rethrow_exception(particles_error);
    if (bonds_error) std::rethrow_exception(bonds_error);
    if (pieces.piece != 0) return;  // rank 0 names the pieces and lists the frames
    if (pieces.count > 1) {
      write_summary(folder, "particles", index, pieces.count, cloud);
      write_summary(folder, "bonds", index, pieces.count, network);
    }
    listed = complete_frames(folder, listed, times.size(), parallel, pieces.count);
    write_collection(folder, "particles", times, parallel, listed);
    write_collection(folder, "bonds", times, parallel, listed);
  }
};

std::vector<std::string> vtk_frame_files(const fs::path& folder, const char* stem, std::size_t frame) {
  const std::string whole = frame_file_name(stem, frame, "vtp"), parallel = frame_file_name(stem, frame, "pvtp");
  std::error_code ec;
  if (fs::exists(folder / whole, ec)) return {whole};
  if (!fs::exists(folder / parallel, ec))
    throw std::runtime_error("frame '" + (folder / whole).string() + "' (or its parallel form '" + parallel +
                             "') is missing");
  std::ifstream in(folder / parallel);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read '" + (folder / parallel).string() + "'");
  std::vector<std::string> files{parallel};
  const std::string key = "Source=\"", all = text.str();
  for (std::size_t at = all.find(key); at != std::string::npos; at = all.find(key, at)) {
    at += key.size();
    const std::size_t end = all.find('"', at);
    if (end == std::string::npos) break;
    files.push_back(all.substr(at, end - at));
    if (!fs::exists(folder / files.back(), ec))
      throw std::runtime_error("piece '" + (folder / files.back()).string() + "' of '" + parallel + "' is missing");
  }
  if (files.size() == 1) throw std::runtime_error("'" + (folder / parallel).string() + "' names no pieces");
  return files;
}

VtkSeriesWriter::VtkSeriesWriter(fs::path folder, int compression_level, VtkPieces pieces)
    : folder_(std::move(folder)), compression_level_(compression_level), pieces_(pieces) {
  const std::string name = "VTK output folder '" + folder_.string() + "'";
  if (compression_level < 1 || compression_level > 9)
    throw std::invalid_argument(name + ": compression level " + std::to_string(compression_level) +
                                " is not in 1..9");
  if (pieces.count < 1 || pieces.piece < 0 || pieces.piece >= pieces.count)
    throw std::invalid_argument(name + ": piece " + std::to_string(pieces.piece) + " of " +
                                std::to_string(pieces.count) + " is not a piece");
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec) throw std::runtime_error(name + ": cannot create it: " + ec.message());
  if (!fs::is_directory(folder_, ec))
    throw std::runtime_error(name + ": exists and is not a folder");
  // VTK's zlib compressor allocates and frees large buffers for every file;
  // with glibc's defaults each one is a fresh mmap and its page faults cost
  // more than the stepping of a small scene. Keep such blocks in the heap.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // Probe: create and remove a small file (once per series: the other
  // pieces' writers use the folder piece 0 has probed).
  if (pieces.piece != 0) return;
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
}

VtkSeriesWriter::~VtkSeriesWriter() {
  try {
    if (std::exception_ptr error = wait()) std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::cerr << "error: VTK output: frame " << (frame_count() - 1) << " was not written: "
              << e.what() << std::endl;
  } catch (...) {
    std::cerr << "error: VTK output: frame " << (frame_count() - 1) << " was not written"
              << std::endl;
  }
}

std::exception_ptr VtkSeriesWriter::wait() {
  if (worker_.joinable()) worker_.join();  // join() orders error_ after the worker's write
  return std::exchange(error_, nullptr);
}

void VtkSeriesWriter::resume(std::vector<double> times) {
  if (!times_.empty() || worker_.joinable())
    throw std::logic_error("VtkSeriesWriter::resume: frames were already written");
  times_ = std::move(times);
  // An earlier run on another number of ranks may have written them as
  // parallel frames or not: each is listed as it is on disk.
  parallel_.clear();
  for (std::size_t k = 0; k < times_.size(); ++k)
    parallel_.push_back(fs::exists(folder_ / frame_file_name("particles", k, "pvtp")) ? 1 : 0);
  if (!times_.empty() && pieces_.piece == 0) {
    // The collections list exactly the earlier frames from now on (not the
    // frames an earlier attempt wrote after them).
    write_collection(folder_, "particles", times_, parallel_, times_.size());
    write_collection(folder_, "bonds", times_, parallel_, times_.size());
  }
  listed_ = times_.size();  // each checked on disk by the restart (vtk_frame_files)
}

void VtkSeriesWriter::flush() {
  const bool in_flight = worker_.joinable();
  if (std::exception_ptr error = wait()) {
    times_.pop_back();  // the failed frame is not part of the series
    std::rethrow_exception(error);
  }
  if (in_flight) listed_ = job_->listed;
}

void VtkSeriesWriter::relist() {
  flush();
  if (pieces_.piece != 0 || pieces_.count < 2) return;
  const std::size_t listed = complete_frames(folder_, listed_, times_.size(), parallel_, pieces_.count);
  if (listed == listed_) return;
  listed_ = listed;
  write_collection(folder_, "particles", times_, parallel_, listed_);
  write_collection(folder_, "bonds", times_, parallel_, listed_);
}

void VtkSeriesWriter::write_frame(double t, const ParticleStore& particles, const BondList& bonds,
                                  const FrameExtras& extras) {
  flush();
  if (!job_) job_ = std::make_unique<FrameJob>();
  FrameJob* job = job_.get();
  job->take_snapshot(particles, bonds, extras);
  job->folder = folder_;
  job->index = times_.size();
  job->compression_level = compression_level_;
  job->pieces = pieces_;
  times_.push_back(t);
  parallel_.resize(times_.size() - 1);
  parallel_.push_back(pieces_.count > 1 ? 1 : 0);
  try {
    job->times = times_;
    job->parallel = parallel_;
    job->listed = listed_;
    worker_ = std::thread([this, job] {
      try {
        job->run();
      } catch (...) {
        error_ = std::current_exception();
      }
    });
  } catch (...) {
    times_.pop_back();
    throw;
  }
}

}  // namespace dem
