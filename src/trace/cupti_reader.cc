#include "trace/cupti_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "util/fs.h"
#include "util/number.h"

namespace vouch::trace {
namespace {

constexpr std::string_view kFormat = "vouch-gpu-trace";
constexpr std::int64_t kVersion = 1;
// A trace is read whole; the tracer writes about 150 bytes per kernel, so this holds tens of
// millions of kernels. Larger is refused by name rather than read into memory.
constexpr std::uint64_t kMaxBytes = 8ull << 30;

std::string SignalName(std::int64_t sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return fmt::format("signal {}", sig);
  }
}

class Parser {
 public:
  Parser(const std::string& label, Trace* t) : label_(label), t_(t), names_(&t->names) {}

  Status Run(std::string_view text);

 private:
  // The value of KEY in the current record as a non-negative integer; an error naming the line.
  Result<std::int64_t> Int(simdjson::dom::element rec, const char* key) {
    std::int64_t v = 0;
    if (rec[key].get_int64().get(v) != simdjson::SUCCESS)
      return MakeError("{}:{}: record lacks the integer field \"{}\"", label_, line_, key);
    return v;
  }
  // A time: KEY's integer less the header's offset, inside +-kMaxTimeNs (model.h) so that no
  // difference or sum a summary forms overflows; an error naming the line.
  Result<std::int64_t> Time(simdjson::dom::element rec, const char* key) {
    auto v = Int(rec, key);
    if (!v) return v;
    std::int64_t t = 0;
    if (__builtin_sub_overflow(*v, offset_, &t) || !TimeInRange(t))
      return MakeError(
          "{}:{}: \"{}\" {} (less the offset {}) is beyond +-2^62 ns (146 years): "
          "not a real time",
          label_, line_, key, *v, offset_);
    return t;
  }
  // A count of dropped records: an integer from 0 up, added without overflow.
  Status AddDropped(simdjson::dom::element rec, const char* key, std::int64_t* total) {
    std::int64_t n = 0;
    if (rec[key].get_int64().get(n) != simdjson::SUCCESS)
      return MakeError("{}:{}: \"{}\" is not a count of dropped records (an integer below 2^63)",
                       label_, line_, key);
    if (n < 0)
      return MakeError("{}:{}: \"{}\" is negative ({}): not a count of dropped records", label_,
                       line_, key, n);
    auto sum = CheckedAdd(*total, n, fmt::format("{}:{}: dropped records", label_, line_));
    if (!sum) return sum.error();
    *total = *sum;
    return OkStatus();
  }
  std::int64_t IntOr(simdjson::dom::element rec, const char* key, std::int64_t fallback) {
    std::int64_t v = 0;
    return rec[key].get_int64().get(v) == simdjson::SUCCESS ? v : fallback;
  }
  Result<std::uint32_t> NameRef(simdjson::dom::element rec) {
    auto id = Int(rec, "n");
    if (!id) return id.error();
    auto it = name_map_.find(*id);
    if (it == name_map_.end())
      return MakeError("{}:{}: name id {} is used before a name line defines it", label_, line_,
                       *id);
    return it->second;
  }
  Status Header(simdjson::dom::element rec);
  Status Record(simdjson::dom::element rec);
  Status Op(simdjson::dom::element rec, GpuOpKind kind);
  void FinishRanges();
  void DedupeLaunches();

