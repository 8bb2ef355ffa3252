#include "gate_hints.h"

#include <fmt/format.h>

#include "metrics/reserved.h"
#include "number_flag.h"
#include "util/strings.h"

namespace vouch::cli {
namespace {

bool Own(const Metric& m) {
  return !m.is_text() && !StartsWith(m.name, "vouch.") && !StartsWith(m.name, "gpu.");
}

}  // namespace

std::string ListMetrics(const std::vector<Metric>& metrics) {
  std::vector<std::string> names;
  for (const auto& m : metrics)
    if (!m.is_text())
      names.push_back(m.unit.empty() ? m.name : fmt::format("{} ({})", m.name, m.unit));
  if (names.size() > 20) {
    const size_t more = names.size() - 20;
    names.resize(20);
    names.push_back(fmt::format("and {} more", more));
  }
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

std::string HeadlineProblem(const std::vector<Metric>& metrics, const std::string& headline) {
  if (headline.empty()) return "";
  if (const Metric* m = FindMetric(metrics, headline)) {
    if (m->is_text())
      return fmt::format("the --headline metric '{}' is text (a checksum), not a number", headline);
    if (m->better == Better::kNone) return NoDirectionProblem({*m});
    return "";
  }
  std::vector<std::string> names;
  for (const auto& m : metrics)
    if (!m.is_text()) names.push_back(m.name);
  const std::string near = ClosestMatch(headline, names);
  return fmt::format("it reported no metric '{}' (--headline){}; the metrics it reported: {}",
                     headline, near.empty() ? "" : fmt::format("; did you mean '{}'?", near),
                     ListMetrics(metrics));
}

std::string NoMetricToPin(const std::vector<Metric>& metrics) {
  if (auto why = NoDirectionProblem(metrics); !why.empty()) return why;
  return "the trials reported no metric of their own with a direction, only vouch's (wall time, "
         "memory): have the command append {\"name\", \"value\", \"unit\", \"better\"} lines "
         "to the file named in $VOUCH_METRICS, or give --metric SOURCE (see vouch help run)";
}

std::string NoDirectionProblem(const std::vector<Metric>& metrics) {
  std::vector<std::string> undirected;
  for (const auto& m : metrics) {
    if (!Own(m)) continue;
    if (m.better != Better::kNone) return "";
    undirected.push_back(m.name);
  }
  if (undirected.empty()) return "";
  return fmt::format(
      "metric{} {} {} no direction, so there is nothing to gate: say which way is better, as "
      "\"better\": \"higher\" or \"lower\" on each $VOUCH_METRICS line (or vouch.metric(..., "
      "better=\"higher\") in Python), or as the BETTER field of a --metric source "
      "(json:NAME:UNIT:higher:/POINTER, regex:NAME:UNIT:lower:PATTERN)",
      undirected.size() == 1 ? "" : "s", fmt::join(undirected, ", "),
      undirected.size() == 1 ? "has" : "have");
}

Status UseHeadline(Baseline* b, const std::string& name) {
  if (name.empty() || name == b->headline) return OkStatus();
  std::vector<std::string> names;
  for (const auto& m : b->metrics) names.push_back(m.name);
  const BaselineMetric* old = b->Find(b->headline);
  for (auto& m : b->metrics) {
    if (m.name != name) continue;
    if (!m.fail_pct && old && old->fail_pct) m.fail_pct = old->fail_pct;
    b->headline = name;
    b->headline_reason = "given with gate --headline";
    return OkStatus();
  }
  const std::string near = ClosestMatch(name, names);
  return MakeError("--headline {}: the baseline has no such metric{}; it has {}", name,
                   near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                   fmt::join(names, ", "));
}

void AddThresholdFlags(CLI::App& app, std::vector<std::string>* specs,
                       std::optional<double>* fail_all) {
  app.add_option("--threshold", *specs,
                 "per-metric thresholds, NAME=fail:PCT,warn:PCT (\"off\" removes one); repeatable")
      ->allow_extra_args(false);
  app.add_option("--fail-pct", *fail_all,
                 "every metric with a direction fails past PCT % in its bad direction (by default "
                 "only the headline and peak VRAM fail; the rest only warn)")
      ->check(NumberFlag(NotNegative(1e6)));
}

}  // namespace vouch::cli
