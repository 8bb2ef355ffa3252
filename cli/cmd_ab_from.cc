// vouch ab --from RECORD: the verdict again, from the legs an earlier `vouch ab` measured.
// The protocol (src/ab/protocol.h) runs over the record's legs in the order they ran, with
// the plan the record keeps (extra.ab_plan) and its seed, so the blocks, the pairs and the
// pairing rules are the ones of the run; only the headline may change.
#include <fmt/format.h>

#include <set>

#include "ab_verdict.h"
#include "command.h"
#include "metrics/reserved.h"
#include "record/leg_json.h"
#include "record/record.h"
#include "util/strings.h"
#include "verdict/ab_record.h"

namespace vouch::cli {

int AbFromRecord(const std::string& record, const std::string& headline, bool json,
                 const std::string& markdown, const std::string& fail_on) {
  auto say = [](const std::string& m) { fmt::print(stderr, "vouch ab: {}\n", m); };
  auto rec = ReadRecordJson(record);
  if (!rec) return say(rec.error().message), kExitError;
  auto recorded = verdict::AbPlanFromRecord(*rec, record);
  if (!recorded) return say(recorded.error().message), kExitError;
  AbPlan plan = recorded->plan;
  if (!headline.empty()) plan.headline = headline;
  std::vector<LegRecord> legs;
  for (size_t i = 0; i < (*rec)["legs"].size(); ++i) {
    auto l = LegRecordFromJson((*rec)["legs"][i], fmt::format("{}: legs[{}]", record, i));
    if (!l) return say(l.error().message), kExitError;
    legs.push_back(std::move(*l));
  }
  // The legs, handed back in the order they ran; each must be what the plan asks for next.
  size_t next = 0;
  std::string mismatch;
  bool ran_out = false;
  LegRunner replay = [&](const Arm& arm, const std::string& role) -> LegStep {
    if (next >= legs.size()) {
      ran_out = true;
      return {};
    }
    const LegRecord& l = legs[next];
    if (l.arm != arm.name || l.role != role) {
      mismatch = fmt::format("leg {} is arm {} {}, where the recorded plan (seed {}) has arm {} {}",
                             next + 1, l.arm, l.role, plan.seed, arm.name, role);
      return {};
    }
    ++next;
    return {&l, false};
  };
  AbOutcome out = RunAbProtocol(plan, replay);
  if (!mismatch.empty())
    return say(fmt::format("{}: its legs do not follow its plan ({}); the record was edited",
                           record, mismatch)),
           kExitError;
  if (out.end == AbOutcome::End::kHeadlineRefused)
    return say(fmt::format("refused: {}", out.error)), kAbRefused;
  if (out.end == AbOutcome::End::kCalibrationFailed) return say(out.error), kAbRefused;
  if (out.end == AbOutcome::End::kDesignFailed) return say(out.error), kExitError;

  std::vector<std::string> caveats;
  if (auto c = rec->find("caveats"); c != rec->end() && c->is_array())
    for (const auto& x : *c)
      if (x.is_string()) caveats.push_back(x.get<std::string>());
  if (ran_out)
    caveats.push_back(fmt::format(
        "the record ends after leg {} of {} planned: the verdict is on the pairs its legs make",
        legs.size(), (*rec).value("planned_legs", 0)));
  // The same rules as the live run, in the same place (src/verdict/ab.h).
  verdict::AbFinal f = verdict::FinishAb(plan, out, recorded->rules, std::move(caveats));

  AbReportContext report;
  report.simulated = (*rec)["environment"].value("simulated", false);
  report.caveats = f.caveats;
  report.a_env = recorded->a_env;
  report.b_env = recorded->b_env;
  if (!json && markdown != "-")
    fmt::print("recomputed from the {} legs of {} (no leg run; the record is unchanged)\n",
               legs.size(), record);
  if (!PrintAbVerdict(plan, out, f, report, json, markdown)) return kExitError;
  return AbExitCode(out.decision.verdict, fail_on == "slower");
}

std::string AbRecomputeHint(const nlohmann::json& rec, const std::string& path) {
  if (rec.value("kind", "") != "ab") return "";
  std::string out;
  static const nlohmann::json kNone;
  const auto& extra = rec.contains("extra") ? rec["extra"] : kNone;
  if (extra.is_object() && extra.contains("refused") && extra["refused"].is_string())
    out += fmt::format("A/B refused: {}\n", extra["refused"].get<std::string>());
  // The metrics the legs report, in the order they first appear.
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& l : rec["legs"])
    for (const auto& m : l["metrics"]) {
      const std::string n = m.value("name", "");
      if (m.contains("value") && !IsReservedMetricName(n) && seen.insert(n).second)
        names.push_back(n);
    }
  bool measured = false;
  for (const auto& l : rec["legs"]) measured |= l.value("role", "") == "measured";
  if (!extra.is_object() || !extra.contains("ab_plan") || names.empty() || !measured) return out;
  out += fmt::format(
      "another headline: vouch ab --from {} --headline NAME recomputes the verdict from these "
      "legs (their metrics: {})\n",
      ShellQuote(path), fmt::join(names, ", "));
  return out;
}

}  // namespace vouch::cli
