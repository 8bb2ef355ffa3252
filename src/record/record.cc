#include "record/record.h"

#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "clock/window.h"
#include "record/journal.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/host.h"
#include "util/redact.h"
#include "util/strings.h"

extern char** environ;

namespace vouch {
namespace {

// Variables that change what a GPU benchmark measures; recorded when set.
const char* kRelevantVars[] = {
    "CUDA_VISIBLE_DEVICES", "CUBLAS_WORKSPACE_CONFIG",    "CUDA_LAUNCH_BLOCKING",
    "NVIDIA_TF32_OVERRIDE", "TORCH_CUDNN_V8_API_ENABLED", "OMP_NUM_THREADS",
    "NCCL_NVLS_ENABLE",     "PYTORCH_CUDA_ALLOC_CONF",    "LD_LIBRARY_PATH",
    "CUDA_MODULE_LOADING",  "CUDA_DEVICE_MAX_CONNECTIONS"};

std::string Popen(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    *rc = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0 && out.size() < (1 << 20)) out.append(buf, n);
  *rc = ::pclose(p);
  return Trim(out);
}

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Preflight RunPreflight(Device& device, const std::vector<int>& gpus, bool allow_busy,
                       std::uint64_t disk_budget_bytes, const std::string& dir) {
  Preflight p;
  for (int g : gpus) {
    auto procs = device.Processes(g);
    if (!procs) {
      p.warnings.push_back(
          fmt::format("GPU {}: cannot list compute processes: {}", g, procs.error().message));
    } else {
      for (const auto& q : *procs) {
        if (q.pid == static_cast<std::uint32_t>(::getpid())) continue;
        p.busy_processes.push_back(
            {{"gpu", g},
             {"pid", q.pid},
             {"name", q.name},
             {"used_bytes", q.used_bytes ? nlohmann::json(*q.used_bytes) : nlohmann::json()}});
        std::string what = fmt::format("GPU {} is busy: compute process {} ({})", g, q.pid, q.name);
        if (allow_busy)
          p.warnings.push_back(what + " (allowed by --allow-busy; numbers may be corrupted)");
        else
          p.problems.push_back(what +
                               ": a busy GPU corrupts numbers; stop it, or pass --allow-busy to "
                               "record it and go on");
      }
    }
    auto mem = device.Memory(g);
    if (mem && mem->free_bytes < (1ull << 30))
      p.warnings.push_back(
          fmt::format("GPU {}: only {} device memory free: on unified-memory and WDDM systems "
                      "allocations spill "
                      "silently and bandwidth falls off a cliff",
                      g, HumanBytes(static_cast<double>(mem->free_bytes))));
  }
  // The run directory may not exist yet: measure the nearest existing parent.
  std::error_code ec;
  std::filesystem::path probe_path = std::filesystem::absolute(dir, ec);
  while (probe_path.has_parent_path() && probe_path != probe_path.root_path() &&
         !std::filesystem::exists(probe_path, ec))
    probe_path = probe_path.parent_path();
  std::string probe = probe_path.string();
  auto free = FreeDiskBytes(probe);
  if (!free)
    p.problems.push_back(free.error().message);
  else if (*free < disk_budget_bytes)
    p.problems.push_back(
        fmt::format("only {} free under {} (budget {}): a full disk voids evidence without failing "
                    "loudly; free "
                    "space or lower --disk-budget-gib",
                    HumanBytes(static_cast<double>(*free)), probe,
                    HumanBytes(static_cast<double>(disk_budget_bytes))));
  p.ok = p.problems.empty();
  return p;
}

nlohmann::json CaptureEnvironment(Device& device, const std::vector<int>& gpus) {
  HostInfo h = ReadHostInfo();
  nlohmann::json gj = nlohmann::json::array();
  for (int g : gpus) gj.push_back(ToJson(device.Static(g)));
  nlohmann::json vars = nlohmann::json::object();
  for (const char* v : kRelevantVars)
    if (const char* val = std::getenv(v)) vars[v] = IsSecretName(v) ? "<redacted>" : val;
  return {{"hostname", h.hostname},
          {"kernel", h.kernel},
          {"cpu", h.cpu},
          {"cpu_count", h.cpu_count},
          {"host_boot_id", h.boot_id},
          {"boot_id", device.BootId()},
          {"device", device.Describe()},
          {"simulated", device.Simulated()},
          {"gpus", gj},
          {"variables", vars}};
}

nlohmann::json CaptureRevisions(const std::string& cwd, const std::vector<std::string>& repos) {
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::string> all = {cwd.empty() ? std::filesystem::current_path().string() : cwd};
  all.insert(all.end(), repos.begin(), repos.end());
  for (const auto& r : all) {
    int rc1 = 0, rc2 = 0;
    std::string commit =
        Popen(fmt::format("git -C {} rev-parse HEAD 2>/dev/null", ShellQuote(r)), &rc1);
    std::string dirty = Popen(
        fmt::format("git -C {} status --porcelain 2>/dev/null | head -50", ShellQuote(r)), &rc2);
    if (rc1 != 0 || commit.empty()) {
      out.push_back({{"path", r}, {"git", false}});
      continue;
    }
    int rc3 = 0;  // the branch, for the history store's trends (null on a detached HEAD)
    std::string branch = Popen(
        fmt::format("git -C {} symbolic-ref --short -q HEAD 2>/dev/null", ShellQuote(r)), &rc3);
    out.push_back(
        {{"path", r},
         {"git", true},
         {"commit", commit},
         {"dirty", !dirty.empty()},
         {"branch", rc3 == 0 && !branch.empty() ? nlohmann::json(branch) : nlohmann::json()}});
  }
  return out;
}

Result<nlohmann::json> HashArtifacts(const std::vector<std::string>& paths) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : paths) {
    auto h = Sha256OfPath(p);
    if (!h) return h.error();
    out.push_back({{"path", p}, {"sha256", *h}});
  }
  return out;
}

