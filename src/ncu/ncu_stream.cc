#include "ncu/ncu_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "ncu/csv.h"
#include "ncu/ncu_derive.h"
#include "util/bounded_file.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch::ncu {
using stream_detail::KernelMetrics;

struct NcuCsvStream::State {
  std::string label;
  NcuReport r;
  // Before the header: the lines seen, a line cut by the chunk's end.
  std::size_t header_line = 0;
  std::string pre;
  std::unique_ptr<CsvReader> csv;
  CsvReader::RowSink sink;
  char last_byte = 0;
  // The header's columns.
  bool have_head = false;
  std::vector<std::string> head;
  int c_id = -1, c_name = -1, c_block = -1, c_grid = -1, c_dev = -1, c_stream = -1;
  int c_section = -1, c_metric = -1, c_unit = -1, c_value = -1;
  bool details = false;
  // The raw page: each consulted column's slot, and the kernel's metric count (its columns).
  std::vector<std::pair<std::size_t, KernelMetrics::Entry*>> raw_columns;
  std::size_t raw_count = 0;
  std::vector<std::string> units;
  std::size_t units_line = 0;
  // Launch IDs seen. ncu counts them 0, 1, 2, ...: an integer above every earlier one is new
  // without a lookup and kept as 12 bytes; any other ID goes into `index`.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> counted;  // ascending ID -> kernels[]
  std::map<std::string, std::size_t, std::less<>> index;         // ID -> kernels[]
  std::vector<std::size_t> first_line;                           // the line of its first row
  std::vector<std::uint32_t> section_runs;                       // details: sections, in file order
  std::vector<std::uint32_t> last_section;                       // ... and the last one's name
  std::vector<std::string> section_names;
  std::unordered_map<std::string, std::uint32_t> section_ids;
  std::string last_id;  // the kernel of the previous row
  bool open_kernel = false;
  KernelMetrics km;
  std::vector<std::string> derive_warnings;
  CsvFields row;

  std::optional<std::size_t> Seen(std::string_view id) const;
  void Remember(std::string_view id, std::size_t kernel);
  Status Head(const CsvFields& fields);
  Status Row(const CsvFields& fields, std::size_t line);
  void CloseKernel();
  std::uint32_t SectionId(std::string_view name);
  void CheckTruncation();
  Status StartCsv(std::string_view header_line_text, bool newline);
};

Status NcuCsvStream::State::Head(const CsvFields& fields) {
  head.assign(fields.begin(), fields.end());
  auto col = [&](std::string_view name) -> int {
    for (std::size_t i = 0; i < head.size(); ++i)
      if (head[i] == name) return static_cast<int>(i);
    return -1;
  };
  c_id = col("ID"), c_name = col("Kernel Name"), c_block = col("Block Size"),
  c_grid = col("Grid Size"), c_dev = col("Device"), c_stream = col("Stream");
  c_section = col("Section Name"), c_metric = col("Metric Name"), c_unit = col("Metric Unit"),
  c_value = col("Metric Value");
  details = c_metric >= 0 && c_value >= 0;
  r.layout = details ? "details" : "raw";
  if (!details) {
    std::set<std::string_view> names;
    for (std::size_t c = 0; c < head.size(); ++c) {
      if (static_cast<int>(c) == c_id || static_cast<int>(c) == c_name) continue;
      names.insert(head[c]);
      // In column order: of two columns of one name, the later one is the metric.
      if (stream_detail::Consulted(head[c])) raw_columns.emplace_back(c, &km.Get(head[c]));
    }
    raw_count = names.size();
  }
  have_head = true;
  return OkStatus();
}

namespace stream_detail {
// ID as a count ("0", "17"; not "017", "+1", "1.0"): those are IDs of their own.
std::optional<std::uint64_t> CountedId(std::string_view id) {
  if (id.empty() || id.size() > 18 || (id.size() > 1 && id[0] == '0')) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : id) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}
}  // namespace stream_detail

std::optional<std::size_t> NcuCsvStream::State::Seen(std::string_view id) const {
  if (auto v = stream_detail::CountedId(id)) {
    auto it =
        std::lower_bound(counted.begin(), counted.end(), std::make_pair(*v, std::uint32_t{0}));
    if (it != counted.end() && it->first == *v) return it->second;
  }
  auto it = index.find(id);
  if (it == index.end()) return std::nullopt;
  return it->second;
}

