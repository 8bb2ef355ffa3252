// A long run's legs kept on disk, not in memory (RunRecord::spilled, legs_journal): the tally
// that the record's counts and summary need, and the record's text and JSON printed with the
// legs read back from the journal one at a time.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "record/journal.h"
#include "record/record.h"
#include "util/json_io.h"

namespace vouch {

void LegTally::Add(const LegRecord& l) {
  ++legs;
  arm_width = std::max(arm_width, l.arm.size());
  if (l.role != "measured") return;
  ++measured;
  valid += l.valid;
  if (l.valid) valid_metrics[l.arm].AddLeg(l.metrics);
}

void SpillLegs(RunRecord& r) {
  if (r.legs.size() < 2 || r.legs_journal.empty()) return;
  for (size_t i = 0; i + 1 < r.legs.size(); ++i) r.spilled.Add(r.legs[i]);
  r.legs.erase(r.legs.begin(), r.legs.end() - 1);
}

void PrintRecordText(const RunRecord& r, const nlohmann::json& j, std::FILE* out) {
  if (r.spilled.legs == 0) {
    fmt::print(out, "{}", RenderRecordText(j));
    return;
  }
  fmt::print(out, "{}", RenderRecordHead(j));
  size_t arm_w = std::max<size_t>(6, r.spilled.arm_width);
  for (const auto& l : r.legs) arm_w = std::max(arm_w, l.arm.size());
  auto st = ForEachJournalLine(r.legs_journal, r.spilled.legs, [&](std::string_view line) {
    auto l = ParseJson(line, r.legs_journal);
    if (!l) return Status(l.error());
    fmt::print(out, "{}", RenderLegLine(*l, arm_w));
    return OkStatus();
  });
  if (!st) fmt::print(out, "  ({})\n", st.error().message);
  for (const auto& l : j["legs"]) fmt::print(out, "{}", RenderLegLine(l, arm_w));
  fmt::print(out, "{}", RenderRecordSummary(j));
}

void PrintRecordJson(const RunRecord& r, const std::string& dir, std::FILE* out) {
  if (r.spilled.legs == 0) {
    fmt::print(out, "{}\n", DumpJson(ToJson(r), 2));
    return;
  }
  const std::string path = (std::filesystem::path(dir) / "record.json").string();
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (!in) {
    fmt::print(stderr, "vouch: cannot read {}: {}\n", path, std::strerror(errno));
    return;
  }
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;) std::fwrite(buf, 1, n, out);
  std::fclose(in);
  std::fflush(out);
}

}  // namespace vouch
