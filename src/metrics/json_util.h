// Small, non-throwing accessors for untrusted JSON (nlohmann's value() throws on a type
// mismatch, and dump() recurses through whatever a hostile file nests).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace vouch::metrics_detail {

// A short description of V for error messages: the value itself when it is a scalar
// (cut to 80 characters), else its type.
inline std::string Describe(const nlohmann::json& v) {
  if (v.is_structured()) return std::string("a JSON ") + v.type_name();
  std::string s = v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

// OBJ[KEY] when it is a bool, else DFLT.
inline bool BoolOr(const nlohmann::json& obj, const char* key, bool dflt) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() ? it->get<bool>() : dflt;
}

// OBJ[KEY] when it is a string, else DFLT.
inline std::string StringOr(const nlohmann::json& obj, const char* key, const std::string& dflt) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : dflt;
}

}  // namespace vouch::metrics_detail
