#include "fleet/plan.h"

#include <cctype>
#include <cmath>
#include <filesystem>

#include "fleet/trust.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "util/number.h"

namespace vouch {

std::string_view FleetKindName(FleetKind k) {
  switch (k) {
    case FleetKind::kAb:
      return "ab";
    case FleetKind::kRun:
      return "run";
    case FleetKind::kGate:
      return "gate";
    case FleetKind::kBaseline:
      return "baseline";
  }
  return "?";
}

Result<FleetKind> ParseFleetKind(const std::string& s) {
  for (FleetKind k : {FleetKind::kAb, FleetKind::kRun, FleetKind::kGate, FleetKind::kBaseline})
    if (s == FleetKindName(k)) return k;
  return MakeError("unknown fleet command '{}': ab, run, gate or baseline", s);
}

Result<std::vector<int>> SplitBlocks(int pairs, int nodes) {
  if (nodes < 1) return MakeError("--nodes {}: at least 1", nodes);
  int blocks = (pairs + 1) / 2;
  if (blocks < nodes)
    return MakeError(
        "--pairs {} is {} ABBA blocks for {} nodes: each node needs at least one whole block "
        "(pairs never cross nodes); give --pairs {} or more, or fewer --nodes",
        pairs, blocks, nodes, 2 * nodes);
  std::vector<int> out(static_cast<size_t>(nodes), blocks / nodes);
  for (int i = 0; i < blocks % nodes; ++i) ++out[static_cast<size_t>(i)];
  return out;
}

std::uint64_t TaskSeed(std::uint64_t plan_seed, int round, int index) {
  std::uint64_t z =
      plan_seed + 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(1 + round * 100003 + index);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

nlohmann::json FleetPlanToJson(const FleetPlan& p) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& r : p.rounds) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& t : r.tasks)
      tasks.push_back({{"id", t.id}, {"blocks", t.blocks}, {"seed", t.seed}, {"covers", t.covers}});
    rounds.push_back({{"job_id", r.job_id},
                      {"submitted_unix_s", r.submitted_unix_s},
                      {"tasks", std::move(tasks)}});
  }
  return {{"schema", "vouch.fleet.plan"},
          {"version", 1},
          {"kind", FleetKindName(p.kind)},
          {"node_args", p.node_args},
          {"command", p.command},
          {"nodes", p.nodes},
          {"pairs", p.pairs},
          {"seed", p.seed},
          {"baseline", p.baseline},
          {"vouch_binary", p.vouch_binary},
          {"global_args", p.global_args},
          {"slurm",
           {{"partition", p.slurm.partition},
            {"gres", p.slurm.gres},
            {"account", p.slurm.account},
            {"time", p.slurm.time},
            {"exclude", p.slurm.exclude},
            {"extra", p.slurm.extra}}},
          {"rounds", std::move(rounds)}};
}

Result<FleetPlan> FleetPlanFromJson(const nlohmann::json& j, const std::string& origin) {
  try {
    if (j.value("schema", "") != "vouch.fleet.plan")
      return MakeError("{}: not a vouch fleet plan (schema '{}')", origin, j.value("schema", ""));
    if (j.value("version", 0) != 1)
      return MakeError("{}: fleet plan version {} (this vouch reads 1)", origin,
                       j.value("version", 0));
    FleetPlan p;
    auto k = ParseFleetKind(j.at("kind").get<std::string>());
    if (!k) return MakeError("{}: {}", origin, k.error().message);
    p.kind = *k;
    p.node_args = j.at("node_args").get<std::vector<std::string>>();
    p.command = j.at("command").get<std::vector<std::string>>();
    p.nodes = j.at("nodes").get<int>();
    p.pairs = j.at("pairs").get<int>();
    p.seed = j.at("seed").get<std::uint64_t>();
    p.baseline = j.value("baseline", "");
    p.vouch_binary = j.at("vouch_binary").get<std::string>();
    p.global_args = j.value("global_args", std::vector<std::string>{});
    const auto& s = j.at("slurm");
    p.slurm.partition = s.value("partition", "");
    p.slurm.gres = s.value("gres", "");
    p.slurm.account = s.value("account", "");
    p.slurm.time = s.value("time", "");
    p.slurm.exclude = s.value("exclude", "");
    p.slurm.extra = s.value("extra", std::vector<std::string>{});
    for (const auto& r : j.at("rounds")) {
      FleetRound round;
      round.job_id = r.at("job_id").get<std::string>();
      round.submitted_unix_s = r.value("submitted_unix_s", 0.0);
      for (const auto& t : r.at("tasks")) {
        FleetTask task;
        task.id = t.at("id").get<std::string>();
        task.blocks = t.at("blocks").get<int>();
        task.seed = t.at("seed").get<std::uint64_t>();
        task.covers = t.value("covers", "");
        if (task.blocks < 0 || task.blocks > 100000)
          return MakeError("{}: task {} has {} blocks", origin, task.id, task.blocks);
        round.tasks.push_back(task);
      }
      p.rounds.push_back(round);
    }
    if (p.nodes < 1 || p.command.empty())
      return MakeError("{}: a plan needs nodes and a command", origin);
    return p;
  } catch (const std::exception& e) {
    return MakeError("{}: malformed fleet plan: {}", origin, e.what());
  }
}

