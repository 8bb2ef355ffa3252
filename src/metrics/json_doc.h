// Reading a tool's JSON document when the tool may be broken or hostile: one parse with an
// error that names the file and the tool, and finite numbers that name their field.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "metrics/json_util.h"
#include "util/result.h"

namespace vouch::metrics_detail {

// TEXT as one JSON document from TOOL. Empty text and malformed JSON are errors naming PATH.
inline Result<nlohmann::json> ReadToolJson(std::string_view text, std::string_view path,
                                           std::string_view tool) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return MakeError("{}: empty: no {} results (did the tool fail or write elsewhere?)", path,
                     tool);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // Python's json.dump writes NaN and Infinity, which JSON has no words for.
    const bool non_finite = text.find("NaN") != text.npos || text.find("Infinity") != text.npos;
    return MakeError(
        "{}: not valid {} JSON{} ({})", path, tool,
        non_finite ? "; it contains NaN or Infinity, which is not a usable number" : "", e.what());
  }
}

// OBJ[KEY] as a finite number; absent or null gives nullopt, anything else is an error
// naming WHERE and KEY.
inline Result<std::optional<double>> OptionalFinite(const nlohmann::json& obj, const char* key,
                                                    std::string_view path, std::string_view where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<double>();
  if (!it->is_number())
    return MakeError("{}: {}: \"{}\" is not a number (got {})", path, where, key, Describe(*it));
  double d = it->get<double>();
  if (!std::isfinite(d)) return MakeError("{}: {}: \"{}\" is not finite", path, where, key);
  return std::optional<double>(d);
}

// OBJ[KEY] as an array of finite numbers (empty when absent).
inline Result<std::vector<double>> FiniteArray(const nlohmann::json& obj, const char* key,
                                               std::string_view path, std::string_view where) {
  std::vector<double> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (!it->is_array()) return MakeError("{}: {}: \"{}\" is not an array", path, where, key);
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& x = (*it)[i];
    if (!x.is_number() || !std::isfinite(x.get<double>()))
      return MakeError("{}: {}: \"{}\"[{}] is not a finite number (got {})", path, where, key, i,
                       Describe(x));
    out.push_back(x.get<double>());
  }
  return out;
}

// Belt and braces for a reader PARSE(TEXT, PATH): any structure its checks did not foresee
// becomes an error naming the file and TOOL, never an exception out of the library.
template <class Parser>
auto Guarded(Parser parse, std::string_view text, std::string_view path, std::string_view tool)
    -> decltype(parse(text, path)) {
  try {
    return parse(text, path);
  } catch (const nlohmann::json::exception& e) {
    return MakeError("{}: unexpected {} JSON structure ({})", path, tool, e.what());
  }
}

}  // namespace vouch::metrics_detail
