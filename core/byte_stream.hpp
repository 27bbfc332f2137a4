#pragma once
/// \file byte_stream.hpp
/// Little-endian binary encoding of state, for checkpoints: a writer that
/// appends fields to a byte vector, and a bounds-checked reader that never
/// reads past its input and never allocates more than a small multiple of
/// it, whatever the input (io/checkpoint.hpp gives the file layout).
///
/// Doubles are stored as their IEEE-754 bits, so a round trip is exact;
/// vec3 is three f64 x, y, z; quat four f64 in Eigen's coeffs() order
/// x, y, z, w; a string is a u64 byte count and the bytes.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/types.hpp"

namespace dem {

static_assert(std::endian::native == std::endian::little,
              "the state encoding is little-endian; add byte swapping for this host");
static_assert(std::numeric_limits<double>::is_iec559 && sizeof(double) == 8);

/// Stored state that cannot be read: truncated, corrupted or inconsistent.
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::byte>& out) : out_(out) {}
  template <class T>
  void raw(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));
  }
  void u8(std::uint8_t v) { raw(v); }
  void u32(std::uint32_t v) { raw(v); }
  void u64(std::uint64_t v) { raw(v); }
  void f64(double v) { raw(v); }
  void vec3(const Vec3& v) {
    f64(v.x());
    f64(v.y());
    f64(v.z());
  }
  void quat(const Quat& q) {
    for (int k = 0; k < 4; ++k) f64(q.coeffs()[k]);  // x, y, z, w
  }
  void mat3(const Mat3& m) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) f64(m(r, c));
  }
  void string(const std::string& s) {
    u64(s.size());
    bytes(std::as_bytes(std::span(s.data(), s.size())));
  }
  void bytes(std::span<const std::byte> b) {
    const std::size_t at = out_.size();
    out_.resize(at + b.size());
    if (!b.empty()) std::memcpy(out_.data() + at, b.data(), b.size());
  }
  /// A u64 count and the items, each written by put(item).
  template <class T, class Put>
  void array(const std::vector<T>& v, Put put) {
    u64(v.size());
    for (const T& x : v) put(*this, x);
  }
  std::size_t size() const { return out_.size(); }

 private:
  std::vector<std::byte>& out_;
};

/// Bounds-checked cursor over encoded bytes; every failure throws
/// StateError with a message saying what is wrong ("truncated: ...",
/// "corrupted: ...").
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::size_t remaining() const { return bytes_.size() - pos_; }
  std::size_t offset() const { return pos_; }

  template <class T>
  T raw(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::uint8_t u8(const char* what) { return raw<std::uint8_t>(what); }
  std::uint32_t u32(const char* what) { return raw<std::uint32_t>(what); }
  std::uint64_t u64(const char* what) { return raw<std::uint64_t>(what); }
  double f64(const char* what) { return raw<double>(what); }
  Vec3 vec3(const char* what) {
    need(24, what);
    Vec3 v;
    for (int k = 0; k < 3; ++k) v[k] = f64(what);
    return v;
  }
  Quat quat(const char* what) {
    need(32, what);
    Quat q;
    for (int k = 0; k < 4; ++k) q.coeffs()[k] = f64(what);
    return q;
  }
  Mat3 mat3(const char* what) {
    need(72, what);
    Mat3 m;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) m(r, c) = f64(what);
    return m;
  }

  /// A count of items of `item_bytes` each that must fit in what remains.
  std::size_t count(const char* what, std::size_t item_bytes) {
    const std::uint64_t c = u64(what);
    if (item_bytes > 0 && c > remaining() / item_bytes)
      throw StateError(std::string("corrupted: ") + what + " count " + std::to_string(c) + " (" +
                       std::to_string(item_bytes) + " bytes each) does not fit in the " +
                       std::to_string(remaining()) + " bytes left at offset " +
                       std::to_string(pos_));
    return static_cast<std::size_t>(c);
  }

  std::string string(const char* what, std::size_t limit) {
    const std::uint64_t size = u64(what);
    if (size > limit)
      throw StateError(std::string("corrupted: ") + what + " is " + std::to_string(size) +
                       " bytes long, more than the limit of " + std::to_string(limit));
    need(static_cast<std::size_t>(size), what);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<std::size_t>(size));
    pos_ += static_cast<std::size_t>(size);
    return s;
  }

  /// The next n bytes as a view.
  std::span<const std::byte> bytes(std::size_t n, const char* what) {
    need(n, what);
    const auto view = bytes_.subspan(pos_, n);
    pos_ += n;
    return view;
  }

  /// A u64 count (each item at least item_bytes long) and the items, each
  /// read by get(reader).
  template <class T, class Get>
  void array(std::vector<T>& v, std::size_t item_bytes, const char* what, Get get) {
    const std::size_t n = count(what, item_bytes);
    v.clear();
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) v.push_back(get(*this));
  }

  /// Throws StateError unless every byte was read.
  void expect_end(const char* what) const {
    if (remaining() != 0)
      throw StateError(std::string("corrupted: ") + std::to_string(remaining()) +
                       " unexpected bytes after the end of " + what);
  }

 private:
  void need(std::size_t n, const char* what) {
    if (n > remaining())
      throw StateError(std::string("truncated: ") + what + " needs " + std::to_string(n) +
                       " bytes at offset " + std::to_string(pos_) + ", only " +
                       std::to_string(remaining()) + " remain");
  }

  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

}  // namespace dem