  std::string label_;
  Trace* t_;
  NameTable names_;
  std::int64_t line_ = 0;
  std::int64_t pid_ = -1;
  std::int64_t offset_ = 0;  // subtracted from every timestamp
  bool footer_ = false;
  std::int64_t footer_dropped_ = 0;
  std::unordered_map<std::int64_t, std::uint32_t> name_map_;  // file's name id -> ours
  struct Open {
    std::int64_t ts = 0, tid = -1;
    std::uint32_t name = 0;
  };
  std::unordered_map<std::int64_t, Open> open_;  // NVTX ranges started, not yet ended
  std::int64_t unmatched_ends_ = 0, instants_ = 0;
  std::vector<std::int64_t> signals_;
  std::string command_;
  TracerSelfCheck check_;
  std::string StringOr(simdjson::dom::element rec, const char* key) {
    std::string_view v;
    return rec[key].get_string().get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
  }
};

Status Parser::Header(simdjson::dom::element rec) {
  std::string_view type, format;
  if (rec["type"].get_string().get(type) != simdjson::SUCCESS || type != "header" ||
      rec["format"].get_string().get(format) != simdjson::SUCCESS || format != kFormat)
    return MakeError("{}:1: not a vouch GPU trace (the first line is not its header)", label_);
  std::int64_t version = IntOr(rec, "version", -1);
  if (version != kVersion)
    return MakeError("{}:1: GPU trace format version {}, this vouch reads version {}", label_,
                     version, kVersion);
  bool ok = false;
  if (rec["ok"].get_bool().get(ok) != simdjson::SUCCESS || !ok) {
    // The tracer's own reason, where it gives one (no CUPTI fits the driver, say).
    if (std::string why = StringOr(rec, "error"); !why.empty())
      return MakeError("{}: the tracer did not trace this process: {}", label_, why);
    return MakeError(
        "{}: the tracer could not enable CUPTI in this process (header ok: false; its stderr "
        "says why: no GPU, a driver without CUPTI support, or another profiler holding CUPTI)",
        label_);
  }
  pid_ = IntOr(rec, "pid", -1);
  offset_ = IntOr(rec, "timestamp_offset_ns", 0);
  std::string_view clock;
  if (rec["clock"].get_string().get(clock) == simdjson::SUCCESS && clock != "CLOCK_REALTIME")
    t_->warnings.push_back(fmt::format("{}: timestamps on {}, not CLOCK_REALTIME", label_, clock));
  simdjson::dom::array cmd;
  if (rec["cmdline"].get_array().get(cmd) == simdjson::SUCCESS) {
    std::string joined;
    for (auto w : cmd) {
      std::string_view s;
      if (w.get_string().get(s) != simdjson::SUCCESS) continue;
      if (!joined.empty()) joined += ' ';
      joined += s;
    }
    if (!joined.empty()) command_ = joined;
  }
  // The tracer's own check (absent before 2026-12-06: nothing counted, nothing judged).
  check_.pid = pid_;
  check_.file = label_;
  check_.counting = StringOr(rec, "launch_count") == "on";
  check_.subscribe_error = StringOr(rec, "subscribe_error");
  check_.other_subscriber = StringOr(rec, "other_subscriber");
  if (std::string v = StringOr(rec, "cupti_path"); !v.empty())
    check_.cupti = fmt::format("{} {} ({})", StringOr(rec, "cupti_loaded_version"), v,
                               StringOr(rec, "cupti_choice"));
  return OkStatus();
}

Status Parser::Op(simdjson::dom::element rec, GpuOpKind kind) {
  auto s = Time(rec, "s");
  auto e = Time(rec, "e");
  if (!s || !e) return (!s ? s : e).error();
  if (*e < *s)
    return MakeError("{}:{}: a GPU record ends ({}) before it starts ({})", label_, line_, *e, *s);
  GpuOp op;
  op.kind = kind;
  op.start_ns = *s;
  op.end_ns = *e;
  op.device = static_cast<std::int32_t>(IntOr(rec, "dev", -1));
  op.stream = IntOr(rec, "str", -1);
  op.correlation = IntOr(rec, "corr", -1);
  op.pid = static_cast<std::int32_t>(pid_);
  op.graph_id =
      static_cast<std::uint32_t>(std::clamp<std::int64_t>(IntOr(rec, "gid", 0), 0, 0xFFFFFFFF));
  if (kind == GpuOpKind::kKernel) {
    auto n = NameRef(rec);
    if (!n) return n.error();
    op.name_id = *n;
  } else {
    op.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(IntOr(rec, "bytes", 0), 0));
    op.name_id = names_.Intern(kind == GpuOpKind::kMemcpy ? "[memcpy]" : "[memset]");
  }
  t_->ops.push_back(op);
  return OkStatus();
}

