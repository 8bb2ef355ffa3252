// TrendJsonText: the trend's JSON without a tree for its points (issue 24: 100,000 points built
// as nlohmann objects took most of `history trend --json`'s time and memory).
#include <array>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "trend/trend.h"
#include "util/json_io.h"

namespace vouch {
namespace {

// A JSON string as nlohmann's dump writes it: printable ASCII as it is, anything else (escapes,
// invalid UTF-8 replaced) through the dump itself.
void AppendString(std::string& out, const std::string& s) {
  bool plain = true;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (!plain) {
    out += DumpJson(nlohmann::json(s));
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

// A number as nlohmann's dump writes it (its own shortest round-trip digits; null when not
// finite).
void AppendNumber(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  std::array<char, 64> buf{};
  char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), end);
}

}  // namespace

void WriteTrendJson(const TrendSeries& s, const std::function<void(std::string_view)>& sink) {
  std::string head = DumpJson(TrendJson(s, false), 2);
  const std::string key = "\n  \"points\": null";
  const size_t at = head.find(key);
  if (at == std::string::npos) {  // cannot happen: the schema has "points"
    sink(DumpJson(TrendJson(s), 2));
    return;
  }
  // Handed to SINK a quarter megabyte at a time: 100,000 points need not be one string.
  constexpr size_t kChunk = 256 * 1024;
  std::string out;
  out.reserve(kChunk + 4096);
  out.append(head, 0, at);
  out += "\n  \"points\": ";
  if (s.points.empty()) {
    out += "[]";
  } else {
    out += "[";
    // Keys in nlohmann's order (std::map: sorted).
    for (size_t i = 0; i < s.points.size(); ++i) {
      if (out.size() >= kChunk) {
        sink(out);
        out.clear();
      }
      const SeriesPoint& p = s.points[i];
      out += i == 0 ? "\n    {\n      \"attributed\": " : ",\n    {\n      \"attributed\": ";
      out += p.attributed ? "true" : "false";
      out += ",\n      \"clock_sm_median_mhz\": ";
      if (p.clock_sm_median_mhz)
        AppendNumber(out, *p.clock_sm_median_mhz);
      else
        out += "null";
      out += ",\n      \"commit\": ";
      AppendString(out, p.first_commit);
      out += ",\n      \"dirty\": ";
      out += p.dirty ? "true" : "false";
      out += ",\n      \"label\": ";
      AppendString(out, p.label);
      out += ",\n      \"runs\": ";
      if (p.run_keys.empty()) {
        out += "[]";
      } else {
        for (size_t k = 0; k < p.run_keys.size(); ++k) {
          out += k == 0 ? "[\n        " : ",\n        ";
          AppendString(out, p.run_keys[k]);
        }
        out += "\n      ]";
      }
      out += ",\n      \"started_unix_s\": ";
      AppendNumber(out, p.started_unix_s);
      out += ",\n      \"value\": ";
      AppendNumber(out, p.value);
      out += "\n    }";
    }
    out += "\n  ]";
  }
  out.append(head, at + key.size(), std::string::npos);
  sink(out);
}

std::string TrendJsonText(const TrendSeries& s) {
  std::string text;
  WriteTrendJson(s, [&](std::string_view part) { text += part; });
  return text;
}

}  // namespace vouch
