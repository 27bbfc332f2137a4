#include "io/checkpoint_part.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "io/checkpoint.hpp"

namespace dem {

namespace {

constexpr std::array<char, 8> kPartMagic{'D', 'E', 'M', 'P', 'A', 'R', 'T', '\0'};
constexpr std::uint32_t kPartVersion = 1;

template <class T>
void store(std::vector<std::byte>& out, std::size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof(T));
}

template <class T>
T load(std::span<const std::byte> bytes, std::size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

std::string describe(const PartLabel& l) {
  return "part " + std::to_string(l.index) + " of " + std::to_string(l.count) + " of step " + std::to_string(l.step);
}

}  // namespace

std::vector<std::byte> encode_checkpoint_part(const PartLabel& label, std::span<const std::byte> payload) {
  std::vector<std::byte> out(checkpoint_part_header_size + payload.size());
  std::memcpy(out.data(), kPartMagic.data(), kPartMagic.size());
  store(out, 8, kPartVersion);
  store(out, 12, label.index);
  store(out, 16, label.count);
  store(out, 20, std::uint32_t{0});
  store(out, 24, label.step);
  store(out, 32, label.run_id);
  store(out, 40, static_cast<std::uint64_t>(payload.size()));
  store(out, 48, crc32_of(payload));
  store(out, 52, std::uint32_t{0});
  if (!payload.empty()) std::memcpy(out.data() + checkpoint_part_header_size, payload.data(), payload.size());
  return out;
}

std::span<const std::byte> decode_checkpoint_part(std::span<const std::byte> bytes, const PartLabel& label) {
  const std::size_t seen = std::min(bytes.size(), kPartMagic.size());
  if (std::memcmp(bytes.data(), kPartMagic.data(), seen) != 0) throw CheckpointError("not a checkpoint part (bad magic number)");
  if (bytes.size() < checkpoint_part_header_size)
    throw CheckpointError("truncated: " + std::to_string(bytes.size()) + " bytes, less than the " +
                          std::to_string(checkpoint_part_header_size) + "-byte header");
  if (load<std::uint32_t>(bytes, 8) != kPartVersion)
    throw CheckpointError("part format version " + std::to_string(load<std::uint32_t>(bytes, 8)) +
                          " is not supported (this build reads version 1)");
  if (load<std::uint32_t>(bytes, 20) != 0 || load<std::uint32_t>(bytes, 52) != 0)
    throw CheckpointError("corrupted: a reserved header field is not zero");
  const PartLabel got{load<std::uint32_t>(bytes, 12), load<std::uint32_t>(bytes, 16), load<std::uint64_t>(bytes, 24),
                      load<std::uint64_t>(bytes, 32)};
  if (got.index != label.index || got.count != label.count || got.step != label.step)
    throw CheckpointError("it is " + describe(got) + ", not " + describe(label));
  if (got.run_id != label.run_id) throw CheckpointError("it is a part of another run's checkpoint");
  const auto length = load<std::uint64_t>(bytes, 40);
  const std::size_t available = bytes.size() - checkpoint_part_header_size;
  if (length != available)
    throw CheckpointError(std::string(length > available ? "truncated" : "corrupted") + ": the header announces " +
                          std::to_string(length) + " payload bytes, the file has " + std::to_string(available));
  const std::span<const std::byte> payload = bytes.subspan(checkpoint_part_header_size);
  if (crc32_of(payload) != load<std::uint32_t>(bytes, 48)) throw CheckpointError("checksum mismatch: the part is corrupted");
  return payload;
}

}  // namespace dem
