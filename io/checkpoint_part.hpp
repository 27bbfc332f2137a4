#pragma once
/// \file checkpoint_part.hpp
/// One rank's part file of a checkpoint in parts (the index: io/checkpoint.hpp
/// format version 7; writing and reading the whole: run/checkpoint_parts.hpp).
///
/// File layout (little-endian):
///
///     offset  size  field
///          0     8  magic "DEMPART\0"
///          8     4  format version (uint32, 1)
///         12     4  part index k (uint32, the rank that wrote it)
///         16     4  part count P (uint32, the ranks of the run)
///         20     4  reserved (uint32, 0)
///         24     8  step count of the checkpoint (uint64)
///         32     8  run identity (uint64, CheckpointState::run_id)
///         40     8  payload length L in bytes (uint64)
///         48     4  CRC-32 of the payload (zlib crc32, uint32)
///         52     4  reserved (uint32, 0)
///         56     L  payload: the rank's owned particles, its providers'
///                   histories and its clumps (engine/partition.hpp pack_owned)
///
/// The header names the part, its run and its step, so that a part of
/// another checkpoint put in its place is refused as such.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dem {

/// Who wrote a part and when: what its header must say.
struct PartLabel {
  std::uint32_t index = 0;  ///< k, 0 <= k < count
  std::uint32_t count = 1;  ///< P
  std::uint64_t step = 0;
  std::uint64_t run_id = 0;
};

/// Size of the part file's header (bytes).
inline constexpr std::size_t checkpoint_part_header_size = 56;

/// The part file's bytes: header for `label`, then `payload`.
std::vector<std::byte> encode_checkpoint_part(const PartLabel& label, std::span<const std::byte> payload);

/// The payload of a part file whose header says `label`; throws
/// CheckpointError (io/checkpoint.hpp) saying what is wrong ("not a
/// checkpoint part", "truncated: ...", "checksum mismatch: ...", "it is part
/// 2 of 3 of step 160, not ...") without naming the file (the caller does).
std::span<const std::byte> decode_checkpoint_part(std::span<const std::byte> bytes, const PartLabel& label);

}  // namespace dem
