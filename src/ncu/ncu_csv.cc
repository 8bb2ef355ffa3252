#include "ncu/ncu_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ncu/csv.h"
#include "util/bounded_file.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch::ncu {
namespace {

// Metric names to look for, raw page first then details page; the first present wins.
struct Wanted {
  std::optional<double> KernelProfile::*field;
  std::vector<const char*> names;
  const char* required_unit;  // details page: "%" where a name is reused with other units
};

const std::vector<Wanted>& WantedMetrics() {
  static const std::vector<Wanted> w = {
      {&KernelProfile::registers_per_thread,
       {"launch__registers_per_thread", "Registers Per Thread"},
       nullptr},
      {&KernelProfile::achieved_occupancy_percent,
       {"sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved Occupancy"},
       nullptr},
      {&KernelProfile::issue_active_percent,
       {"smsp__issue_active.avg.pct_of_peak_sustained_active",
        "sm__issue_active.avg.pct_of_peak_sustained_active",
        "sm__issue_active.avg.pct_of_peak_sustained_elapsed", "Issue Slots Busy",
        "One or More Eligible"},
       nullptr},
      {&KernelProfile::sm_throughput_percent,
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "Compute (SM) Throughput"},
       nullptr},
      {&KernelProfile::memory_throughput_percent,
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "Memory Throughput"},
       "%"},
      {&KernelProfile::l2_hit_rate_percent, {"lts__t_sector_hit_rate.pct", "L2 Hit Rate"}, nullptr},
  };
  return w;
}

double DurationScale(std::string unit) {
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit == "ns" || unit == "nsecond" || unit == "nsec" || unit.empty()) return 1;
  if (unit == "us" || unit == "usecond" || unit == "usec") return 1e3;
  if (unit == "ms" || unit == "msecond" || unit == "msec") return 1e6;
  if (unit == "s" || unit == "second") return 1e9;
  return 0;  // unknown
}

void Derive(KernelProfile& k, std::vector<std::string>* warnings) {
  auto find = [&](const char* name) -> const Metric* {
    auto it = k.metrics.find(name);
    return it == k.metrics.end() ? nullptr : &it->second;
  };
  for (const auto& w : WantedMetrics()) {
    for (const char* n : w.names) {
      const Metric* m = find(n);
      if (!m) continue;
      if (w.required_unit && !m->unit.empty() && m->unit != w.required_unit) continue;
      if (auto v = ParseNcuNumber(m->value)) {
        if (*v < 0) {
          warnings->push_back(
              fmt::format("kernel {}: '{}' is negative ({}); left out", k.id, n, m->value));
          break;
        }
        k.*(w.field) = *v;
        break;
      }
      if (!Trim(m->value).empty() && m->value != "n/a" && m->value != "N/A")
        warnings->push_back(
            fmt::format("kernel {}: '{}' is not a number ('{}'); left out", k.id, n, m->value));
    }
  }
  for (const char* n : {"gpu__time_duration.sum", "Duration"}) {
    const Metric* m = find(n);
    if (!m) continue;
    auto v = ParseNcuNumber(m->value);
    double scale = DurationScale(m->unit);
    if (!v || *v < 0) {
      // A duration that is "nan", text or negative is no time: never shown as one.
      warnings->push_back(
          fmt::format("kernel {}: duration '{}' is not a non-negative number; "
                      "duration left out",
                      k.id, m->value));
      break;
    }
    if (v && scale > 0) {
      // 1e300 s is finite, its nanoseconds are not: checked after the scale, never "inf".
      auto ns = ScaleFinite(*v, scale,
                            fmt::format("kernel {}: duration '{} {}'", k.id, m->value, m->unit));
      if (ns)
        k.duration_ns = *ns;
      else
        warnings->push_back(ns.error().message + "; duration left out");
      break;
    }
    if (v && scale == 0)
      warnings->push_back(fmt::format("kernel {}: duration unit '{}' is unknown; duration left out",
                                      k.id, m->unit));
  }
  for (const char* n : {"SM Frequency", "sm__cycles_elapsed.avg.per_second",
                        "gpc__cycles_elapsed.avg.per_second"}) {
    const Metric* m = find(n);
    if (!m) continue;
    std::string u = m->unit;
    for (auto& c : u) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double to_mhz = u == "hz" || u == "cycle/second"     ? 1e-6
                    : u == "khz" || u == "cycle/msecond" ? 1e-3
                    : u == "mhz" || u == "cycle/usecond" ? 1
                    : u == "ghz" || u == "cycle/nsecond" ? 1e3
                                                         : 0;
    if (auto v = ParseNcuNumber(m->value); v && to_mhz > 0) {
      auto mhz = ScaleFinite(*v, to_mhz,
                             fmt::format("kernel {}: '{}' ({} {})", k.id, n, m->value, m->unit));
      if (mhz && *mhz >= 0)
        k.sm_frequency_mhz = *mhz;
      else
        warnings->push_back(
            (mhz ? fmt::format("kernel {}: '{}' is negative ({})", k.id, n, m->value)
                 : mhz.error().message) +
            "; SM frequency left out");
      break;
    }
  }
  // Spills: local-memory requests (loads + stores), or the details page's own line.
  if (const Metric* m = find("Local Memory Spilling Requests")) {
    k.local_spilling_requests = ParseNcuNumber(m->value);
  } else {
    std::optional<double> sum;
    for (const char* n : {"l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
                          "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"})
      if (const Metric* lm = find(n))
        if (auto v = ParseNcuNumber(lm->value)) sum = sum.value_or(0) + *v;
    if (sum && !std::isfinite(*sum)) {
      warnings->push_back(fmt::format(
          "kernel {}: local-memory requests add up to more than a double holds; left out", k.id));
      sum.reset();
    }
    k.local_spilling_requests = sum;
  }
  // Stall reasons in warps per issue-active cycle, as the third seed reports them.
  // smsp__average_warps_issue_stalled_REASON_per_issue_active.ratio, by prefix and suffix: a
  // backtracking matcher (std-library regex) recursed once per character and overflowed the
  // stack on a 50 KB name.
  constexpr std::string_view kStallHead = "smsp__average_warps_issue_stalled_";
  constexpr std::string_view kStallTail = "_per_issue_active.ratio";
  for (const auto& [name, metric] : k.metrics) {
    if (name.size() <= kStallHead.size() + kStallTail.size() || !name.starts_with(kStallHead) ||
        !name.ends_with(kStallTail))
      continue;
    std::string reason =
        name.substr(kStallHead.size(), name.size() - kStallHead.size() - kStallTail.size());
    if (auto v = ParseNcuNumber(metric.value)) k.top_stalls.push_back({std::move(reason), *v});
  }
  std::sort(k.top_stalls.begin(), k.top_stalls.end(), [](const Stall& a, const Stall& b) {
    return a.warps_per_issue_active != b.warps_per_issue_active
               ? a.warps_per_issue_active > b.warps_per_issue_active
               : a.reason < b.reason;
  });
  if (k.top_stalls.size() > 5) k.top_stalls.resize(5);
}

