#include "record/record.h"

#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "clock/window.h"
#include "record/journal.h"
#include "util/atomic_write.h"
#include "util/bounded_file.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/host.h"
#include "util/json_io.h"
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

// The command's stdout (at most 1 MiB), trimmed unless TRIM is false.
std::string Popen(const std::string& cmd, int* rc, bool trim = true) {
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
  return trim ? Trim(out) : out;
}

}  // namespace

nlohmann::json CaptureEnvironment(Device& device, const std::vector<int>& gpus) {
  HostInfo h = ReadHostInfo();
  nlohmann::json gj = nlohmann::json::array();
  for (int g : gpus) gj.push_back(ToJson(device.Static(g)));
  nlohmann::json vars = nlohmann::json::object();
  for (const char* v : kRelevantVars)
    if (const char* val = std::getenv(v)) vars[v] = RedactEnvValue(v, val);
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

namespace {

namespace fs = std::filesystem;

// Whether P is what vouch wrote: a run directory (record.json or the journal at its top),
// a folder holding nothing but such directories, a baseline/gate/record JSON file, vouch's
// Markdown, or one of OWN (this run's directory, its lock file) or inside it. DEPTH bounds
// the walk.
bool IsVouchOutput(const fs::path& p, const std::vector<std::string>& own, int depth = 0) {
  std::error_code ec;
  for (const auto& o : own) {
    if (o.empty()) continue;
    auto a = fs::weakly_canonical(p, ec);
    if (ec) break;
    auto b = fs::weakly_canonical(o, ec);
    if (ec) continue;
    auto rel = a.lexically_relative(b);
    if (!rel.empty() && *rel.begin() != "..") return true;  // this run's directory, the lock
  }
  const auto st = fs::symlink_status(p, ec);
  if (ec) return false;
  if (fs::is_directory(st)) {
    if (fs::exists(p / "record.json", ec) || fs::exists(p / kLegJournalFile, ec)) return true;
    if (depth >= 2) return false;
    int n = 0;
    for (const auto& e : fs::directory_iterator(p, ec)) {
      if (++n > 1000 || !IsVouchOutput(e.path(), own, depth + 1)) return false;
    }
    return n > 0 && !ec;
  }
  if (!fs::is_regular_file(st)) return false;
  auto f = BoundedFile::Open(p.string(), kNoSizeCap);
  if (!f) return false;
  char head[512];
  const ssize_t got = ::read(f->fd(), head, sizeof head);
  if (got <= 0) return false;
  const std::string_view h(head, static_cast<std::size_t>(got));
  if (StartsWith(h, "**vouch ") || StartsWith(h, "### vouch ")) return true;  // --markdown
  if (!StartsWith(Trim(h), "{")) return false;
  return h.find("\"schema\": \"vouch.") != std::string_view::npos ||
         h.find("\"schema\":\"vouch.") != std::string_view::npos;
}

}  // namespace

nlohmann::json CaptureRevisions(const std::string& cwd, const std::vector<std::string>& repos,
                                const std::vector<std::string>& own_paths) {
  nlohmann::json out = nlohmann::json::array();
  // A deleted working directory has no revision to capture (current_path would throw).
  std::error_code cwd_ec;
  std::vector<std::string> all;
  if (!cwd.empty()) {
    all.push_back(cwd);
  } else if (auto here = std::filesystem::current_path(cwd_ec); !cwd_ec) {
    all.push_back(here.string());
  }
  all.insert(all.end(), repos.begin(), repos.end());
  for (const auto& r : all) {
    int rc1 = 0, rc2 = 0, rc4 = 0;
    std::string commit =
        Popen(fmt::format("git -C {} rev-parse HEAD 2>/dev/null", ShellQuote(r)), &rc1);
    if (rc1 != 0 || commit.empty()) {
      out.push_back({{"path", r}, {"git", false}});
      continue;
    }
    std::string top =
        Popen(fmt::format("git -C {} rev-parse --show-toplevel 2>/dev/null", ShellQuote(r)), &rc4);
    // -z: paths as they are (no quoting); an entry is "XY PATH", a rename or copy is followed
    // by its source path.
    std::string status = Popen(
        fmt::format("git -C {} status --porcelain=v1 -z 2>/dev/null", ShellQuote(r)), &rc2, false);
    std::vector<std::string> dirty_paths, ignored;
    std::vector<std::string> entries = Split(status, '\0');
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const std::string& e = entries[k];
      if (e.size() < 4) continue;
      const std::string path = e.substr(3);
      if (e[0] == 'R' || e[0] == 'C') ++k;  // the source path
      // An untracked file or folder vouch wrote (an earlier run's default --out, a baseline)
      // is not a change to the code being measured.
      if (e.compare(0, 2, "??") == 0 && rc4 == 0 &&
          IsVouchOutput(fs::path(top) / path, own_paths)) {
        if (ignored.size() < 20) ignored.push_back(path);
        continue;
      }
      if (dirty_paths.size() < 20) dirty_paths.push_back(path);
    }
    int rc3 = 0;  // the branch, for the history store's trends (null on a detached HEAD)
    std::string branch = Popen(
        fmt::format("git -C {} symbolic-ref --short -q HEAD 2>/dev/null", ShellQuote(r)), &rc3);
    nlohmann::json rev = {
        {"path", r},
        {"git", true},
        {"commit", commit},
        {"dirty", !dirty_paths.empty()},
        {"branch", rc3 == 0 && !branch.empty() ? nlohmann::json(branch) : nlohmann::json()}};
    if (!dirty_paths.empty()) rev["dirty_paths"] = dirty_paths;
    if (!ignored.empty()) rev["vouch_output_ignored"] = ignored;
    out.push_back(std::move(rev));
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
    auto spilled = r.spilled.valid_metrics.find(arm.name);
    MetricAccumulator acc =
        spilled == r.spilled.valid_metrics.end() ? MetricAccumulator() : spilled->second;
    for (const auto& l : r.legs)
      if (l.arm == arm.name && l.role == "measured" && l.valid) acc.AddLeg(l.metrics);
    out[arm.name] = acc.Summaries();
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
    for (std::size_t i = 0; i < sums.size(); ++i)
      if (!sums[i].modes.empty()) a[i]["modes"] = sums[i].modes;
    summary[arm] = a;
  }
  return summary;
}

