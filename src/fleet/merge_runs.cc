#include "fleet/merge_runs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unordered_map>

#include "gate/baseline.h"
#include "record/record.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;

// The attempt of TASK that counts: the latest complete one, else the latest with a record.
const FleetAttempt* Chosen(
    const std::unordered_map<std::string, std::vector<const FleetAttempt*>>& by,
    const std::string& task) {
  const FleetAttempt* best = nullptr;
  auto complete = [](const FleetAttempt& a) {
    return a.record && a.record->value("status", "") == "complete";
  };
  auto it = by.find(task);
  if (it == by.end()) return nullptr;
  for (const FleetAttempt* p : it->second) {
    const FleetAttempt& a = *p;
    if (!a.record) continue;
    if (!best || (complete(a) && !complete(*best)) ||
        (complete(a) == complete(*best) && a.attempt > best->attempt))
      best = &a;
  }
  return best;
}

FleetRunNode NodeOf(const FleetAttempt& a,
                    std::map<std::string, std::pair<std::string, std::string>>& meta) {
  FleetRunNode n;
  n.node = a.node;
  n.attempt = a.dir;
  n.status = a.record->value("status", "");
  const auto& rec = *a.record;
  if (rec["environment"].contains("gpus") && rec["environment"]["gpus"].is_array())
    for (const auto& g : rec["environment"]["gpus"])
      if (g.is_object() && g.contains("uuid") && g["uuid"].is_string())
        n.gpus.push_back(g["uuid"].get<std::string>());
  for (const auto& l : rec["legs"]) {
    if (l.value("role", "") != "measured" || !l.value("valid", false)) continue;
    for (const auto& m : l["metrics"]) {
      if (!m.contains("value") || !m["value"].is_number()) continue;
      std::string name = m.value("name", "");
      std::string better =
          m.contains("better") && m["better"].is_string() ? m["better"].get<std::string>() : "";
      if (name.empty() || name.rfind("vouch.", 0) == 0 || (better != "higher" && better != "lower"))
        continue;
      double v = m["value"].get<double>();
      if (!(v > 0) || !std::isfinite(v)) continue;
      n.values[name].push_back(v);
      meta[name] = {m.contains("unit") && m["unit"].is_string() ? m["unit"].get<std::string>() : "",
                    better};
    }
  }
  // Recomputed from the legs; a record whose summary disagrees gives no medians (the gate
  // below names the problem).
  if (auto md = RecordMedians(rec, "run"))
    for (const auto& [name, sum] : *md) n.medians[name] = sum.first;
  return n;
}

}  // namespace

FleetRunsMerge MergeFleetRuns(const FleetEvidence& ev, double confidence) {
  FleetRunsMerge m;
  m.kind = ev.plan.kind;
  m.problems = ev.problems;
  m.gaps = FleetGaps(ev);
  m.refusals = ev.refusals;
  if (!m.refusals.empty()) {
    // Evidence that is not what it claims: nothing of it is pooled.
    m.exit_code = 1;
    return m;
  }
  std::map<std::string, std::pair<std::string, std::string>> meta;  // unit, better
  std::map<std::string, size_t> at;
  const auto by = AttemptsByTask(ev);
  for (const auto& round : ev.plan.rounds)
    for (const auto& t : round.tasks) {
      const FleetAttempt* a = Chosen(by, t.id);
      if (!a) continue;
      if (!a->problem.empty()) m.problems.push_back(a->problem);
      FleetRunNode n = NodeOf(*a, meta);
      if (m.kind == FleetKind::kGate && a->node_info.is_object() &&
          a->node_info.contains("baseline") && a->node_info["baseline"].is_string() &&
          n.status == "complete") {
        n.baseline = a->node_info["baseline"].get<std::string>();
        auto b = ReadBaseline(n.baseline);
        if (!b) {
          m.problems.push_back(fmt::format("node {}: {}", n.node, b.error().message));
        } else {
          std::map<std::string, CurrentMetric> now;
          auto md = RecordMedians(*a->record, "run", "node " + n.node);
          if (!md) {
            m.problems.push_back(md.error().message);
            m.failing.push_back(n.node);
          } else {
            for (const auto& [name, v] : *md) now[name] = CurrentMetric{v.first, v.second};
            n.gate = CompareToBaseline(*b, now, RecordClockState(*a->record, "run"), ProcessEnv());
            if (GateExitCode(*n.gate) != 0) m.failing.push_back(n.node);
          }
        }
      }
      if (m.kind == FleetKind::kBaseline) {
        std::string b = (fs::path(a->dir) / "baseline.json").string();
        if (fs::exists(b)) n.baseline = b;
      }
      // A node that ran two tasks (a resume on the same node) keeps the values of both.
      if (auto it = at.find(n.node); it != at.end()) {
        for (auto& [name, v] : n.values)
          m.nodes[it->second].values[name].insert(m.nodes[it->second].values[name].end(), v.begin(),
                                                  v.end());
        continue;
      }
      at[n.node] = m.nodes.size();
      m.nodes.push_back(std::move(n));
    }
  const double band = std::log(1 + kFleetRunBandPct / 100);
  for (const auto& [name, ub] : meta) {
    FleetMetricSpread s;
    s.name = name;
    s.unit = ub.first;
    s.better = ub.second;
    std::vector<Stratum> strata;
    for (const auto& n : m.nodes) {
      auto it = n.values.find(name);
      if (it == n.values.end()) continue;
      std::vector<double> logs;
      for (double v : it->second) logs.push_back(std::log(v));
      if (auto st = MakeStratum(n.node, logs)) strata.push_back(*st);
    }
    FloorAtPooledVariance(strata);
    s.pooled = RandomEffects(strata, confidence);
    s.outliers = LeaveOneOut(strata, 1 - confidence, band);
    for (const auto& o : s.outliers)
      if (o.outlier) s.disagreeing.push_back(o.name);
    m.metrics.push_back(s);
  }
  bool all_done = m.gaps.empty();
  if (m.kind == FleetKind::kBaseline)
    for (const auto& n : m.nodes) all_done = all_done && !n.baseline.empty();
  m.exit_code = all_done && m.failing.empty() && !m.nodes.empty() ? 0 : 1;
  return m;
}

