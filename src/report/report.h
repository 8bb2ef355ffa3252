// vouch report: one self-contained HTML file for a run, an A/B, a gate or a trend. The page
// is text rendered here (verdicts, tables: readable with scripts off) plus charts drawn by
// uPlot (inlined, with vouch's web/report.js) from a JSON block of chart descriptions: per
// leg the SM clock and power over time with the window's verdict and the measured region, a
// run's legs per arm, an A/B's pair log ratios with the interval and the band, the gate
// table, a metric's trend with its steps, and a trace's components. Nothing is fetched when
// the page opens. Pure: documents in, HTML out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/assets.h"
#include "trend/trend.h"
#include "util/escape.h"  // HtmlEscape, the one HTML escape
#include "util/result.h"

namespace vouch {

// A record (legs[i].series attached: Store::RunDocument or AttachLegSeries) as a report of
// its kind: an A/B record shows its verdict and pairs, a gate record (or one with stored
// gates) its gate table, any other its legs. Errors when ASSETS lack uPlot.
Result<std::string> RenderRecordReport(const nlohmann::json& record, const ReportAssets& assets);
// A metric's trend with its steps.
Result<std::string> RenderTrendReport(const TrendSeries& series, const ReportAssets& assets);
// A trace summary (vouch trace summarize --json): its components and kernels.
Result<std::string> RenderTraceReport(const nlohmann::json& summary, const ReportAssets& assets);

}  // namespace vouch
