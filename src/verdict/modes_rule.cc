#include "verdict/modes_rule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "stats/modes.h"
#include "stats/rank.h"

namespace vouch::verdict {
namespace {

// "arm A ran 2 kernel mixes: 120 kernels per step (3 legs), 122 kernels per step (3 legs)".
std::optional<std::string> DescribeMixes(const ArmLegValues& arm) {
  std::map<std::string, int> count;
  for (const auto& m : arm.mixes)
    if (!m.empty()) ++count[m];
  if (count.empty()) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& [mix, n] : count)
    parts.push_back(fmt::format("{} ({} leg{})", mix, n, n == 1 ? "" : "s"));
  return fmt::format("arm {} ran {} kernel mix{}: {}", arm.name, count.size(),
                     count.size() == 1 ? "" : "es", fmt::join(parts, ", "));
}

}  // namespace

std::string ModesRefusal(std::string_view what) {
  return fmt::format(
      "refused: a median over two modes is a number no process ran at (each leg is one process, "
      "and its mode is fixed for its life), and no rank decides the direction unless every leg "
      "of one arm is beyond every leg of the other; find what picks the mode, or pass "
      "--allow-modes to {} over them anyway "
      "(the modes test's false-alarm rate is {:g} % per metric on unimodal legs)",
      what, kModesFalseAlarmRate * 100);
}

namespace {

// The values of ARM's legs that ran MIX.
std::vector<double> ValuesOfMix(const ArmLegValues& arm, const std::string& mix) {
  std::vector<double> v;
  for (std::size_t i = 0; i < arm.values.size() && i < arm.mixes.size(); ++i)
    if (arm.mixes[i] == mix) v.push_back(arm.values[i]);
  return v;
}

std::set<std::string> MixesOf(const ArmLegValues& arm) {
  std::set<std::string> m;
  for (const auto& x : arm.mixes)
    if (!x.empty()) m.insert(x);
  return m;
}

// One rank comparison: the arms' values apart, with the probability of that under no difference.
struct RankOutcome {
  bool apart = false;    // separated, beyond the band
  int direction = 0;     // +1: B's values above A's
  double p_one_way = 1;  // P(this separation in this direction | no difference)
  std::string text;
};

RankOutcome CompareByRank(const std::vector<double>& a, const std::vector<double>& b,
                          double band_log) {
  RankOutcome o;
  auto sep = CompleteSeparation(a, b);
  if (!sep) return o;
  o.direction = sep->direction;
  o.p_one_way = sep->p_two_sided / 2;
  o.apart = sep->gap_log > band_log;
  o.text = fmt::format(
      "U = 0 over {} and {} legs: p = 2 / C({}, {}) = {:.3g} two-sided; the "
      "nearest legs {:.2f} % apart",
      sep->m, sep->n, sep->m + sep->n, sep->m, sep->p_two_sided, 100 * std::expm1(sep->gap_log));
  return o;
}

}  // namespace

