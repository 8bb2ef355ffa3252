#include "ncu/ncu_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ncu/ncu_stream.h"
#include "util/bounded_file.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch::ncu {

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
  NcuCsvStream stream(label);
  if (auto s = stream.Feed(text); !s) return s.error();
  return stream.Finish();
}

Result<NcuReport> ReadNcuCsv(const std::string& path) {
  auto f = BoundedFile::Open(path, kMaxTraceFileBytes);
  if (!f) return f.error();
  NcuCsvStream stream(path);
  if (auto s = f->ReadChunks([&](std::string_view chunk) { return stream.Feed(chunk); }); !s)
    return s.error();
  return stream.Finish();
}

namespace {
nlohmann::json Opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
std::string Fmt(const std::optional<double>& v, const char* f = "{:.2f}") {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");
}
}  // namespace

namespace {

// K's JSON into J. Assigned key by key: a J kept from the previous kernel keeps its nodes
// (one object for a table of 100,000 kernels, not 16 allocations a kernel).
void FillKernelJson(nlohmann::json& j, const KernelProfile& k) {
  nlohmann::json& s = j["top_scheduler_stalls"];
  s = nlohmann::json::array();
  for (const auto& st : k.top_stalls)
    s.push_back({{"reason", st.reason}, {"warps_per_issue_active", st.warps_per_issue_active}});
  j["launch_id"] = k.id;
  j["kernel_name"] = k.name;
  j["grid_size"] = k.grid_size;
  j["block_size"] = k.block_size;
  j["device"] = k.device;
  j["duration_ns"] = Opt(k.duration_ns);
  j["registers_per_thread"] = Opt(k.registers_per_thread);
  j["achieved_occupancy_percent"] = Opt(k.achieved_occupancy_percent);
  j["issue_active_percent"] = Opt(k.issue_active_percent);
  j["sm_throughput_percent"] = Opt(k.sm_throughput_percent);
  j["memory_throughput_percent"] = Opt(k.memory_throughput_percent);
  j["l2_hit_rate_percent"] = Opt(k.l2_hit_rate_percent);
  j["local_spilling_requests"] = Opt(k.local_spilling_requests);
  j["sm_frequency_mhz"] = Opt(k.sm_frequency_mhz);
  j["metric_count"] = k.metric_count;
}

nlohmann::json KernelJson(const KernelProfile& k) {
  nlohmann::json j = nlohmann::json::object();
  FillKernelJson(j, k);
  return j;
}

// Everything but the kernels ("kernels" an empty array).
nlohmann::json ReportJson(const NcuReport& r) {
  nlohmann::json j;
  j["path"] = r.path;
  j["layout"] = r.layout;
  j["skipped_lines_before_header"] = r.skipped_lines;
  j["skipped_rows"] = r.skipped_rows;
  j["kernels"] = nlohmann::json::array();
  j["warnings"] = r.warnings;
  j["suspect_truncated"] = r.suspect_truncated;
  j["clock_window"] = kNcuClockWindow;
  return j;
}

}  // namespace

nlohmann::json NcuToJson(const NcuReport& r) {
  nlohmann::json j = ReportJson(r);
  auto& ks = j["kernels"];
  for (const auto& k : r.kernels) ks.push_back(KernelJson(k));
  return j;
}

void WriteNcuJson(const NcuReport& r, const TextSink& out) {
  // The report's keys around the kernels, dumped once: only "clock_window", a constant, comes
  // before "kernels", so the first empty "kernels" array is the one.
  const std::string outer = DumpJson(ReportJson(r), 2);
  constexpr std::string_view kEmpty = "\"kernels\": []";
  const std::size_t at = outer.find(kEmpty);
  if (r.kernels.empty() || at == std::string::npos) {
    out(outer);
    out("\n");
    return;
  }
  out(std::string_view(outer).substr(0, at));
  out("\"kernels\": [\n");
  std::string piece;
  nlohmann::json kernel = nlohmann::json::object();
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    // A kernel dumped alone, indented to its depth (JSON strings hold no raw line break).
    FillKernelJson(kernel, r.kernels[i]);
    const std::string one = DumpJson(kernel, 2);
    piece.assign("    ");
    std::size_t from = 0;
    for (std::size_t eol; (eol = one.find('\n', from)) != std::string::npos; from = eol + 1) {
      piece.append(one, from, eol + 1 - from);
      piece += "    ";
    }
    piece.append(one, from);
    piece += i + 1 < r.kernels.size() ? ",\n" : "\n";
    out(piece);
  }
  out("  ]");
  out(std::string_view(outer).substr(at + kEmpty.size()));
  out("\n");
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

void WriteNcuText(const NcuReport& r, const TextSink& out) {
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
    if (o.size() > (64 << 10)) {  // a piece at a time: never the whole table in memory
      out(o);
      o.clear();
    }
    auto cells = FigureCells(k);
    for (int i = 0; i < 10; ++i) o += fmt::format("{}{:>{}}", i ? " " : "", cells[i], kWidths[i]);
    o += fmt::format("  {} {} x {}\n", k.name.size() > 70 ? k.name.substr(0, 67) + "..." : k.name,
                     k.grid_size, k.block_size);
    if (!k.top_stalls.empty())
      o += fmt::format("       top stalls (warps per issue-active cycle): {}\n", StallsText(k));
  }
  out(o);
}

std::string RenderNcuText(const NcuReport& r) {
  std::string o;
  WriteNcuText(r, [&](std::string_view piece) { o += piece; });
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