nlohmann::json FleetRunsJson(const FleetEvidence& ev, const FleetRunsMerge& m) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : m.nodes) {
    nlohmann::json j = {{"node", n.node},
                        {"attempt", n.attempt},
                        {"status", n.status},
                        {"gpus", n.gpus},
                        {"medians", n.medians}};
    if (!n.baseline.empty()) j["baseline"] = n.baseline;
    if (n.gate) j["gate"] = nlohmann::json::parse(RenderGateJson(*n.gate));
    nodes.push_back(j);
  }
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& s : m.metrics) {
    nlohmann::json j = {{"name", s.name},
                        {"unit", s.unit},
                        {"better", s.better},
                        {"disagreeing_nodes", s.disagreeing}};
    if (s.pooled)
      j["pooled"] = {{"geomean", std::exp(s.pooled->mu_log)},
                     {"lo", std::exp(s.pooled->lo_log)},
                     {"hi", std::exp(s.pooled->hi_log)},
                     {"tau2", s.pooled->tau2},
                     {"cochran_q", s.pooled->q},
                     {"q_p", s.pooled->q_p},
                     {"i2_pct", 100 * s.pooled->i2}};
    nlohmann::json o = nlohmann::json::array();
    for (const auto& x : s.outliers)
      o.push_back({{"node", x.name},
                   {"diff_pct", LogPct(x.diff_log)},
                   {"z", x.z},
                   {"p_bonferroni", x.p_bonferroni},
                   {"disagrees", x.outlier}});
    j["outlier_tests"] = o;
    metrics.push_back(j);
  }
  nlohmann::json missing = nlohmann::json::array();
  for (const auto& g : m.gaps) missing.push_back({{"task", g.task_id}, {"why", g.why}});
  nlohmann::json out = {{"schema", "vouch.fleet"},
                        {"version", 1},
                        {"kind", FleetKindName(m.kind)},
                        {"dir", ev.dir},
                        {"method",
                         "per metric: random-effects pooling of per-node mean log values "
                         "(DerSimonian-Laird, HKSJ interval); a node disagrees when its "
                         "leave-one-out z is significant (Bonferroni) and it is more than "
                         "1 % from the others"},
                        {"nodes", nodes},
                        {"metrics", metrics},
                        {"complete", m.gaps.empty()},
                        {"missing", missing},
                        {"problems", m.problems},
                        {"refusals", m.refusals},
                        {"jobs", FleetJobsJson(ev)},
                        {"plan", FleetPlanToJson(ev.plan)}};
  if (m.kind == FleetKind::kGate) {
    out["verdict"] = m.failing.empty() && m.gaps.empty() && m.refusals.empty() ? "pass" : "fail";
    out["failing_nodes"] = m.failing;
  }
  return out;
}

