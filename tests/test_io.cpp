/// \file test_io.cpp
/// The io module: energy table format and round trip, VTK series files read
/// back through VTK's own reader, atomic writes and error messages.

#include <gtest/gtest.h>

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLPPolyDataReader.h>
#include <vtkXMLPolyDataReader.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "bonds/bond_list.hpp"
#include "core/particle_store.hpp"
#include "io/energy_table.hpp"
#include "io/vtk_writer.hpp"

namespace fs = std::filesystem;
using namespace dem;

namespace {

/// A fresh, empty folder under the system temporary folder.
fs::path fresh_folder(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("dem_test_io_" + name + "_" +
                                                  std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string field;
  while (std::getline(in, field, sep)) out.push_back(field);
  return out;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

EnergyReport sample_report() {
  EnergyReport r;
  r.time = 0.1;
  r.kinetic_translation = 1.0 / 3.0;
  r.kinetic_rotation = 2.718281828459045e-7;
  r.bending = 3.141592653589793e5;
  r.axial = 1e-300;
  r.shear = -0.0;
  r.contact = 5e-324;  // smallest subnormal
  r.wall = 123456789.123456789;
  r.gravity = -9.80665e-3;
  r.linear_momentum = Vec3(-1.0 / 7.0, 2.0 / 9.0, -1e20);
  r.angular_momentum = Vec3(std::sqrt(2.0), -std::sqrt(3.0), 1.0e-17);
  r.fracture_work = 0.125;
  r.contact_work = 1.0 / 11.0;
  r.filter_work = 2e-9;
  r.boundary_work = -3.5;
  r.broken_bonds = 17;
  r.fragments = 4;
  return r;
}

}  // namespace

TEST(EnergyTable, HeaderIsExactColumnList) {
  EXPECT_EQ(energy_table_header(),
            "t,E_kin_trans,E_kin_rot,U_bend,U_axial,U_shear,U_contact,U_wall,U_gravity,E_total,"
            "P_x,P_y,P_z,L_x,L_y,L_z,W_fracture,W_contact,W_filter,E_balance,n_broken,n_fragments,W_boundary");
}

TEST(EnergyTable, RowParsesBackBitwise) {
  const EnergyReport r = sample_report();
  const std::string row = energy_table_row(r);
  EXPECT_EQ(row.find('\n'), std::string::npos);
  const std::vector<std::string> fields = split(row, ',');
  ASSERT_EQ(fields.size(), 23u);
  const double expected[16] = {r.time,
                               r.kinetic_translation,
                               r.kinetic_rotation,
                               r.bending,
                               r.axial,
                               r.shear,
                               r.contact,
                               r.wall,
                               r.gravity,
                               r.total(),
                               r.linear_momentum.x(),
                               r.linear_momentum.y(),
                               r.linear_momentum.z(),
                               r.angular_momentum.x(),
                               r.angular_momentum.y(),
                               r.angular_momentum.z()};
  for (int k = 0; k < 16; ++k) {
    char* end = nullptr;
    const double v = std::strtod(fields[k].c_str(), &end);
    EXPECT_EQ(*end, '\0') << fields[k];
    EXPECT_TRUE(same_bits(v, expected[k])) << "column " << k << ": " << fields[k];
  }
  const double sum = r.kinetic_translation + r.kinetic_rotation + r.bending + r.axial + r.shear +
                     r.contact + r.wall + r.gravity;
  EXPECT_TRUE(same_bits(std::strtod(fields[9].c_str(), nullptr), sum));
  // The ledger: W_fracture, W_contact, W_filter, E_balance, n_broken, n_fragments, W_boundary.
  EXPECT_TRUE(same_bits(std::strtod(fields[16].c_str(), nullptr), r.fracture_work));
  EXPECT_TRUE(same_bits(std::strtod(fields[17].c_str(), nullptr), r.contact_work));
  EXPECT_TRUE(same_bits(std::strtod(fields[18].c_str(), nullptr), r.filter_work));
  EXPECT_TRUE(same_bits(std::strtod(fields[19].c_str(), nullptr),
                        sum + r.fracture_work + r.contact_work + r.filter_work + r.boundary_work));
  EXPECT_EQ(fields[20], "17");
  EXPECT_EQ(fields[21], "4");
  EXPECT_TRUE(same_bits(std::strtod(fields[22].c_str(), nullptr), r.boundary_work));
}

TEST(EnergyTable, WritesHeaderAndRows) {
  const fs::path dir = fresh_folder("energy");
  const fs::path file = dir / "energy.csv";
  EnergyReport a = sample_report();
  EnergyReport b = sample_report();
  b.time = 0.2;
  {
    EnergyTable table(file);
    EXPECT_EQ(table.path(), file);
    table.write(a);
    // Flushed per row: readable before the table is closed.
    EXPECT_EQ(read_text(file), energy_table_header() + "\n" + energy_table_row(a) + "\n");
    table.write(b);
  }
  EXPECT_EQ(read_text(file), energy_table_header() + "\n" + energy_table_row(a) + "\n" +
                                 energy_table_row(b) + "\n");
  fs::remove_all(dir);
}

TEST(EnergyTable, UnopenableFileThrowsNamingPath) {
  const fs::path dir = fresh_folder("energy_bad");
  const fs::path file = dir / "no_such_folder" / "energy.csv";
  try {
    EnergyTable table(file);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

namespace {

/// Five particles moved, spun and rotated away from their reference state,
/// and three bonds.
struct Scene {
  ParticleStore store;
  BondList bonds;

  Scene() {
    for (int k = 0; k < 5; ++k) {
      ParticleSpec s;
      s.position = Vec3(1.0 * k, 0.5 * (k % 2), -0.25 * k);
      s.attitude = Quat(Eigen::AngleAxisd(0.3 * k, Vec3(1.0, 2.0, 3.0).normalized()));
      s.diameter = 0.9 + 0.05 * k;
      store.add(s);
    }
    for (std::size_t k = 0; k < store.size(); ++k) {
      const double a = 0.1 * static_cast<double>(k + 1);
      store.velocity[k] = Vec3(a, -2.0 * a, 1.0 / (3.0 + a));
      store.angular_velocity[k] = Vec3(std::sin(a), std::cos(a), -a * a);
      store.position[k] += Vec3(0.01 * a, -0.02 * a * a, 0.003);
      store.attitude[k] =
          Quat(Eigen::AngleAxisd(0.2 + a, Vec3(-1.0, a, 0.5).normalized())) * store.attitude[k];
    }
    bonds.add(store, 0, 1, BondStiffness{1.0, 2.0, 3.0});
    bonds.add(store, 1, 2, BondStiffness{1.0, 2.0, 3.0});
    bonds.add(store, 3, 4, BondStiffness{1.0, 2.0, 3.0});
  }

  /// Moves everything a little, for a second frame.
  void advance() {
    for (std::size_t k = 0; k < store.size(); ++k) {
      store.position[k] += 0.05 * store.velocity[k];
      store.velocity[k] *= 1.5;
      store.attitude[k] = Quat(Eigen::AngleAxisd(0.07, Vec3::UnitZ())) * store.attitude[k];
    }
  }
};

vtkSmartPointer<vtkPolyData> read_vtp(const fs::path& p) {
  auto reader = vtkSmartPointer<vtkXMLPolyDataReader>::New();
  reader->SetFileName(p.c_str());
  reader->Update();
  EXPECT_EQ(reader->GetErrorCode(), 0u) << p;
  return reader->GetOutput();
}

/// Compares a 3-component array with one vector per particle, exactly.
void expect_vectors(vtkDataArray* a, const std::vector<Vec3>& v, const char* name) {
  ASSERT_NE(a, nullptr) << name;
  ASSERT_EQ(a->GetNumberOfComponents(), 3) << name;
  ASSERT_EQ(a->GetNumberOfTuples(), static_cast<vtkIdType>(v.size())) << name;
  for (std::size_t i = 0; i < v.size(); ++i)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(a->GetComponent(static_cast<vtkIdType>(i), c), v[i][c])
          << name << "[" << i << "][" << c << "]";
}

/// Checks one frame's two files against the scene.
void check_frame(const fs::path& dir, int frame, const Scene& scene) {
  char index[16];
  std::snprintf(index, sizeof index, "%06d", frame);
  const fs::path pfile = dir / ("particles_" + std::string(index) + ".vtp");
  const fs::path bfile = dir / ("bonds_" + std::string(index) + ".vtp");
  ASSERT_TRUE(fs::exists(pfile)) << pfile;
  ASSERT_TRUE(fs::exists(bfile)) << bfile;
  for (const fs::path& f : {pfile, bfile}) {
    const std::string text = read_text(f);
    EXPECT_NE(text.find("format=\"appended\""), std::string::npos) << f;
    EXPECT_NE(text.find("compressor=\"vtkZLibDataCompressor\""), std::string::npos) << f;
    EXPECT_NE(text.find("encoding=\"raw\""), std::string::npos) << f;
  }
  const ParticleStore& s = scene.store;
  const std::size_t n = s.size();

  // Independent expectations.
  std::vector<Vec3> rotation(n), displacement(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Quat q = s.attitude[i] * s.reference_attitude[i].conjugate();
    const Eigen::AngleAxisd aa(q);  // Eigen: angle in [0, pi]
    rotation[i] = aa.angle() * aa.axis();
    displacement[i] = s.position[i] - s.reference_position[i];
  }

  const auto particles = read_vtp(pfile);
  ASSERT_EQ(particles->GetNumberOfPoints(), static_cast<vtkIdType>(n));
  ASSERT_EQ(particles->GetNumberOfVerts(), static_cast<vtkIdType>(n));
  EXPECT_EQ(particles->GetNumberOfLines(), 0);
  expect_vectors(particles->GetPoints()->GetData(), s.position, "points");
  vtkPointData* pd = particles->GetPointData();
  vtkDataArray* id = pd->GetArray("id");
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->GetDataType(), VTK_INT);
  vtkDataArray* diameter = pd->GetArray("diameter");
  ASSERT_NE(diameter, nullptr);
  EXPECT_EQ(diameter->GetDataType(), VTK_DOUBLE);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(id->GetComponent(static_cast<vtkIdType>(i), 0), static_cast<double>(s.id[i]));
    EXPECT_EQ(diameter->GetComponent(static_cast<vtkIdType>(i), 0), 2.0 * s.radius[i]);
  }
  expect_vectors(pd->GetArray("velocity"), s.velocity, "velocity");
  expect_vectors(pd->GetArray("angular_velocity"), s.angular_velocity, "angular_velocity");
  expect_vectors(pd->GetArray("displacement"), displacement, "displacement");
  // The rotation vector is recomputed by another formula: equal to rounding.
  vtkDataArray* rv = pd->GetArray("rotation_vector");
  ASSERT_NE(rv, nullptr);
  ASSERT_EQ(rv->GetNumberOfComponents(), 3);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_GT(rotation[i].norm(), 0.1);  // the attitudes really differ from the reference
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(rv->GetComponent(static_cast<vtkIdType>(i), c), rotation[i][c], 1e-13);
  }

  const BondList& b = scene.bonds;
  const auto network = read_vtp(bfile);
  ASSERT_EQ(network->GetNumberOfPoints(), static_cast<vtkIdType>(n));
  ASSERT_EQ(network->GetNumberOfLines(), static_cast<vtkIdType>(b.size()));
  EXPECT_EQ(network->GetNumberOfVerts(), 0);
  expect_vectors(network->GetPoints()->GetData(), s.position, "bond points");
  vtkDataArray* strain = network->GetCellData()->GetArray("axial_strain");
  vtkDataArray* bend = network->GetCellData()->GetArray("bend_angle");
  ASSERT_NE(strain, nullptr);
  ASSERT_NE(bend, nullptr);
  vtkCellArray* lines = network->GetLines();
  vtkNew<vtkIdList> ends;
  for (std::size_t k = 0; k < b.size(); ++k) {
    lines->GetCellAtId(static_cast<vtkIdType>(k), ends);
    ASSERT_EQ(ends->GetNumberOfIds(), 2);
    const std::uint32_t i = b.first[k], j = b.second[k];
    EXPECT_EQ(ends->GetId(0), static_cast<vtkIdType>(i));
    EXPECT_EQ(ends->GetId(1), static_cast<vtkIdType>(j));
    const double r0 = (s.reference_position[i] - s.reference_position[j]).norm();
    const double r = (s.position[i] - s.position[j]).norm();
    EXPECT_NEAR(strain->GetComponent(static_cast<vtkIdType>(k), 0), r / r0 - 1.0, 1e-14);
    // |theta_ij| is the angle of Q_i Q_j^T = R_i R_i0^T R_j0 R_j^T.
    const Mat3 qi = (s.attitude[i] * s.reference_attitude[i].conjugate()).toRotationMatrix();
    const Mat3 qj = (s.attitude[j] * s.reference_attitude[j].conjugate()).toRotationMatrix();
    const Mat3 rel = qi * qj.transpose();
    const double angle = Eigen::AngleAxisd(rel).angle();
    EXPECT_GT(angle, 1e-3);
    EXPECT_NEAR(bend->GetComponent(static_cast<vtkIdType>(k), 0), angle, 1e-12);
  }
}

}  // namespace

TEST(VtkSeriesWriter, FramesReadBackExactly) {
  const fs::path dir = fresh_folder("vtk") / "nested" / "out";
  Scene scene;
  VtkSeriesWriter writer(dir);
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(writer.folder(), dir);
  EXPECT_EQ(writer.frame_count(), 0u);
  const double t0 = 0.0, t1 = 1.0 / 3.0;

  writer.write_frame(t0, scene.store, scene.bonds);
  EXPECT_EQ(writer.frame_count(), 1u);
  writer.flush();  // the files are written in the background
  check_frame(dir, 0, scene);

  scene.advance();
  writer.write_frame(t1, scene.store, scene.bonds);
  EXPECT_EQ(writer.frame_count(), 2u);
  writer.flush();
  check_frame(dir, 1, scene);

  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
    EXPECT_EQ(name.find("probe"), std::string::npos) << name;
  }
  for (const char* stem : {"particles", "bonds"}) {
    const std::string pvd = read_text(dir / (std::string(stem) + ".pvd"));
    EXPECT_NE(pvd.find("<VTKFile type=\"Collection\""), std::string::npos) << pvd;
    char line[256];
    for (int k = 0; k < 2; ++k) {
      std::snprintf(line, sizeof line, "<DataSet timestep=\"%.16e\" part=\"0\" file=\"%s_%06d.vtp\"/>",
                    k == 0 ? t0 : t1, stem, k);
      EXPECT_NE(pvd.find(line), std::string::npos) << line << "\n" << pvd;
    }
    // The time parses back exactly.
    const std::size_t at = pvd.rfind("timestep=\"") + 10;
    EXPECT_TRUE(same_bits(std::strtod(pvd.c_str() + at, nullptr), t1));
  }
  fs::remove_all(dir.parent_path().parent_path());
}