bool StartsLikeProfilerLine(std::string_view line) { return StartsWith(line, "=="); }

// ncu writes no trailer, so a CSV cut at a row boundary parses. What can be seen: a file that
// stops mid-line; on the details page, a kernel with fewer sections than the others (every
// kernel gets the same section set, so the last one cut short ends early); and launch IDs
// (0, 1, 2, ... in ncu's order) with gaps. Each is a warning and sets suspect_truncated.
// A raw page cut exactly after a complete row is indistinguishable from a shorter profile:
// the kernel count is always printed so a reader can check it against the launches.
void CheckTruncation(std::string_view text, const std::vector<std::vector<std::string>>& sections,
                     NcuReport* r) {
  if (!text.empty() && text.back() != '\n') {
    r->suspect_truncated = true;
    r->warnings.push_back(
        "the file does not end with a newline: its last row may be cut (re-export it)");
  }
  std::size_t most = 0;
  for (const auto& s : sections) most = std::max(most, s.size());
  for (std::size_t i = 0; i < sections.size() && r->kernels.size() > 1; ++i) {
    if (sections[i].size() >= most) continue;
    const bool last = i + 1 == sections.size();
    r->suspect_truncated = r->suspect_truncated || last;
    r->warnings.push_back(fmt::format(
        "kernel {}{} has {} of the {} sections the other kernels have (it ends in '{}'){}",
        r->kernels[i].id, last ? " (the last in the file)" : "", sections[i].size(), most,
        sections[i].empty() ? "" : sections[i].back(),
        last ? ": the CSV looks truncated; re-export it" : ""));
  }
  std::vector<long long> ids;
  for (const auto& k : r->kernels)
    if (auto v = ParseNcuNumber(k.id); v && *v >= 0 && *v < 1e15 && *v == std::floor(*v))
      ids.push_back(static_cast<long long>(*v));
  if (ids.size() == r->kernels.size() && !ids.empty()) {
    std::sort(ids.begin(), ids.end());
    long long gaps = 0;
    for (std::size_t i = 1; i < ids.size(); ++i) gaps += ids[i] - ids[i - 1] - 1;
    if (gaps > 0) {
      r->suspect_truncated = true;
      r->warnings.push_back(fmt::format(
          "{} launch ID(s) between {} and {} are missing: rows were lost (cut or filtered?)", gaps,
          ids.front(), ids.back()));
    }
  }
}

}  // namespace

