#include "fleet/evidence.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "fleet/ab_pairs.h"
#include "fleet/attempt_fast.h"
#include "fleet/trust.h"
#include "record/record.h"
#include "util/fs.h"
#include "util/json_dump.h"
#include "util/json_io.h"
#include "util/number.h"
#include "util/strings.h"

namespace vouch {

namespace fs = std::filesystem;

std::string TaskId(int round, int index) { return fmt::format("r{}-t{}", round, index); }

std::optional<std::pair<std::string, int>> ParseAttemptDir(const std::string& name) {
  auto a = name.rfind("-a");
  if (a == std::string::npos || a + 2 >= name.size()) return std::nullopt;
  std::string task = name.substr(0, a), num = name.substr(a + 2);
  if (num.size() > 6 || num.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  // The task part is r<digits>-t<digits>.
  if (task.size() < 4 || task[0] != 'r') return std::nullopt;
  auto t = task.find("-t");
  if (t == std::string::npos || t < 2) return std::nullopt;
  std::string r = task.substr(1, t - 1), i = task.substr(t + 2);
  if (r.empty() || i.empty() || r.size() > 6 || i.size() > 6 ||
      r.find_first_not_of("0123456789") != std::string::npos ||
      i.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  auto n = ParseInt64(num, "");  // six digits at most: it fits
  if (!n) return std::nullopt;
  return std::make_pair(task, static_cast<int>(*n));
}

std::string FleetAttempt::status() const {
  if (node_info.is_object() && node_info.contains("status") && node_info["status"].is_string())
    return node_info["status"].get<std::string>();
  if (record && record->contains("status") && (*record)["status"].is_string())
    return (*record)["status"].get<std::string>();
  return "unknown";
}

std::unordered_map<std::string, std::vector<const FleetAttempt*>> AttemptsByTask(
    const FleetEvidence& ev) {
  std::unordered_map<std::string, std::vector<const FleetAttempt*>> out;
  for (const auto& a : ev.attempts) out[a.task_id].push_back(&a);
  return out;
}

namespace {

// What an attempt's folder holds, from its listing and its run/'s: the links CheckLinks
// names, and whether node.json and run/record.json are there.
struct AttemptFiles {
  std::vector<DirEntry> top, run;
  bool top_listed = false, run_listed = false;  // run: run/ is a directory, not a link
};

// Whether NAME of LISTING (when LISTED) exists, as fs::exists(PATH) says: a link is followed,
// and a folder that could not be listed is asked by the path.
bool Exists(bool listed, const std::vector<DirEntry>& listing, const char* name,
            const std::string& path) {
  if (!listed) return fs::exists(path);
  for (const auto& e : listing)
    if (e.name == name) return e.type != DirEntry::Type::kSymlink || fs::exists(path);
  return false;
}

void ReadAttempt(FleetAttempt& a, const AttemptFiles& files, bool cross_boot) {
  std::string node_path = (fs::path(a.dir) / "node.json").string();
  if (Exists(files.top_listed, files.top, "node.json", node_path)) {
    auto text = ReadFile(node_path, 1 << 20);
    Result<nlohmann::json> parsed =
        text ? ParseJson(*text, node_path) : Result<nlohmann::json>(nlohmann::json());
    nlohmann::json j = parsed ? std::move(*parsed) : nlohmann::json();
    if (!text || !parsed || !j.is_object())
      a.problem = fmt::format("{}: unreadable", node_path);
    else
      a.node_info = std::move(j);
  } else {
    a.problem = fmt::format("{}: missing (the job never started vouch here)", node_path);
  }
  std::string rec_path = (fs::path(a.dir) / "run" / "record.json").string();
  if (!Exists(files.run_listed, files.run, "record.json", rec_path)) {
    if (a.problem.empty()) a.problem = fmt::format("{}: missing", rec_path);
    return;
  }
  auto rec = ReadRecordJson(rec_path);
  if (!rec) {
    a.problem = rec.error().message;
    return;
  }
  a.record = std::move(*rec);
  const nlohmann::json& record = *a.record;
  try {
    static const nlohmann::json kNull;
    const nlohmann::json& extra = record.contains("extra") ? record["extra"] : kNull;
    const nlohmann::json* src = nullptr;
    if (extra.is_object() && extra.contains("verdict") && extra["verdict"].is_object() &&
        extra["verdict"].contains("pairs"))
      src = &extra["verdict"];
    else if (extra.is_object() && extra.contains("blocks_so_far") &&
             extra["blocks_so_far"].is_object())
      src = &extra["blocks_so_far"];
    if (!src) return;
    const nlohmann::json& listed =
        (*src).contains("pairs") && (*src)["pairs"].is_array() ? (*src)["pairs"] : kNull;
    a.headline = (*src).value("headline", "");
    a.better = (*src).value("better", "");
    if ((*src).contains("band_log") && (*src)["band_log"].is_number())
      a.band_log = (*src)["band_log"].get<double>();
    if (!a.band_log && extra.contains("blocks_so_far") && extra["blocks_so_far"].is_object() &&
        extra["blocks_so_far"].contains("band_log") &&
        extra["blocks_so_far"]["band_log"].is_number())
      a.band_log = extra["blocks_so_far"]["band_log"].get<double>();
    // The pairs come from the legs, never from the list on trust.
    auto pairs = RecomputeAbPairs(record, listed, a.headline, a.better, cross_boot, rec_path);
    if (!pairs) {
      a.problem = pairs.error().message;
      return;
    }
    a.pairs = std::move(pairs->pairs);
    a.better = pairs->better;
    for (const auto& e : pairs->edits)
      a.edits.push_back(
          fmt::format("{}: {} (the pairs are formed again from the legs)", rec_path, e));
  } catch (const std::exception& e) {
    a.problem = fmt::format("{}: malformed A/B pairs: {}", rec_path, e.what());
    a.pairs = nlohmann::json::array();
  }
}

std::string Text(const nlohmann::json& j) {
  return j.is_string() ? j.get<std::string>() : DumpJson(j);
}

// The GPU UUIDs of a record's environment, or of a leg's window.
std::string Uuids(const nlohmann::json& gpus, bool window) {
  std::vector<std::string> out;
  if (gpus.is_array())
    for (const auto& g : gpus) {
      const nlohmann::json* u = nullptr;
      if (window && g.is_object() && g.contains("static") && g["static"].is_object() &&
          g["static"].contains("uuid"))
        u = &g["static"]["uuid"];
      else if (!window && g.is_object() && g.contains("uuid"))
        u = &g["uuid"];
      if (u && u->is_string()) out.push_back(u->get<std::string>());
    }
  return fmt::format("{}", fmt::join(out, ","));
}

const nlohmann::json& Field(const nlohmann::json& j, const char* k) {
  static const nlohmann::json null;
  if (!j.is_object()) return null;
  auto it = j.find(k);
  return it == j.end() ? null : *it;
}

// DumpJson of the array [A, B, C, D] (D a string), without building the array.
std::string KeyOf(const nlohmann::json& a, const nlohmann::json& b, const nlohmann::json& c,
                  const std::string& d) {
  std::string out = "[";
  for (const nlohmann::json* v : {&a, &b, &c}) {
    AppendCompactJson(out, *v);
    out += ',';
  }
  AppendJsonString(out, d);
  out += ']';
  return out;
}

// One measurement is evidence once: two attempts whose records were written by one vouch
// process (writer pid, boot and start, on the same GPUs), or that share a leg (the same
// window start and end, boot and GPUs), are one node's evidence copied under another.
void CheckIdentity(const std::vector<FleetAttempt>& attempts, std::vector<std::string>& out) {
  std::map<std::string, size_t> records, legs;
  std::set<std::pair<size_t, size_t>> named;
  auto refuse = [&](size_t first, size_t second, const std::string& what) {
    if (!named.insert({first, second}).second) return;
    out.push_back(fmt::format(
        "{} and {} hold the same evidence ({}): one node's evidence copied under another is "
        "not a second node",
        attempts[first].dir, attempts[second].dir, what));
  };
  for (size_t i = 0; i < attempts.size(); ++i) {
    const auto& a = attempts[i];
    if (!a.record) continue;
    const nlohmann::json& rec = *a.record;
    const nlohmann::json& writer = Field(rec, "writer");
    const std::string gpus = Uuids(Field(Field(rec, "environment"), "gpus"), false);
    // What the two have in common, worded only when they do.
    std::string key;
    std::function<std::string()> what;
    if (writer.is_object()) {
      key =
          KeyOf(Field(writer, "pid"), Field(writer, "boot_id"), Field(writer, "start_ticks"), gpus);
      what = [&] {
        return fmt::format(
            "records written by one vouch process: pid {}, boot {}, start {}, GPU {}",
            Text(Field(writer, "pid")), Text(Field(writer, "boot_id")),
            Text(Field(writer, "start_ticks")), gpus);
      };
    } else {
      const nlohmann::json& env = Field(rec, "environment");
      key = KeyOf(Field(rec, "started_unix_s"), Field(env, "host_boot_id"), Field(env, "boot_id"),
                  gpus);
      what = [&] {
        return fmt::format("records started at {} on boot {}, GPU {}",
                           Text(Field(rec, "started_unix_s")), Text(Field(env, "host_boot_id")),
                           gpus);
      };
    }
    if (auto [it, fresh] = records.emplace(key, i); !fresh) refuse(it->second, i, what());
    const nlohmann::json& ls = Field(rec, "legs");
    if (!ls.is_array()) continue;
    for (size_t k = 0; k < ls.size(); ++k) {
      const nlohmann::json& w = Field(ls[k], "window");
      const nlohmann::json& start = Field(w, "started_unix_s");
      if (!start.is_number()) continue;
      const std::string lg = Uuids(Field(w, "gpus"), true);
      const std::string lkey =
          KeyOf(start, Field(w, "ended_unix_s"), Field(Field(w, "host"), "boot_id"), lg);
      if (auto [it, fresh] = legs.emplace(lkey, i); !fresh && it->second != i)
        refuse(it->second, i,
               fmt::format("a leg measured once, on GPU {} from unix time {}", lg, Text(start)));
    }
  }
}

// A symbolic link among an attempt's files (node.json, run/ and what run/ holds): the
// evidence would be another folder's.
// DIR being an attempt's folder (no link); the listings, for ReadAttempt. 100,000 entries of
// the two at most are looked at.
AttemptFiles CheckLinks(const fs::path& dir, std::vector<std::string>& out) {
  constexpr size_t kMost = 100000;
  std::error_code ec;
  AttemptFiles files;
  auto name_links = [&](const fs::path& base, const std::vector<DirEntry>& listing) {
    for (const auto& e : listing)
      if (e.type == DirEntry::Type::kSymlink)
        out.push_back(
            fmt::format("{} is a symbolic link (to {}): a node's evidence must be its own files",
                        (base / e.name).string(), fs::read_symlink(base / e.name, ec).string()));
  };
  if (auto top = ListDir(dir.string(), false, kMost)) {
    files.top = std::move(*top);
    files.top_listed = true;
  }
  name_links(dir, files.top);
  for (const auto& e : files.top)
    if (e.name == "run" && e.type == DirEntry::Type::kDir && files.top.size() < kMost)
      if (auto run = ListDir((dir / "run").string(), false, kMost - files.top.size())) {
        files.run = std::move(*run);
        files.run_listed = true;
      }
  name_links(dir / "run", files.run);
  return files;
}

}  // namespace

namespace {

// J's member K, or nullptr where J is no object or has no K.
nlohmann::json* Member(nlohmann::json& j, const char* k) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(k);
  return it == j.end() ? nullptr : &*it;
}

}  // namespace

void SlimAbRecord(nlohmann::json& rec) {
  if (!rec.is_object()) return;
  nlohmann::json slim = nlohmann::json::object();
  for (const char* k : kAbRecordKept)
    if (nlohmann::json* f = Member(rec, k)) slim[k] = std::move(*f);
  nlohmann::json* legs = Member(rec, "legs");
  if (legs && legs->is_array()) {
    nlohmann::json kept = nlohmann::json::array();
    for (auto& leg : *legs) {
      nlohmann::json window = nlohmann::json::object();
      if (nlohmann::json* w = Member(leg, "window")) {
        for (const char* k : kAbLegWindowKept)
          if (nlohmann::json* f = Member(*w, k)) window[k] = std::move(*f);
        if (nlohmann::json* host = Member(*w, "host"))
          if (nlohmann::json* boot = Member(*host, "boot_id"))
            window["host"] = {{"boot_id", std::move(*boot)}};
        if (nlohmann::json* g = Member(*w, "gpus")) {
          nlohmann::json gpus = g->is_array() ? nlohmann::json::array() : nlohmann::json();
          if (g->is_array())
            for (auto& gpu : *g) {  // Uuids(.., true) reads static.uuid alone
              nlohmann::json* st = Member(gpu, "static");
              nlohmann::json* u = st ? Member(*st, "uuid") : nullptr;
              gpus.push_back(u ? nlohmann::json{{"static", {{"uuid", std::move(*u)}}}}
                               : nlohmann::json());
            }
          window["gpus"] = std::move(gpus);
        }
      }
      kept.push_back(nlohmann::json{{"window", std::move(window)}});
    }
    slim["legs"] = std::move(kept);
  }
  FreeJson(rec);
  rec = std::move(slim);
}

Result<FleetEvidence> ReadFleetEvidence(const std::string& dir, const std::vector<SlurmTask>& slurm,
                                        bool fast) {
  auto plan = ReadFleetPlan(dir);
  if (!plan) return plan.error();
  FleetEvidence ev;
  ev.dir = dir;
  ev.plan = std::move(*plan);
  for (const auto& t : slurm) ev.slurm[fmt::format("{}_{}", t.array_job_id, t.task)] = t;
  for (const auto& r : ev.plan.rounds) {
    if (r.job_id.empty()) continue;
    for (size_t i = 0; i < r.tasks.size(); ++i) {
      std::string key = fmt::format("{}_{}", r.job_id, i);
      fs::path log = fs::path(dir) / "slurm" / (key + ".out");
      std::error_code lec;
      if (!fs::is_regular_file(log, lec)) continue;
      // The tail only: a log is bounded by what we read, not by what the job wrote.
      auto size = fs::file_size(log, lec);
      if (lec || size > (1u << 20)) continue;
      auto text = ReadFile(log.string(), 1 << 20);
      if (!text) continue;
      std::vector<std::string> lines;
      for (const auto& l : Split(*text, '\n'))
        if (l.rfind("vouch ", 0) == 0 && l.find(": ") != std::string::npos) lines.push_back(l);
      if (lines.size() > 2) lines.erase(lines.begin(), lines.end() - 2);
      if (!lines.empty()) ev.log_tails[key] = lines;
    }
  }
  const bool cross_boot = std::find(ev.plan.node_args.begin(), ev.plan.node_args.end(),
                                    "--allow-cross-boot") != ev.plan.node_args.end();
  fs::path nodes = fs::path(dir) / "nodes";
  std::error_code ec;
  if (!fs::is_directory(nodes, ec)) return ev;
  // Every node's evidence is checked against the fleet's seal (fleet/trust.h).
  auto key = ReadFleetKey(dir);
  if (!key) ev.refusals.push_back(key.error().message);
  if (auto s = CheckOwnFolder(nodes.string(), "the nodes' evidence"); !s)
    ev.refusals.push_back(s.error().message);
  // Each folder's entries with their types, as its listing gives them: no stat of each.
  auto by_name = [](const DirEntry& x, const DirEntry& y) { return x.name < y.name; };
  std::vector<DirEntry> node_dirs;
  if (auto l = ListDir(nodes.string(), true)) node_dirs = std::move(*l);
  std::sort(node_dirs.begin(), node_dirs.end(), by_name);
  for (const auto& ne : node_dirs) {
    const fs::path nd = nodes / ne.name;
    const std::string& node = ne.name;
    if (ne.type == DirEntry::Type::kSymlink) {
      ev.refusals.push_back(
          fmt::format("{} is a symbolic link (to {}): a node's evidence must be its own folder",
                      nd.string(), fs::read_symlink(nd, ec).string()));
      continue;
    }
    if (ne.type != DirEntry::Type::kDir || !SafeNodeName(node)) {
      ev.problems.push_back(fmt::format("{}: not a node subtree (ignored)", nd.string()));
      continue;
    }
    if (auto s = CheckOwnFolder(nd.string(), fmt::format("node {}'s evidence", node)); !s)
      ev.refusals.push_back(s.error().message);
    std::vector<DirEntry> attempts;
    if (auto l = ListDir(nd.string(), false)) attempts = std::move(*l);
    std::sort(attempts.begin(), attempts.end(), by_name);
    for (const auto& ae : attempts) {
      const fs::path ad = nd / ae.name;
      auto parsed = ParseAttemptDir(ae.name);
      if (ae.type == DirEntry::Type::kSymlink) {
        ev.refusals.push_back(
            fmt::format("{} is a symbolic link (to {}): a node's evidence must be its own folder",
                        ad.string(), fs::read_symlink(ad, ec).string()));
        continue;
      }
      if (!parsed || ae.type != DirEntry::Type::kDir) {
        ev.problems.push_back(fmt::format("{}: not a task attempt (ignored)", ad.string()));
        continue;
      }
      FleetAttempt a;
      a.node = node;
      a.task_id = parsed->first;
      a.attempt = parsed->second;
      a.dir = ad.string();
      const AttemptFiles files = CheckLinks(ad, ev.refusals);
      // An A/B attempt whose evidence is in order is read once, without a tree of its record
      // (fleet/attempt_fast.h); any other is read and verified here, which words what is wrong.
      const bool read_fast = fast && key && ev.plan.kind == FleetKind::kAb && files.top_listed &&
                             files.run_listed && ReadAbAttemptFast(a, files.top, files.run, *key);
      if (!read_fast) {
        ReadAttempt(a, files, cross_boot);
        // Evidence vouch did not write (or another user could have rewritten) is not read.
        if (key)
          if (auto wrong = VerifyFleetAttempt(*key, a.dir, {node, a.task_id, a.attempt});
              !wrong.empty()) {
            ev.refusals.insert(ev.refusals.end(), wrong.begin(), wrong.end());
            a.problem = wrong.front();
            a.record.reset();
            a.pairs = nlohmann::json::array();
            a.edits.clear();
            a.band_log.reset();
          }
        if (ev.plan.kind == FleetKind::kAb && a.record) SlimAbRecord(*a.record);
      }
      // node.json says who ran it: a node, task or attempt other than its folder's is
      // another node's evidence under this name.
      const nlohmann::json& info = a.node_info;
      if (info.is_object() && info.contains("node") &&
          (!info["node"].is_string() || info["node"] != node))
        ev.refusals.push_back(
            fmt::format("{}: node.json says it is node {}, but it lies under nodes/{}", a.dir,
                        Text(info["node"]), node));
      if (info.is_object() && info.contains("task") &&
          (!info["task"].is_string() || info["task"] != a.task_id))
        ev.refusals.push_back(
            fmt::format("{}: node.json says it is task {}, but its folder is task {}", a.dir,
                        Text(info["task"]), a.task_id));
      if (info.is_object() && info.contains("attempt") &&
          (!info["attempt"].is_number_integer() || info["attempt"] != a.attempt))
        ev.refusals.push_back(
            fmt::format("{}: node.json says it is attempt {}, but its folder is attempt {}", a.dir,
                        Text(info["attempt"]), a.attempt));
      ev.attempts.push_back(std::move(a));
    }
  }
  CheckIdentity(ev.attempts, ev.refusals);
  return ev;
}

}  // namespace vouch
