#include "fleet/evidence.h"

#include <algorithm>
#include <filesystem>

#include "record/record.h"
#include "util/fs.h"
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

namespace {

void ReadAttempt(FleetAttempt& a) {
  std::string node_path = (fs::path(a.dir) / "node.json").string();
  if (fs::exists(node_path)) {
    auto text = ReadFile(node_path, 1 << 20);
    Result<nlohmann::json> parsed =
        text ? ParseJson(*text, node_path) : Result<nlohmann::json>(nlohmann::json());
    nlohmann::json j = parsed ? std::move(*parsed) : nlohmann::json();
    if (!text || !parsed || !j.is_object())
      a.problem = fmt::format("{}: unreadable", node_path);
    else
      a.node_info = j;
  } else {
    a.problem = fmt::format("{}: missing (the job never started vouch here)", node_path);
  }
  std::string rec_path = (fs::path(a.dir) / "run" / "record.json").string();
  if (!fs::exists(rec_path)) {
    if (a.problem.empty()) a.problem = fmt::format("{}: missing", rec_path);
    return;
  }
  auto rec = ReadRecordJson(rec_path);
  if (!rec) {
    a.problem = rec.error().message;
    return;
  }
  a.record = *rec;
  try {
    const nlohmann::json& extra = (*rec).contains("extra") ? (*rec)["extra"] : nlohmann::json();
    const nlohmann::json* src = nullptr;
    if (extra.is_object() && extra.contains("verdict") && extra["verdict"].is_object() &&
        extra["verdict"].contains("pairs"))
      src = &extra["verdict"];
    else if (extra.is_object() && extra.contains("blocks_so_far") &&
             extra["blocks_so_far"].is_object())
      src = &extra["blocks_so_far"];
    if (src) {
      if ((*src).contains("pairs") && (*src)["pairs"].is_array()) a.pairs = (*src)["pairs"];
      a.headline = (*src).value("headline", "");
      a.better = (*src).value("better", "");
      if ((*src).contains("band_log") && (*src)["band_log"].is_number())
        a.band_log = (*src)["band_log"].get<double>();
    }
    if (!a.band_log && extra.is_object() && extra.contains("blocks_so_far") &&
        extra["blocks_so_far"].is_object() && extra["blocks_so_far"].contains("band_log") &&
        extra["blocks_so_far"]["band_log"].is_number())
      a.band_log = extra["blocks_so_far"]["band_log"].get<double>();
  } catch (const std::exception& e) {
    a.problem = fmt::format("{}: malformed A/B pairs: {}", rec_path, e.what());
    a.pairs = nlohmann::json::array();
  }
}

}  // namespace

Result<FleetEvidence> ReadFleetEvidence(const std::string& dir,
                                        const std::vector<SlurmTask>& slurm) {
  auto plan = ReadFleetPlan(dir);
  if (!plan) return plan.error();
  FleetEvidence ev;
  ev.dir = dir;
  ev.plan = *plan;
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
  fs::path nodes = fs::path(dir) / "nodes";
  std::error_code ec;
  if (!fs::is_directory(nodes, ec)) return ev;
  std::vector<fs::path> node_dirs;
  for (const auto& e : fs::directory_iterator(nodes, ec)) node_dirs.push_back(e.path());
  std::sort(node_dirs.begin(), node_dirs.end());
  for (const auto& nd : node_dirs) {
    std::string node = nd.filename().string();
    if (!fs::is_directory(nd, ec) || fs::is_symlink(nd, ec) || !SafeNodeName(node)) {
      ev.problems.push_back(fmt::format("{}: not a node subtree (ignored)", nd.string()));
      continue;
    }
    std::vector<fs::path> attempts;
    for (const auto& e : fs::directory_iterator(nd, ec)) attempts.push_back(e.path());
    std::sort(attempts.begin(), attempts.end());
    for (const auto& ad : attempts) {
      auto parsed = ParseAttemptDir(ad.filename().string());
      if (!parsed || !fs::is_directory(ad, ec) || fs::is_symlink(ad, ec)) {
        ev.problems.push_back(fmt::format("{}: not a task attempt (ignored)", ad.string()));
        continue;
      }
      FleetAttempt a;
      a.node = node;
      a.task_id = parsed->first;
      a.attempt = parsed->second;
      a.dir = ad.string();
      ReadAttempt(a);
      if (a.node_info.is_object() && a.node_info.value("node", node) != node)
        a.problem = fmt::format("{}: node.json says node '{}', the subtree is '{}'", a.dir,
                                a.node_info.value("node", ""), node);
      ev.attempts.push_back(std::move(a));
    }
  }
  return ev;
}

}  // namespace vouch
