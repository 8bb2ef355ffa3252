#include "bisect/record.h"

#include <fmt/format.h>

#include "util/escape.h"
#include "util/json_io.h"

namespace vouch::bisect {
namespace {

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

// "1a2b3c4d5e6f (subject)"
std::string Named(const BisectRecord& r, std::size_t i) {
  if (i >= r.commits.size()) return fmt::format("#{}", i);
  return fmt::format("{} ({})", Short(r.commits[i].sha), r.commits[i].subject);
}

// The A/B figures of a step on one line: "B/A 0.951 [0.946, 0.957], 4 pairs, band 2.5 %".
std::string Figures(const nlohmann::json& e) {
  if (!e.contains("ab") || !e["ab"].is_object()) return "";
  const auto& ab = e["ab"];
  auto num = [&](const char* k) { return ab.value(k, 0.0); };
  if (!ab.contains("ratio")) return fmt::format("{}", ab.value("verdict", std::string()));
  return fmt::format("{}: B/A {:.4f} [{:.4f}, {:.4f}] at {:.2f} %, {} pairs, band {:.2f} %",
                     ab.value("verdict", std::string()), num("ratio"), num("ratio_lo"),
                     num("ratio_hi"), 100 * num("confidence"), ab.value("pairs", 0),
                     num("band_pct"));
}

}  // namespace

std::string ResumeMismatch(const BisectRecord& a, const BisectRecord& b) {
  auto differs = [](const char* what, const std::string& x, const std::string& y) {
    return fmt::format("{} differs: the record has '{}', given '{}'", what, x, y);
  };
  if (a.commits.empty() || b.commits.empty()) return "the record lists no commits";
  if (a.commits.front().sha != b.commits.front().sha)
    return differs("--good", a.good_rev, b.good_rev);
  if (a.commits.back().sha != b.commits.back().sha) return differs("--bad", a.bad_rev, b.bad_rev);
  if (a.commits.size() != b.commits.size())
    return fmt::format("the range differs: the record has {} commits, the repository {}",
                       a.commits.size(), b.commits.size());
  for (std::size_t i = 0; i < a.commits.size(); ++i)
    if (a.commits[i].sha != b.commits[i].sha)
      return fmt::format("commit #{} differs: the record has {}, the repository {}", i,
                         Short(a.commits[i].sha), Short(b.commits[i].sha));
  if (a.bench != b.bench) return "the benchmark command differs";
  if (a.build != b.build) return differs("--build", a.build, b.build);
  if (a.alpha != b.alpha)
    return differs("--alpha", fmt::format("{}", a.alpha), fmt::format("{}", b.alpha));
  if (a.max_pairs != b.max_pairs)
    return differs("--max-pairs", std::to_string(a.max_pairs), std::to_string(b.max_pairs));
  if (a.min_effect_pct != b.min_effect_pct)
    return differs("--min-effect", fmt::format("{}", a.min_effect_pct),
                   fmt::format("{}", b.min_effect_pct));
  return "";
}

Result<Search> Replay(const BisectRecord& r) {
  if (r.commits.size() < 2) return MakeError("the record lists {} commits", r.commits.size());
  Search s(r.commits.size());
  for (std::size_t k = 0; k < r.steps.size(); ++k) {
    const auto& st = r.steps[k];
    if (st.index >= r.commits.size() || r.commits[st.index].sha != st.commit)
      return MakeError("step {}: commit #{} is not {} in the record's range", k + 1, st.index,
                       Short(st.commit));
    if (auto fed = s.Feed(st.index, st.verdict); !fed)
      return MakeError("step {} does not replay: {}", k + 1, fed.error().message);
  }
  return s;
}

std::string Conclusion(const BisectRecord& r, const Search& s) {
  auto doubt = s.Doubt();
  auto range = [&] {
    return fmt::format("the first bad commit is one of {} commits, {} .. {}", doubt.size(),
                       Named(r, doubt.front()), Named(r, doubt.back()));
  };
  switch (s.state()) {
    case Search::State::kFound:
      return fmt::format("first bad commit: {}", Named(r, s.first_bad()));
    case Search::State::kUndecided:
      return fmt::format("undecided at {}: {}; stopped rather than guess",
                         Named(r, *s.undecided_at()), range());
    case Search::State::kOnlySkipped:
      return fmt::format("only commits that could not be tested are left: {}", range());
    case Search::State::kEndsNotApart:
      return fmt::format(
          "the bad end {} is not shown slower than the good end {}: nothing to search",
          Named(r, r.commits.size() - 1), Named(r, 0));
    default:
      return fmt::format("not finished: {} step(s) so far; {}", s.steps(), range());
  }
}

nlohmann::json BisectJson(const BisectRecord& r, const Search& s, const FamilyPlan& plan) {
  nlohmann::json j;
  j["schema"] = kBisectSchema;
  j["kind"] = "bisect";
  j["status"] = r.status;
  j["repo"] = r.repo;
  j["good"] = {{"rev", r.good_rev}, {"commit", r.commits.front().sha}};
  j["bad"] = {{"rev", r.bad_rev}, {"commit", r.commits.back().sha}};
  j["commits"] = nlohmann::json::array();
  for (const auto& c : r.commits)
    j["commits"].push_back({{"commit", c.sha}, {"subject", c.subject}});
  j["bench"] = r.bench;
  j["build"] = r.build;
  j["plan"] = {
      {"alpha", r.alpha},
      {"max_pairs", r.max_pairs},
      {"min_effect_pct", r.min_effect_pct},
      {"planned_decisions", plan.planned_decisions},
      {"per_step_alpha", plan.per_step_alpha},
      {"correction", "Bonferroni: each step's sequential A/B at alpha / planned decisions"}};
  j["steps"] = nlohmann::json::array();
  for (const auto& st : r.steps)
    j["steps"].push_back({{"kind", st.kind},
                          {"index", st.index},
                          {"commit", st.commit},
                          {"verdict", ToString(st.verdict)},
                          {"reason", st.reason},
                          {"evidence", st.evidence}});
  nlohmann::json res;
  res["state"] = ToString(s.state());
  res["conclusion"] = Conclusion(r, s);
  res["decisions"] = s.decisions();
  res["steps"] = s.steps();
  res["skipped"] = nlohmann::json::array();
  for (auto i : s.skipped()) res["skipped"].push_back(r.commits[i].sha);
  res["family_error_bound"] = FamilyBound(plan, s.decisions());
  if (s.state() == Search::State::kFound) {
    res["first_bad"] = {{"index", s.first_bad()},
                        {"commit", r.commits[s.first_bad()].sha},
                        {"subject", r.commits[s.first_bad()].subject}};
  } else {
    res["doubt"] = nlohmann::json::array();
    for (auto i : s.Doubt()) res["doubt"].push_back(r.commits[i].sha);
  }
  j["result"] = res;
  return j;
}

Result<BisectRecord> BisectRecordFromJson(const nlohmann::json& j, const std::string& where) {
  static const JsonSchema schema = JsonSchema::Object({
      Must("schema", JsonSchema::String()),
      Must("repo", JsonSchema::String()),
      Must("status", JsonSchema::String()),
      Must("good", JsonSchema::Object({Must("rev", JsonSchema::String())})),
      Must("bad", JsonSchema::Object({Must("rev", JsonSchema::String())})),
      Must("commits",
           JsonSchema::Array(JsonSchema::Object(
               {Must("commit", JsonSchema::String()), Must("subject", JsonSchema::String())}))),
      Must("bench", JsonSchema::Array(JsonSchema::String())),
      Must("build", JsonSchema::String()),
      Must("plan", JsonSchema::Object({Must("alpha", JsonSchema::Number(0, 1)),
                                       Must("max_pairs", JsonSchema::Unsigned(100000)),
                                       Must("min_effect_pct", JsonSchema::Number(0, 1e6))})),
      Must("steps", JsonSchema::Array(JsonSchema::Object({
                        Must("kind", JsonSchema::String()),
                        Must("index", JsonSchema::Unsigned(1u << 30)),
                        Must("commit", JsonSchema::String()),
                        Must("verdict", JsonSchema::String()),
                        Must("reason", JsonSchema::String()),
                        May("evidence", JsonSchema::Any()),
                    }))),
  });
  if (auto ok = schema.Check(j, where); !ok) return ok.error();
  if (j["schema"] != kBisectSchema)
    return MakeError("{}: schema '{}' is not {} (a newer vouch?)", where,
                     j["schema"].get<std::string>(), kBisectSchema);
  BisectRecord r;
  r.repo = j["repo"];
  r.status = j["status"];
  r.good_rev = j["good"]["rev"];
  r.bad_rev = j["bad"]["rev"];
  for (const auto& c : j["commits"]) r.commits.push_back({c["commit"], c["subject"]});
  if (r.commits.size() < 2) return MakeError("{}: 'commits' must list at least 2", where);
  r.bench = j["bench"].get<std::vector<std::string>>();
  r.build = j["build"];
  r.alpha = j["plan"]["alpha"];
  r.max_pairs = j["plan"]["max_pairs"];
  r.min_effect_pct = j["plan"]["min_effect_pct"];
  for (std::size_t k = 0; k < j["steps"].size(); ++k) {
    const auto& s = j["steps"][k];
    BisectStep st;
    st.kind = s["kind"];
    st.index = s["index"];
    st.commit = s["commit"];
    auto v = StepVerdictFromString(s["verdict"].get<std::string>());
    if (!v)
      return MakeError(
          "{}: 'steps[{}].verdict' '{}' is not like good, like bad, undecided or skipped", where, k,
          s["verdict"].get<std::string>());
    st.verdict = *v;
    st.reason = s["reason"];
    if (s.contains("evidence")) st.evidence = s["evidence"];
    r.steps.push_back(std::move(st));
  }
  return r;
}

std::string RenderBisectText(const BisectRecord& r, const Search& s, const FamilyPlan& plan) {
  std::string out = fmt::format(
      "bisect {} .. {}: {} commits, family-wise error {:.0f} % (Bonferroni over {} planned "
      "decisions: {:.4f} per step)\n",
      TerminalSafe(r.good_rev), TerminalSafe(r.bad_rev), r.commits.size() - 1, 100 * r.alpha,
      plan.planned_decisions, plan.per_step_alpha);
  for (std::size_t k = 0; k < r.steps.size(); ++k) {
    const auto& st = r.steps[k];
    out +=
        fmt::format("  step {:>2} {:<7} {}  {:<9}  {}\n", k + 1, st.kind,
                    Short(r.commits[st.index].sha), ToString(st.verdict), TerminalSafe(st.reason));
  }
  out += TerminalSafe(Conclusion(r, s)) + "\n";
  if (s.decisions() > plan.planned_decisions)
    out += fmt::format(
        "note: {} decisions were needed (skips), more than the {} planned: the family-wise error "
        "is "
        "bounded by {:.1f} %, not {:.0f} %\n",
        s.decisions(), plan.planned_decisions, 100 * FamilyBound(plan, s.decisions()),
        100 * r.alpha);
  return out;
}

std::string RenderBisectMarkdown(const BisectRecord& r, const Search& s, const FamilyPlan& plan) {
  std::string out = fmt::format("### vouch bisect: {}\n\n", MarkdownCell(Conclusion(r, s)));
  out += fmt::format(
      "Range {} .. {} ({} commits), benchmark {}. Each step is a sequential paired A/B of the good "
      "end against the commit at {:.4f} (Bonferroni: {:.0f} % family-wise over {} planned "
      "decisions; bound reached {:.2f} %).\n\n",
      MarkdownCode(r.good_rev), MarkdownCode(r.bad_rev), r.commits.size() - 1,
      MarkdownCode(fmt::format("{}", fmt::join(r.bench, " "))), plan.per_step_alpha, 100 * r.alpha,
      plan.planned_decisions, 100 * FamilyBound(plan, s.decisions()));
  out += "| step | commit | subject | verdict | evidence |\n|---|---|---|---|---|\n";
  for (std::size_t k = 0; k < r.steps.size(); ++k) {
    const auto& st = r.steps[k];
    std::string ev = st.verdict == StepVerdict::kSkipped ? "" : Figures(st.evidence);
    out += fmt::format("| {} {} | {} | {} | {} | {} |\n", k + 1, st.kind,
                       MarkdownCode(Short(r.commits[st.index].sha)),
                       MarkdownCell(r.commits[st.index].subject), ToString(st.verdict),
                       MarkdownCell(ev.empty() ? st.reason : ev));
  }
  return out;
}

}  // namespace vouch::bisect
