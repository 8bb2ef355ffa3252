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
  std::string scratch, text;  // a string decoded, and the text handed to AppendJsonString
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
      const SeriesPointList& pts = s.points;
      out += i == 0 ? "\n    {\n      \"attributed\": " : ",\n    {\n      \"attributed\": ";
      out += pts.attributed(i) ? "true" : "false";
      out += ",\n      \"clock_sm_median_mhz\": ";
      if (auto clock = pts.clock_sm_median_mhz(i))
        AppendJsonNumber(out, *clock);
      else
        out += "null";
      out += ",\n      \"commit\": ";
      AppendJsonString(out, text.assign(pts.first_commit(i, scratch)));
      out += ",\n      \"dirty\": ";
      out += pts.dirty(i) ? "true" : "false";
      out += ",\n      \"label\": ";
      AppendJsonString(out, pts.label(i));
      out += ",\n      \"runs\": ";
      if (pts.run_count(i) == 0) {
        out += "[]";
      } else {
        for (size_t k = 0; k < pts.run_count(i); ++k) {
          out += k == 0 ? "[\n        " : ",\n        ";
          AppendJsonString(out, text.assign(pts.run_key(i, k, scratch)));
        }
        out += "\n      ]";
      }
      out += ",\n      \"started_unix_s\": ";
      AppendJsonNumber(out, pts.started_unix_s(i));
      out += ",\n      \"value\": ";
      AppendJsonNumber(out, pts.value(i));
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
