// A metric's trend across stored runs: points grouped per commit, per day or per run, the
// check that the series compares like with like (one GPU, one clock state), the steps
// E-Divisive finds in it (trend/steps.h), and its renderers (text, JSON, Markdown). Pure:
// the points come from the store.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "trend/steps.h"

namespace vouch {

enum class TrendBy { kCommit, kDay, kRun };
std::string_view TrendByName(TrendBy b);

struct SeriesPoint {
  std::string label;         // short commit, day, or run key
  std::string first_commit;  // the commit of the point's first run ("" without git)
  std::vector<std::string> run_keys;
  double value = 0;                           // median over the point's runs
  double started_unix_s = 0;                  // of its first run
  bool attributed = true;                     // every run of it was clock-attributed
  bool dirty = false;                         // a run of it came from a dirty working tree
  std::optional<double> clock_sm_median_mhz;  // median over its runs
};

struct Step {
  int index = 0;                             // the first point after the step
  std::string before, after;                 // labels of the last point before and the first after
  double before_value = 0, after_value = 0;  // medians of the segments on either side
  double size_pct = 0;                       // after / before - 1, in percent
  double p_value = 1;
};

struct TrendSeries {
  std::string metric, unit, better, arm;
  TrendBy by = TrendBy::kCommit;
  std::vector<SeriesPoint> points;
  std::vector<std::string> gpus;  // distinct "name (uuid)" over the points
  // Why no step is reported: the series mixes GPUs or clock states, or holds unattributed
  // points. Empty when steps were looked for.
  std::vector<std::string> mixed;
  std::vector<Step> steps;
  bool steps_searched = false;
  // The fewest points in which a step can be found at the search's significance
  // (MinStepSeriesLength); 0 when not searched.
  int min_points_for_step = 0;
  double significance = 0;
  int unattributed = 0;
  std::string method;  // how steps were looked for (DetectSteps)
};

// Why a searched series with no step says nothing about steps: "too short to find a step
// reliably (5 points; at p <= 0.01 the test needs at least 6)"; "" when it is long enough (then
// "none found" means none).
std::string TrendTooShort(const TrendSeries& s);

// Clock medians further apart than this (percent) are different clock states (the pairing
// rule's 1 %).
inline constexpr double kTrendClockStatePct = 1.0;

TrendSeries BuildTrend(const std::vector<TrendPoint>& points, const TrendQuery& query, TrendBy by);
// Finds the steps of a series that compares like with like.
void DetectSteps(TrendSeries& series, const EDivisiveOptions& options = {});

std::string RenderTrendText(const TrendSeries& s);
std::string RenderTrendMarkdown(const TrendSeries& s);
// Schema "vouch.trend" v1. WITH_POINTS false: "points" is null (TrendJsonText fills it in).
nlohmann::json TrendJson(const TrendSeries& s, bool with_points = true);
// DumpJson(TrendJson(s), 2), byte for byte, with the points written straight to the text
// instead of through a JSON tree (100,000 points: a tenth of the time and memory).
std::string TrendJsonText(const TrendSeries& s);
// The same text handed to SINK in parts of about 256 KiB (`history trend --json` writes them as
// they come: no 30 MB string at 100,000 points).
void WriteTrendJson(const TrendSeries& s, const std::function<void(std::string_view)>& sink);

}  // namespace vouch
