#include "stats/serving_load.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace vouch {
namespace {

std::string RateText(double r) { return fmt::format("{:.3g} req/s", r); }

}  // namespace

bool IsServingMetric(const Metric& m) {
  for (const char* p : {"vllm ", "sglang ", "guidellm "})
    if (m.source.rfind(p, 0) == 0) return true;
  return false;
}

std::string LoadVerdictName(LoadVerdict v) {
  switch (v) {
    case LoadVerdict::kValid:
      return "valid";
    case LoadVerdict::kSaturated:
      return "saturated";
    case LoadVerdict::kClientBound:
      return "client-bound";
  }
  return "valid";
}

LoadAssessment AssessServingLoad(const ServingLoad& l) {
  LoadAssessment a;
  const double achieved = l.duration_s > 0 ? l.completed / l.duration_s : 0;
  const double n = std::max(l.sent, l.completed);
  const double margin = n > 0 ? std::max(0.10, 3 / std::sqrt(n)) : 0.10;
  const double w = l.mean_latency_s.value_or(0);
  std::optional<double> in_flight = l.mean_in_flight;
  if (!in_flight && l.mean_latency_s && l.duration_s > 0) in_flight = achieved * w;
  if (!l.offered_rate && !l.max_concurrency) {
    a.verdict = LoadVerdict::kSaturated;
    a.reason = fmt::format(
        "request_rate inf without max_concurrency: all {:g} requests were offered at once, so "
        "each latency includes its wait behind the others (achieved {})",
        n, RateText(achieved));
    return a;
  }
  if (l.offered_rate && *l.offered_rate > 0) {
    const double r = *l.offered_rate;
    if (l.send_span_s && n >= 2 && !l.max_concurrency && *l.send_span_s > 0) {
      const double sent_rate = (n - 1) / *l.send_span_s;
      if (sent_rate < r / (1 + margin)) {
        a.verdict = LoadVerdict::kClientBound;
        a.reason = fmt::format(
            "offered {}, but the client sent at {} (first to last send {:.3g} s): the client "
            "could not keep its own schedule (more than {:.0f} % slower)",
            RateText(r), RateText(sent_rate), *l.send_span_s, margin * 100);
        return a;
      }
    }
    const double schedule = n / r + w;
    if (l.duration_s > schedule * (1 + margin)) {
      a.verdict = LoadVerdict::kSaturated;
      a.reason = fmt::format(
          "offered {}, achieved {}: the run took {:.3g} s where its schedule of {:g} requests "
          "and one request's {:.3g} s take {:.3g} s (more than {:.0f} % longer): requests "
          "queued{}",
          RateText(r), RateText(achieved), l.duration_s, n, w, schedule, margin * 100,
          l.max_concurrency ? fmt::format(" behind max_concurrency {:g}", *l.max_concurrency)
                            : std::string());
      return a;
    }
    a.reason = fmt::format("offered {}, achieved {}", RateText(r), RateText(achieved));
    return a;
  }
  // A closed loop: request_rate inf with max_concurrency C.
  const double c = *l.max_concurrency;
  if (in_flight && n >= 2 * c && *in_flight < c / 2) {
    a.verdict = LoadVerdict::kClientBound;
    a.reason = fmt::format(
        "max_concurrency {:g}, but {:.3g} requests were in flight on average (achieved {}): "
        "the client, not the server, set the pace",
        c, *in_flight, RateText(achieved));
    return a;
  }
  a.reason = fmt::format(
      "max_concurrency {:g}{}, achieved {}", c,
      in_flight ? fmt::format(" ({:.3g} in flight on average)", *in_flight) : std::string(),
      RateText(achieved));
  return a;
}

Metric ServingLoadMetric(const LoadAssessment& a, const std::string& source) {
  Metric m{kServingLoadMetric, 0, "", Better::kNone, source, {}, std::nullopt};
  m.text = LoadVerdictName(a.verdict) + ": " + a.reason;
  return m;
}

std::vector<std::string> RefuseLatenciesOfAnInvalidLoad(std::vector<Metric>* metrics) {
  std::vector<std::string> out;
  // Each run's serving_load ("serving_load", or "NAME/serving_load" of a GuideLLM benchmark)
  // judges the latencies named with the same prefix.
  std::vector<std::pair<std::string, std::string>> invalid;  // (prefix, the load's text)
  const std::string tail = kServingLoadMetric;
  for (const auto& m : *metrics) {
    if (!m.is_text() || !IsServingMetric(m) || m.name.size() < tail.size() ||
        m.name.compare(m.name.size() - tail.size(), tail.size(), tail) != 0)
      continue;
    const std::string prefix = m.name.substr(0, m.name.size() - tail.size());
    if (!prefix.empty() && prefix.back() != '/') continue;
    if (m.text->rfind("valid:", 0) != 0) invalid.push_back({prefix, *m.text});
  }
  for (const auto& entry : invalid) {
    // Not a structured binding: Debian 12's clang 14 cannot capture one in a lambda.
    const std::string& prefix = entry.first;
    const std::string& what = entry.second;
    auto latency = [&](const Metric& m) {
      return IsServingMetric(m) && !m.is_text() && (m.unit == "ms" || m.unit == "s") &&
             m.name.compare(0, prefix.size(), prefix) == 0 &&
             m.name.find('/', prefix.size()) == std::string::npos && m.name != prefix + "duration";
    };
    std::vector<std::string> refused;
    for (const auto& m : *metrics)
      if (latency(m)) refused.push_back(m.name);
    std::erase_if(*metrics, latency);
    out.push_back(fmt::format(
        "{}load {}; its latencies are not figures{}", prefix, what,
        refused.empty() ? std::string() : fmt::format(" ({})", fmt::join(refused, ", "))));
  }
  return out;
}

}  // namespace vouch