// Issue 22, item 9: on a full disk one rank's piece was never written and
// particles.pvd listed the frame anyway (ParaView read it as empty). A frame
// is listed once every piece of it is on disk.
TEST(VtkSeriesWriter, ParallelFramesAreListedOnlyWhenEveryPieceIsOnDisk) {
  const fs::path dir = fresh_folder("vtk_missing_piece");
  Scene scene;
  const auto listed = [&] {
    const std::string pvd = read_text(dir / "particles.pvd");
    std::size_t count = 0;
    for (std::size_t at = pvd.find("<DataSet"); at != std::string::npos; at = pvd.find("<DataSet", at + 1)) ++count;
    return count;
  };
  VtkSeriesWriter w0(dir, VtkSeriesWriter::kDefaultCompressionLevel, VtkPieces{0, 3});
  VtkSeriesWriter w1(dir, VtkSeriesWriter::kDefaultCompressionLevel, VtkPieces{1, 3});
  VtkSeriesWriter w2(dir, VtkSeriesWriter::kDefaultCompressionLevel, VtkPieces{2, 3});
  w0.write_frame(0.25, scene.store, scene.bonds);
  w1.write_frame(0.25, ParticleStore{}, BondList{});
  w0.flush();
  w1.flush();
  w0.relist();
  EXPECT_EQ(listed(), 0u);  // piece 2 is missing
  EXPECT_EQ(read_text(dir / "bonds.pvd").find("<DataSet"), std::string::npos);
  w2.write_frame(0.25, ParticleStore{}, BondList{});
  w2.flush();
  w0.relist();
  EXPECT_EQ(listed(), 1u);
  // The next frame lists the ones before it that became whole.
  w0.write_frame(0.5, scene.store, scene.bonds);
  w0.flush();
  EXPECT_EQ(listed(), 1u);
  w1.write_frame(0.5, ParticleStore{}, BondList{});
  w2.write_frame(0.5, ParticleStore{}, BondList{});
  w1.flush();
  w2.flush();
  w0.relist();
  EXPECT_EQ(listed(), 2u);
}

