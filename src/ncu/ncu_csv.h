// Nsight Compute CSV exports into a per-kernel table. Both layouts:
//   raw page (`ncu --csv --page raw`): wide, one row per kernel, one column per metric,
//     a units row after the header;
//   details page (`ncu --csv`, the default): long, one row per kernel x metric with
//     "Section Name", "Metric Name", "Metric Unit", "Metric Value".
// Lines before the header (the profiled program's output, ==PROF== and ==WARNING== lines)
// are skipped, as are such lines and rows of the wrong width among the data.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace vouch::ncu {

struct Stall {
  std::string reason;  // "long_scoreboard", ...
  double warps_per_issue_active = 0;
};

struct Metric {
  std::string unit;
  std::string value;    // as written ("29,088")
  std::string section;  // details page only
};

struct KernelProfile {
  std::string id;  // ncu's "ID" (launch order)
  std::string name;
  std::string block_size, grid_size, device, stream;
  std::optional<double> duration_ns;
  std::optional<double> registers_per_thread;
  std::optional<double> achieved_occupancy_percent;
  std::optional<double> issue_active_percent;
  std::optional<double> sm_throughput_percent;
  std::optional<double> memory_throughput_percent;
  std::optional<double> l2_hit_rate_percent;
  std::optional<double> local_spilling_requests;
  // The SM clock ncu recorded for this kernel (details: "SM Frequency"; raw:
  // sm__/gpc__cycles_elapsed.avg.per_second), in MHz.
  std::optional<double> sm_frequency_mhz;
  std::vector<Stall> top_stalls;  // up to 5, largest first (raw page with stall metrics)
  // Every metric by name, as written, for the first kernel in the file only: a sample of what
  // the export holds. The others' are read into the figures above as their rows end and
  // counted, not kept (issue 39: a table of every metric of every kernel was the file again).
  std::map<std::string, Metric> metrics;
  std::size_t metric_count = 0;  // every metric the kernel has
};

struct NcuReport {
  std::string path;
  std::string layout;  // "raw" or "details"
  // In ID order. A deque: grown a kernel at a time while the file is read, it never holds
  // twice the table (a vector's doubling did, and so did moving into one at the end).
  std::deque<KernelProfile> kernels;
  std::int64_t skipped_lines = 0;  // program output and ==PROF== lines before the header
  std::int64_t skipped_rows = 0;   // data rows of the wrong width
  std::vector<std::string> warnings;
  // The file looks cut short (no final newline, the last kernel missing sections, launch IDs
  // missing): the table may lack kernels. See the warnings.
  bool suspect_truncated = false;
};

// Reads PATH in chunks (NcuCsvStream): memory of one row and the per-kernel figures.
Result<NcuReport> ReadNcuCsv(const std::string& path);
Result<NcuReport> ParseNcuCsv(std::string_view text, const std::string& label);
// "29,088" -> 29088; "n/a", "" -> nullopt.
std::optional<double> ParseNcuNumber(std::string_view s);

// An ncu export is never taken under a vouch clock window: its figures are unattributed (the
// per-kernel SM frequency is the clock ncu itself saw, under its own --clock-control).
inline constexpr const char* kNcuClockWindow =
    "unattributed: an ncu export has no vouch clock window; per kernel, the SM frequency ncu "
    "recorded (under its --clock-control) is shown";

nlohmann::json NcuToJson(const NcuReport& r);
std::string RenderNcuText(const NcuReport& r);
// The same texts (DumpJson(NcuToJson(R), 2) plus a line end; RenderNcuText) handed to OUT a
// piece at a time: a table of 100,000 kernels is never held whole (as a tree or a string).
using TextSink = std::function<void(std::string_view)>;
void WriteNcuJson(const NcuReport& r, const TextSink& out);
void WriteNcuText(const NcuReport& r, const TextSink& out);
// The same table as Markdown (a pull request or a notebook).
std::string RenderNcuMarkdown(const NcuReport& r);

}  // namespace vouch::ncu