void NcuCsvStream::State::Remember(std::string_view id, std::size_t kernel) {
  auto v = stream_detail::CountedId(id);
  if (v && (counted.empty() || counted.back().first < *v) && kernel <= UINT32_MAX)
    counted.emplace_back(*v, static_cast<std::uint32_t>(kernel));
  else
    index.emplace(std::string(id), kernel);
}

std::uint32_t NcuCsvStream::State::SectionId(std::string_view name) {
  auto [it, fresh] = section_ids.try_emplace(std::string(name), 0);
  if (fresh) {
    it->second = static_cast<std::uint32_t>(section_names.size());
    section_names.push_back(it->first);
  }
  return it->second;
}

void NcuCsvStream::State::CloseKernel() {
  KernelProfile& k = r.kernels.back();
  stream_detail::Derive(k, km, &derive_warnings);
  if (r.kernels.size() == 1 && details)  // the first kernel's metrics, every one
    for (const auto* e : km.touched()) k.metrics[e->first] = e->second.m;
  k.metric_count = details ? km.count() : raw_count;
  km.Next(details);
  open_kernel = false;
}

Status NcuCsvStream::State::Row(const CsvFields& fields, std::size_t line) {
  if (!have_head) return Head(fields);
  row.assign(fields.begin(), fields.end());
  if (!row.empty() && StartsWith(row[0], "==")) return OkStatus();  // ==PROF== among the rows
  // Two exports appended into one file (`ncu --csv ... >> out.csv` twice) were merged into
  // wrong rows: the second header read as a kernel "ID", the second file's launch IDs (which
  // start again at 0) overwriting the first file's kernels. Refused, naming the line.
  const auto appended = [&](const std::string& what) -> Status {
    return MakeError(
        "{}:{}: {}: two Nsight Compute exports appended into one file? Export each report to a "
        "file of its own (ncu --csv ... > one.csv)",
        label, line, what);
  };
  const auto at = [](int c) { return static_cast<std::size_t>(c); };
  if (row.size() > at(c_id) && row[at(c_id)] == "ID" &&
      std::find(row.begin(), row.end(), "Kernel Name") != row.end())
    return appended(fmt::format("a second CSV header (the first is on line {})", header_line + 1));
  // The details page leaves the rule columns off metric rows: short rows are padded
  // when they reach the metric value.
  if (details && row.size() < head.size() && row.size() > at(std::max(c_value, c_id)))
    row.resize(head.size());
  if (row.size() != head.size()) {
    ++r.skipped_rows;
    return OkStatus();
  }
  if (!details && row[at(c_id)].empty()) {  // the units row
    if (units_line)
      return appended(fmt::format("a second units row (the first is on line {})", units_line));
    units.assign(row.begin(), row.end());
    units_line = line;
    return OkStatus();
  }
  const std::string_view id = row[at(c_id)];
  auto seen = Seen(id);
  // A kernel is one row of the raw page, one run of rows of the details page.
  if (seen && (!details || last_id != id))
    return appended(
        fmt::format("launch ID {} again (its first row is on line {})", id, first_line[*seen]));
  last_id.assign(id);
  if (!seen) {
    if (open_kernel) CloseKernel();
    KernelProfile k;
    k.id = id;
    auto get = [&](int c) { return c >= 0 ? std::string(row[at(c)]) : std::string(); };
    k.name = get(c_name);
    k.block_size = get(c_block);
    k.grid_size = get(c_grid);
    k.device = get(c_dev);
    k.stream = get(c_stream);
    seen = r.kernels.size();
    Remember(id, *seen);
    r.kernels.push_back(std::move(k));
    first_line.push_back(line);
    section_runs.push_back(0);
    last_section.push_back(0);
    open_kernel = true;
  }
  const std::size_t ki = *seen;
  if (!details) {
    if (ki == 0)  // the first kernel's metrics, every one (of two columns of one name, the later)
      for (std::size_t c = 0; c < head.size(); ++c)
        if (static_cast<int>(c) != c_id && static_cast<int>(c) != c_name)
          r.kernels[0].metrics[head[c]] =
              Metric{c < units.size() ? units[c] : "", std::string(row[c]), ""};
    for (const auto& [c, entry] : raw_columns)
      km.Set(*entry, c < units.size() ? std::string_view(units[c]) : std::string_view(), row[c],
             {});
    CloseKernel();
    return OkStatus();
  }
  const std::string_view sec = c_section >= 0 ? row[at(c_section)] : std::string_view();
  if (c_section >= 0 &&
      (section_runs[ki] == 0 || section_names[last_section[ki]] != row[at(c_section)])) {
    ++section_runs[ki];
    last_section[ki] = SectionId(sec);
  }
  const std::string_view name = row[at(c_metric)];
  if (name.empty()) return OkStatus();  // rule rows
  const std::string_view unit = c_unit >= 0 ? row[at(c_unit)] : std::string_view();
  const std::string_view value = row[at(c_value)];
  // "Memory Throughput" appears as % (Speed Of Light) and as bytes/s (Memory Workload):
  // keep the percent one under the plain name.
  auto& e = km.Get(name);
  const bool existing = km.Current(e);
  if (existing && e.second.m.unit == "%" && unit != "%") {
    km.Set(km.Get(fmt::format("{} [{}]", name, unit)), unit, value, sec);
    return OkStatus();
  }
  if (existing && unit == "%" && e.second.m.unit != "%") {
    auto& kept = km.Get(fmt::format("{} [{}]", name, e.second.m.unit));
    kept.second.m = e.second.m;
    km.Mark(kept);
  }
  km.Set(e, unit, value, sec);
  return OkStatus();
}

