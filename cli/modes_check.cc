#include "modes_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "stats/percentiles.h"
#include "stats/serving_load.h"

namespace vouch::cli {

std::vector<std::string> LegPercentileWarnings(const std::vector<LegRecord>& legs,
                                               std::optional<long long> min_requests) {
  // Each refusal once, with the legs it holds for (legs of one run usually say the same).
  std::vector<std::pair<std::string, std::vector<int>>> refused;
  std::vector<int> short_legs;
  std::optional<double> fewest;
  for (const auto& l : legs) {
    if (l.role != "measured" || !l.valid) continue;
    for (const auto& note : l.result.notes) {
      const std::string prefix = kServingNotePrefix;
      if (note.rfind(prefix, 0) != 0) continue;
      const std::string line = note.substr(prefix.size());
      auto it = std::find_if(refused.begin(), refused.end(),
                             [&](const auto& r) { return r.first == line; });
      if (it == refused.end()) it = refused.insert(refused.end(), {line, {}});
      it->second.push_back(l.index + 1);
    }
    const Metric* done = FindMetric(l.metrics, "completed");
    if (!done || done->is_text() || done->source.rfind("channel", 0) == 0) continue;
    fewest = fewest ? std::min(*fewest, done->value) : done->value;
    if (min_requests && done->value < static_cast<double>(*min_requests))
      short_legs.push_back(l.index + 1);
  }
  std::vector<std::string> out;
  for (const auto& [line, numbers] : refused)
    out.push_back(fmt::format("serving (leg{} {}): {}", numbers.size() == 1 ? "" : "s",
                              fmt::join(numbers, ", "), line));
  if (!short_legs.empty())
    out.push_back(fmt::format(
        "serving run too short: leg{} {} completed fewer requests than --min-requests {} "
        "(fewest: {}); their percentiles are not quoted",
        short_legs.size() == 1 ? "" : "s", fmt::join(short_legs, ", "), *min_requests,
        fmt::format("{:g}", *fewest)));
  return out;
}

}  // namespace vouch::cli
