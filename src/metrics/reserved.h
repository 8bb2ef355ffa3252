// vouch's own metric namespace, in one place. Every name under a reserved prefix (vouch.*,
// gpu.*) is a figure vouch measured itself: the built-ins of every leg (record/leg_runner.cc:
// vouch.wall_s, vouch.exit_status, vouch.peak_rss_bytes, ...) and the tracer's
// (gputrace/leg_trace.cc: gpu.active_ns, gpu.kernels, ...). A leg can never report one: the
// metrics channel, every known tool format and every regex:/json: extractor refuse such a
// name with the leg's file and line, and a reserved name always resolves to vouch's figure.
#pragma once

#include <string_view>
#include <vector>

#include "metrics/metric.h"
#include "util/result.h"

namespace vouch {

// The prefixes vouch owns, matched without regard to ASCII case ("GPU.active_ns" is refused
// too: it would read as vouch's figure in a table).
inline constexpr std::string_view kReservedMetricPrefixes[] = {"vouch.", "gpu."};

// The sources vouch's own figures carry: "vouch" (a leg's built-ins) and "vouch <part>"
// (e.g. "vouch gpu-trace"). No reader of a leg's output writes a source starting so.
inline constexpr std::string_view kVouchSource = "vouch";
inline constexpr std::string_view kGpuTraceSource = "vouch gpu-trace";

// The reserved prefix NAME starts with ("vouch." or "gpu."), or "" when it has none.
std::string_view ReservedPrefixOf(std::string_view name);
inline bool IsReservedMetricName(std::string_view name) { return !ReservedPrefixOf(name).empty(); }

// True for a source vouch itself gives its figures (kVouchSource, kGpuTraceSource).
bool IsVouchSource(std::string_view source);

// A metric under a reserved name whose source is known and is not vouch's: it must never be
// taken for vouch's figure (FindMetric and the summaries skip it).
bool ShadowsVouchMetric(const Metric& m);

// Error when a leg's source (WHERE: its file and line, or its file and entry) names a
// metric under a reserved prefix; the message names WHERE, the name and the prefix.
Status CheckLegMetricName(std::string_view name, std::string_view where);

// Adds vouch's own figures OWN to a leg's METRICS. A name already there is an error naming
// it: a leg's metric can never shadow (or be shadowed by) vouch's by their order.
Status AddVouchMetrics(std::vector<Metric>* metrics, const std::vector<Metric>& own);

}  // namespace vouch