std::optional<double> ParseNcuNumber(std::string_view s) {
  std::string clean;
  for (char c : s)
    if (c != ',' && c != ' ') clean += c;
  if (clean.empty() || clean == "n/a" || clean == "N/A") return std::nullopt;
  auto v = ParseFiniteDouble(clean, "");  // "nan", "inf", "1e999" are not figures
  if (!v) return std::nullopt;
  return *v;
}

Result<NcuReport> ParseNcuCsv(std::string_view text, const std::string& label) {
  NcuReport r;
  r.path = label;
  // The header is the first line that begins with "ID" as a CSV field and names the kernel.
  std::size_t pos = 0, header = std::string_view::npos;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    if (StartsWith(line, "\"ID\",") && line.find("\"Kernel Name\"") != std::string_view::npos) {
      header = pos;
      break;
    }
    if (!Trim(line).empty()) ++r.skipped_lines;
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  if (header == std::string_view::npos)
    return MakeError(
        "{}: no Nsight Compute CSV header (a line starting with \"ID\",...,\"Kernel Name\"); "
        "export with "
        "`ncu --csv` or `ncu --csv --page raw` (or `ncu --import FILE.ncu-rep --csv`)",
        label);
  std::vector<std::size_t> row_lines;
  auto rows = ParseCsv(text.substr(header), label, &row_lines);
  if (!rows.ok()) return rows.error();
  // The file's line of row I (ParseCsv counts from the header).
  const auto header_line = static_cast<std::size_t>(
      std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(header), '\n'));
  auto line_of = [&](std::size_t i) { return header_line + row_lines[i]; };
  std::vector<CsvRow>& all = *rows;
  const CsvRow& head = all[0];
  auto col = [&](std::string_view name) -> int {
    for (std::size_t i = 0; i < head.size(); ++i)
      if (head[i] == name) return static_cast<int>(i);
    return -1;
  };
  int c_id = col("ID"), c_name = col("Kernel Name"), c_block = col("Block Size"),
      c_grid = col("Grid Size"), c_dev = col("Device"), c_stream = col("Stream");
  int c_section = col("Section Name"), c_metric = col("Metric Name"), c_unit = col("Metric Unit"),
      c_value = col("Metric Value");
  bool details = c_metric >= 0 && c_value >= 0;
  r.layout = details ? "details" : "raw";
  std::map<std::string, std::size_t> index;        // ID -> kernels[]
  std::vector<std::vector<std::string>> sections;  // per kernel, in file order (details)
  std::vector<std::string> units;
  std::size_t units_line = 0;
  std::vector<std::size_t> first_line;  // per kernel: the line of its first row
  std::optional<std::string> last_id;   // the kernel of the previous row
  // Two exports appended into one file (`ncu --csv ... >> out.csv` twice) were merged into
  // wrong rows: the second header read as a kernel "ID", the second file's launch IDs (which
  // start again at 0) overwriting the first file's kernels. Refused, naming the line.
  const auto appended = [&](std::size_t i, const std::string& what) {
    return MakeError(
        "{}:{}: {}: two Nsight Compute exports appended into one file? Export each report to a "
        "file of its own (ncu --csv ... > one.csv)",
        label, line_of(i), what);
  };
  for (std::size_t i = 1; i < all.size(); ++i) {
    CsvRow& row = all[i];
    if (row.size() == 1 && StartsLikeProfilerLine(row[0])) continue;
    if (!row.empty() && StartsLikeProfilerLine(row[0])) continue;
    if (row.size() > static_cast<std::size_t>(c_id) &&
        row[static_cast<std::size_t>(c_id)] == "ID" &&
        std::find(row.begin(), row.end(), "Kernel Name") != row.end())
      return appended(
          i, fmt::format("a second CSV header (the first is on line {})", header_line + 1));
    // The details page leaves the rule columns off metric rows: short rows are padded
    // when they reach the metric value.
    if (details && row.size() < head.size() &&
        row.size() > static_cast<std::size_t>(std::max(c_value, c_id)))
      row.resize(head.size());
    if (row.size() != head.size()) {
      ++r.skipped_rows;
      continue;
    }
    if (!details && row[static_cast<std::size_t>(c_id)].empty()) {  // the units row
      if (units_line)
        return appended(i, fmt::format("a second units row (the first is on line {})", units_line));
      units = row;
      units_line = line_of(i);
      continue;
    }
    const std::string& id = row[static_cast<std::size_t>(c_id)];
    auto it = index.find(id);
    // A kernel is one row of the raw page, one run of rows of the details page.
    if (it != index.end() && (!details || last_id != id))
      return appended(i, fmt::format("launch ID {} again (its first row is on line {})", id,
                                     first_line[it->second]));
    last_id = id;
    if (it == index.end()) {
      KernelProfile k;
      k.id = id;
      auto get = [&](int c) { return c >= 0 ? row[static_cast<std::size_t>(c)] : std::string(); };
      k.name = get(c_name);
      k.block_size = get(c_block);
      k.grid_size = get(c_grid);
      k.device = get(c_dev);
      k.stream = get(c_stream);
      it = index.emplace(id, r.kernels.size()).first;
      r.kernels.push_back(std::move(k));
      first_line.push_back(line_of(i));
      sections.emplace_back();
    }
    KernelProfile& k = r.kernels[it->second];
    if (details && c_section >= 0) {
      auto& secs = sections[it->second];
      const std::string& sec = row[static_cast<std::size_t>(c_section)];
      if (secs.empty() || secs.back() != sec) secs.push_back(sec);
    }
    if (details) {
      const std::string& name = row[static_cast<std::size_t>(c_metric)];
      if (name.empty()) continue;  // rule rows
      Metric m{c_unit >= 0 ? row[static_cast<std::size_t>(c_unit)] : "",
               row[static_cast<std::size_t>(c_value)],
               c_section >= 0 ? row[static_cast<std::size_t>(c_section)] : ""};
      // "Memory Throughput" appears as % (Speed Of Light) and as bytes/s (Memory Workload):
      // keep the percent one under the plain name.
      auto existing = k.metrics.find(name);
      if (existing != k.metrics.end() && existing->second.unit == "%" && m.unit != "%") {
        k.metrics[name + " [" + m.unit + "]"] = m;
        continue;
      }
      if (existing != k.metrics.end() && m.unit == "%" && existing->second.unit != "%")
        k.metrics[name + " [" + existing->second.unit + "]"] = existing->second;
      k.metrics[name] = m;
    } else {
      for (std::size_t c = 0; c < head.size(); ++c) {
        if (static_cast<int>(c) == c_id || static_cast<int>(c) == c_name) continue;
        k.metrics[head[c]] = Metric{c < units.size() ? units[c] : "", row[c], ""};
      }
    }
  }
  if (r.kernels.empty())
    return MakeError(
        "{}: the Nsight Compute CSV has a header but no kernel rows (did the filter match no "
        "kernel?)",
        label);
  CheckTruncation(text, sections, &r);
  for (auto& k : r.kernels) Derive(k, &r.warnings);
  std::stable_sort(r.kernels.begin(), r.kernels.end(),
                   [](const KernelProfile& a, const KernelProfile& b) {
                     auto x = ParseNcuNumber(a.id), y = ParseNcuNumber(b.id);
                     return x && y ? *x < *y : a.id < b.id;
                   });
  if (r.skipped_rows)
    r.warnings.push_back(
        fmt::format("{} data row(s) of the wrong width were skipped (program output mixed into "
                    "the CSV?)",
                    r.skipped_rows));
  return r;
}

