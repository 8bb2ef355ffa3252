#include "metrics/expect.h"

#include <cmath>

#include "util/number.h"
#include "util/strings.h"

namespace vouch {
namespace {

// Shortest text that reads back to the same double, so a count prints as "600".
std::string FormatValue(double v) { return fmt::format("{}", v); }

std::string Show(const Metric& m) {
  return m.text ? *m.text : m.integer ? fmt::format("{}", *m.integer) : FormatValue(m.value);
}

// True when M's number is exactly the integer WANT: its own integer when the source wrote
// one, else a double that is that integer (2^53 is not 2^53 + 1).
bool IsInteger(const Metric& m, long long want) {
  if (m.is_text()) return false;
  if (m.integer) return *m.integer == want;
  // Inside (-2^63, 2^63) the cast is defined; any double there that equals its own
  // truncation is an integer held exactly.
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(m.value > -kTwo63 && m.value < kTwo63) || m.value != std::trunc(m.value)) return false;
  return static_cast<long long>(m.value) == want;
}

bool Same(const Metric& a, const Metric& b) {
  if (a.is_text() != b.is_text()) return false;
  if (a.is_text()) return *a.text == *b.text;
  if (a.integer) return IsInteger(b, *a.integer);
  if (b.integer) return IsInteger(a, *b.integer);
  return a.value == b.value;
}

// The number people see for leg I.
int Number(size_t i, const std::vector<int>& numbers) {
  return i < numbers.size() ? numbers[i] : static_cast<int>(i) + 1;
}

ExpectationViolation Violation(size_t leg, int number, const std::string& metric,
                               std::string expected, std::string got) {
  ExpectationViolation v{leg, metric, std::move(expected), std::move(got), ""};
  v.message =
      fmt::format("leg {}: metric '{}' expected {}, got {}", number, metric, v.expected, v.got);
  return v;
}

}  // namespace

Result<Expectation> ParseExpectEqual(std::string_view name) {
  std::string n = Trim(name);
  if (n.empty()) return MakeError("--expect-equal needs a metric name");
  if (n.find('=') != n.npos)
    return MakeError(
        "--expect-equal '{}': give only a metric name (use --expect NAME=N for a fixed "
        "value)",
        name);
  return Expectation{Expectation::Kind::kEqualAcrossLegs, n, std::nullopt, std::nullopt};
}

Result<Expectation> ParseExpect(std::string_view spec) {
  size_t eq = spec.find('=');
  if (eq == spec.npos)
    return MakeError("--expect '{}': expected NAME=N (e.g. fc2.dispatches=600)", spec);
  std::string name = Trim(spec.substr(0, eq));
  std::string val = Trim(spec.substr(eq + 1));
  if (name.empty() || val.empty())
    return MakeError("--expect '{}': expected NAME=N with both parts non-empty", spec);
  Expectation e{Expectation::Kind::kEqualTo, name, std::nullopt, std::nullopt};
  if (IsIntegerToken(val)) {
    // A count: kept as the integer written (2^53 + 1 is not 2^53), never rounded to a double.
    auto n = ParseInt64(val, fmt::format("--expect '{}'", spec));
    if (!n) return n.error();
    e.integer = *n;
    e.value = static_cast<double>(*n);
  } else if (auto d = ParseFiniteDouble(val, "--expect")) {
    e.value = *d;
  } else {
    e.text = val;
  }
  return e;
}

std::vector<ExpectationViolation> CheckExpectations(const std::vector<Expectation>& expectations,
                                                    const std::vector<std::vector<Metric>>& per_leg,
                                                    const std::vector<int>& leg_numbers) {
  std::vector<ExpectationViolation> out;
  for (const auto& e : expectations) {
    if (e.kind == Expectation::Kind::kEqualTo) {
      std::string want = e.text      ? *e.text
                         : e.integer ? fmt::format("{}", *e.integer)
                                     : FormatValue(e.value.value_or(0));
      for (size_t i = 0; i < per_leg.size(); ++i) {
        const Metric* m = FindMetric(per_leg[i], e.name);
        if (!m) {
          out.push_back(Violation(i, Number(i, leg_numbers), e.name, want, "missing"));
          continue;
        }
        bool ok = e.text      ? (m->is_text() && *m->text == *e.text)
                  : e.integer ? IsInteger(*m, *e.integer)
                              : (!m->is_text() && m->value == *e.value);
        if (!ok) out.push_back(Violation(i, Number(i, leg_numbers), e.name, want, Show(*m)));
      }
      continue;
    }
    const Metric* ref = nullptr;
    size_t ref_leg = 0;
    for (size_t i = 0; i < per_leg.size() && !ref; ++i)
      if ((ref = FindMetric(per_leg[i], e.name))) ref_leg = i;
    for (size_t i = 0; i < per_leg.size(); ++i) {
      const Metric* m = FindMetric(per_leg[i], e.name);
      std::string want =
          ref ? fmt::format("the value of leg {} ({})", Number(ref_leg, leg_numbers), Show(*ref))
              : std::string("a value in every leg");
      if (!m) {
        out.push_back(Violation(i, Number(i, leg_numbers), e.name, want, "missing"));
        continue;
      }
      if (!Same(*m, *ref))
        out.push_back(Violation(i, Number(i, leg_numbers), e.name, want, Show(*m)));
    }
  }
  return out;
}

}  // namespace vouch
