// Reading simdjson's tree of a record the way nlohmann's tree of the same text is read (a
// repeated key: the last, as util/json_io.cc's ToNlohmann keeps it), for the fleet merge's
// fast reading (fleet/attempt_fast.h).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace vouch::dom_view {

using simdjson::dom::element;
using T = simdjson::dom::element_type;

// E's array or object, E being one. (Not `for (x : e.get_array().value_unsafe())`: that
// iterates a reference into a temporary gone before the loop starts.)
inline simdjson::dom::array Arr(element e) { return e.get_array().value_unsafe(); }
inline simdjson::dom::object Obj(element e) { return e.get_object().value_unsafe(); }

// J's member K as nlohmann's tree has it (a repeated key: the last).
inline bool Find(element j, std::string_view k, element& out) {
  if (j.type() != T::OBJECT) return false;
  bool found = false;
  for (simdjson::dom::key_value_pair kv : Obj(j))
    if (kv.key == k) {
      out = kv.value;
      found = true;
    }
  return found;
}

// J's member K where the schema declares K (Accepts refused it repeated): the first is the one.
inline bool Get(element j, std::string_view k, element& out) {
  if (j.type() != T::OBJECT) return false;
  for (simdjson::dom::key_value_pair kv : Obj(j))
    if (kv.key == k) {
      out = kv.value;
      return true;
    }
  return false;
}

// A member the schema declares and requires (Accepts refused a repeated one).
inline element At(element j, std::string_view k) {
  element out;
  Get(j, k, out);
  return out;
}
inline std::string_view Str(element e) { return e.get_string().value_unsafe(); }
inline bool IsNumber(element e) {
  const T t = e.type();
  return t == T::INT64 || t == T::UINT64 || t == T::DOUBLE;
}
inline double Num(element e) {
  switch (e.type()) {
    case T::INT64:
      return static_cast<double>(e.get_int64().value_unsafe());
    case T::UINT64:
      return static_cast<double>(e.get_uint64().value_unsafe());
    default:
      return e.get_double().value_unsafe();
  }
}
// An integer that fits an int; nullopt for anything else (nlohmann would convert or throw).
inline std::optional<int> Int(element e) {
  if (e.type() == T::INT64) {
    const std::int64_t v = e.get_int64().value_unsafe();
    if (v >= INT32_MIN && v <= INT32_MAX) return static_cast<int>(v);
  } else if (e.type() == T::UINT64) {
    const std::uint64_t v = e.get_uint64().value_unsafe();
    if (v <= INT32_MAX) return static_cast<int>(v);
  }
  return std::nullopt;
}
inline bool IsOne(element e) {
  return (e.type() == T::INT64 && e.get_int64().value_unsafe() == 1) ||
         (e.type() == T::UINT64 && e.get_uint64().value_unsafe() == 1);
}
// J.value(K, "") of a declared optional string.
inline std::string_view OptStr(element j, std::string_view k) {
  element v;
  return Get(j, k, v) && v.type() == T::STRING ? Str(v) : std::string_view();
}

}  // namespace vouch::dom_view