Result<NcuReport> ReadNcuCsv(const std::string& path) {
  auto text = ReadBoundedFile(path, kMaxTraceFileBytes);
  if (!text.ok()) return text.error();
  return ParseNcuCsv(*text, path);
}

namespace {
nlohmann::json Opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
std::string Fmt(const std::optional<double>& v, const char* f = "{:.2f}") {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
}
}  // namespace

nlohmann::json NcuToJson(const NcuReport& r) {
  nlohmann::json j;
  j["path"] = r.path;
  j["layout"] = r.layout;
  j["skipped_lines_before_header"] = r.skipped_lines;
  j["skipped_rows"] = r.skipped_rows;
  auto& ks = j["kernels"] = nlohmann::json::array();
  for (const auto& k : r.kernels) {
    nlohmann::json s = nlohmann::json::array();
    for (const auto& st : k.top_stalls)
      s.push_back({{"reason", st.reason}, {"warps_per_issue_active", st.warps_per_issue_active}});
    ks.push_back({{"launch_id", k.id},
                  {"kernel_name", k.name},
                  {"grid_size", k.grid_size},
                  {"block_size", k.block_size},
                  {"device", k.device},
                  {"duration_ns", Opt(k.duration_ns)},
                  {"registers_per_thread", Opt(k.registers_per_thread)},
                  {"achieved_occupancy_percent", Opt(k.achieved_occupancy_percent)},
                  {"issue_active_percent", Opt(k.issue_active_percent)},
                  {"sm_throughput_percent", Opt(k.sm_throughput_percent)},
                  {"memory_throughput_percent", Opt(k.memory_throughput_percent)},
                  {"l2_hit_rate_percent", Opt(k.l2_hit_rate_percent)},
                  {"local_spilling_requests", Opt(k.local_spilling_requests)},
                  {"sm_frequency_mhz", Opt(k.sm_frequency_mhz)},
                  {"top_scheduler_stalls", s},
                  {"metric_count", k.metrics.size()}});
  }
  j["warnings"] = r.warnings;
  j["suspect_truncated"] = r.suspect_truncated;
  j["clock_window"] = kNcuClockWindow;
  return j;
}