Status Parser::Record(simdjson::dom::element rec) {
  std::string_view t;
  if (rec["t"].get_string().get(t) != simdjson::SUCCESS) {
    std::string_view type;
    if (rec["type"].get_string().get(type) == simdjson::SUCCESS && type == "footer") {
      footer_ = true;
      check_.footer = true;
      check_.kernel_launches = IntOr(rec, "kernel_launches", -1);
      check_.kernel_records = IntOr(rec, "kernel_records", -1);
      if (rec["dropped"].error() == simdjson::NO_SUCH_FIELD) return OkStatus();
      return AddDropped(rec, "dropped", &footer_dropped_);
    }
    return MakeError("{}:{}: record without a \"t\" field", label_, line_);
  }
  if (t == "n") {
    auto id = Int(rec, "id");
    std::string_view v;
    if (!id) return id.error();
    if (rec["v"].get_string().get(v) != simdjson::SUCCESS)
      return MakeError("{}:{}: name line without a string \"v\"", label_, line_);
    name_map_[*id] = names_.Intern(v);
    return OkStatus();
  }
  ++t_->event_count;
  if (t == "k") return Op(rec, GpuOpKind::kKernel);
  if (t == "c") return Op(rec, GpuOpKind::kMemcpy);
  if (t == "m") return Op(rec, GpuOpKind::kMemset);
  if (t == "a") {
    auto s = Time(rec, "s");
    auto e = Time(rec, "e");
    if (!s || !e) return (!s ? s : e).error();
    if (*e < *s)
      return MakeError("{}:{}: an API call ends ({}) before it starts ({})", label_, line_, *e, *s);
    auto n = NameRef(rec);
    if (!n) return n.error();
    ApiCall a;
    a.start_ns = *s;
    a.end_ns = *e;
    a.correlation = IntOr(rec, "corr", -1);
    a.pid = pid_;  // one file is one process: the header's pid, as for its kernels and ranges
    a.tid = IntOr(rec, "tid", -1);
    a.name_id = *n;
    a.kind = IntOr(rec, "drv", 0) ? ApiKind::kDriver : ApiKind::kRuntime;
    a.is_launch = IsLaunchApi(t_->Name(*n));
    t_->api.push_back(a);
    return OkStatus();
  }
  if (t == "ms") {
    auto id = Int(rec, "id");
    auto ts = Time(rec, "ts");
    if (!id || !ts) return (!id ? id : ts).error();
    auto n = NameRef(rec);
    if (!n) return n.error();
    open_[*id] = Open{*ts, IntOr(rec, "tid", -1), *n};
    return OkStatus();
  }
  if (t == "me") {
    auto id = Int(rec, "id");
    auto ts = Time(rec, "ts");
    if (!id || !ts) return (!id ? id : ts).error();
    auto it = open_.find(*id);
    if (it == open_.end()) {
      ++unmatched_ends_;
      return OkStatus();
    }
    std::int64_t end = *ts;
    if (end < it->second.ts)
      return MakeError("{}:{}: NVTX range {} ends before it starts", label_, line_, *id);
    Range r;
    r.start_ns = it->second.ts;
    r.end_ns = end;
    r.pid = pid_;
    r.tid = it->second.tid;
    r.name_id = it->second.name;
    r.kind = RangeKind::kCpu;
    t_->ranges.push_back(r);
    open_.erase(it);
    return OkStatus();
  }
  if (t == "mi") {
    ++instants_;
    ++t_->skipped_by_category["nvtx_mark"];
    return OkStatus();
  }
  if (t == "drop") return AddDropped(rec, "n", &t_->dropped_records);
  if (t == "lc") {  // launches the tracer counted so far (its callback), at a time
    auto ts = Time(rec, "ts");
    auto k = Int(rec, "k");
    if (!ts || !k) return (!ts ? ts : k).error();
    if (*k < 0 || (!check_.marks.empty() && *k < check_.marks.back().second))
      return MakeError("{}:{}: launch count {} is negative or below the one before it", label_,
                       line_, *k);
    check_.marks.emplace_back(*ts, *k);
    return OkStatus();
  }
  if (t == "lost") {  // the tracer's CUPTI subscription vanished (cuptiFinalize by another)
    auto ts = Time(rec, "ts");
    if (!ts) return ts.error();
    if (check_.lost.empty()) {
      check_.lost = StringOr(rec, "what");
      if (check_.lost.empty()) check_.lost = "the tracer's CUPTI subscription";
      check_.lost_ns = *ts;
    }
    return OkStatus();
  }
  if (t == "signal") {
    signals_.push_back(IntOr(rec, "sig", 0));
    return OkStatus();
  }
  if (t == "dev") {
    auto id = Int(rec, "id");
    std::string_view name;
    if (!id) return id.error();
    if (rec["name"].get_string().get(name) == simdjson::SUCCESS && *id >= 0 && *id < 1024) {
      if (t_->devices.size() <= static_cast<std::size_t>(*id))
        t_->devices.resize(static_cast<std::size_t>(*id) + 1);
      t_->devices[static_cast<std::size_t>(*id)] = std::string(name);
    }
    return OkStatus();
  }
  ++t_->unknown_categories[std::string(t)];
  return OkStatus();
}

