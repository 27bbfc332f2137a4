#pragma once
/// \file field_io.hpp
/// Checkpoint encoding of a structure of arrays that lists its fields with
/// for_each_field(f(name, vector)) (ParticleStore, BondList): every field
/// the list names is written and read, so adding a field to the list is
/// all a checkpoint needs.
///
/// Layout: u64 n (items), u32 fields, then per field: string name, u8 type
/// (1 u32, 2 f64, 3 vec3, 4 quat) and n values of that type.

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/byte_stream.hpp"
#include "core/particle_store.hpp"

namespace dem {

namespace field_io_detail {
template <class T>
constexpr std::uint8_t type_code() {
  if constexpr (std::is_same_v<T, std::uint32_t>) return 1;
  else if constexpr (std::is_same_v<T, double>) return 2;
  else if constexpr (std::is_same_v<T, Vec3>) return 3;
  else if constexpr (std::is_same_v<T, Quat>) return 4;
  else static_assert(sizeof(T) == 0, "no checkpoint encoding for this field type");
}
template <class T>
constexpr std::size_t type_bytes() {
  constexpr std::uint8_t c = type_code<T>();
  return c == 1 ? 4 : c == 2 ? 8 : c == 3 ? 24 : 32;
}
template <class T>
void put(ByteWriter& w, const T& v) {
  if constexpr (std::is_same_v<T, std::uint32_t>) w.u32(v);
  else if constexpr (std::is_same_v<T, double>) w.f64(v);
  else if constexpr (std::is_same_v<T, Vec3>) w.vec3(v);
  else w.quat(v);
}
template <class T>
T get(ByteReader& r, const char* what) {
  if constexpr (std::is_same_v<T, std::uint32_t>) return r.u32(what);
  else if constexpr (std::is_same_v<T, double>) return r.f64(what);
  else if constexpr (std::is_same_v<T, Vec3>) return r.vec3(what);
  else return r.quat(what);
}
}  // namespace field_io_detail

/// Writes every field of `store` (n items each). Throws std::invalid_argument
/// if a field's size differs from n.
template <class Store>
void save_fields(ByteWriter& w, const Store& store, std::size_t n, const char* what) {
  std::uint32_t fields = 0;
  store.for_each_field([&](const char* name, const auto& v) {
    ++fields;
    if (v.size() != n)
      throw std::invalid_argument(std::string(what) + " array '" + name + "' has " +
                                  std::to_string(v.size()) + " entries for " + std::to_string(n));
  });
  w.u64(n);
  w.u32(fields);
  store.for_each_field([&](const char* name, const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    w.string(name);
    w.u8(field_io_detail::type_code<T>());
    for (const T& x : v) field_io_detail::put(w, x);
  });
}

/// Reads what save_fields wrote into `store`, whose field list must match
/// the stored one name by name and type by type; throws StateError naming
/// the difference, or for a count that cannot fit in the bytes left.
/// The last `optional_tail` fields of the list (added after older files
/// were written, e.g. ParticleStore::material) may be missing from the
/// file: they get zero_value() for every item. Returns n.
template <class Store>
std::size_t load_fields(ByteReader& r, Store& store, const char* what, std::uint32_t optional_tail = 0) {
  std::size_t min_item_bytes = 0;
  std::uint32_t expected = 0;
  store.for_each_field([&](const char*, const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    min_item_bytes += field_io_detail::type_bytes<T>();
    ++expected;
  });
  const std::string count_name = std::string(what) + " item";
  const std::size_t n = r.count(count_name.c_str(), min_item_bytes);
  const std::uint32_t fields = r.u32("field count");
  if (fields > expected || fields + optional_tail < expected)
    throw StateError("inconsistent: " + std::string(what) + " has " + std::to_string(fields) +
                     " fields, this build expects " + std::to_string(expected));
  std::uint32_t visited = 0;
  store.for_each_field([&](const char* name, auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    if (visited++ >= fields) {  // a field newer than the file
      v.assign(n, zero_value<T>());
      return;
    }
    const std::string stored = r.string("field name", 256);
    if (stored != name)
      throw StateError("inconsistent: " + std::string(what) + " field '" + stored +
                       "' where this build expects '" + name + "'");
    const std::uint8_t type = r.u8("field type");
    if (type != field_io_detail::type_code<T>())
      throw StateError("inconsistent: " + std::string(what) + " field '" + stored +
                       "' has type " + std::to_string(type) + ", expected " +
                       std::to_string(field_io_detail::type_code<T>()));
    const std::string label = std::string(what) + " " + name;
    v.clear();
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) v.push_back(field_io_detail::get<T>(r, label.c_str()));
  });
  return n;
}

}  // namespace dem
