// What baseline and gate say at their first leg, when the rest of the run cannot help
// (issue 37): a --headline the legs do not report, metrics with no direction to gate.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gate/baseline.h"
#include "metrics/metric.h"

namespace vouch::cli {

// The leg's metrics, as "name (unit)" for a message: text metrics left out.
std::string ListMetrics(const std::vector<Metric>& metrics);

// "" when METRICS (one leg's) hold HEADLINE with a direction; else why not and what it has:
// "it reported no metric 'tok_ss' (--headline); did you mean 'tok_s'? It reported: ...".
std::string HeadlineProblem(const std::vector<Metric>& metrics, const std::string& headline);

// When METRICS (one leg's) hold metrics of the leg's own and none has a direction: which, and
// how to give one (the channel line's "better" field, vouch.metric's better=, a --metric
// source's BETTER field). "" otherwise.
std::string NoDirectionProblem(const std::vector<Metric>& metrics);
// Why a baseline has nothing to pin from METRICS (a valid trial's): NoDirectionProblem's
// answer, else how to report a metric at all.
std::string NoMetricToPin(const std::vector<Metric>& metrics);

// gate --headline NAME: NAME becomes BASELINE's headline (one of its metrics with a direction,
// else an error listing them); it takes the old headline's fail threshold when it has none.
Status UseHeadline(Baseline* baseline, const std::string& name);

// --threshold and --fail-pct, shared by baseline (written into the file) and gate (applied
// over the file's thresholds).
void AddThresholdFlags(CLI::App& app, std::vector<std::string>* specs,
                       std::optional<double>* fail_all);

}  // namespace vouch::cli
