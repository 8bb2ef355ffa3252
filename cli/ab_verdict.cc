#include "ab_verdict.h"

#include <fmt/format.h>

#include "ab_partial.h"
#include "common.h"
#include "util/escape.h"
#include "util/json_io.h"

namespace vouch::cli {

nlohmann::json ArmsCheckWithGpu(const verdict::AbGpu& g, ArmInput arms_a, ArmInput arms_b) {
  if (!g.gpu) return nullptr;
  arms_a.call_stats = g.gpu->call_stats_a;
  arms_b.call_stats = g.gpu->call_stats_b;
  if (g.gpu->identity != gputrace::Identity::kUnknown) {
    arms_a.behavioural["gpu.kernel_multiset"] = DumpJson(nlohmann::json(g.gpu->a_multiset));
    arms_b.behavioural["gpu.kernel_multiset"] = DumpJson(nlohmann::json(g.gpu->b_multiset));
  }
  auto rep = CheckArms(arms_a, arms_b);
  if (!rep) return nullptr;
  return nlohmann::json::parse(RenderArmsJson(*rep));
}

bool PrintAbVerdict(const AbPlan& plan, const AbOutcome& out, const verdict::AbFinal& f,
                    const AbReportContext& report, bool json, const std::string& markdown) {
  const nlohmann::json& v = f.verdict;
  const auto& g = f.gpu;
  auto render_md = [&] {
    // What A and B were, first in the table (ab_partial.h).
    std::string md = WithArmsRows(RenderAbMarkdown(out, report.caveats),
                                  AbArmsMarkdownRows(plan, report.a_env, report.b_env));
    // Host noise (issue 23 item 5): the wall clock against GPU time, in the pull request too.
    if (auto hn = v.find("host_noise"); hn != v.end() && hn->is_object()) {
      if (hn->value("host_bound", false)) md += "\n- " + MarkdownCell(hn->value("text", "")) + "\n";
      if (auto ow = hn->find("opposite_ways"); ow != hn->end() && ow->is_string())
        md += "\n- " + MarkdownCell(ow->get<std::string>()) + "\n";
    }
    if (g.gpu) md += "\n" + gputrace::RenderComparisonMarkdown(*g.gpu, g.attribution);
    return md;
  };
  if (json)
    fmt::print("{}\n", DumpJson(v, 2));
  else if (markdown == "-")
    fmt::print("{}", render_md());
  else
    fmt::print("{}{}", RenderAbText(plan, out, report),
               g.gpu ? gputrace::RenderComparisonText(*g.gpu, g.attribution) : std::string());
  return WriteMarkdownFile(markdown, render_md, "ab");
}

}  // namespace vouch::cli
