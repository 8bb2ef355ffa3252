// TrendJsonText: the trend's JSON without a tree for its points (issue 24: 100,000 points built
// as nlohmann objects took most of `history trend --json`'s time and memory).
#include <array>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "trend/trend.h"
#include "util/json_dump.h"
#include "util/json_io.h"

namespace vouch {

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
        AppendJsonNumber(out, *p.clock_sm_median_mhz);
      else
        out += "null";
      out += ",\n      \"commit\": ";
      AppendJsonString(out, p.first_commit);
      out += ",\n      \"dirty\": ";
      out += p.dirty ? "true" : "false";
      out += ",\n      \"label\": ";
      AppendJsonString(out, p.label);
      out += ",\n      \"runs\": ";
      if (p.run_keys.empty()) {
        out += "[]";
      } else {
        for (size_t k = 0; k < p.run_keys.size(); ++k) {
          out += k == 0 ? "[\n        " : ",\n        ";
          AppendJsonString(out, p.run_keys[k]);
        }
        out += "\n      ]";
      }
      out += ",\n      \"started_unix_s\": ";
      AppendJsonNumber(out, p.started_unix_s);
      out += ",\n      \"value\": ";
      AppendJsonNumber(out, p.value);
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
