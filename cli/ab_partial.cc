#include "ab_partial.h"

#include <fmt/format.h>

#include <vector>

#include "util/escape.h"
#include "util/redact.h"
#include "util/strings.h"

namespace vouch::cli {

std::string InterruptedAbSummary(const AbOutcome& out, std::size_t planned_pairs,
                                 const std::string& a_name, const std::string& b_name,
                                 const std::string& record_path) {
  std::vector<const AbPairResult*> valid;
  for (const auto& p : out.pairs)
    if (p.valid) valid.push_back(&p);
  if (out.pairs.empty()) return "";
  std::string s = fmt::format(
      "vouch ab: interrupted after {} of {} planned pairs ({} valid){}\n", out.pairs.size(),
      planned_pairs, valid.size(),
      out.headline.empty() ? std::string() : fmt::format(", headline {}", out.headline));
  const auto& iv = out.decision.interval;
  if (iv && iv->n >= 2) {
    s += fmt::format(
        "  the pairs so far: {}/{} ratio {:.4f} (geometric mean; {:.0f} % interval {:.4f} .. "
        "{:.4f}; above 1: {} better)\n",
        b_name, a_name, iv->Ratio(), 100 * iv->confidence, iv->RatioLo(), iv->RatioHi(), b_name);
  } else {
    for (const auto* p : valid)
      s += fmt::format("  pair of legs {} and {}: {} {:.6g}, {} {:.6g} ({}/{} {:.4f})\n",
                       p->a_leg + 1, p->b_leg + 1, a_name, p->a, b_name, p->b, b_name, a_name,
                       p->a != 0 ? p->b / p->a : 0.0);
  }
  s += fmt::format(
      "  not a verdict: the design did not finish (its pairs are in {}; vouch ab --from {} "
      "recomputes from them)\n",
      record_path, record_path);
  return s;
}

std::string AbArmsMarkdownRows(const AbPlan& plan, const std::vector<std::string>& a_env,
                               const std::vector<std::string>& b_env) {
  auto row = [](const char* side, const Arm& x, const std::vector<std::string>& env) {
    std::string what = MarkdownCode(ShellJoin(RedactArgv(x.argv)));
    if (!env.empty()) what += " with " + MarkdownCode(ShellJoin(RedactArgv(env)));
    const std::string name = x.name == side ? side : fmt::format("{} ({})", side, x.name);
    return fmt::format("| {} | {} |\n", MarkdownCell(name), what);
  };
  return row("A", plan.a, a_env) + row("B", plan.b, b_env);
}

std::string WithArmsRows(std::string md, const std::string& rows) {
  const std::string header = "|---|---|\n";
  const size_t at = md.find(header);
  if (at == std::string::npos) return rows + md;
  md.insert(at + header.size(), rows);
  return md;
}

}  // namespace vouch::cli