nlohmann::json CaptureContention(Device& device, const std::vector<int>& gpus) {
  nlohmann::json procs = nlohmann::json::array();
  for (int g : gpus) {
    auto p = device.Processes(g);
    if (!p) continue;
    for (const auto& q : *p)
      if (q.pid != static_cast<std::uint32_t>(::getpid()))
        procs.push_back({{"gpu", g}, {"pid", q.pid}, {"name", q.name}});
  }
  return {{"unix_s", UnixNowSeconds()}, {"load_1m", LoadAverage1m()}, {"gpu_processes", procs}};
}

std::map<std::string, std::vector<MetricSummary>> SummariesByArm(const RunRecord& r) {
  std::map<std::string, std::vector<MetricSummary>> out;
  for (const auto& arm : r.arms) {
    std::vector<std::vector<Metric>> per_leg;
    for (const auto& l : r.legs)
      if (l.arm == arm.name && l.role == "measured" && l.valid) per_leg.push_back(l.metrics);
    out[arm.name] = SummarizeLegs(per_leg);
  }
  return out;
}

nlohmann::json SummaryToJson(const std::map<std::string, std::vector<MetricSummary>>& by_arm) {
  nlohmann::json summary = nlohmann::json::object();
  for (const auto& [arm, sums] : by_arm) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& s : sums)
      a.push_back(
          {{"name", s.name},
           {"unit", s.unit},
           {"better", BetterName(s.better)},
           {"n", s.n},
           {"median", s.median},
           {"min", s.min},
           {"max", s.max},
           {"mean", s.mean},
           {"spread_pct", s.spread_pct ? nlohmann::json(*s.spread_pct) : nlohmann::json()}});
    summary[arm] = a;
  }
  return summary;
}