TEST(VtkSeriesWriter, ParallelPiecesReadBackAsOneDataset) {
  // Three writers of one series, as three MPI ranks: piece 0 shows the
  // particles of even slot and the bonds from them, piece 1 the others,
  // piece 2 holds no particle at all. VTK's parallel reader (ParaView's)
  // gives every particle once, with its values, and every bond once.
  const fs::path dir = fresh_folder("vtk_pieces");
  Scene scene;
  const std::size_t n = scene.store.size();
  std::vector<std::uint32_t> broken(n), fragment(n);
  for (std::size_t i = 0; i < n; ++i) {
    broken[i] = static_cast<std::uint32_t>(i % 3);
    fragment[i] = static_cast<std::uint32_t>(10 + i);
  }
  std::vector<std::uint8_t> shown[2], bond_shown[2];
  for (int p = 0; p < 2; ++p) {
    for (std::size_t i = 0; i < n; ++i) shown[p].push_back(i % 2 == static_cast<std::size_t>(p) ? 1 : 0);
    for (std::size_t b = 0; b < scene.bonds.size(); ++b) bond_shown[p].push_back(shown[p][scene.bonds.first[b]]);
  }
  {
    VtkSeriesWriter w0(dir, VtkSeriesWriter::kDefaultCompressionLevel, VtkPieces{0, 3});
    VtkSeriesWriter w1(dir, VtkSeriesWriter::kDefaultCompressionLevel, VtkPieces{1, 3});
    VtkSeriesWriter w2(dir, VtkSeriesWriter::kDefaultCompressionLevel, VtkPieces{2, 3});
    for (int p = 0; p < 2; ++p) {
      FrameExtras e;
      e.bond_live = bond_shown[p];
      e.broken = broken;
      e.fragment = fragment;
      e.shown = shown[p];
      e.fracture = true;
      (p == 0 ? w0 : w1).write_frame(0.25, scene.store, scene.bonds, e);
    }
    FrameExtras none;
    none.fracture = true;
    w2.write_frame(0.25, ParticleStore{}, BondList{}, none);
    w0.flush();
    w1.flush();
    w2.flush();
    w0.relist();  // every writer has flushed (the run loop calls it then)
  }
  EXPECT_EQ(vtk_frame_files(dir, "particles", 0),
            (std::vector<std::string>{"particles_000000.pvtp", "particles_000000_0.vtp", "particles_000000_1.vtp",
                                      "particles_000000_2.vtp"}));
  EXPECT_NE(read_text(dir / "particles.pvd").find("file=\"particles_000000.pvtp\""), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "particles_000000.vtp"));

  vtkNew<vtkXMLPPolyDataReader> reader;
  reader->SetFileName((dir / "particles_000000.pvtp").c_str());
  reader->Update();
  vtkPolyData* cloud = reader->GetOutput();
  ASSERT_EQ(cloud->GetNumberOfPoints(), static_cast<vtkIdType>(n));
  vtkDataArray* id = cloud->GetPointData()->GetArray("id");
  vtkDataArray* n_broken = cloud->GetPointData()->GetArray("n_broken");
  vtkDataArray* label = cloud->GetPointData()->GetArray("fragment");
  vtkDataArray* velocity = cloud->GetPointData()->GetArray("velocity");
  ASSERT_TRUE(id && n_broken && label && velocity);
  std::vector<int> seen(n, 0);
  for (vtkIdType k = 0; k < cloud->GetNumberOfPoints(); ++k) {
    const auto i = static_cast<std::size_t>(id->GetComponent(k, 0));
    ASSERT_LT(i, n);
    ++seen[i];
    double x[3];
    cloud->GetPoint(k, x);
    for (int c = 0; c < 3; ++c) {
      EXPECT_TRUE(same_bits(x[c], scene.store.position[i][c])) << "particle " << i;
      EXPECT_TRUE(same_bits(velocity->GetComponent(k, c), scene.store.velocity[i][c])) << "particle " << i;
    }
    EXPECT_EQ(n_broken->GetComponent(k, 0), static_cast<double>(broken[i]));
    EXPECT_EQ(label->GetComponent(k, 0), static_cast<double>(fragment[i]));
  }
  EXPECT_EQ(seen, std::vector<int>(n, 1));

  vtkNew<vtkXMLPPolyDataReader> bonds_reader;
  bonds_reader->SetFileName((dir / "bonds_000000.pvtp").c_str());
  bonds_reader->Update();
  vtkPolyData* network = bonds_reader->GetOutput();
  ASSERT_EQ(network->GetNumberOfLines(), static_cast<vtkIdType>(scene.bonds.size()));
  ASSERT_TRUE(network->GetCellData()->GetArray("axial_strain"));
  // Each line joins the positions of one bond's ends, every bond once.
  std::vector<int> bond_seen(scene.bonds.size(), 0);
  vtkNew<vtkIdList> ends;
  for (vtkIdType c = 0; c < network->GetNumberOfCells(); ++c) {
    network->GetCellPoints(c, ends);
    ASSERT_EQ(ends->GetNumberOfIds(), 2);
    double a[3], b[3];
    network->GetPoint(ends->GetId(0), a);
    network->GetPoint(ends->GetId(1), b);
    for (std::size_t k = 0; k < scene.bonds.size(); ++k) {
      const Vec3& xi = scene.store.position[scene.bonds.first[k]];
      const Vec3& xj = scene.store.position[scene.bonds.second[k]];
      if (same_bits(a[0], xi[0]) && same_bits(a[1], xi[1]) && same_bits(b[0], xj[0]) && same_bits(b[1], xj[1]))
        ++bond_seen[k];
    }
  }
  EXPECT_EQ(bond_seen, std::vector<int>(scene.bonds.size(), 1));
  fs::remove_all(dir);
}

