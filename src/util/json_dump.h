// The compact dump of a JSON tree, byte for byte what nlohmann's dump(-1) writes with invalid
// UTF-8 replaced (util/json_io.h's DumpJson), without its byte-by-byte UTF-8 decoding of
// every string: ASCII strings are copied in runs between the characters that need an
// escape; a string with any other byte is left to nlohmann's own escaping.
#pragma once

#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace vouch {

void AppendCompactJson(std::string& out, const nlohmann::json& j);
// One string, quoted and escaped, as the dump writes it.
void AppendJsonString(std::string& out, std::string_view s);
// One integer as the dump writes it.
template <class T>
void AppendJsonInteger(std::string& out, T v) {
  std::array<char, 24> buf{};
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), r.ptr);
}
// One double as the dump writes it (nlohmann's shortest round trip; null when not finite).
void AppendJsonNumber(std::string& out, double d);

}  // namespace vouch
