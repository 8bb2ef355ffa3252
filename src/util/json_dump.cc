#include "util/json_dump.h"

#include <array>
#include <charconv>
#include <cmath>

namespace vouch {

// As nlohmann writes it (ensure_ascii off): quoted, with ", \ and the control characters
// escaped. Any byte from 0x80 up goes to nlohmann (its UTF-8 checks and replacement of
// invalid sequences), so only ASCII is escaped here.
void AppendJsonString(std::string& out, std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  const char* run = p;
  const std::size_t start = out.size();  // a string with a byte from 0x80 up starts again here
  out += '"';
  // One pass: the runs between characters to escape are copied; a byte from 0x80 up undoes
  // what was appended and hands the string to nlohmann (a first pass looking for one read
  // every string twice).
  for (const char* q = p; q < end; ++q) {
    const auto c = static_cast<unsigned char>(*q);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) continue;
    if (c >= 0x80) {
      out.resize(start);
      out += nlohmann::json(std::string(s))
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
    out.append(run, q);
    run = q + 1;
    switch (c) {
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
      }
    }
  }
  out.append(run, end);
  out += '"';
}

void AppendJsonNumber(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  std::array<char, 64> buf;
  out.append(buf.data(), nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), d));
}

void AppendCompactJson(std::string& out, const nlohmann::json& j) {
  using V = nlohmann::json::value_t;
  switch (j.type()) {
    case V::null:
      out += "null";
      return;
    case V::boolean:
      out += j.get_ref<const bool&>() ? "true" : "false";
      return;
    case V::number_integer:
      AppendJsonInteger(out, j.get_ref<const nlohmann::json::number_integer_t&>());
      return;
    case V::number_unsigned:
      AppendJsonInteger(out, j.get_ref<const nlohmann::json::number_unsigned_t&>());
      return;
    case V::number_float:
      AppendJsonNumber(out, j.get_ref<const double&>());
      return;
    case V::string:
      AppendJsonString(out, j.get_ref<const std::string&>());
      return;
    case V::array: {
      out += '[';
      bool first = true;
      for (const auto& e : j.get_ref<const nlohmann::json::array_t&>()) {
        if (!first) out += ',';
        first = false;
        AppendCompactJson(out, e);
      }
      out += ']';
      return;
    }
    case V::object: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : j.get_ref<const nlohmann::json::object_t&>()) {
        if (!first) out += ',';
        first = false;
        AppendJsonString(out, k);
        out += ':';
        AppendCompactJson(out, v);
      }
      out += '}';
      return;
    }
    case V::binary:
    case V::discarded:
    default:
      out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
  }
}

}  // namespace vouch
