// The per-metric summary shown in a run's summary and stored in record.json: median, min,
// max, mean and spread over the valid legs. Pure.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "metrics/metric.h"

namespace vouch {

struct MetricSummary {
  std::string name;
  std::string unit;
  Better better = Better::kNone;
  size_t n = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  // (max - min) / median * 100. Empty when the median is 0 (no meaningful relative spread).
  std::optional<double> spread_pct;
  // "two modes: 33.1 tok/s in 5 legs, 26.0 in 4" when the values form two modes (each leg one
  // process: the median is then a number no process ran at); "" otherwise.
  std::string modes = {};
};

// Summary of VALUES; empty when there are none or any is not finite (a NaN never becomes a
// number here).
std::optional<MetricSummary> Summarize(const std::string& name, const std::string& unit,
                                       Better better, const std::vector<double>& values);

// One summary per numeric metric name over the legs, in first-seen order (text metrics are
// for equality checks, not summaries). Legs lacking a metric simply contribute nothing to it.
std::vector<MetricSummary> SummarizeLegs(const std::vector<std::vector<Metric>>& per_leg);

// SummarizeLegs one leg at a time: keeps the values and each name's unit and direction, not
// the legs' metrics (a long run's summary without its legs in memory).
class MetricAccumulator {
 public:
  void AddLeg(const std::vector<Metric>& metrics);
  std::vector<MetricSummary> Summaries() const;

 private:
  struct Name {
    std::string name, unit;
    Better better = Better::kNone;
    bool numeric = false;  // seen with a number (a text metric alone gives no summary)
    std::vector<double> values;
    size_t last_leg = 0;  // the last leg that had it (1-based)
  };
  std::vector<Name> names_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<size_t> order_;  // by first numeric occurrence
  size_t legs_ = 0;
};

}  // namespace vouch
