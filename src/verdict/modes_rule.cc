#include "verdict/modes_rule.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

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

ModesRuling RuleOnModes(const std::string& headline, const ArmLegValues& a, const ArmLegValues& b,
                        Better better, double band_log, double confidence, bool allow_modes,
                        std::string_view what) {
  ModesRuling r;
  for (const ArmLegValues* arm : {&a, &b}) {
    auto m = DetectModes(arm->values);
    if (m.found)
      r.found.push_back(fmt::format("{}: arm {}'s legs show {}", headline, arm->name,
                                    DescribeModes(m, arm->unit)));
  }
  if (r.found.empty()) return r;
  for (const ArmLegValues* arm : {&a, &b})
    if (auto d = DescribeMixes(*arm)) r.mixes.push_back(*d);
  if (allow_modes) {
    r.allowed = true;
    return r;
  }
  const double alpha = 1 - confidence;
  auto sep = CompleteSeparation(a.values, b.values);
  if (sep) {
    const bool b_higher = sep->direction > 0;
    const bool b_better = better == Better::kLower ? !b_higher : b_higher;
    const std::string verdict_word = b_better ? "faster" : "slower";
    r.rank_text = fmt::format(
        "every leg of {} is {} than every leg of {} (exact Mann-Whitney, U = 0 over {} and {} "
        "legs: p = 2 / C({}, {}) = {:.3g}); the nearest legs of the two arms are {:.2f} % apart, "
        "the band +/- {:.2f} %",
        b.name, b_higher ? "higher" : "lower", a.name, sep->m, sep->n, sep->m + sep->n, sep->m,
        sep->p_two_sided, 100 * std::expm1(sep->gap_log), 100 * std::expm1(band_log));
    if (sep->p_two_sided <= alpha && sep->gap_log > band_log) {
      r.by_rank = true;
      r.verdict = b_better ? AbVerdict::kBFaster : AbVerdict::kBSlower;
      r.rank_text = fmt::format(
          "decided by rank, not by the medians over modes: B {}: {}; with no true difference, "
          "legs this separated happen with probability {:.3g} (at most {:g} %)",
          verdict_word, r.rank_text, sep->p_two_sided, 100 * alpha);
      return r;
    }
    r.rank_text += fmt::format(
        ": not decisive (a rank verdict needs p <= {:g} and a gap beyond the band)", alpha);
  }
  r.refused = true;
  r.rank_text = ModesRefusal(what) + (r.rank_text.empty() ? "" : "; " + r.rank_text);
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
