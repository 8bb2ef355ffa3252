// How a trend page shows a long series (issue 37: 100,000 points were 600,000 table cells and
// 48 s to open): the chart draws buckets of consecutive points once there are more than a
// chart can show, and the table lists the points around each step and the latest ones.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "trend/trend.h"

namespace vouch {

struct TrendPageLayout {
  std::size_t bucket = 1;  // consecutive points per drawn point (1: every point drawn)
  // The points the table lists, as [from, to) ranges in increasing order, apart.
  std::vector<std::pair<std::size_t, std::size_t>> rows;
};

// POINTS points with STEPS: one drawn point per bucket of ceil(POINTS / MAX_CHART_POINTS)
// points; every point listed up to MAX_ROWS, else the 3 points on each side of every step and
// the last MAX_ROWS / 2.
TrendPageLayout LayOutTrendPage(std::size_t points, const std::vector<Step>& steps,
                                std::size_t max_chart_points = 2000, std::size_t max_rows = 200);

}  // namespace vouch
