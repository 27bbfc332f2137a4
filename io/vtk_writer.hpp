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
///                         and, for scenes whose bonds can fail
///                         (FrameExtras): n_broken (failed bonds of the
///                         particle, int), fragment (the smallest particle id
///                         of its live-bond fragment, int; stable from frame
///                         to frame, for colouring)
///   bonds_NNNNNN.vtp      failed bonds are left out of the bond cells
///   particles.pvd, bonds.pvd   collections with the frame times
///
/// Parallel series (one writer per MPI rank, VtkPieces): each rank writes
/// its piece of a frame, particles_NNNNNN_K.vtp and bonds_NNNNNN_K.vtp (K =
/// the rank), and rank 0 also writes particles_NNNNNN.pvtp and
/// bonds_NNNNNN.pvtp, which name every piece, and the .pvd collections, which
/// list the .pvtp files: ParaView opens particles.pvd as one dataset. A
/// piece's particles file holds the particles FrameExtras::shown marks (the
/// rank's own, so the pieces hold every particle once); its bonds file the
/// bonds it shows, over those points plus the other ends of its bonds.
/// Every value is a double (the id an int) and is stored exactly. Cell
/// connectivity and offsets are Int32 while the indices fit, Int64 beyond.
/// Every file is written under a temporary name and renamed when complete, so
/// a reader or a crash never sees a half-written file. The zlib streams are
/// made by libdeflate when the build found it (io/CMakeLists.txt), else by
/// VTK's zlib; either way the header says vtkZLibDataCompressor and any VTK
/// reader (ParaView) decompresses them.
///
/// Threading contract (frames are written in the background, so that the
/// output of a large scene overlaps the time stepping):
///  - write_frame() copies what the frame needs out of the particle store and
///    the bond list (a snapshot, in parallel with dem::parallel_for_ranges;
///    the same for any thread count) and returns; the files are then written
///    by a background thread (two while the two .vtp files are compressed).
///    The caller may change, reorder or destroy the store and the bonds as
///    soon as write_frame() returns.
///  - At most one frame is in flight: write_frame() first waits for the
///    previous frame to finish.
///  - A frame's files (its two .vtp files, then both .pvd collections listing
///    it) are complete only once the frame is finished: call flush() before
///    reading the output folder or printing a run summary that points to it.
///  - An error of a background write is never lost: it is rethrown, as the
///    std::runtime_error naming the file, by the next write_frame() (which
///    then takes no snapshot) or flush(). The failed frame is dropped from
///    the series (frame_count() goes back by one and the next frame reuses
///    its number), as a synchronous failure did. The destructor waits for the
///    frame in flight and reports its failure on std::cerr without throwing:
///    call flush() before the writer goes out of scope to handle it.
///  - A VtkSeriesWriter is not itself thread-safe: call it from one thread.
///
/// Memory: the snapshot lives in the very buffers VTK writes from (no copy
/// between them), kept from one frame to the next so that later frames touch
/// no fresh memory: 172 bytes per particle (positions, the five point arrays,
/// relative attitudes, vertex cells) and 28 bytes per bond (ends, offsets,
/// strain, bend angle) with Int32 cells (+8 and +12 with Int64 cells). While
/// a frame is written VTK adds a cell map of 8 bytes per cell, freed after
/// each frame, and its 32 KiB compression blocks.
///
/// Speed (2 shared cores, 10^6 particles and 5.9x10^6 bonds, level 1,
/// bench/bench_vtk.cpp): write_frame() holds the caller up for about 0.015 s
/// (0.4 s for the first frame, whose buffers are new); the background write
/// takes about 1.3 s (2.3 s of CPU; 2.8 s and 5.2 s with VTK's zlib instead
/// of libdeflate); the files are about 123 MB and 135 MB.

#include <cstddef>
#include <exception>
#include <filesystem>
#include <memory>
#include <span>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "bonds/bond_list.hpp"
#include "core/particle_store.hpp"

