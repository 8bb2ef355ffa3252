#include "metrics/reserved.h"

#include <fmt/format.h>

#include <string>
#include <unordered_set>

#include "util/escape.h"
#include "util/unicode_name.h"

namespace vouch {
namespace {

bool HasLowerCasePrefix(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

}  // namespace

std::string_view ReservedPrefixOf(std::string_view name) {
  // Compared as folded (util/unicode_name.h): "ＧＰＵ.x" and "vouch<U+200B>.x" are vouch's.
  const std::string folded = FoldedName(name);
  for (std::string_view p : kReservedMetricPrefixes)
    if (HasLowerCasePrefix(folded, p)) return p;
  return {};
}

bool IsVouchSource(std::string_view source) {
  return source == kVouchSource || (source.size() > kVouchSource.size() &&
                                    source.substr(0, kVouchSource.size()) == kVouchSource &&
                                    source[kVouchSource.size()] == ' ');
}

bool ShadowsVouchMetric(const Metric& m) {
  return IsReservedMetricName(m.name) && !m.source.empty() && !IsVouchSource(m.source);
}

// Besides the reserved prefixes (issue 36): a name that fails CheckNameShape (an invisible or
// control character, a space at an end, a label that mixes scripts) is refused the same way,
// the name shown escaped for a terminal, and ReservedPrefixOf compares FoldedName's form (NFKC,
// case-folded, without invisible code points).
Status CheckLegMetricName(std::string_view name, std::string_view where) {
  if (auto shape = CheckNameShape(name); !shape)
    return MakeError(
        "{}: metric '{}' is refused: {}; a metric's name is printed beside vouch's own, so it "
        "must read as what it is: give the metric another name",
        where, TerminalSafe(name), shape.error().message);
  const std::string_view prefix = ReservedPrefixOf(name);
  if (prefix.empty()) return OkStatus();
  return MakeError(
      "{}: metric '{}' is under '{}*', a prefix vouch reserves for what it measures itself "
      "(vouch.*, gpu.*): a leg cannot report it; give the metric another name",
      where, TerminalSafe(name), prefix);
}

Status AddVouchMetrics(std::vector<Metric>* metrics, const std::vector<Metric>& own) {
  std::unordered_set<std::string_view> have;
  have.reserve(metrics->size());
  for (const auto& m : *metrics) have.insert(m.name);
  for (const auto& m : own)
    if (have.count(m.name))
      return MakeError("metric '{}' is vouch's own figure and the leg reported it too", m.name);
  // Inserting may reallocate: HAVE's views into METRICS are not used past this point.
  metrics->insert(metrics->end(), own.begin(), own.end());
  return OkStatus();
}

}  // namespace vouch