std::string RenderFleetRunsText(const FleetRunsMerge& m) {
  std::string t;
  if (!m.refusals.empty()) {
    t += fmt::format("fleet {}: REFUSED: the evidence is not each node's own\n",
                     FleetKindName(m.kind));
    for (const auto& r : m.refusals) t += fmt::format("  - {}\n", r);
  } else if (m.kind == FleetKind::kGate)
    t += fmt::format(
        "fleet gate: {} ({} nodes{})\n", m.failing.empty() && m.gaps.empty() ? "pass" : "FAIL",
        m.nodes.size(),
        m.failing.empty() ? "" : fmt::format(", failing: {}", fmt::join(m.failing, " ")));
  else
    t += fmt::format("fleet {}: {} nodes{}\n", FleetKindName(m.kind), m.nodes.size(),
                     m.gaps.empty() ? "" : fmt::format(", {} task(s) missing", m.gaps.size()));
  for (const auto& n : m.nodes) {
    std::string gate;
    if (n.gate) gate = fmt::format("  gate {}", GateVerdictName(n.gate->overall));
    std::vector<std::string> meds;
    for (const auto& [name, v] : n.medians)
      if (name.rfind("vouch.", 0) != 0) meds.push_back(fmt::format("{} {:.6g}", name, v));
    t += fmt::format("  {:<11} {:<11} {}{}  GPU {}\n", n.node, n.status, fmt::join(meds, ", "),
                     gate, fmt::join(n.gpus, ","));
    if (n.gate && GateExitCode(*n.gate) != 0)
      for (const auto& r : n.gate->rows)
        if (r.verdict == GateVerdict::kFail || r.verdict == GateVerdict::kMissing ||
            r.verdict == GateVerdict::kError)
          t += fmt::format("    FAIL on {} (GPU {}): {} {} -> {} ({})\n", n.node,
                           fmt::join(n.gpus, ","), r.metric, r.baseline,
                           r.now ? fmt::format("{:.6g}", *r.now) : std::string("missing"),
                           r.threshold);
  }
  for (const auto& s : m.metrics) {
    if (s.pooled)
      t += fmt::format(
          "  {} over nodes: geometric mean {:.6g} {} ({:.6g} .. {:.6g}); Q = {:.2f} (p = "
          "{:.3g}), I^2 = {:.0f} %\n",
          s.name, std::exp(s.pooled->mu_log), s.unit, std::exp(s.pooled->lo_log),
          std::exp(s.pooled->hi_log), s.pooled->q, s.pooled->q_p, 100 * s.pooled->i2);
    for (const auto& o : s.outliers)
      if (o.outlier) {
        std::string gpus;
        for (const auto& n : m.nodes)
          if (n.node == o.name) gpus = fmt::format("{}", fmt::join(n.gpus, ","));
        t += fmt::format(
            "  DISAGREES {} (GPU {}): {} {:+.2f} % against the other nodes; z = {:.1f}, "
            "Bonferroni p = {:.3g}\n",
            o.name, gpus, s.name, LogPct(o.diff_log), o.z, o.p_bonferroni);
      }
  }
  for (const auto& g : m.gaps) t += fmt::format("  MISSING {}: {}\n", g.task_id, g.why);
  for (const auto& p : m.problems) t += fmt::format("  problem: {}\n", p);
  return t;
}

Result<std::string> FleetBaselineFor(const std::string& path, const std::string& node) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  auto ev = ReadFleetEvidence(path, {});
  if (!ev) return ev.error();
  if (ev->plan.kind != FleetKind::kBaseline)
    return MakeError("{} is a fleet {} run, not a fleet baseline", path,
                     FleetKindName(ev->plan.kind));
  std::string found;
  std::vector<std::string> have;
  for (const auto& a : ev->attempts) {
    std::string b = (fs::path(a.dir) / "baseline.json").string();
    if (!fs::exists(b, ec)) continue;
    if (std::find(have.begin(), have.end(), a.node) == have.end()) have.push_back(a.node);
    if (a.node == node) found = b;  // attempts are sorted: the last is the latest
  }
  if (found.empty())
    return MakeError(
        "the fleet baseline {} has no baseline for node {} (it has {}): gate it "
        "against a plain baseline file, or pin one there",
        path, node, have.empty() ? std::string("none") : fmt::format("{}", fmt::join(have, ", ")));
  return found;
}

}  // namespace vouch