// ncu writes no trailer, so a CSV cut at a row boundary parses. What can be seen: a file that
// stops mid-line; on the details page, a kernel with fewer sections than the others (every
// kernel gets the same section set, so the last one cut short ends early); and launch IDs
// (0, 1, 2, ... in ncu's order) with gaps. Each is a warning and sets suspect_truncated.
// A raw page cut exactly after a complete row is indistinguishable from a shorter profile:
// the kernel count is always printed so a reader can check it against the launches.
void NcuCsvStream::State::CheckTruncation() {
  if (last_byte != '\n') {
    r.suspect_truncated = true;
    r.warnings.push_back(
        "the file does not end with a newline: its last row may be cut (re-export it)");
  }
  std::uint32_t most = 0;
  for (auto n : section_runs) most = std::max(most, n);
  for (std::size_t i = 0; i < section_runs.size() && r.kernels.size() > 1; ++i) {
    if (section_runs[i] >= most) continue;
    const bool last = i + 1 == section_runs.size();
    r.suspect_truncated = r.suspect_truncated || last;
    r.warnings.push_back(fmt::format(
        "kernel {}{} has {} of the {} sections the other kernels have (it ends in '{}'){}",
        r.kernels[i].id, last ? " (the last in the file)" : "", section_runs[i], most,
        section_runs[i] == 0 ? "" : section_names[last_section[i]],
        last ? ": the CSV looks truncated; re-export it" : ""));
  }
  std::vector<long long> ids;
  for (const auto& k : r.kernels)
    if (auto v = ParseNcuNumber(k.id); v && *v >= 0 && *v < 1e15 && *v == std::floor(*v))
      ids.push_back(static_cast<long long>(*v));
  if (ids.size() == r.kernels.size() && !ids.empty()) {
    std::sort(ids.begin(), ids.end());
    long long gaps = 0;
    for (std::size_t i = 1; i < ids.size(); ++i) gaps += ids[i] - ids[i - 1] - 1;
    if (gaps > 0) {
      r.suspect_truncated = true;
      r.warnings.push_back(fmt::format(
          "{} launch ID(s) between {} and {} are missing: rows were lost (cut or filtered?)", gaps,
          ids.front(), ids.back()));
    }
  }
}

namespace stream_detail {
// The header is the first line that begins with "ID" as a CSV field and names the kernel.
bool IsNcuHeader(std::string_view line) {
  return StartsWith(line, "\"ID\",") && line.find("\"Kernel Name\"") != std::string_view::npos;
}
}  // namespace stream_detail

