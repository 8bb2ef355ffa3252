// Counts (failed requests, errors, preemptions) compared absolutely. A healthy serving run
// fails no request: its baseline pins 0, and a percentage change from 0 is undefined. A count
// row therefore compares the increase in requests, not in percent: 0 -> 0 passes, any
// increase warns, and an increase beyond the count threshold (`vouch gate --fail-count N`)
// fails. A non-zero baseline keeps its percentage thresholds, and the count threshold fails it
// too when the increase is beyond it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gate/baseline.h"
#include "gate/gate.h"

namespace vouch {

// True for a metric that counts events: its unit is "count" (or "requests", "errors",
// "failures", "preemptions"), or it has no unit and its name ends in "failed", "errors",
// "failures" or "preemptions" (vllm's "failed", "num_preemptions").
bool IsCountMetric(std::string_view name, std::string_view unit);

// The row of a count metric whose baseline is 0, decided on the increase NOW - 0 in the bad
// direction: pass at 0 (or for a count that is better when higher: it cannot go below 0),
// fail beyond FAIL_COUNT, else warn when the metric has any threshold. Sets change_count, the
// verdict and a note saying why; the percentage fields stay empty.
void DecideZeroBaselineCount(const BaselineMetric& m, double now, std::optional<double> fail_count,
                             GateRow* row);

// A compared row of a count metric with a non-zero baseline: when FAIL_COUNT is set and the
// increase in the bad direction is beyond it, the row fails whatever the percentage said.
// Sets change_count on every count row.
void ApplyCountThreshold(const BaselineMetric& m, double now, std::optional<double> fail_count,
                         GateRow* row);

// "+1 request" style cell of the change column for a count row: "+1 (count)".
std::string CountChangeText(double change);

}  // namespace vouch