namespace {

// Who writes this record, so that a reader can tell a run in progress from one whose vouch
// ended without finalising it (killed outright, a crash, a full disk, a machine that
// stopped): all leave "running".
nlohmann::json WriterJson() {
  static const ProcessStamp self = SelfProcessStamp();
  return {{"pid", self.pid},
          {"host", self.host},
          {"boot_id", self.boot_id},
          {"start_ticks", self.start_ticks}};
}

}  // namespace

nlohmann::json ToJson(const RunRecord& r) {
  nlohmann::json arms = nlohmann::json::array();
  for (const auto& a : r.arms) {
    nlohmann::json env = nlohmann::json::object();
    for (const auto& [k, v] : a.env) env[k] = RedactEnvValue(k, v);
    arms.push_back({{"name", a.name},
                    {"argv", RedactArgv(a.argv)},
                    {"env", env},
                    {"cwd", a.cwd.empty() ? CurrentDirOrEmpty() : a.cwd},
                    {"shell", a.shell}});
    // An argument that is not UTF-8 is written with U+FFFD in "argv"; its exact bytes (after
    // redaction) here.
    if (auto hex = HexIfNotUtf8(RedactArgv(a.argv)); !hex.is_null()) arms.back()["argv_hex"] = hex;
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
  int valid = r.spilled.valid, measured = r.spilled.measured;
  for (const auto& l : r.legs)
    if (l.role == "measured") {
      ++measured;
      valid += l.valid;
    }
  // cd DIR && NAME=VALUE ... vouch GLOBAL-OPTIONS ARGS, as a shell would read it
  std::string reproduce = r.cwd.empty() ? std::string() : "cd " + ShellQuote(r.cwd) + " && ";
  int hidden = 0;
  for (const auto& [k, v] : r.reproduce_env) {
    const std::string shown = RedactEnvValue(k, v);
    hidden += shown != v;
    reproduce += k + "=" + (IsSecretName(k) ? shown : ShellQuote(shown)) + " ";
  }
  std::vector<std::string> argv = {"vouch"};
  int hidden_args = 0;
  std::vector<std::string> typed = r.global_argv;
  typed.insert(typed.end(), r.vouch_argv.begin(), r.vouch_argv.end());
  for (auto& a : RedactArgv(typed, &hidden_args)) argv.push_back(std::move(a));
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
          {"writer", WriterJson()},
          {"missing", r.missing},
          {"started", IsoTimeUtc(r.started_unix_s)},
          {"started_unix_s", r.started_unix_s},
          {"ended_unix_s", r.ended_unix_s},
          {"recipe",
           {{"arms", arms},
            {"reproduce", reproduce},
            {"cwd", r.cwd},
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
  const std::string path = (std::filesystem::path(dir) / "record.json").string();
  if (r.spilled.legs == 0) return WriteFileAtomic(path, DumpJson(ToJson(r), 2) + "\n");
  // The legs written one at a time between the record's two halves, each as DumpJson(j, 2)
  // lays it out inside the record: the same file as when every leg was in memory.
  nlohmann::json j = ToJson(r);
  const std::string kHole = "\x01legs\x01";
  j["legs"] = kHole;
  const std::string text = DumpJson(j, 2) + "\n";
  const std::string hole = DumpJson(nlohmann::json(kHole));
  const size_t at = text.find(hole);
  if (at == std::string::npos) return MakeError("writing {}: the legs' place was not found", path);
  return WriteFileAtomic(path, [&](const ChunkSink& put) -> Status {
    if (auto s = put(std::string_view(text).substr(0, at)); !s) return s;
    bool first = true;
    auto leg = [&](const nlohmann::json& l) -> Status {
      std::string out = first ? "[\n    " : ",\n    ";
      first = false;
      const std::string body = DumpJson(l, 2);
      for (char c : body) {
        out += c;
        if (c == '\n') out += "    ";
      }
      return put(out);
    };
    auto st = ForEachJournalLine(r.legs_journal, r.spilled.legs, [&](std::string_view line) {
      auto l = ParseJson(line, r.legs_journal);
      return l ? leg(*l) : Status(l.error());
    });
    if (!st) return st;
    for (const auto& l : r.legs)
      if (auto s = leg(ToJson(l)); !s) return s;
    if (auto s = put("\n  ]"); !s) return s;
    return put(std::string_view(text).substr(at + hole.size()));
  });
}

}  // namespace vouch