Result<FleetPlan> ReadFleetPlan(const std::string& dir) {
  std::string path = (std::filesystem::path(dir) / "fleet.json").string();
  // A plan is a command vouch runs on every node: only one this user wrote, that no one else
  // could have rewritten (fleet/trust.h).
  if (std::error_code ec;
      std::filesystem::exists(path, ec) || std::filesystem::is_symlink(path, ec))
    if (auto s = CheckOwnFile(path, "the fleet plan"); !s) return s.error();
  auto text = ReadFile(path, 16 << 20);
  if (!text) return text.error();
  auto j = ParseJson(*text, path);
  if (!j) return j.error();
  return FleetPlanFromJson(*j, path);
}

Status WriteFleetPlan(const std::string& dir, const FleetPlan& p) {
  return WriteFileAtomic((std::filesystem::path(dir) / "fleet.json").string(),
                         DumpJson(FleetPlanToJson(p), 2) + "\n");
}

Result<FleetTask> FindTask(const FleetPlan& p, const std::string& job_id, int index, int round) {
  if (round < 0 || round >= static_cast<int>(p.rounds.size()))
    return MakeError("the fleet plan has no round {} ({} rounds)", round, p.rounds.size());
  const auto& r = p.rounds[static_cast<size_t>(round)];
  if (!job_id.empty() && !r.job_id.empty() && r.job_id != job_id)
    return MakeError("round {} was submitted as job {}, not {}", round, r.job_id, job_id);
  if (index < 0 || index >= static_cast<int>(r.tasks.size()))
    return MakeError("round {} has no array task {} ({} tasks)", round, index, r.tasks.size());
  return r.tasks[static_cast<size_t>(index)];
}

std::optional<std::string> PlanNodeOption(const FleetPlan& p, std::string_view flag) {
  std::optional<std::string> out;
  const auto& a = p.node_args;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "--") break;
    if (a[i] == flag && i + 1 < a.size())
      out = a[++i];
    else if (a[i].size() > flag.size() && a[i].compare(0, flag.size(), flag) == 0 &&
             a[i][flag.size()] == '=')
      out = a[i].substr(flag.size() + 1);
  }
  return out;
}

Result<PlanAbParameters> PlanAbParametersOf(const FleetPlan& p) {
  PlanAbParameters out;
  if (auto c = PlanNodeOption(p, "--confidence")) {
    auto v = ParseFiniteDouble(*c, "the fleet plan's --confidence");
    if (!v) return v.error();
    if (!(*v > 0.5 && *v < 1))
      return MakeError("the fleet plan's --confidence {}: not in (0.5, 1)", *c);
    out.confidence = *v;
  }
  if (auto c = PlanNodeOption(p, "--calibrate")) {
    auto v = ParseFiniteDouble(*c, "the fleet plan's --calibrate");
    if (!v) return v.error();
    if (*v > 0) return out;  // each node measured its own band
  }
  double pct = 1.0;  // vouch ab's default
  if (auto b = PlanNodeOption(p, "--band")) {
    auto v = ParseFiniteDouble(*b, "the fleet plan's --band");
    if (!v) return v.error();
    if (!(*v > 0)) return MakeError("the fleet plan's --band {}: not a positive percentage", *b);
    pct = *v;
  }
  out.band_log = std::log1p(pct / 100.0);
  return out;
}

bool SafeNodeName(const std::string& name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  return true;
}

}  // namespace vouch
