#include "fleet/merge.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "stats/modes.h"
#include "verdict/modes_rule.h"

namespace vouch {
namespace {

struct TaskRef {
  int round = 0, index = 0;
  const FleetTask* task = nullptr;
  std::string root;
};

std::vector<TaskRef> AllTasks(const FleetPlan& p) {
  std::vector<TaskRef> out;
  for (size_t r = 0; r < p.rounds.size(); ++r)
    for (size_t i = 0; i < p.rounds[r].tasks.size(); ++i) {
      const FleetTask& t = p.rounds[r].tasks[i];
      out.push_back(
          {static_cast<int>(r), static_cast<int>(i), &t, t.covers.empty() ? t.id : t.covers});
    }
  return out;
}

int AttemptBlocks(const FleetAttempt& a) { return static_cast<int>(a.pairs.size() / 2); }

bool AttemptComplete(const FleetAttempt& a) {
  return a.record && a.record->value("status", "") == "complete";
}

using ByTask = std::unordered_map<std::string, std::vector<const FleetAttempt*>>;

const std::vector<const FleetAttempt*>& AttemptsOf(const ByTask& by, const std::string& task) {
  static const std::vector<const FleetAttempt*> none;
  auto it = by.find(task);
  return it == by.end() ? none : it->second;
}

// The attempt of TASK whose evidence counts: ab, the most whole blocks (the later on a tie);
// otherwise the latest complete one, else the latest.
const FleetAttempt* BestAttempt(const ByTask& by, const std::string& task, bool ab) {
  const FleetAttempt* best = nullptr;
  for (const FleetAttempt* p : AttemptsOf(by, task)) {
    const FleetAttempt& a = *p;
    if (!a.problem.empty() && !a.record) continue;
    if (!best) {
      best = &a;
      continue;
    }
    if (ab) {
      if (AttemptBlocks(a) > AttemptBlocks(*best) ||
          (AttemptBlocks(a) == AttemptBlocks(*best) && a.attempt > best->attempt))
        best = &a;
    } else if ((AttemptComplete(a) && !AttemptComplete(*best)) ||
               (AttemptComplete(a) == AttemptComplete(*best) && a.attempt > best->attempt)) {
      best = &a;
    }
  }
  return best;
}

std::string SlurmWhy(const FleetEvidence& ev, const TaskRef& t) {
  const auto& round = ev.plan.rounds[static_cast<size_t>(t.round)];
  if (round.job_id.empty()) return "never submitted";
  std::string key = fmt::format("{}_{}", round.job_id, t.index);
  std::string w;
  if (auto it = ev.slurm.find(key); it == ev.slurm.end()) {
    w = fmt::format("job {}: Slurm no longer reports it", key);
  } else {
    const SlurmTask& s = it->second;
    w = fmt::format("job {} {}", key, s.state);
    if (!s.node.empty()) w += " on " + s.node;
    std::vector<std::string> more;
    if (!s.exit_code.empty() && s.exit_code != "0:0") more.push_back("exit " + s.exit_code);
    if (!s.reason.empty() && s.reason != "None") more.push_back("reason " + s.reason);
    if (s.restarts > 0) more.push_back(fmt::format("requeued {} times", s.restarts));
    if (!more.empty()) w += fmt::format(" ({})", fmt::join(more, ", "));
  }
  if (auto lt = ev.log_tails.find(key); lt != ev.log_tails.end())
    w += fmt::format("; its log: {}", fmt::join(lt->second, " / "));
  return w;
}

std::string AttemptWhy(const FleetAttempt& a, bool ab) {
  std::string w = fmt::format("{}/{}-a{}: ", a.node, a.task_id, a.attempt);
  std::string st = a.status();
  if (!a.problem.empty()) return w + a.problem;
  if (a.node_info.is_object() && a.node_info.value("status", "") == "running")
    w += "vouch never finished on the node (killed with its job, or the node was lost)";
  else
    w += fmt::format("status {}", st);
  if (a.node_info.is_object() && a.node_info.contains("exit_code") &&
      a.node_info["exit_code"].is_number())
    w += fmt::format(", exit {}", a.node_info["exit_code"].get<int>());
  if (ab) w += fmt::format(", {} whole blocks recorded", AttemptBlocks(a));
  if (a.record && a.record->contains("caveats") && (*a.record)["caveats"].is_array()) {
    for (const auto& c : (*a.record)["caveats"])
      if (c.is_string() && c.get<std::string>().rfind("simulated device", 0) != 0) {
        w += "; " + c.get<std::string>();
        break;
      }
  }
  return w;
}

std::vector<std::string> Strings(const nlohmann::json& j, const char* array_key,
                                 const char* field) {
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains(array_key) || !j[array_key].is_array()) return out;
  for (const auto& e : j[array_key])
    if (e.is_object() && e.contains(field) && e[field].is_string())
      out.push_back(e[field].get<std::string>());
  return out;
}

void AddUnique(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

nlohmann::json MetaJson(const std::optional<MetaResult>& m) {
  if (!m) return nullptr;
  return {
      {"nodes", m->k},
      {"ratio",
       {{"mean", std::exp(m->mu_log)}, {"lo", std::exp(m->lo_log)}, {"hi", std::exp(m->hi_log)}}},
      {"confidence", m->confidence},
      {"se_log", m->se_log},
      {"interval", m->interval_method},
      {"tau2", m->tau2},
      {"cochran_q", m->q},
      {"q_df", m->k - 1},
      {"q_p", m->q_p},
      {"i2_pct", 100 * m->i2},
      {"fixed_effect_ratio", std::exp(m->fixed_mu_log)}};
}

}  // namespace

std::vector<FleetGap> FleetGaps(const FleetEvidence& ev) {
  const bool ab = ev.plan.kind == FleetKind::kAb;
  std::vector<FleetGap> out;
  auto tasks = AllTasks(ev.plan);
  const ByTask by = AttemptsByTask(ev);
  // Each root's tasks (itself and the resume tasks covering it), found once: a plan of many
  // tasks is merged in linear time.
  std::unordered_map<std::string, std::vector<const TaskRef*>> by_root;
  for (const auto& t : tasks) by_root[t.root].push_back(&t);
  for (const auto& root : tasks) {
    if (root.round != 0) continue;
    FleetGap g;
    g.task_id = root.task->id;
    g.planned_blocks = ab ? root.task->blocks : 1;
    std::vector<std::string> why;
    for (const TaskRef* tp : by_root[g.task_id]) {
      const TaskRef& t = *tp;
      const FleetAttempt* best = BestAttempt(by, t.task->id, ab);
      int done = best ? (ab ? std::min(AttemptBlocks(*best), t.task->blocks)
                            : (AttemptComplete(*best) ? 1 : 0))
                      : 0;
      g.done_blocks += done;
      int owed = ab ? t.task->blocks : 1;
      if (done < owed) {
        std::string w = fmt::format("task {}: {}", t.task->id, SlurmWhy(ev, t));
        const auto& attempts = AttemptsOf(by, t.task->id);
        for (const FleetAttempt* a : attempts) w += "; " + AttemptWhy(*a, ab);
        if (attempts.empty()) w += "; no attempt reached a node";
        why.push_back(w);
      }
    }
    g.done_blocks = std::min(g.done_blocks, g.planned_blocks);
    if (g.done_blocks < g.planned_blocks) {
      g.why = fmt::format("{}", fmt::join(why, " | "));
      out.push_back(g);
    }
  }
  return out;
}

FleetAbMerge MergeFleetAb(const FleetEvidence& ev, double confidence) {
  FleetAbMerge m;
  m.problems = ev.problems;
  m.gaps = FleetGaps(ev);
  // The plan's own parameters win over a record's: the band and the confidence every node
  // was asked for (a node's record saying another band is named, and not used).
  auto asked = PlanAbParametersOf(ev.plan);
  if (asked && PlanNodeOption(ev.plan, "--confidence")) confidence = asked->confidence;
  m.confidence = confidence;
  if (!asked) {
    m.reasons = {asked.error().message};
    m.verdict = AbVerdict::kRefused;
    return m;
  }
  if (!ev.refusals.empty()) {
    // Evidence that is not what it claims: no verdict from it, and each fault named.
    m.reasons = ev.refusals;
    m.reasons.push_back("the fleet verdict is refused: the evidence above is not each node's own");
    m.verdict = AbVerdict::kRefused;
    return m;
  }
  std::map<std::string, FleetAbNode> by_node;
  std::set<std::string> headlines, betters;
  const ByTask by = AttemptsByTask(ev);
  for (const auto& t : AllTasks(ev.plan)) {
    const FleetAttempt* a = BestAttempt(by, t.task->id, true);
    if (!a) continue;
    if (!a->problem.empty()) m.problems.push_back(a->problem);
    m.problems.insert(m.problems.end(), a->edits.begin(), a->edits.end());
    if (a->pairs.empty()) continue;
    FleetAbNode& n = by_node[a->node];
    n.node = a->node;
    n.attempts.push_back(a->dir);
    if (!a->headline.empty()) headlines.insert(a->headline);
    if (!a->better.empty()) betters.insert(a->better);
    if (asked->band_log) {
      n.band_log = *asked->band_log;
      if (a->band_log && std::fabs(*a->band_log - *asked->band_log) > 1e-9 * *asked->band_log)
        m.problems.push_back(fmt::format(
            "{}: its record says the band is +/- {:.4g} %, the plan asked +/- {:.4g} %: the "
            "plan's is used",
            a->dir, LogPct(*a->band_log), LogPct(*asked->band_log)));
    } else if (a->band_log) {
      n.band_log = std::max(n.band_log, *a->band_log);
    }
    if (a->record && a->record->contains("environment")) {
      const auto& env = (*a->record)["environment"];
      for (const auto& u : Strings(env, "gpus", "uuid")) AddUnique(n.gpus, u);
      if (env.is_object() && env.contains("boot_id") && env["boot_id"].is_string())
        AddUnique(n.boot_ids, env["boot_id"].get<std::string>());
    }
    MetricDirection dir =
        a->better == "lower" ? MetricDirection::kLowerIsBetter : MetricDirection::kHigherIsBetter;
    for (const auto& p : a->pairs) {
      if (!p.is_object()) continue;
      if (!p.value("valid", false)) {
        n.refused.push_back(fmt::format("{}: {}", a->task_id, p.value("reason", "invalid pair")));
        continue;
      }
      auto num = [&](const char* k) {
        return p.contains(k) && p[k].is_number() ? p[k].get<double>() : NAN;
      };
      auto d = PairLogRatio(num("a"), num("b"), dir);
      auto dc =
          ClockNormalisedLogRatio(num("a"), num("b"), num("clock_a_mhz"), num("clock_b_mhz"), dir);
      if (!d) {
        n.refused.push_back(fmt::format("{}: pair with a non-positive value", a->task_id));
        continue;
      }
      n.d.push_back(*d);
      n.a.push_back(num("a"));
      n.b.push_back(num("b"));
      if (dc) n.d_clock.push_back(*dc);
    }
  }
  if (headlines.size() == 1) m.headline = *headlines.begin();
  if (betters.size() == 1) m.better = *betters.begin();
  for (const auto& [name, n] : by_node) m.band_log = std::max(m.band_log, n.band_log);

  std::vector<Stratum> strata, strata_clock;
  AbOptions opts;
  opts.confidence = confidence;
  NoiseBand band;
  band.half_width_log = m.band_log;
  for (auto& [name, n] : by_node) {
    NoiseBand nb;
    nb.half_width_log = n.band_log;
    n.decision = DecideAb(n.d, nb, opts, n.refused);
    n.stratum = MakeStratum(name, n.d);
    if (n.stratum) strata.push_back(*n.stratum);
    if (auto sc = MakeStratum(name, n.d_clock); sc && n.d_clock.size() == n.d.size())
      strata_clock.push_back(*sc);
    m.pairs_used += n.d.size();
    m.nodes.push_back(n);
  }
  FloorAtPooledVariance(strata);
  FloorAtPooledVariance(strata_clock);
  for (auto& n : m.nodes)
    for (const auto& st : strata)
      if (n.stratum && st.name == n.node) n.stratum = st;
  // Modes: each leg is one process, so a node's arm whose legs form two modes has no one
  // speed. The rule is the one of every A/B (verdict/modes_rule.h), per node: refused unless
  // --allow-modes, or decided by rank where the node's arms do not overlap. The fleet takes a
  // rank verdict only when every node gave one (its arms apart), all pointing the same way.
  const bool allow_modes = std::find(ev.plan.node_args.begin(), ev.plan.node_args.end(),
                                     "--allow-modes") != ev.plan.node_args.end();
  std::set<AbVerdict> rank_verdicts;
  bool modes_refused = false;
  std::vector<std::string> rank_texts;
  for (const auto& n : m.nodes) {
    verdict::ArmLegValues va{"A", "", n.a, {}}, vb{"B", "", n.b, {}};
    auto r = verdict::RuleOnModes(m.headline.empty() ? "headline" : m.headline, va, vb,
                                  m.better == "lower" ? Better::kLower : Better::kHigher,
                                  n.band_log, confidence, allow_modes, "run the fleet");
    if (!r.any()) continue;
    for (const auto& f : r.found) m.modes.push_back(fmt::format("node {}: {}", n.node, f));
    if (r.by_rank) {
      rank_verdicts.insert(r.verdict);
      rank_texts.push_back(fmt::format("node {}: {}", n.node, r.rank_text));
    }
    modes_refused |= r.refused;
  }
  if (!m.modes.empty() && !allow_modes) {
    m.reasons = m.modes;
    if (!modes_refused && rank_verdicts.size() == 1 && rank_texts.size() == m.nodes.size()) {
      m.reasons.insert(m.reasons.end(), rank_texts.begin(), rank_texts.end());
      m.verdict = *rank_verdicts.begin();
      return m;
    }
    m.reasons.push_back(verdict::ModesRefusal("run the fleet"));
    m.verdict = AbVerdict::kRefused;
    return m;
  }
  if (headlines.size() > 1 || betters.size() > 1) {
    m.reasons.push_back(fmt::format("the nodes measured different headlines ({}) or directions",
                                    fmt::join(headlines, ", ")));
    m.verdict = AbVerdict::kRefused;
    return m;
  }
  if (m.pairs_used < kDefaultMinPairs) {
    m.reasons.push_back(fmt::format("{} valid pairs over the fleet: a verdict needs {}",
                                    m.pairs_used, kDefaultMinPairs));
    m.verdict = AbVerdict::kRefused;
  } else if (strata.size() >= 2) {
    m.pooled = RandomEffects(strata, confidence);
    if (strata_clock.size() == strata.size())
      m.pooled_clock = RandomEffects(strata_clock, confidence);
    if (m.pooled)
      m.verdict = ClassifyInterval(m.pooled->lo_log, m.pooled->hi_log, m.band_log);
    else
      m.reasons.push_back("the per-node means could not be pooled (non-finite values)");
  } else if (strata.size() == 1) {
    for (const auto& n : m.nodes)
      if (n.stratum) {
        m.verdict = n.decision.verdict;
        m.reasons.push_back(fmt::format(
            "only node {} has two or more valid pairs: the fleet verdict is its own paired verdict",
            n.node));
      }
  } else {
    m.reasons.push_back("no node has two valid pairs");
  }
  for (const auto& n : m.nodes)
    if (!n.stratum)
      m.reasons.push_back(
          fmt::format("node {}: {} valid pairs, not pooled (a node needs 2)", n.node, n.d.size()));

  const double alpha = 1 - confidence;
  m.outlier_tests = LeaveOneOut(strata, alpha, m.band_log);
  for (const auto& o : m.outlier_tests)
    if (o.outlier) m.disagreeing.push_back(o.name);
  if (!m.disagreeing.empty()) {
    std::vector<Stratum> rest;
    for (const auto& s : strata)
      if (std::find(m.disagreeing.begin(), m.disagreeing.end(), s.name) == m.disagreeing.end())
        rest.push_back(s);
    m.pooled_without_disagreeing = RandomEffects(rest, confidence);
  }
  if (m.pooled && m.pooled->k == 2 && m.pooled->q_p < alpha &&
      std::fabs(strata[0].mean_log - strata[1].mean_log) > m.band_log)
    m.notes.push_back(fmt::format(
        "nodes {} and {} disagree (Q = {:.2f}, p = {:.3g}); with two nodes neither can be named "
        "the odd one: run on a third",
        strata[0].name, strata[1].name, m.pooled->q, m.pooled->q_p));
  // A node whose own verdict points the other way from the fleet's.
  for (const auto& n : m.nodes) {
    bool opposite =
        (m.verdict == AbVerdict::kBFaster && n.decision.verdict == AbVerdict::kBSlower) ||
        (m.verdict == AbVerdict::kBSlower && n.decision.verdict == AbVerdict::kBFaster);
    if (opposite)
      m.notes.push_back(fmt::format("node {}'s own verdict is {}, against the fleet's {}", n.node,
                                    ToString(n.decision.verdict), ToString(m.verdict)));
  }
  if (m.verdict == AbVerdict::kNoChange || m.verdict == AbVerdict::kInconclusive) {
    if (m.pooled)
      m.mde_pct = 100 * std::expm1(m.band_log + 0.5 * (m.pooled->hi_log - m.pooled->lo_log));
    else
      for (const auto& n : m.nodes)
        if (n.stratum) m.mde_pct = MinimumDetectableEffectPct(n.decision);
  }
  if (m.pooled && m.pooled->i2 >= 0.5)
    m.notes.push_back(fmt::format(
        "the nodes differ more than their pairs' noise explains (I^2 = {:.0f} %): the pooled ratio "
        "is an average over unlike nodes",
        100 * m.pooled->i2));
  if (!m.gaps.empty())
    m.reasons.push_back(
        fmt::format("incomplete: {} task(s) still owe blocks (see missing; "
                    "vouch fleet ab --resume DIR runs only those)",
                    m.gaps.size()));
  return m;
}

nlohmann::json FleetJobsJson(const FleetEvidence& ev) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& t : AllTasks(ev.plan)) {
    const auto& round = ev.plan.rounds[static_cast<size_t>(t.round)];
    nlohmann::json j = {{"task", t.task->id}, {"job", round.job_id}, {"array_index", t.index}};
    auto it = ev.slurm.find(fmt::format("{}_{}", round.job_id, t.index));
    if (it != ev.slurm.end())
      j.update({{"state", it->second.state},
                {"node", it->second.node},
                {"exit_code", it->second.exit_code},
                {"reason", it->second.reason},
                {"restarts", it->second.restarts}});
    else
      j["state"] = nullptr;
    if (!t.task->covers.empty()) j["covers"] = t.task->covers;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

nlohmann::json FleetAbJson(const FleetEvidence& ev, const FleetAbMerge& m) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : m.nodes) {
    nlohmann::json j = {{"node", n.node},
                        {"pairs_used", n.d.size()},
                        {"pairs_refused", n.refused.size()},
                        {"refused_pairs", n.refused},
                        {"verdict", ToString(n.decision.verdict)},
                        {"gpus", n.gpus},
                        {"boot_ids", n.boot_ids},
                        {"band_pct", LogPct(n.band_log)},
                        {"attempts", n.attempts},
                        {"pooled", n.stratum.has_value()}};
    if (n.decision.interval)
      j["ratio"] = {{"mean", n.decision.interval->Ratio()},
                    {"lo", n.decision.interval->RatioLo()},
                    {"hi", n.decision.interval->RatioHi()}};
    else if (!n.d.empty()) {
      double s = 0;
      for (double x : n.d) s += x;
      j["ratio"] = {{"mean", std::exp(s / static_cast<double>(n.d.size()))}};
    }
    nodes.push_back(std::move(j));
  }
  nlohmann::json outliers = nlohmann::json::array();
  for (const auto& o : m.outlier_tests)
    outliers.push_back({{"node", o.name},
                        {"others_ratio", std::exp(o.others_mu_log)},
                        {"diff_pct", LogPct(o.diff_log)},
                        {"z", o.z},
                        {"p", o.p},
                        {"p_bonferroni", o.p_bonferroni},
                        {"disagrees", o.outlier}});
  nlohmann::json missing = nlohmann::json::array();
  for (const auto& g : m.gaps)
    missing.push_back({{"task", g.task_id},
                       {"planned_blocks", g.planned_blocks},
                       {"done_blocks", g.done_blocks},
                       {"why", g.why}});
  return {{"schema", "vouch.fleet"},
          {"version", 1},
          {"kind", "ab"},
          {"dir", ev.dir},
          {"verdict", ToString(m.verdict)},
          {"headline", m.headline},
          {"better", m.better},
          {"method",
           "random-effects meta-analysis of per-node mean log ratios (DerSimonian-Laird tau^2; "
           "Hartung-Knapp t(k-1) interval, never narrower than DL's); the node is the stratum, "
           "pairs never cross nodes"},
          {"confidence", m.confidence},
          {"band_pct", LogPct(m.band_log)},
          {"mde_pct", m.mde_pct ? nlohmann::json(*m.mde_pct) : nlohmann::json()},
          {"modes", m.modes},
          {"pairs_used", m.pairs_used},
          {"pooled", MetaJson(m.pooled)},
          {"pooled_clock_normalised", MetaJson(m.pooled_clock)},
          {"nodes", nodes},
          {"outlier_tests", outliers},
          {"disagreeing_nodes", m.disagreeing},
          {"pooled_without_disagreeing", MetaJson(m.pooled_without_disagreeing)},
          {"notes", m.notes},
          {"reasons", m.reasons},
          {"complete", m.gaps.empty()},
          {"missing", missing},
          {"problems", m.problems},
          {"refusals", ev.refusals},
          {"jobs", FleetJobsJson(ev)},
          {"plan", FleetPlanToJson(ev.plan)}};
}

