// The gate's Markdown (a pull request comment) and JSON renderers.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "util/escape.h"
#include "util/json_io.h"

namespace vouch {

using ojson = nlohmann::ordered_json;
using namespace gate_internal;

namespace {

// What a reader must see first: failures of any kind, then inconclusive, then warnings.
int MarkdownRank(GateVerdict v) {
  switch (v) {
    case GateVerdict::kFail:
    case GateVerdict::kMissing:
    case GateVerdict::kError:
      return 0;
    case GateVerdict::kInconclusive:
      return 1;
    case GateVerdict::kWarn:
      return 2;
    case GateVerdict::kPass:
      return 3;
    case GateVerdict::kSkipped:
      return 4;
  }
  return 5;
}

std::string MarkdownRow(const GateRow& r) {
  auto cells = Cells(r);
  if (MarkdownRank(r.verdict) <= 1) cells.back() = "**" + cells.back() + "**";
  std::string line = "|";
  for (const auto& c : cells) line += " " + MarkdownCell(c) + " |";
  return line + "\n";
}

const char* kMarkdownHeader =
    "| metric | unit | baseline | now | change | interval | now/baseline | threshold | verdict "
    "|\n|---|---|---:|---:|---:|---:|---|---|---|\n";

}  // namespace

std::string RenderGateMarkdown(const GateReport& report, std::size_t max_chars,
                               const std::string& full_path) {
  std::string head = "**vouch " + OverallLine(report) + "**\n\n";
  if (!report.headline.empty())
    head += "Headline: " + MarkdownCode(report.headline) + " (" +
            MarkdownCell(report.headline_reason) + ")\n\n";
  std::string tail;
  if (!report.caveats.empty()) {
    tail += "\nCaveats:\n";
    for (const auto& c : report.caveats) tail += "- " + MarkdownCell(c.message) + "\n";
  }
  if (std::string hint = WarnHint(report); !hint.empty()) tail += "\nNote: " + hint + "\n";
  if (std::string n = NoiseLine(report); !n.empty()) tail += "\nNoise: " + MarkdownCell(n) + "\n";
  if (std::string n = NotJudgedLine(report); !n.empty())
    tail += "\nNoise: " + MarkdownCell(n) + "\n";
  if (auto mde = MdeLines(report); !mde.empty()) {
    tail += "\nSmallest change each verdict could see:\n";
    // At most 10 lines: a pull request comment keeps room for the table (every row's mde_pct
    // is in the JSON).
    for (std::size_t i = 0; i < mde.size() && i < 10; ++i)
      tail += "- " + MarkdownEscape(mde[i]) + "\n";
    if (mde.size() > 10)
      tail += fmt::format("- and {} more (`vouch gate --json`: `mde_pct`)\n", mde.size() - 10);
  }

  // The rows that matter first (failing, inconclusive, warning), the largest change in the
  // bad direction first within each; passing and skipped rows after them.
  std::vector<const GateRow*> rows;
  for (const auto& r : report.rows) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const GateRow* x, const GateRow* y) {
    if (MarkdownRank(x->verdict) != MarkdownRank(y->verdict))
      return MarkdownRank(x->verdict) < MarkdownRank(y->verdict);
    return x->change_in_bad_direction_pct.value_or(-1e300) >
           y->change_in_bad_direction_pct.value_or(-1e300);
  });
  std::string all_rows;
  for (const auto* r : rows) all_rows += MarkdownRow(*r);
  std::string not_gated;
  if (!report.not_in_baseline.empty()) {
    not_gated = "\nNot gated (not in the baseline):";
    for (const auto& n : report.not_in_baseline) not_gated += " " + MarkdownCode(n);
    not_gated += "\n";
  }
  // Everything fits: one table, as it always was (in the order that matters).
  std::string whole = head + kMarkdownHeader + all_rows + tail + not_gated;
  if (whole.size() <= max_chars) return whole;

  // Too long for one comment (GitHub refuses one over 65,536 characters): the rows that
  // matter in the table, the passing ones folded, and what still does not fit left out and
  // counted, with where every row is.
  const std::string where = full_path.empty() ? std::string("`vouch gate --json` lists every row")
                                              : "every row is in " + MarkdownCode(full_path);
  const std::size_t reserve = 400;  // the "not shown" line and the fold's own markup
  std::size_t budget = max_chars > head.size() + tail.size() + reserve
                           ? max_chars - head.size() - tail.size() - reserve
                           : 0;
  std::string table = kMarkdownHeader, folded;
  std::size_t shown_matter = 0, shown_rest = 0, matter = 0, rest = 0;
  for (const auto* r : rows) (MarkdownRank(r->verdict) <= 2 ? matter : rest) += 1;
  std::size_t used = table.size();
  for (const auto* r : rows) {
    const bool important = MarkdownRank(r->verdict) <= 2;
    std::string line = MarkdownRow(*r);
    if (!important && folded.empty()) {
      const std::string open = "\n<details><summary>passing and skipped</summary>\n\n";
      if (used + open.size() + std::strlen(kMarkdownHeader) + line.size() > budget) break;
      folded = open + kMarkdownHeader;
      used += folded.size();
    }
    if (used + line.size() > budget) break;
    used += line.size();
    if (important) {
      table += line;
      ++shown_matter;
    } else {
      folded += line;
      ++shown_rest;
    }
  }
  std::string out = head + table;
  if (!folded.empty()) {
    // The summary names what the fold holds, now that it is known.
    const std::string summary =
        fmt::format("{} of {} passing or skipped metrics", shown_rest, rest);
    folded.replace(folded.find("passing and skipped"), std::strlen("passing and skipped"), summary);
    out += folded + "\n</details>\n";
  }
  const std::size_t left = (matter - shown_matter) + (rest - shown_rest);
  if (left > 0)
    out += fmt::format(
        "\n{} of {} rows not shown ({} of them failing, inconclusive or warning): a pull request "
        "comment holds at most {} characters; {}\n",
        left, rows.size(), matter - shown_matter, max_chars, where);
  out += tail;
  if (!report.not_in_baseline.empty()) {
    if (out.size() + not_gated.size() <= max_chars)
      out += not_gated;
    else if (out.size() + 120 <= max_chars)
      out += fmt::format("\nNot gated (not in the baseline): {} metrics; {}\n",
                         report.not_in_baseline.size(), where);
  }
  // Caveats and notes longer than the comment itself: cut at a line, and say so.
  if (out.size() > max_chars) {
    const std::string cut = fmt::format("\n(cut at {} characters; {})\n", max_chars, where);
    const std::size_t keep = max_chars > cut.size() ? max_chars - cut.size() : 0;
    const std::size_t nl = out.rfind('\n', keep);
    out = out.substr(0, nl == std::string::npos ? keep : nl) + cut;
    if (out.size() > max_chars) out.resize(max_chars);
  }
  return out;
}

