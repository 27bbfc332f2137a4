#pragma once
/// \file checkpoint.hpp
/// Binary checkpoints: everything a run needs to continue bit for bit.
///
/// File layout (all fields little-endian, doubles stored as their IEEE-754
/// bits, so a round trip is exact):
///
///     offset  size  field
///          0     8  magic "DEMCKPT\0"
///          8     4  format version (uint32, 1)
///         12     4  reserved (uint32, 0)
///         16     8  payload length L in bytes (uint64)
///         24     4  CRC-32 of the payload (zlib crc32, uint32)
///         28     4  reserved (uint32, 0)
///         32     L  payload
///
/// Payload, in order (u32/u64 unsigned integers, f64 doubles, vec3 three
/// f64 x, y, z, quat four f64 in Eigen's coeffs() order x, y, z, w; a string
/// is a u64 byte count and the bytes; an array is a u64 count and the items):
///
///     string scene_path, string scene_text
///     u32 integrator map (23, 25 or 27), f64 time_step, u64 step_count
///     u64 N particles, then N each of: vec3 position, vec3 velocity,
///       quat attitude, vec3 angular_velocity, vec3 force, vec3 moment,
///       f64 mass, f64 inertia, f64 radius, vec3 reference_position,
///       quat reference_attitude, u32 id   (array by array, not interleaved)
///     u64 B bonds, then B each of: u32 first, u32 second, f64 rest_length,
///       vec3 rest_direction, u32 type   (array by array)
///     u64 T stiffness types, T times f64 bending, axial, shear
///     f64 contact stiffness, f64 skin, u8 reorder_on_rebuild (0 or 1)
///     u64 W walls, W times vec3 point, vec3 normal, f64 stiffness
///     vec3 gravity
///     array of vec3 neighbour_build_positions (0 or N)
///     u64 neighbour_rebuilds
///     array of f64 frame_times
///     u64 energy_rows
///
/// decode_checkpoint never reads out of bounds and never allocates more than
/// a small multiple of its input, whatever the input: it checks the header
/// (magic, version, reserved fields zero, payload length, CRC-32), every
/// count against the bytes left before allocating, the string limits (path
/// 64 KiB, text 1 GiB), and the consistency of the result: map 23/25/27,
/// h finite and > 0; positions, velocities, angular velocities and
/// reference positions finite, attitudes finite and of norm within 0.5 of
/// 1, mass, inertia and radius finite and > 0, ids a permutation of
/// 0..N-1; bond ends < N and distinct, rest lengths finite and > 0, rest
/// directions unit, types < T, stiffness types finite, >= 0 and distinct;
/// contact stiffness and skin finite and >= 0, reorder flag 0 or 1; wall
/// points finite, normals unit (as ForceField checks them), stiffnesses
/// finite and >= 0; gravity finite; 0 or N finite neighbour build positions;
/// frame times finite, >= 0 and non-decreasing; no bytes left over. Forces
/// and moments are kept as stored. It throws CheckpointError with a message
/// saying what is wrong ("truncated: ...", "corrupted: ...",
/// "inconsistent: ...", or the header messages).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/integrator.hpp"
#include "engine/scene.hpp"
#include "engine/types.hpp"

namespace dem {

/// Everything a run needs to continue exactly.
struct CheckpointState {
  std::string scene_path;  ///< the scene file the run came from, as given
  std::string scene_text;  ///< that file's whole text
  IntegratorMap map = IntegratorMap::rrp25;
  double time_step = 0.0;       ///< h (time), finite and > 0
  std::uint64_t step_count = 0;  ///< steps taken so far (t = step_count h)
  /// The particle store (all arrays, forces and moments included), bonds
  /// (with stiffness types), contact settings, walls, gravity.
  Scene scene;
  /// Positions at the last neighbour-list build: empty, or one per particle.
  std::vector<Vec3> neighbour_build_positions;
  std::uint64_t neighbour_rebuilds = 0;
  std::vector<double> frame_times;  ///< times of the VTK frames written so far
  std::uint64_t energy_rows = 0;    ///< rows written to energy.csv so far
};

/// A checkpoint that cannot be read: bad header, corrupted or inconsistent
/// contents, or an unreadable file.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Current format version, written by encode_checkpoint.
inline constexpr std::uint32_t checkpoint_format_version = 1;
/// Size of the fixed header before the payload (bytes).
inline constexpr std::size_t checkpoint_header_size = 32;

/// The checkpoint file's bytes (header and payload).
std::vector<std::byte> encode_checkpoint(const CheckpointState& state);

/// Parses and validates a checkpoint; throws CheckpointError on any defect.
/// The returned scene's BondList accepts further add() calls.
CheckpointState decode_checkpoint(std::span<const std::byte> bytes);

/// Writes the checkpoint atomically: to `path` + ".tmp" in the same folder,
/// flushed to disk (fsync), then renamed over `path`, so an existing
/// checkpoint stays intact until the new one is complete. On failure removes
/// the temporary file and throws std::runtime_error naming the path and the
/// system's reason.
void write_checkpoint(const std::filesystem::path& path, const CheckpointState& state);

/// Reads and decodes a checkpoint file; throws CheckpointError naming the
/// path if it cannot be read or is not a valid checkpoint.
CheckpointState read_checkpoint(const std::filesystem::path& path);

}  // namespace dem
