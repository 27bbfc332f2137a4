// libFuzzer target for decode_checkpoint (io/checkpoint.hpp): any input must
// be decoded or refused with CheckpointError; anything else (another
// exception, a crash, an out-of-bounds read, undefined behaviour, a huge
// allocation, a hang) is a bug.
//
// A checksum stops almost every mutation at the header, so each input is
// decoded twice: as it is (header checks), and with the header's payload
// length and CRC-32 rewritten to match (the payload parser and the
// consistency checks).

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "io/checkpoint.hpp"

namespace {

void decode(std::span<const std::byte> bytes) {
  try {
    dem::decode_checkpoint(bytes);
  } catch (const dem::CheckpointError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  decode(input);
  if (size >= dem::checkpoint_header_size) {
    std::vector<std::byte> sealed(input.begin(), input.end());
    const std::uint64_t length = size - dem::checkpoint_header_size;
    const auto crc = static_cast<std::uint32_t>(
        crc32(crc32(0L, Z_NULL, 0),
              reinterpret_cast<const Bytef*>(sealed.data() + dem::checkpoint_header_size),
              static_cast<uInt>(length)));
    std::memcpy(sealed.data() + 16, &length, 8);
    std::memcpy(sealed.data() + 24, &crc, 4);
    decode(sealed);
  }
  return 0;
}