std::string RenderGateJson(const GateReport& report) {
  auto opt = [](const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson j;
  j["schema"] = "vouch.gate";
  j["schema_version"] = 1;
  j["overall"] = GateVerdictName(report.overall);
  j["headline"] = {{"name", report.headline}, {"reason", report.headline_reason}};
  j["false_fail_rate"] = kGateFalseFailRate;
  j["alpha_per_metric"] = report.alpha_per_metric;
  j["clock_attributed"] = report.clock_attributed;
  j["simulated"] = report.simulated;
  ojson caveats = ojson::array();
  for (const auto& c : report.caveats)
    caveats.push_back({{"code", c.code}, {"message", c.message}});
  j["caveats"] = std::move(caveats);
  ojson rows = ojson::array();
  for (const auto& r : report.rows) {
    ojson o;
    o["metric"] = r.metric;
    o["unit"] = r.unit;
    o["better"] = BetterName(r.better);
    o["baseline"] = r.baseline;
    o["now"] = opt(r.now);
    o["change_pct"] = opt(r.change_pct);
    o["change_in_bad_direction_pct"] = opt(r.change_in_bad_direction_pct);
    if (r.change_count) o["change_count"] = *r.change_count;
    if (r.fail_count) o["fail_count"] = *r.fail_count;
    o["ratio_now_over_baseline"] = opt(r.ratio);
    o["ratio_reads"] = r.ratio_reads;
    o["fail_pct"] = opt(r.fail_pct);
    o["warn_pct"] = opt(r.warn_pct);
    if (r.interval)
      o["interval"] = {{"lo_pct", r.interval->lo_pct},
                       {"hi_pct", r.interval->hi_pct},
                       {"estimate_pct", r.interval->estimate_pct},
                       {"df", r.interval->df},
                       {"alpha_one_sided", r.interval->alpha},
                       {"method", r.interval->method}};
    else
      o["interval"] = nullptr;
    o["noise_note"] = r.noise_note;
    o["trials"] = r.trials;
    o["legs"] = r.legs;
    o["threshold"] = r.threshold;
    o["verdict"] = GateVerdictName(r.verdict);
    o["note"] = r.note;
    o["mde_pct"] = opt(r.mde_pct);
    rows.push_back(std::move(o));
  }
  j["rows"] = std::move(rows);
  if (report.sequential)
    j["sequential"] = {
        {"look", report.sequential->look},
        {"looks", report.sequential->looks},
        {"legs", report.sequential->legs},
        {"max_legs", report.sequential->max_legs},
        {"first_legs", report.sequential->first_legs},
        {"legs_per_look", report.sequential->legs_per_look},
        {"nominal_alpha_one_sided", report.sequential->nominal_alpha},
        {"alpha_per_metric_all_looks", report.sequential->overall_alpha},
        {"design", "repeated confidence intervals, O'Brien-Fleming-type alpha spending"}};
  else
    j["sequential"] = nullptr;
  j["not_in_baseline"] = report.not_in_baseline;
  return DumpJson(j, 2) + "\n";
}

}  // namespace vouch
