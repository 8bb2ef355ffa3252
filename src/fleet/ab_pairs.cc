#include "fleet/ab_pairs.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "clock/policy.h"
#include "clock/window.h"
#include "record/record.h"

namespace vouch {
namespace {

// The headline's value in a leg: the first metric of that name with a number.
const nlohmann::json* Headline(const nlohmann::json& leg, const std::string& headline) {
  for (const auto& m : leg["metrics"])
    if (m.value("name", "") == headline && m.contains("value") && m["value"].is_number()) return &m;
  return nullptr;
}

bool Same(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

std::string ArmOf(const nlohmann::json& leg) { return leg.value("arm", ""); }

// The protocol's Judge (ab/protocol.cc) over the record's legs: leg IA on A's side, IB on B's.
nlohmann::json Judge(const nlohmann::json& legs, int ia, int ib, const std::string& headline,
                     const std::optional<Policy>& policy, bool cross_boot) {
  const auto& la = legs[static_cast<size_t>(ia)];
  const auto& lb = legs[static_cast<size_t>(ib)];
  nlohmann::json p = {{"a_leg", ia}, {"b_leg", ib},        {"valid", false},     {"a", 0.0},
                      {"b", 0.0},    {"clock_a_mhz", 0.0}, {"clock_b_mhz", 0.0}, {"reason", ""}};
  std::vector<std::string> why;
  const int na = ia + 1, nb = ib + 1;
  const bool va = la["valid"].get<bool>(), vb = lb["valid"].get<bool>();
  auto reasons = [](const nlohmann::json& l) {
    std::vector<std::string> r;
    for (const auto& x : l["reasons"])
      if (x.is_string()) r.push_back(x.get<std::string>());
    return fmt::format("{}", fmt::join(r, "; "));
  };
  if (!va) why.push_back(fmt::format("leg {} (A) invalid: {}", na, reasons(la)));
  if (!vb) why.push_back(fmt::format("leg {} (B) invalid: {}", nb, reasons(lb)));
  const nlohmann::json* ma = Headline(la, headline);
  const nlohmann::json* mb = Headline(lb, headline);
  if (va && !ma) why.push_back(fmt::format("leg {} has no '{}'", na, headline));
  if (vb && !mb) why.push_back(fmt::format("leg {} has no '{}'", nb, headline));
  std::optional<WindowSummary> wa, wb;
  if (why.empty()) {
    // The windows passed WindowSummarySchema in CheckRecordShape (ReadRecordJson).
    auto a = WindowSummaryFromCheckedJson(la["window"], fmt::format("legs[{}].window", ia));
    auto b = WindowSummaryFromCheckedJson(lb["window"], fmt::format("legs[{}].window", ib));
    if (!a) why.push_back(a.error().message);
    if (!b) why.push_back(b.error().message);
    if (a && b) {
      wa = *a;
      wb = *b;
      auto pv = PairWindows(*wa, *wb, policy ? *policy : wa->policy, cross_boot);
      if (!pv.paired)
        for (const auto& r : pv.rules)
          if (!r.pass && !r.waived)
            why.push_back(fmt::format("pairing rule '{}' failed: A {} / B {}", r.rule, r.a, r.b));
    }
  }
  if (!why.empty()) {
    p["reason"] = fmt::format("pair of legs {} and {}: {}", na, nb, fmt::join(why, "; "));
    return p;
  }
  p["valid"] = true;
  p["a"] = (*ma)["value"].get<double>();
  p["b"] = (*mb)["value"].get<double>();
  p["clock_a_mhz"] = PacingClockMean(*wa).value_or(0);
  p["clock_b_mhz"] = PacingClockMean(*wb).value_or(0);
  return p;
}

double Num(const nlohmann::json& p, const char* k) {
  return p.is_object() && p.contains(k) && p[k].is_number() ? p[k].get<double>() : NAN;
}

}  // namespace

Result<RecomputedAbPairs> RecomputeAbPairs(const nlohmann::json& rec,
                                           const nlohmann::json& recorded,
                                           const std::string& headline, const std::string& better,
                                           bool cross_boot, const std::string& where) {
  const auto& legs = rec["legs"];
  // Which arm is A: the verdict names both; a run still going (blocks_so_far) ran its warm-ups
  // A then B (one each, ab/protocol.h).
  std::string arm_a, arm_b;
  if (rec.contains("extra") && rec["extra"].is_object() && rec["extra"].contains("verdict") &&
      rec["extra"]["verdict"].is_object() && rec["extra"]["verdict"].contains("arms") &&
      rec["extra"]["verdict"]["arms"].is_object()) {
    const auto& arms = rec["extra"]["verdict"]["arms"];
    arm_a = arms.value("A", "");
    arm_b = arms.value("B", "");
  } else {
    std::vector<std::string> warm;
    for (const auto& l : legs)
      if (l["role"] == "warmup") warm.push_back(ArmOf(l));
    if (warm.size() >= 2) arm_a = warm[0], arm_b = warm[1];
  }
  if (arm_a.empty() || arm_b.empty() || arm_a == arm_b)
    return MakeError("{}: cannot tell arm A from arm B (arms '{}' and '{}')", where, arm_a, arm_b);
  // Each arm's legs against their windows, the valid-leg count and the summary: the same check
  // `gate RECORD` makes before it reads a median.
  for (const auto& arm : {arm_a, arm_b})
    if (auto md = RecordMedians(rec, arm, where); !md) return md.error();

  std::optional<Policy> policy;
  if (rec.contains("policy"))
    if (auto p = PolicyFromJson(rec["policy"], where)) policy = *p;

  RecomputedAbPairs out;
  std::vector<int> measured;
  for (size_t i = 0; i < legs.size(); ++i)
    if (legs[i]["role"] == "measured") measured.push_back(static_cast<int>(i));
  // Whole blocks only: a block cut short was never judged.
  for (size_t k = 0; k + 4 <= measured.size(); k += 4) {
    const int* q = &measured[k];
    std::string pat;
    for (int j = 0; j < 4; ++j) {
      const std::string arm = ArmOf(legs[static_cast<size_t>(q[j])]);
      pat += arm == arm_a ? "A" : arm == arm_b ? "B" : "?";
    }
    const bool abba = pat == "ABBA";
    if (!abba && pat != "BAAB")
      return MakeError(
          "{}: measured legs {}..{} ran as {}, not an ABBA or BAAB block of arms '{}' and '{}'; "
          "the record was edited",
          where, q[0] + 1, q[3] + 1, pat, arm_a, arm_b);
    const int ia1 = abba ? q[0] : q[1], ib1 = abba ? q[1] : q[0];
    const int ia2 = abba ? q[3] : q[2], ib2 = abba ? q[2] : q[3];
    for (auto [ia, ib] : {std::pair{ia1, ib1}, std::pair{ia2, ib2}}) {
      auto p = Judge(legs, ia, ib, headline, policy, cross_boot);
      p["block"] = k / 4;
      out.pairs.push_back(std::move(p));
    }
  }

  // The direction, from the legs' own headline metric.
  out.better = better;
  for (int i : measured) {
    const auto& l = legs[static_cast<size_t>(i)];
    const nlohmann::json* m = l["valid"].get<bool>() ? Headline(l, headline) : nullptr;
    if (!m || !m->contains("better") || !(*m)["better"].is_string()) continue;
    std::string b = (*m)["better"].get<std::string>();
    if (b != "higher" && b != "lower") continue;
    if (b != better)
      out.edits.push_back(fmt::format("the record says {} is better for '{}', its legs say {}",
                                      better.empty() ? "(nothing)" : better, headline, b));
    out.better = b;
    break;
  }

  // What the record listed, against what its legs give.
  const size_t listed = recorded.is_array() ? recorded.size() : 0;
  size_t differ = 0;
  for (size_t i = 0; i < listed; ++i) {
    const auto& r = recorded[i];
    std::string d;
    if (i >= out.pairs.size()) {
      d = fmt::format("pair {} is listed but its legs form only {} pairs", i + 1, out.pairs.size());
    } else {
      const auto& p = out.pairs[i];
      const bool rv =
          r.is_object() && r.contains("valid") && r["valid"].is_boolean() && r["valid"].get<bool>();
      const bool same =
          r.is_object() && r.value("a_leg", -1) == p["a_leg"].get<int>() &&
          r.value("b_leg", -1) == p["b_leg"].get<int>() && rv == p["valid"].get<bool>() &&
          (!rv ||
           (Same(Num(r, "a"), p["a"].get<double>()) && Same(Num(r, "b"), p["b"].get<double>())));
      if (!same)
        d = fmt::format(
            "pair {} is listed as legs {} and {}, {}, A {} B {}; its legs {} and {} give {}, A {} "
            "B {}",
            i + 1, r.is_object() ? r.value("a_leg", -1) + 1 : 0,
            r.is_object() ? r.value("b_leg", -1) + 1 : 0, rv ? "valid" : "not valid", Num(r, "a"),
            Num(r, "b"), p["a_leg"].get<int>() + 1, p["b_leg"].get<int>() + 1,
            p["valid"].get<bool>() ? "valid" : "not valid", p["a"].get<double>(),
            p["b"].get<double>());
    }
    if (d.empty()) continue;
    if (++differ <= 3) out.edits.push_back(d);
  }
  if (differ > 3) out.edits.push_back(fmt::format("{} more listed pairs differ", differ - 3));
  return out;
}

}  // namespace vouch
