// Determinism and dispatch checks over the legs of a run, pure:
//   --expect-equal NAME   NAME has the same value (or text: a checksum) in every leg
//   --expect NAME=N       NAME equals N in every leg (e.g. a kernel dispatch count);
//                         N that is not a number is compared as text
// Comparison is exact: these are checksums and counts, not timings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "util/result.h"

namespace vouch {

struct Expectation {
  enum class Kind { kEqualAcrossLegs, kEqualTo };
  Kind kind = Kind::kEqualAcrossLegs;
  std::string name;
  // kEqualTo: exactly one of these is set.
  std::optional<double> value;
  std::optional<std::string> text;
  // Set with VALUE when N was written as an integer: compared exactly, as an integer.
  std::optional<long long> integer = {};
};

struct ExpectationViolation {
  size_t leg = 0;  // index into per_leg (0-based); the message names the leg by its number
  std::string metric;
  std::string expected;  // e.g. "600", "c62d23...", or "the value of leg 1 (1234)"
  std::string got;       // the leg's value, or "missing"
  std::string message;   // one line: leg, metric, expected, got
};

Result<Expectation> ParseExpectEqual(std::string_view name);  // --expect-equal NAME
Result<Expectation> ParseExpect(std::string_view spec);       // --expect NAME=N

// Checks every expectation against every leg. Equality across legs compares with the first
// leg that has the metric; a leg without it is a violation ("missing"). No legs: no
// violations. Messages name leg i as LEG_NUMBERS[i] (the number people see: 1-based in the
// run), or i + 1 when LEG_NUMBERS is not given.
std::vector<ExpectationViolation> CheckExpectations(const std::vector<Expectation>& expectations,
                                                    const std::vector<std::vector<Metric>>& per_leg,
                                                    const std::vector<int>& leg_numbers = {});

}  // namespace vouch