TEST(VtkSeriesWriter, ImpossibleFolderThrowsNamingIt) {
  const fs::path dir = fresh_folder("vtk_bad");
  const fs::path blocker = dir / "a_regular_file";
  std::ofstream(blocker) << "not a folder\n";
  const fs::path target = blocker / "frames";
  try {
    VtkSeriesWriter writer(target);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

namespace {

/// The time of frame k in the tests below: distinct, not round in decimal.
double frame_time(int k) { return 0.1 * k + 1.0 / 7.0; }

/// Both .pvd files list frames 0..count-1 with frame_time(k), and nothing else.
void expect_collections(const fs::path& dir, int count) {
  for (const char* stem : {"particles", "bonds"}) {
    const std::string pvd = read_text(dir / (std::string(stem) + ".pvd"));
    char line[256];
    std::size_t at = 0;
    for (int k = 0; k < count; ++k) {
      std::snprintf(line, sizeof line,
                    "<DataSet timestep=\"%.16e\" part=\"0\" file=\"%s_%06d.vtp\"/>",
                    frame_time(k), stem, k);
      const std::size_t found = pvd.find(line, at);
      EXPECT_NE(found, std::string::npos) << line << "\n" << pvd;
      if (found != std::string::npos) at = found;  // in order
    }
    std::size_t listed = 0;
    for (std::size_t p = pvd.find("<DataSet"); p != std::string::npos; p = pvd.find("<DataSet", p + 1))
      ++listed;
    EXPECT_EQ(listed, static_cast<std::size_t>(count)) << pvd;
  }
}

/// RangeMin and RangeMax that the XML header of `file` gives the array
/// `name` (for a vector array: the range of its magnitudes).
std::pair<double, double> header_range(const fs::path& file, const std::string& name) {
  const std::string text = read_text(file);
  const std::size_t at = text.find("Name=\"" + name + "\"");
  EXPECT_NE(at, std::string::npos) << name;
  if (at == std::string::npos) return {NAN, NAN};
  const auto value = [&](const char* key) {
    const std::size_t k = text.find(key, at);
    return k == std::string::npos ? NAN : std::strtod(text.c_str() + k + std::strlen(key), nullptr);
  };
  return {value("RangeMin=\""), value("RangeMax=\"")};
}

/// The header ranges of a frame's velocity and axial_strain are those of the
/// scene it was taken from (not stale values of the buffers' previous frame).
void check_header_ranges(const fs::path& dir, int frame, const Scene& scene) {
  char index[16];
  std::snprintf(index, sizeof index, "%06d", frame);
  double lo = INFINITY, hi = -INFINITY;
  for (const Vec3& v : scene.store.velocity) {
    lo = std::min(lo, v.norm());
    hi = std::max(hi, v.norm());
  }
  const auto velocity = header_range(dir / ("particles_" + std::string(index) + ".vtp"), "velocity");
  EXPECT_NEAR(velocity.first, lo, 1e-9 * hi);
  EXPECT_NEAR(velocity.second, hi, 1e-9 * hi);
  lo = INFINITY;
  hi = -INFINITY;
  const ParticleStore& s = scene.store;
  for (std::size_t k = 0; k < scene.bonds.size(); ++k) {
    const std::uint32_t i = scene.bonds.first[k], j = scene.bonds.second[k];
    const double strain = (s.position[i] - s.position[j]).norm() / scene.bonds.rest_length[k] - 1.0;
    lo = std::min(lo, strain);
    hi = std::max(hi, strain);
  }
  const auto strain = header_range(dir / ("bonds_" + std::string(index) + ".vtp"), "axial_strain");
  EXPECT_NEAR(strain.first, lo, 1e-9 * std::abs(lo));
  EXPECT_NEAR(strain.second, hi, 1e-9 * std::abs(hi));
}

}  // namespace

TEST(VtkSeriesWriter, BackToBackFramesKeepTheirSnapshot) {
  const fs::path dir = fresh_folder("vtk_snapshots");
  Scene scene;
  std::vector<Scene> shown;  // the scene as each frame was taken
  {
    VtkSeriesWriter writer(dir);
    constexpr int frames = 4;
    for (int k = 0; k < frames; ++k) {
      writer.write_frame(frame_time(k), scene.store, scene.bonds);
      EXPECT_EQ(writer.frame_count(), static_cast<std::size_t>(k + 1));
      shown.push_back(scene);
      // Changed at once, while the frame is (in all likelihood) still being
      // written: the files must show the snapshot, not this.
      scene.advance();
    }
    // The last frame's source disappears before it is written.
    scene.store = ParticleStore();
    scene.bonds = BondList();
    writer.flush();
    EXPECT_EQ(writer.frame_count(), static_cast<std::size_t>(frames));
    for (int k = 0; k < frames; ++k) {
      SCOPED_TRACE("frame " + std::to_string(k));
      check_frame(dir, k, shown[static_cast<std::size_t>(k)]);
      check_header_ranges(dir, k, shown[static_cast<std::size_t>(k)]);
    }
    expect_collections(dir, frames);
    writer.flush();  // nothing in flight: a no-op
  }
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  fs::remove_all(dir);
}

TEST(VtkSeriesWriter, FlushListsEveryFrameInCollections) {
  const fs::path dir = fresh_folder("vtk_pvd");
  Scene scene;
  VtkSeriesWriter writer(dir, 9);  // any level gives the same values
  EXPECT_EQ(writer.compression_level(), 9);
  constexpr int frames = 7;
  for (int k = 0; k < frames; ++k) {
    writer.write_frame(frame_time(k), scene.store, scene.bonds);
    scene.advance();
  }
  writer.flush();
  expect_collections(dir, frames);
  for (int k = 0; k < frames; ++k) {
    char index[16];
    std::snprintf(index, sizeof index, "%06d", k);
    EXPECT_TRUE(fs::exists(dir / ("particles_" + std::string(index) + ".vtp"))) << k;
    EXPECT_TRUE(fs::exists(dir / ("bonds_" + std::string(index) + ".vtp"))) << k;
  }
  fs::remove_all(dir);
}

TEST(VtkSeriesWriter, EmptySceneWritesEmptyFrame) {
  const fs::path dir = fresh_folder("vtk_empty");
  VtkSeriesWriter writer(dir);
  writer.write_frame(frame_time(0), ParticleStore(), BondList());
  writer.flush();
  const auto particles = read_vtp(dir / "particles_000000.vtp");
  EXPECT_EQ(particles->GetNumberOfPoints(), 0);
  const auto network = read_vtp(dir / "bonds_000000.vtp");
  EXPECT_EQ(network->GetNumberOfLines(), 0);
  expect_collections(dir, 1);
  fs::remove_all(dir);
}

TEST(VtkSeriesWriter, BondOutsideStoreThrowsAtOnce) {
  const fs::path dir = fresh_folder("vtk_bond_range");
  Scene scene;  // bonds 0-1, 1-2, 3-4
  ParticleStore three;
  for (int k = 0; k < 3; ++k) three.add(ParticleSpec{});
  VtkSeriesWriter writer(dir);
  EXPECT_THROW(writer.write_frame(0.0, three, scene.bonds), std::invalid_argument);
  EXPECT_EQ(writer.frame_count(), 0u);
  EXPECT_NO_THROW(writer.flush());
  writer.write_frame(frame_time(0), scene.store, scene.bonds);
  writer.flush();
  check_frame(dir, 0, scene);
  fs::remove_all(dir);
}

TEST(VtkSeriesWriter, BadCompressionLevelThrows) {
  const fs::path dir = fresh_folder("vtk_level");
  EXPECT_THROW(VtkSeriesWriter(dir, 0), std::invalid_argument);
  EXPECT_THROW(VtkSeriesWriter(dir, 10), std::invalid_argument);
  fs::remove_all(dir);
}

TEST(VtkSeriesWriter, FailedBackgroundWriteSurfacesAtFlush) {
  const fs::path dir = fresh_folder("vtk_gone");
  const fs::path out = dir / "out";
  Scene scene;
  VtkSeriesWriter writer(out);
  writer.write_frame(frame_time(0), scene.store, scene.bonds);
  writer.flush();
  expect_collections(out, 1);
  // The folder disappears after construction (and the first frame).
  fs::remove_all(out);
  EXPECT_NO_THROW(writer.write_frame(frame_time(1), scene.store, scene.bonds));
  EXPECT_EQ(writer.frame_count(), 2u);
  try {
    writer.flush();
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((out / "particles_000001.vtp").string()), std::string::npos) << what;
  }
  // The failed frame is not part of the series; the error is reported once.
  EXPECT_EQ(writer.frame_count(), 1u);
  EXPECT_NO_THROW(writer.flush());
  // Once the folder is back, the series goes on with the failed frame's number.
  fs::create_directories(out);
  writer.write_frame(frame_time(1), scene.store, scene.bonds);
  writer.flush();
  EXPECT_TRUE(fs::exists(out / "particles_000001.vtp"));
  EXPECT_TRUE(fs::exists(out / "bonds_000001.vtp"));
  EXPECT_EQ(writer.frame_count(), 2u);
  fs::remove_all(dir);
}

TEST(VtkSeriesWriter, FailedBackgroundWriteSurfacesAtNextFrame) {
  const fs::path dir = fresh_folder("vtk_gone_next");
  const fs::path out = dir / "out";
  Scene scene;
  {
    VtkSeriesWriter writer(out);
    // A regular file where the folder was: nothing can be created in it.
    fs::remove_all(out);
    std::ofstream(out) << "not a folder\n";
    writer.write_frame(frame_time(0), scene.store, scene.bonds);
    try {
      writer.write_frame(frame_time(1), scene.store, scene.bonds);
      FAIL() << "expected std::runtime_error";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("particles_000000.vtp"), std::string::npos) << what;
    }
    // Neither frame is in the series: the second was refused.
    EXPECT_EQ(writer.frame_count(), 0u);
    EXPECT_NO_THROW(writer.flush());
    // A failure still in flight at destruction is reported, not thrown.
    writer.write_frame(frame_time(0), scene.store, scene.bonds);
  }
  fs::remove_all(dir);
}
