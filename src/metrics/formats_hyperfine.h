// hyperfine `--export-json FILE` and pytest-benchmark `--benchmark-json FILE`, read natively:
// every statistic with its per-run samples, and hyperfine's exit codes checked (a failing
// command's times are not a measurement). Tested on real output of both tools
// (tests/data/metrics/README.md).
#pragma once

#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "util/result.h"

namespace vouch {

// hyperfine JSON. Per result (its "command", or the --command-name, then the parameters of
// a sweep (-L, -P) from its "parameters" object as [k=v,...] in key order, e.g.
// "decode[ms=10]": keyed by what it ran, never by its position in the sweep):
//   <command>.mean, .median   s lower, samples = "times" (one per run)
//   <command>.min, .max, .stddev, .user, .system   s lower
// A command (with the same parameters) that appears twice gets "[2]", "[3]", ... A result with a
// non-zero (or null: killed by a signal) exit code is an error naming the command, the runs and the
// codes: hyperfine -i measured a failing command.
Result<std::vector<Metric>> ParseHyperfine(std::string_view text, std::string_view path);

// pytest-benchmark JSON. Per benchmark (its "fullname", e.g. tests/test_x.py::test_y[8]):
//   <fullname>.mean, .median   s lower, samples = stats.data (--benchmark-save-data)
//   <fullname>.min, .max, .stddev, .iqr   s lower;  <fullname>.ops  ops/s higher
//   <fullname>.rounds   count none
Result<std::vector<Metric>> ParsePytestBenchmark(std::string_view text, std::string_view path);

}  // namespace vouch