std::string RenderFleetAbText(const FleetAbMerge& m) {
  std::string t;
  t += fmt::format("fleet A/B verdict: {} ({} nodes, {} pairs used)\n", ToString(m.verdict),
                   m.nodes.size(), m.pairs_used);
  t += fmt::format("  headline  {} ({} is better), band +/- {:.3f} %\n",
                   m.headline.empty() ? "?" : m.headline, m.better.empty() ? "?" : m.better,
                   LogPct(m.band_log));
  if (m.pooled) {
    const auto& p = *m.pooled;
    t += fmt::format(
        "  pooled    ratio B/A {:.4f} ({:.0f} % CI {:.4f} .. {:.4f}), random effects over {} nodes "
        "(DerSimonian-Laird, {} interval)\n",
        std::exp(p.mu_log), 100 * p.confidence, std::exp(p.lo_log), std::exp(p.hi_log), p.k,
        p.interval_method);
    if (m.pooled_clock)
      t += fmt::format("  clock-normalised ratio {:.4f} ({:.4f} .. {:.4f})\n",
                       std::exp(m.pooled_clock->mu_log), std::exp(m.pooled_clock->lo_log),
                       std::exp(m.pooled_clock->hi_log));
    t += fmt::format(
        "  heterogeneity Cochran's Q = {:.2f} (df {}, p = {:.3g}), I^2 = {:.0f} %, tau^2 = "
        "{:.3g}\n",
        p.q, p.k - 1, p.q_p, 100 * p.i2, p.tau2);
  }
  t += "  node        pairs  ratio B/A (CI)                 verdict       GPU\n";
  for (const auto& n : m.nodes) {
    std::string ratio = "n/a";
    if (n.decision.interval)
      ratio = fmt::format("{:.4f} ({:.4f} .. {:.4f})", n.decision.interval->Ratio(),
                          n.decision.interval->RatioLo(), n.decision.interval->RatioHi());
    bool odd = std::find(m.disagreeing.begin(), m.disagreeing.end(), n.node) != m.disagreeing.end();
    t += fmt::format("  {:<11} {:>5}  {:<30} {:<13} {}{}\n", n.node, n.d.size(), ratio,
                     ToString(n.decision.verdict), fmt::join(n.gpus, ","),
                     odd ? "  <- DISAGREES" : "");
  }
  for (const auto& o : m.outlier_tests)
    if (o.outlier)
      t += fmt::format(
          "  DISAGREES {}: {:+.2f} % against the other nodes pooled (ratio {:.4f}); z = {:.1f}, "
          "Bonferroni p = {:.3g}\n",
          o.name, LogPct(o.diff_log), std::exp(o.others_mu_log), o.z, o.p_bonferroni);
  if (m.pooled_without_disagreeing)
    t += fmt::format("  without {}: ratio B/A {:.4f} ({:.4f} .. {:.4f}) over {} nodes\n",
                     fmt::join(m.disagreeing, ", "), std::exp(m.pooled_without_disagreeing->mu_log),
                     std::exp(m.pooled_without_disagreeing->lo_log),
                     std::exp(m.pooled_without_disagreeing->hi_log),
                     m.pooled_without_disagreeing->k);
  if (m.mde_pct)
    t += fmt::format(
        "  mde       this fleet A/B could not have seen an effect smaller than {:.2f} % (the band "
        "{:.2f} % plus the {} interval's half width)\n",
        *m.mde_pct, LogPct(m.band_log), m.pooled ? "pooled" : "node's");
  if (m.verdict != AbVerdict::kRefused)
    for (const auto& md : m.modes) t += fmt::format("  modes allowed: {}\n", md);
  for (const auto& n : m.notes) t += fmt::format("  note: {}\n", n);
  for (const auto& r : m.reasons) t += fmt::format("  - {}\n", r);
  for (const auto& g : m.gaps)
    t += fmt::format("  MISSING {}: {} of {} blocks: {}\n", g.task_id,
                     g.planned_blocks - g.done_blocks, g.planned_blocks, g.why);
  for (const auto& p : m.problems) t += fmt::format("  problem: {}\n", p);
  return t;
}

}  // namespace vouch