namespace {

// A kernel's figures, in the column order of both tables (id .. spills), and its top stalls.
std::vector<std::string> FigureCells(const KernelProfile& k) {
  return {fmt::format("{}", k.id),
          k.duration_ns ? fmt::format("{:.1f} us", *k.duration_ns / 1e3) : "-",
          Fmt(k.sm_frequency_mhz, "{:.0f}"),
          Fmt(k.registers_per_thread, "{:.0f}"),
          Fmt(k.achieved_occupancy_percent),
          Fmt(k.issue_active_percent),
          Fmt(k.sm_throughput_percent),
          Fmt(k.memory_throughput_percent),
          Fmt(k.l2_hit_rate_percent),
          Fmt(k.local_spilling_requests, "{:.0f}")};
}

std::string StallsText(const KernelProfile& k) {
  std::vector<std::string> parts;
  for (const auto& s : k.top_stalls)
    parts.push_back(fmt::format("{} {:.2f}", s.reason, s.warps_per_issue_active));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string RenderNcuText(const NcuReport& r) {
  std::string o = fmt::format(
      "{} (Nsight Compute, {} page, {} kernel(s); {} line(s) of program output skipped)\n", r.path,
      r.layout, r.kernels.size(), r.skipped_lines);
  o += fmt::format("clock: {}\n", kNcuClockWindow);
  for (const auto& w : r.warnings) o += "warning: " + w + "\n";
  static constexpr int kWidths[] = {4, 11, 6, 5, 7, 7, 7, 7, 7, 8};
  static constexpr const char* kHeads[] = {"id",     "duration", "SM MHz", "regs",   "occup%",
                                           "issue%", "sm%",      "mem%",   "l2hit%", "spills"};
  o += "\n";
  for (int i = 0; i < 10; ++i) o += fmt::format("{}{:>{}}", i ? " " : "", kHeads[i], kWidths[i]);
  o += "  kernel (grid x block)\n";
  for (const auto& k : r.kernels) {
    auto cells = FigureCells(k);
    for (int i = 0; i < 10; ++i) o += fmt::format("{}{:>{}}", i ? " " : "", cells[i], kWidths[i]);
    o += fmt::format("  {} {} x {}\n", k.name.size() > 70 ? k.name.substr(0, 67) + "..." : k.name,
                     k.grid_size, k.block_size);
    if (!k.top_stalls.empty())
      o += fmt::format("       top stalls (warps per issue-active cycle): {}\n", StallsText(k));
  }
  return o;
}

std::string RenderNcuMarkdown(const NcuReport& r) {
  std::string o = fmt::format(
      "**vouch ncu**: {} (Nsight Compute, {} page, {} kernel(s); {} line(s) of program output "
      "skipped)\n\nclock: {}\n",
      MarkdownCode(r.path), r.layout, r.kernels.size(), r.skipped_lines, kNcuClockWindow);
  for (const auto& w : r.warnings) o += "\n> warning: " + MarkdownCell(w) + "\n";
  o += "\n| id | duration | SM MHz | regs | occup % | issue % | sm % | mem % | L2 hit % | spills | "
       "kernel | grid x block | top stalls |\n";
  o += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n";
  for (const auto& k : r.kernels)
    o += fmt::format("| {} | {} | {} x {} | {} |\n", fmt::join(FigureCells(k), " | "),
                     MarkdownCode(k.name), MarkdownCell(k.grid_size), MarkdownCell(k.block_size),
                     MarkdownCell(StallsText(k)));
  return o;
}

}  // namespace vouch::ncu