nlohmann::json ToJson(const RunRecord& r) {
  nlohmann::json arms = nlohmann::json::array();
  for (const auto& a : r.arms) {
    nlohmann::json env = nlohmann::json::object();
    for (const auto& [k, v] : a.env) env[k] = IsSecretName(k) ? "<redacted>" : v;
    arms.push_back({{"name", a.name},
                    {"argv", RedactArgv(a.argv)},
                    {"env", env},
                    {"cwd", a.cwd.empty() ? std::filesystem::current_path().string() : a.cwd},
                    {"shell", a.shell}});
  }
  nlohmann::json legs = nlohmann::json::array();
  for (const auto& l : r.legs) legs.push_back(ToJson(l));
  nlohmann::json summary = SummaryToJson(SummariesByArm(r));
  nlohmann::json viol = nlohmann::json::array();
  for (const auto& v : r.violations)
    viol.push_back({{"leg", v.leg},
                    {"metric", v.metric},
                    {"expected", v.expected},
                    {"got", v.got},
                    {"message", v.message}});
  int valid = 0, measured = 0;
  for (const auto& l : r.legs)
    if (l.role == "measured") {
      ++measured;
      valid += l.valid;
    }
  std::string reproduce;  // NAME=VALUE ... vouch ARGS, as a shell would read it
  int hidden = 0;
  for (const auto& [k, v] : r.reproduce_env) {
    hidden += IsSecretName(k);
    reproduce += k + "=" + (IsSecretName(k) ? std::string("<redacted>") : ShellQuote(v)) + " ";
  }
  std::vector<std::string> argv = {"vouch"};
  int hidden_args = 0;
  for (auto& a : RedactArgv(r.vouch_argv, &hidden_args)) argv.push_back(std::move(a));
  hidden += hidden_args;
  reproduce += ShellJoin(argv);
  // The line alone would not reproduce the run: say what it lacks.
  const std::string reproduce_note =
      hidden == 0
          ? std::string()
          : fmt::format("{} secret value{} redacted as <redacted>: put {} back to reproduce",
                        hidden, hidden == 1 ? " was" : "s were", hidden == 1 ? "it" : "them");
  return {{"schema", "vouch.record"},
          {"schema_version", kRecordSchemaVersion},
          {"kind", r.kind},
          {"status", r.status},
          {"missing", r.missing},
          {"started", IsoTimeUtc(r.started_unix_s)},
          {"started_unix_s", r.started_unix_s},
          {"ended_unix_s", r.ended_unix_s},
          {"recipe",
           {{"arms", arms},
            {"reproduce", reproduce},
            {"reproduce_note",
             reproduce_note.empty() ? nlohmann::json() : nlohmann::json(reproduce_note)}}},
          {"revisions", r.revisions},
          {"artifacts", r.artifacts},
          {"environment", r.environment},
          {"contention", r.contention},
          {"preflight", r.preflight},
          {"policy", ToJson(r.policy)},
          {"planned_legs", r.planned_legs},
          {"measured_legs", measured},
          {"valid_legs", valid},
          {"legs", legs},
          {"summary", summary},
          {"expectation_violations", viol},
          {"caveats", r.caveats},
          {"extra", r.extra}};
}

Status WriteRecord(const std::string& dir, const RunRecord& r) {
  return WriteFileAtomic((std::filesystem::path(dir) / "record.json").string(),
                         ToJson(r).dump(2) + "\n");
}

namespace {

// What a reader of a record relies on: each field present with its type, so that a record
// that lacks one is refused by name instead of shown as zeros.
enum class Kind { kString, kNumber, kBool, kObject, kArray, kNumberOrNull };

bool Is(const nlohmann::json& v, Kind k) {
  switch (k) {
    case Kind::kString:
      return v.is_string();
    case Kind::kNumber:
      return v.is_number();
    case Kind::kBool:
      return v.is_boolean();
    case Kind::kObject:
      return v.is_object();
    case Kind::kArray:
      return v.is_array();
    case Kind::kNumberOrNull:
      return v.is_number() || v.is_null();
  }
  return false;
}

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kString:
      return "a string";
    case Kind::kNumber:
      return "a number";
    case Kind::kBool:
      return "true or false";
    case Kind::kObject:
      return "an object";
    case Kind::kArray:
      return "an array";
    case Kind::kNumberOrNull:
      return "a number or null";
  }
  return "?";
}

Status Need(const nlohmann::json& obj, const std::string& where,
            std::initializer_list<std::pair<const char*, Kind>> fields) {
  for (const auto& [name, kind] : fields) {
    std::string at = where.empty() ? name : where + "." + name;
    if (!obj.contains(name)) return MakeError("'{}' is missing", at);
    if (!Is(obj[name], kind)) return MakeError("'{}' is not {}", at, KindName(kind));
  }
  return OkStatus();
}

}  // namespace