ModesRuling RuleOnModes(const std::string& headline, const ArmLegValues& a, const ArmLegValues& b,
                        Better better, double band_log, double confidence, bool allow_modes,
                        std::string_view what) {
  ModesRuling r;
  for (const ArmLegValues* arm : {&a, &b}) {
    auto m = DetectModes(arm->values);
    if (m.found)
      r.found.push_back(fmt::format("{}: arm {}'s legs show {}", headline, arm->name,
                                    DescribeModes(m, arm->unit)));
    else if (MixesOf(*arm).size() >= 2)
      // The tracer labels the modes: legs of one arm that ran different work per step are two
      // modes whatever the modes test can see in a few legs.
      r.found.push_back(
          fmt::format("{}: arm {}'s legs ran {} kernel mixes (modes labelled by the "
                      "GPU trace)",
                      headline, arm->name, MixesOf(*arm).size()));
  }
  if (r.found.empty()) return r;
  for (const ArmLegValues* arm : {&a, &b})
    if (auto d = DescribeMixes(*arm)) r.mixes.push_back(*d);
  if (allow_modes) {
    r.allowed = true;
    return r;
  }
  const double alpha = 1 - confidence;
  // Mode by mode where both arms ran the same mixes; else the arms whole.
  std::vector<std::string> shared;
  const auto mixes_b = MixesOf(b);
  for (const auto& m : MixesOf(a))
    if (mixes_b.count(m)) shared.push_back(m);
  std::vector<std::pair<std::string, RankOutcome>> parts;
  if (shared.empty()) {
    parts.push_back({"", CompareByRank(a.values, b.values, band_log)});
  } else {
    for (const auto& m : shared)
      parts.push_back({m, CompareByRank(ValuesOfMix(a, m), ValuesOfMix(b, m), band_log)});
  }
  // Decided when every part is apart the same way: under no difference, the chance of that is
  // 2 x the product of each part's one-way chance (the parts are independent legs).
  bool all_apart = true;
  double p = 2;
  std::vector<std::string> texts;
  for (const auto& [mix, o] : parts) {
    all_apart =
        all_apart && o.apart && o.direction == parts.front().second.direction && o.direction != 0;
    p *= o.p_one_way;
    texts.push_back(mix.empty() ? (o.text.empty() ? "the arms' legs overlap" : o.text)
                                : fmt::format("mix {}: {}", mix,
                                              o.text.empty() ? "the arms' legs overlap" : o.text));
  }
  p = std::min(1.0, p);
  const std::string basis =
      shared.empty() ? std::string("the arms whole")
                     : fmt::format("mode by mode, over the {} kernel mix{} both arms ran",
                                   shared.size(), shared.size() == 1 ? "" : "es");
  const int direction = parts.front().second.direction;
  const bool b_higher = direction > 0;
  r.rank_text = fmt::format("exact rank test ({}; {}): p = {:.3g}, the band +/- {:.2f} %", basis,
                            fmt::join(texts, "; "), p, 100 * std::expm1(band_log));
  if (all_apart && p <= alpha) {
    const bool b_better = better == Better::kLower ? !b_higher : b_higher;
    r.by_rank = true;
    r.verdict = b_better ? AbVerdict::kBFaster : AbVerdict::kBSlower;
    r.rank_text = fmt::format(
        "decided by rank, not by the medians over modes: B {}: every leg of {} is {} than every "
        "leg of {} ({}); with no true difference, legs this separated happen with probability "
        "{:.3g} (at most {:g} %)",
        b_better ? "faster" : "slower", b.name, b_higher ? "higher" : "lower", a.name, r.rank_text,
        p, 100 * alpha);
    return r;
  }
  r.refused = true;
  r.rank_text = ModesRefusal(what) + "; " + r.rank_text +
                fmt::format(
                    ": not decisive (a rank verdict needs every leg of one arm beyond "
                    "every leg of the other by more than the band, and p <= {:g})",
                    alpha);
  return r;
}

void ApplyModesRuling(const ModesRuling& r, AbDecision& decision) {
  if (!r.any()) return;
  std::vector<std::string> head;
  if (r.allowed) {
    for (const auto& f : r.found) decision.reasons.push_back("modes allowed: " + f);
    for (const auto& m : r.mixes) decision.reasons.push_back(m);
    return;
  }
  if (decision.verdict == AbVerdict::kRefused) {
    for (const auto& f : r.found) decision.reasons.push_back(f);
    for (const auto& m : r.mixes) decision.reasons.push_back(m);
    return;
  }
  for (const auto& f : r.found) head.push_back((r.refused ? "refused: " : "") + f);
  for (const auto& m : r.mixes) head.push_back(m);
  head.push_back(r.rank_text);
  decision.reasons.insert(decision.reasons.begin(), head.begin(), head.end());
  decision.verdict = r.by_rank ? r.verdict : AbVerdict::kRefused;
}

nlohmann::json ModesRuling::ToJson() const {
  if (!any()) return nullptr;
  return {{"found", found},
          {"kernel_mixes", mixes},
          {"ruling", allowed   ? "allowed"
                     : by_rank ? "decided by rank"
                               : "refused"},
          {"rank", rank_text}};
}

}  // namespace vouch::verdict
