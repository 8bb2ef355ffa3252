// A metric's trend across stored runs: points grouped per commit, per day or per run, the
// check that the series compares like with like (one GPU, one clock state), the steps
// E-Divisive finds in it (trend/steps.h), and its renderers (text, JSON, Markdown). Pure:
// the points come from the store.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
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

class TrendBuilder;
struct TrendStrings;  // the text a SeriesPointList refers to (trend_points.cc)

// The points of a series, kept compactly (issue 39: a million points took ~940 bytes each as
// SeriesPoints; here ~90): one column per field, and the strings in one shared block where a
// run key or commit in lowercase hex is kept as its bytes. Indexing gives a SeriesPoint made on
// the spot; the accessors read a field without making one. Copies share the strings.
class SeriesPointList {
 public:
  size_t size() const { return value_.size(); }
  bool empty() const { return value_.empty(); }
  SeriesPoint operator[](size_t i) const;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = SeriesPoint;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = SeriesPoint;
    Iterator(const SeriesPointList* list, size_t i) : list_(list), i_(i) {}
    SeriesPoint operator*() const { return (*list_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }

   private:
    const SeriesPointList* list_;
    size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

  const std::vector<double>& values() const { return value_; }
  double value(size_t i) const { return value_[i]; }
  double started_unix_s(size_t i) const { return started_[i]; }
  bool attributed(size_t i) const { return flags_[i] & kAttributed; }
  bool dirty(size_t i) const { return flags_[i] & kDirty; }
  std::optional<double> clock_sm_median_mhz(size_t i) const {
    if (!(flags_[i] & kHasClock)) return std::nullopt;
    return clock_[i];
  }
  size_t run_count(size_t i) const { return run_begin_[i + 1] - run_begin_[i]; }
  std::string label(size_t i) const;
  // The point's first commit and its K-th run key; the view lives until SCRATCH changes.
  std::string_view first_commit(size_t i, std::string& scratch) const;
  std::string_view run_key(size_t i, size_t k, std::string& scratch) const;

 private:
  friend class TrendBuilder;
  static constexpr std::uint8_t kAttributed = 1, kDirty = 2, kHasClock = 4;
  TrendBy by_ = TrendBy::kCommit;
  std::shared_ptr<const TrendStrings> text_;
  std::vector<const unsigned char*> first_commit_, day_;  // day_: per day only
  std::vector<const unsigned char*> run_key_;             // grouped by point
  std::vector<std::uint32_t> run_begin_ = {0};            // size() + 1
  std::vector<double> value_, started_, clock_;
  std::vector<std::uint8_t> flags_;
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
  SeriesPointList points;
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

// BuildTrend one point at a time, in the store's order (Store::TrendEach): nothing but the
// series is kept (no TrendPoint per run).
class TrendBuilder {
 public:
  TrendBuilder(const TrendQuery& query, TrendBy by);
  ~TrendBuilder();
  void Add(const TrendRow& row);
  TrendSeries Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
// The reasons a series does not compare like with like (TrendSeries::mixed), from its GPUs,
// its points' clocks and its unattributed points (TrendBuilder::Finish calls it).
void MarkMixedTrend(TrendSeries& series);
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