Status CheckRecordShape(const nlohmann::json& j) {
  if (auto s = Need(j, "",
                    {{"kind", Kind::kString},
                     {"status", Kind::kString},
                     {"started", Kind::kString},
                     {"recipe", Kind::kObject},
                     {"environment", Kind::kObject},
                     {"measured_legs", Kind::kNumber},
                     {"valid_legs", Kind::kNumber},
                     {"legs", Kind::kArray},
                     {"summary", Kind::kObject},
                     {"expectation_violations", Kind::kArray},
                     {"caveats", Kind::kArray}});
      !s)
    return s;
  if (auto s = Need(j["recipe"], "recipe", {{"reproduce", Kind::kString}}); !s) return s;
  for (size_t i = 0; i < j["legs"].size(); ++i) {
    const auto& l = j["legs"][i];
    std::string at = fmt::format("legs[{}]", i);
    if (!l.is_object()) return MakeError("'{}' is not an object", at);
    if (auto s = Need(l, at,
                      {{"index", Kind::kNumber},
                       {"arm", Kind::kString},
                       {"role", Kind::kString},
                       {"valid", Kind::kBool},
                       {"reasons", Kind::kArray},
                       {"result", Kind::kObject},
                       {"metrics", Kind::kArray},
                       {"window", Kind::kObject}});
        !s)
      return s;
    if (auto s = Need(l["result"], at + ".result", {{"wall_ns", Kind::kNumber}}); !s) return s;
    if (auto s = Need(l["window"], at + ".window", {{"gpus", Kind::kArray}}); !s) return s;
    for (size_t k = 0; k < l["window"]["gpus"].size(); ++k) {
      const auto& g = l["window"]["gpus"][k];
      std::string gat = fmt::format("{}.window.gpus[{}]", at, k);
      if (!g.is_object()) return MakeError("'{}' is not an object", gat);
      if (auto s = Need(g, gat, {{"fold", Kind::kObject}, {"static", Kind::kObject}}); !s) return s;
      if (auto s = Need(g["fold"], gat + ".fold",
                        {{"gpu", Kind::kNumber}, {"busy_readings", Kind::kNumber}});
          !s)
        return s;
    }
    for (size_t k = 0; k < l["metrics"].size(); ++k) {
      const auto& m = l["metrics"][k];
      std::string mat = fmt::format("{}.metrics[{}]", at, k);
      if (!m.is_object()) return MakeError("'{}' is not an object", mat);
      if (auto s = Need(m, mat, {{"name", Kind::kString}}); !s) return s;
      if (!m.contains("value") && !m.contains("text"))
        return MakeError("'{}' has neither 'value' nor 'text'", mat);
    }
  }
  for (const auto& [arm, sums] : j["summary"].items()) {
    std::string at = fmt::format("summary.{}", arm);
    if (!sums.is_array()) return MakeError("'{}' is not an array", at);
    for (size_t k = 0; k < sums.size(); ++k) {
      std::string sat = fmt::format("{}[{}]", at, k);
      if (!sums[k].is_object()) return MakeError("'{}' is not an object", sat);
      if (auto s = Need(sums[k], sat,
                        {{"name", Kind::kString},
                         {"unit", Kind::kString},
                         {"n", Kind::kNumber},
                         {"median", Kind::kNumber},
                         {"min", Kind::kNumber},
                         {"max", Kind::kNumber},
                         {"spread_pct", Kind::kNumberOrNull}});
          !s)
        return s;
    }
  }
  return OkStatus();
}

Result<nlohmann::json> ReadRecordJson(const std::string& path_or_dir) {
  std::string path = path_or_dir;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    path = (std::filesystem::path(path) / "record.json").string();
  auto text = ReadFile(path, 512ull << 20);
  if (!text) return text.error();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return MakeError("{}: not valid JSON (truncated or corrupt?)", path);
  if (!j.is_object() || j.value("schema", "") != "vouch.record")
    return MakeError("{}: not a vouch record (schema is not 'vouch.record')", path);
  int v = j.value("schema_version", 0);
  if (v != kRecordSchemaVersion)
    return MakeError("{}: record schema version {} is not one this vouch reads ({}); upgrade vouch",
                     path, v, kRecordSchemaVersion);
  // A run killed before its end: its finished legs are in the journal beside the record.
  if (auto s = AssembleFromJournal(std::filesystem::path(path).parent_path().string(), &j); !s)
    return s.error();
  if (auto shape = CheckRecordShape(j); !shape)
    return MakeError(
        "{}: {} (hand-edited or written by another tool?); no figure is read from "
        "it",
        path, shape.error().message);
  return j;
}

std::map<std::string, std::pair<double, std::string>> RecordMedians(const nlohmann::json& rec,
                                                                    const std::string& arm) {
  std::map<std::string, std::pair<double, std::string>> out;
  auto it = rec["summary"].find(arm);
  if (it == rec["summary"].end()) return out;
  for (const auto& m : *it)
    out[m.value("name", "")] = {m.value("median", 0.0), m.value("unit", "")};
  return out;
}