// A driver launch made inside a runtime launch on the same thread is the runtime call's own
// work, not a second launch.
void Parser::DedupeLaunches() {
  std::map<std::pair<std::int64_t, std::int64_t>,
           std::vector<std::pair<std::int64_t, std::int64_t>>>
      runtime;
  for (const auto& a : t_->api)
    if (a.is_launch && a.kind == ApiKind::kRuntime)
      runtime[{a.pid, a.tid}].push_back({a.start_ns, a.end_ns});
  for (auto& [k, v] : runtime) std::sort(v.begin(), v.end());
  for (auto& a : t_->api) {
    if (!a.is_launch || a.kind != ApiKind::kDriver) continue;
    auto it = runtime.find({a.pid, a.tid});
    if (it == runtime.end()) continue;
    const auto& v = it->second;
    auto p = std::upper_bound(v.begin(), v.end(), std::make_pair(a.start_ns, INT64_MAX));
    if (p != v.begin() && std::prev(p)->second >= a.end_ns) a.is_launch = false;
  }
}

Status Parser::Run(std::string_view text) {
  simdjson::dom::parser parser;
  std::size_t pos = 0;
  bool header = false;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    bool last_unterminated = nl == std::string_view::npos;
    std::string_view line = text.substr(pos, last_unterminated ? std::string_view::npos : nl - pos);
    pos = last_unterminated ? text.size() : nl + 1;
    ++line_;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    simdjson::dom::element rec;
    auto err = parser.parse(line.data(), line.size()).get(rec);
    if (err != simdjson::SUCCESS || !rec.is_object()) {
      if (last_unterminated && header) {
        // The process died mid-write: the footer cannot follow, so the file is partial.
        t_->warnings.push_back(fmt::format(
            "{}:{}: the last line is truncated (the process died while writing it); dropped",
            label_, line_));
        break;
      }
      if (!header)
        return MakeError("{}:1: not a vouch GPU trace (the first line is not its JSON header)",
                         label_);
      return MakeError("{}:{}: malformed JSON line ({})", label_, line_,
                       simdjson::error_message(err));
    }
    if (!header) {
      if (auto st = Header(rec); !st) return st;
      header = true;
      continue;
    }
    if (footer_)
      return MakeError("{}:{}: a record after the footer (two processes wrote one file?)", label_,
                       line_);
    if (auto st = Record(rec); !st) return st;
  }
  if (!header) return MakeError("{}: empty file: not a vouch GPU trace", label_);
  FinishRanges();
  DedupeLaunches();
  t_->partial = !footer_;
  if (!footer_)
    t_->warnings.push_back(fmt::format(
        "{}: partial trace: no footer, the process (pid {}) did not exit cleanly; it holds what "
        "was flushed before it ended",
        label_, pid_));
  for (auto sig : signals_)
    t_->warnings.push_back(
        fmt::format("{}: the process received {}; the trace ends with the flush "
                    "its handler made",
                    label_, SignalName(sig)));
  if (footer_ && footer_dropped_ > t_->dropped_records) t_->dropped_records = footer_dropped_;
  if (t_->dropped_records > 0)
    t_->warnings.push_back(fmt::format(
        "{}: CUPTI dropped {} record(s): counts and times from this trace are lower bounds "
        "(raise VOUCH_GPU_TRACE_BUFFER_MB)",
        label_, t_->dropped_records));
  if (unmatched_ends_ > 0)
    t_->warnings.push_back(fmt::format("{}: {} NVTX range end(s) without a start were ignored",
                                       label_, unmatched_ends_));
  if (!command_.empty()) t_->command = command_;
  t_->tracer_checks.push_back(std::move(check_));
  ComputeExtent(t_);
  return OkStatus();
}