Status NcuCsvStream::State::StartCsv(std::string_view header_line_text, bool newline) {
  csv = std::make_unique<CsvReader>(label, header_line + 1);
  std::string text(header_line_text);
  if (newline) text += '\n';
  pre.clear();
  return csv->Feed(text, sink);
}

NcuCsvStream::NcuCsvStream(std::string label) : s_(std::make_unique<State>()) {
  s_->label = std::move(label);
  s_->r.path = s_->label;
  s_->sink = [st = s_.get()](const CsvFields& f, std::size_t line) { return st->Row(f, line); };
}

NcuCsvStream::~NcuCsvStream() = default;

Status NcuCsvStream::Feed(std::string_view chunk) {
  State& s = *s_;
  if (chunk.empty()) return OkStatus();
  s.last_byte = chunk.back();
  if (s.csv) return s.csv->Feed(chunk, s.sink);
  // Before the header: the profiled program's output and ==PROF== lines, counted and skipped.
  std::size_t pos = 0;
  while (pos < chunk.size()) {
    const std::size_t eol = chunk.find('\n', pos);
    if (eol == std::string_view::npos) {
      s.pre.append(chunk.substr(pos));
      if (s.pre.size() > kMaxCsvRowBytes)
        return MakeError("{}:{}: a line of more than {} before any Nsight Compute CSV header",
                         s.label, s.header_line + 1, DescribeSize(kMaxCsvRowBytes));
      return OkStatus();
    }
    std::string_view line = chunk.substr(pos, eol - pos);
    if (!s.pre.empty()) line = s.pre.append(line);
    if (stream_detail::IsNcuHeader(line)) {
      if (auto st = s.StartCsv(line, true); !st) return st;
      return s.csv->Feed(chunk.substr(eol + 1), s.sink);
    }
    if (!Trim(line).empty()) ++s.r.skipped_lines;
    ++s.header_line;
    s.pre.clear();
    pos = eol + 1;
  }
  return OkStatus();
}

Result<NcuReport> NcuCsvStream::Finish() {
  State& s = *s_;
  if (!s.csv && !s.pre.empty()) {  // the last line, without a line end
    if (stream_detail::IsNcuHeader(s.pre)) {
      if (auto st = s.StartCsv(s.pre, false); !st) return st.error();
    } else if (!Trim(s.pre).empty()) {
      ++s.r.skipped_lines;
    }
  }
  if (!s.csv)
    return MakeError(
        "{}: no Nsight Compute CSV header (a line starting with \"ID\",...,\"Kernel Name\"); "
        "export with "
        "`ncu --csv` or `ncu --csv --page raw` (or `ncu --import FILE.ncu-rep --csv`)",
        s.label);
  if (auto st = s.csv->Finish(s.sink); !st) return st.error();
  if (s.open_kernel) s.CloseKernel();
  NcuReport& r = s.r;
  if (r.kernels.empty())
    return MakeError(
        "{}: the Nsight Compute CSV has a header but no kernel rows (did the filter match no "
        "kernel?)",
        s.label);
  s.CheckTruncation();
  for (auto& w : s.derive_warnings) r.warnings.push_back(std::move(w));

  // In ID order; ncu writes them so, and a sorted table is not sorted again.
  const auto before = [](const KernelProfile& a, const KernelProfile& b) {
    auto x = ParseNcuNumber(a.id), y = ParseNcuNumber(b.id);
    return x && y ? *x < *y : a.id < b.id;
  };
  bool sorted = true;
  {
    std::optional<double> prev;
    for (std::size_t i = 0; i < r.kernels.size() && sorted; ++i) {
      auto cur = ParseNcuNumber(r.kernels[i].id);
      if (i > 0) sorted = !(prev && cur ? *cur < *prev : r.kernels[i].id < r.kernels[i - 1].id);
      prev = cur;
    }
  }
  if (!sorted) std::stable_sort(r.kernels.begin(), r.kernels.end(), before);
  if (r.skipped_rows)
    r.warnings.push_back(
        fmt::format("{} data row(s) of the wrong width were skipped (program output mixed into "
                    "the CSV?)",
                    r.skipped_rows));
  return std::move(r);
}

}  // namespace vouch::ncu