namespace dem {

/// What a frame shows of fracture (docs/model.md §10.4); every span may be empty.
struct FrameExtras {
  std::span<const std::uint8_t> bond_live;  ///< per bond of `bonds`: 0 = not shown (failed, or another piece's); empty: all shown
  std::span<const std::uint32_t> broken;    ///< per particle slot: its failed bonds (point data "n_broken"); empty: not written
  std::span<const std::uint32_t> fragment;  ///< per particle slot: fragment label (point data "fragment"); empty: not written
  std::span<const std::uint8_t> shown;      ///< per particle slot: 1 = in the particles file; empty: all
  /// Write n_broken and fragment although both spans are empty (a piece of
  /// no particles: every piece of a series then has the same arrays).
  bool fracture = false;
};

/// This writer's piece of a parallel series: piece `piece` of `count`
/// (0 <= piece < count). count = 1: an ordinary series of .vtp files.
struct VtkPieces {
  int piece = 0;
  int count = 1;
};

/// The files that make up frame `frame` of the series `stem` ("particles"
/// or "bonds") in `folder`: stem_NNNNNN.vtp, or stem_NNNNNN.pvtp and then
/// the pieces it names. Throws std::runtime_error naming the file for a
/// frame that is not there, a .pvtp that cannot be read or a missing piece.
std::vector<std::string> vtk_frame_files(const std::filesystem::path& folder, const char* stem, std::size_t frame);

class VtkSeriesWriter {
 public:
  /// zlib level of the frames: 1 (fastest) to 9 (smallest). Level 1 writes a
  /// large frame 1.5 times as fast as level 6 with libdeflate (4 times with
  /// zlib), for files of double-precision data only about 5 % larger.
  static constexpr int kDefaultCompressionLevel = 1;

  /// Creates the folder if needed. Throws std::runtime_error naming the
  /// folder if it cannot be created or is not writable, std::invalid_argument
  /// if compression_level is not in 1..9 or `pieces` is not a valid piece.
  explicit VtkSeriesWriter(std::filesystem::path folder,
                           int compression_level = kDefaultCompressionLevel, VtkPieces pieces = {});

  /// Waits for the frame in flight; a failure is reported on std::cerr.
  ~VtkSeriesWriter();

  VtkSeriesWriter(const VtkSeriesWriter&) = delete;
  VtkSeriesWriter& operator=(const VtkSeriesWriter&) = delete;

  /// Frame number frame_count() at time t: waits for the previous frame (and
  /// rethrows its error, writing nothing), takes a snapshot of `particles`
  /// and `bonds`, and starts writing it in the background; the .pvd files
  /// are updated when its files are complete. Throws std::invalid_argument
  /// if a bond names a particle the store does not have.
  /// `extras` (sizes: bonds, particles, particles, particles, or empty; else
  /// std::invalid_argument) adds what fracture changes and which particles
  /// the particles file holds.
  void write_frame(double t, const ParticleStore& particles, const BondList& bonds,
                   const FrameExtras& extras = {});

  /// Waits until the frame in flight (if any) is on disk, with both .pvd
  /// files listing it (a parallel series: listing the frames whose every
  /// piece is on disk, see relist()). Throws std::runtime_error naming the
  /// file if writing it failed (the error is then cleared).
  void flush();

  /// A parallel series (pieces().count > 1), piece 0: the .pvd collections
  /// list a frame only once every rank's piece of it is on disk (a rank that
  /// could not write its piece, a full disk, leaves the frame unlisted, and
  /// so do all after it). Frames whose pieces other ranks were still writing
  /// when the collections were last written are listed by the next frame or
  /// by this call, made once every rank has flushed (the run's end, before a
  /// checkpoint). Does nothing for other writers.
  void relist();

  /// Continues a series whose first frames (at these times) an earlier run
  /// wrote into the folder: the next frame gets number times.size(), and the
  /// .pvd collections list the earlier frames too (each as the .pvtp or the
  /// .vtp the folder holds: the earlier run may have used another number of
  /// ranks); they are rewritten at once to list exactly those frames. Only before the first write_frame();
  /// throws std::logic_error after it, std::runtime_error naming the file if
  /// a collection cannot be written.
  void resume(std::vector<double> times);

  /// Times of the frames accepted so far.
  const std::vector<double>& frame_times() const { return times_; }

  /// Frames accepted by write_frame(), including the one in flight.
  std::size_t frame_count() const { return times_.size(); }
  const std::filesystem::path& folder() const { return folder_; }
  int compression_level() const { return compression_level_; }
  const VtkPieces& pieces() const { return pieces_; }

 private:
  struct FrameJob;  ///< a frame's snapshot and its writing (VTK types: in the .cpp)

  /// Joins the background job, if any; returns its error (or null).
  std::exception_ptr wait();

  std::filesystem::path folder_;
  int compression_level_;
  VtkPieces pieces_;
  std::vector<double> times_;       ///< times of the accepted frames
  std::vector<std::uint8_t> parallel_;  ///< per frame: written as a parallel frame (.pvtp)
  std::size_t listed_ = 0;          ///< the collections list frames [0, listed_), every piece on disk
  std::unique_ptr<FrameJob> job_;   ///< the frame in flight, or the last one's buffers
  std::thread worker_;              ///< writing job_, if joinable
  std::exception_ptr error_;        ///< set by the worker, read after join()
};

}  // namespace dem
