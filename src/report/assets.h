// The report's scripts and styles, built into vouch (src/report/embed_assets.cmake): uPlot
// from the npm registry and vouch's own web/report.js and web/report.css. A report inlines
// them, so the page opens with no network.
#pragma once

#include <string_view>

namespace vouch {

struct ReportAssets {
  bool have_uplot = false;  // false: built without web/node_modules (npm ci not run)
  std::string_view uplot_version, uplot_js, uplot_css, app_js, app_css;
};

const ReportAssets& BuiltinReportAssets();

}  // namespace vouch