void Parser::FinishRanges() {
  if (open_.empty()) return;
  std::map<std::string, std::int64_t> by_name;
  for (const auto& [id, o] : open_) ++by_name[t_->Name(o.name)];
  std::vector<std::string> parts;
  for (const auto& [n, c] : by_name) parts.push_back(fmt::format("{} x{}", n, c));
  t_->warnings.push_back(fmt::format("{}: {} NVTX range(s) never ended and were left out ({})",
                                     label_, open_.size(), fmt::join(parts, ", ")));
  open_.clear();
}

}  // namespace

bool LooksLikeCuptiTrace(std::string_view text) {
  auto nl = text.find('\n');
  std::string_view first = text.substr(0, nl);
  return first.find("\"type\":\"header\"") != std::string_view::npos &&
         first.find("\"format\":\"vouch-gpu-trace\"") != std::string_view::npos;
}

Result<Trace> ParseCuptiTrace(std::string_view text, const std::string& label) {
  Trace t;
  t.path = label;
  t.format = "vouch-cupti";
  Parser p(label, &t);
  if (auto st = p.Run(text); !st) return st.error();
  return t;
}

Result<Trace> ReadCuptiTrace(const std::string& path) {
  auto text = ReadFile(path, kMaxBytes);
  if (!text) return text.error();
  return ParseCuptiTrace(*text, path);
}

Trace MergeTraces(std::vector<Trace> traces, const std::string& label) {
  if (traces.size() == 1) return std::move(traces[0]);
  Trace out;
  out.path = label;
  out.format = traces.empty() ? "vouch-cupti" : traces[0].format;
  NameTable names(&out.names);
  for (auto& t : traces) {
    std::vector<std::uint32_t> remap(t.names.size());
    for (std::size_t i = 0; i < t.names.size(); ++i) remap[i] = names.Intern(t.names[i]);
    for (auto op : t.ops) {
      op.name_id = remap[op.name_id];
      out.ops.push_back(op);
    }
    for (auto a : t.api) {
      a.name_id = remap[a.name_id];
      out.api.push_back(a);
    }
    for (auto r : t.ranges) {
      r.name_id = remap[r.name_id];
      out.ranges.push_back(r);
    }
    if (out.devices.size() < t.devices.size()) out.devices.resize(t.devices.size());
    for (std::size_t i = 0; i < t.devices.size(); ++i)
      if (!t.devices[i].empty()) out.devices[i] = t.devices[i];
    for (const auto& [k, v] : t.skipped_by_category) out.skipped_by_category[k] += v;
    for (const auto& [k, v] : t.unknown_categories) out.unknown_categories[k] += v;
    out.event_count += t.event_count;
    out.partial = out.partial || t.partial;
    // Each file's count is checked; their sum saturates rather than wraps (the warning stays).
    if (__builtin_add_overflow(out.dropped_records, t.dropped_records, &out.dropped_records))
      out.dropped_records = std::numeric_limits<std::int64_t>::max();
    out.warnings.insert(out.warnings.end(), t.warnings.begin(), t.warnings.end());
    if (out.command.empty()) out.command = t.command;
    for (auto& c : t.tracer_checks) out.tracer_checks.push_back(std::move(c));
  }
  ComputeExtent(&out);
  return out;
}

}  // namespace vouch::trace