ClockState RecordClockState(const nlohmann::json& rec, const std::string& arm) {
  ClockState c;
  if (auto env = rec.find("environment"); env != rec.end() && env->is_object())
    c.simulated = env->value("simulated", false);
  std::vector<double> med, mean;
  for (const auto& l : rec["legs"]) {
    if (l.value("arm", "") != arm || l.value("role", "") != "measured" || !l.value("valid", false))
      continue;
    auto w = WindowSummaryFromJson(l["window"], "record");
    if (!w || w->gpus.empty()) continue;
    // Over several GPUs the slowest busy GPU's clock paces the leg; the GPUs are named by
    // their UUIDs together.
    auto pm = PacingClockMedian(*w), pmean = PacingClockMean(*w);
    if (!pm || !pmean) continue;
    med.push_back(*pm);
    mean.push_back(*pmean);
    std::vector<std::string> uuids;
    for (const auto& g : w->gpus) uuids.push_back(g.state.uuid);
    c.gpu_uuid = fmt::format("{}", fmt::join(uuids, ","));
    c.driver = w->gpus.front().state.driver_version;
    c.boot_id = w->boot_id;
  }
  if (med.empty()) return c;
  c.valid = true;
  c.sm_median_mhz = MedianOf(med);
  double s = 0;
  for (double x : mean) s += x;
  c.sm_mean_mhz = s / static_cast<double>(mean.size());
  return c;
}

std::string RenderRecordText(const nlohmann::json& rec) {
  std::string out;
  const auto& env = rec["environment"];
  if (env.value("simulated", false))
    out += fmt::format("SIMULATED DEVICE: {}\n", env.value("device", ""));
  // Every planned leg ran but none is valid: the run is not "complete" in any sense a reader
  // takes from the word.
  std::string status = rec.value("status", "?");
  if (status == "complete" && rec.value("valid_legs", 0) == 0)
    status = "ended with NO VALID LEG (every planned leg ran)";
  out += fmt::format("{} {} started {}: {} of {} measured legs valid\n", rec.value("kind", "run"),
                     status, rec.value("started", ""), rec.value("valid_legs", 0),
                     rec.value("measured_legs", 0));
  for (const auto& m : rec.value("missing", std::vector<std::string>{}))
    out += fmt::format("  missing: {}\n", m);
  if (auto sel = env.find("gpu_selection"); sel != env.end() && sel->is_object()) {
    std::vector<std::string> ids;
    if (auto g = sel->find("gpus"); g != sel->end() && g->is_array())
      for (const auto& i : *g) ids.push_back(i.dump());
    auto src = sel->find("source");
    out += fmt::format("GPUs sampled: {} ({})\n",
                       ids.empty() ? "?" : fmt::format("{}", fmt::join(ids, ",")),
                       src != sel->end() && src->is_string() ? src->get<std::string>() : "?");
  }
  out += "legs:\n";
  // Columns as wide as their longest entry: long arm names do not push the rows apart.
  std::size_t arm_w = 6;
  for (const auto& l : rec["legs"]) arm_w = std::max(arm_w, l.value("arm", "").size());
  for (const auto& l : rec["legs"]) {
    std::string clock = "";
    const auto& w = l["window"];
    const nlohmann::json& gpus = w.contains("gpus") ? w["gpus"] : nlohmann::json::array();
    for (const auto& g : gpus) {
      std::string who = gpus.size() > 1 ? fmt::format(" GPU {}", g["fold"].value("gpu", 0)) : "";
      const auto& sm = g["fold"]["sm_mhz"];
      if (g["fold"].value("busy_readings", 0) > 0 && !sm.is_null())
        clock += fmt::format("{} SM median {:.0f} mean {:.1f} MHz", who, sm.value("median", 0.0),
                             sm.value("mean", 0.0));
      else if (gpus.size() > 1)
        clock += fmt::format(
            "{} {}", who,
            g.contains("verdict") ? g["verdict"].value("status", "idle") : std::string("idle"));
      if (gpus.size() > 1 && &g != &gpus.back()) clock += ";";
    }
    std::string state = l.value("role", "") == "warmup"
                            ? "discarded (warmup)"
                            : (l.value("valid", false) ? "valid" : "INVALID");
    out += fmt::format("  {:>3} {:<{}} {:<8} {:<18} {:.2f} s{}\n", l.value("index", 0) + 1,
                       l.value("arm", ""), arm_w, l.value("role", ""), state,
                       static_cast<double>(l["result"].value("wall_ns", std::int64_t{0})) / 1e9,
                       clock);
    if (l.value("role", "") == "measured")
      for (const auto& r : l.value("reasons", std::vector<std::string>{}))
        out += fmt::format("        - {}\n", r);
  }
  for (const auto& [arm, sums] : rec["summary"].items()) {
    out += fmt::format("summary over valid legs ({}):\n", arm);
    if (sums.empty()) out += "  no valid leg: no number can be quoted\n";
    // Byte counts in KiB/MiB/GiB; the name and unit columns as wide as their longest entry.
    auto value = [](const nlohmann::json& m, const char* key) {
      const double v = m.value(key, 0.0);
      return m.value("unit", "") == "bytes" ? HumanBytes(v) : fmt::format("{:.6g}", v);
    };
    auto unit = [](const nlohmann::json& m) {
      return m.value("unit", "") == "bytes" ? std::string() : m.value("unit", "");
    };
    std::size_t name_w = 34, unit_w = 6;
    for (const auto& s : sums) {
      name_w = std::max(name_w, s.value("name", "").size());
      unit_w = std::max(unit_w, unit(s).size());
    }
    for (const auto& s : sums) {
      if (StartsWith(s.value("name", ""), "vouch.exit_status")) continue;
      out += fmt::format(
          "  {:<{}} median {:>12} {:<{}} min {} max {} spread {} (n={})\n", s.value("name", ""),
          name_w, value(s, "median"), unit(s), unit_w, value(s, "min"), value(s, "max"),
          s["spread_pct"].is_null() ? std::string("n/a")
                                    : fmt::format("{:.2f} %", s["spread_pct"].get<double>()),
          s.value("n", 0));
    }
  }
  // An A/B record: its verdict, as vouch ab printed it in short.
  if (rec.contains("extra") && rec["extra"].is_object() && rec["extra"].contains("verdict") &&
      rec["extra"]["verdict"].is_object()) {
    try {
      const auto& v = rec["extra"]["verdict"];
      out += fmt::format("A/B verdict: {} (headline {}, {} is better)\n", v.value("verdict", "?"),
                         v.value("headline", "?"), v.value("better", "?"));
      const nlohmann::json d = v.value("decision", nlohmann::json::object());
      const nlohmann::json ratio = d.value("ratio", nlohmann::json::object());
      const nlohmann::json plain = d.value("b_over_a", nlohmann::json::object());
      if (plain.is_object() && plain.contains("value"))
        out += fmt::format(
            "  ratio {} ({:.0f} % CI {:.4f} .. {:.4f})\n", plain.value("reads", std::string("?")),
            100 * ratio.value("confidence", 0.0), plain.value("lo", 0.0), plain.value("hi", 0.0));
      else if (ratio.is_object() && ratio.contains("mean"))  // a record from before b_over_a
        out += fmt::format(
            "  ratio {:.4f} ({:.0f} % CI {:.4f} .. {:.4f}; oriented: above 1 means B is better)\n",
            ratio.value("mean", 0.0), 100 * ratio.value("confidence", 0.0), ratio.value("lo", 0.0),
            ratio.value("hi", 0.0));
      out += fmt::format("  pairs {} used, {} refused; band +/- {:.3f} % ({})\n",
                         v.value("pairs_used", 0), v.value("pairs_refused", 0),
                         d.value("band_pct", 0.0), d.value("band_source", "?"));
      for (const auto& r : d.value("reasons", std::vector<std::string>{}))
        out += fmt::format("  - {}\n", r);
    } catch (const nlohmann::json::exception& e) {
      out += fmt::format("A/B verdict: unreadable ({})\n", e.what());
    }
  }
  for (const auto& v : rec["expectation_violations"])
    out += fmt::format("VIOLATION: {}\n", v.value("message", ""));
  for (const auto& c : rec.value("caveats", std::vector<std::string>{}))
    out += fmt::format("caveat: {}\n", c);
  out += fmt::format("reproduce: {}\n", rec["recipe"].value("reproduce", ""));
  if (auto n = rec["recipe"].find("reproduce_note"); n != rec["recipe"].end() && n->is_string())
    out += fmt::format("  ({})\n", n->get<std::string>());
  return out;
}

}  // namespace vouch
