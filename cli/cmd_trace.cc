// vouch trace summarize / vouch trace diff: where the time goes in a profile.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "command.h"
#include "common.h"
#include "number_flag.h"
#include "record/leg_runner.h"
#include "trace/reader.h"
#include "trace/summary.h"
#include "util/fs.h"
#include "util/json_io.h"

namespace vouch::cli {
namespace {

struct Common {
  std::string window;
  std::string rules_path;
  bool json = false;
  std::size_t top = 15;
};

void AddCommon(CLI::App& app, Common& c) {
  app.add_option("--window", c.window,
                 "summarise the instances of this annotation / NVTX range (e.g. decode_step), per "
                 "instance and "
                 "aggregated; default: the whole trace");
  app.add_option("--rules", c.rules_path,
                 "component rules: JSON {\"components\":[{\"name\":..,\"pattern\":..}]} or lines "
                 "'component = regex' (RE2 syntax, case-insensitive); "
                 "first match wins, the rest is 'other' (default: built-in attention, gemm, norm, "
                 "reduce, copy_gather, "
                 "elementwise)");
  app.add_flag("--json", c.json, "print JSON for machines");
  app.add_option("--top", c.top, "kernels to list in the text form (default 15)")
      ->check(NumberFlag(Count(0, 1000000)));
}

// A trace in a vouch leg's evidence (its gpu-trace.json beside it names the clock window it
// was taken under) is attributed to that window; any other trace is unattributed.
std::string ClockWindowOf(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path side = fs::path(path).parent_path() / "gpu-trace.json";
  std::error_code ec;
  if (!fs::is_regular_file(side, ec)) return trace::kUnattributed;
  auto text = ReadFile(side.string(), 64ull << 20);
  if (!text) return trace::kUnattributed;
  auto parsed = ParseJson(*text, side.string());
  if (!parsed || !parsed->is_object() || !parsed->contains("clock_window") ||
      !(*parsed)["clock_window"].is_object())
    return trace::kUnattributed;
  const nlohmann::json& j = *parsed;
  std::string name = fs::path(path).filename().string();
  auto fit = j.find("files");
  if (fit == j.end() || !fit->is_array()) return trace::kUnattributed;
  const auto& files = *fit;
  if (std::find(files.begin(), files.end(), name) == files.end()) return trace::kUnattributed;
  return AttributionLine(j["clock_window"]);
}

std::optional<trace::Summary> Load(const std::string& path, const Common& c,
                                   const trace::Rules& rules) {
  trace::SummaryOptions opt;
  opt.window = c.window;
  opt.rules = rules;
  auto s = trace::SummarizeTrace(path, opt);
  if (!s.ok()) {
    fmt::print(stderr, "vouch trace: {}\n", s.error().message);
    return std::nullopt;
  }
  s->clock_window = ClockWindowOf(path);
  return std::move(*s);
}

std::optional<trace::Rules> Rules(const Common& c) {
  if (c.rules_path.empty()) return trace::DefaultRules();
  auto r = trace::LoadRules(c.rules_path);
  if (!r.ok()) {
    fmt::print(stderr, "vouch trace: {}\n", r.error().message);
    return std::nullopt;
  }
  return *r;
}

}  // namespace

int CmdTraceSummarize(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{"Summarise a profile: busy time, launch gaps, components, bottleneck ranking",
               "trace summarize"};
  std::string file, markdown;
  Common c;
  app.add_option("FILE", file, "Kineto trace (.json / .json.gz) or Nsight Systems SQLite export")
      ->required();
  AddCommon(app, c);
  AddMarkdownOption(app, markdown, "the summary");
  app.footer(
      "Exit status: 0 summary printed, 1 unreadable input or unknown window, 2 no GPU work in the "
      "window, 64 usage.");
  if (int rc = Parse(app, std::move(args)); rc >= 0) return rc;
  auto rules = Rules(c);
  if (!rules) return kExitError;
  auto s = Load(file, c, *rules);
  if (!s) return kExitError;
  if (!WriteMarkdownFile(
          markdown, [&] { return trace::RenderSummaryMarkdown(*s, c.top); }, "trace summarize"))
    return kExitError;
  if (c.json) {
    trace::StreamSummaryJson(
        *s, [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); });
    std::fputc('\n', stdout);
  } else if (markdown == "-") {
    fmt::print("{}", trace::RenderSummaryMarkdown(*s, c.top));
  } else {
    fmt::print("{}", trace::RenderSummaryText(*s, c.top));
    // The phase warning also goes to stderr so that it is seen when stdout is piped.
    for (const auto& w : s->warnings)
      if (w.find("Which annotation?") != std::string::npos)
        fmt::print(stderr, "vouch trace: warning: {}\n", w);
  }
  return s->empty() ? kExitIdleWindow : kExitOk;
}

int CmdTraceDiff(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{"Compare two profiles per component and per kernel", "trace diff"};
  std::string a, b, markdown;
  Common c;
  std::vector<double> lengths;
  app.add_option("A", a, "the previous profile")->required();
  app.add_option("B", b, "the current profile")->required();
  AddCommon(app, c);
  app.add_option("--lengths", lengths,
                 "two-lengths mode: the sequence lengths (or sizes) of A and B; reports per kernel "
                 "and component "
                 "the time per unit length and what grows")
      ->expected(2)
      ->check(NumberFlag({0, 1e15, true}));
  AddMarkdownOption(app, markdown, "the comparison (for a pull request)");
  if (int rc = Parse(app, std::move(args)); rc >= 0) return rc;
  auto rules = Rules(c);
  if (!rules) return kExitError;
  auto sa = Load(a, c, *rules);
  if (!sa) return kExitError;
  auto sb = Load(b, c, *rules);
  if (!sb) return kExitError;
  std::optional<std::pair<double, double>> len;
  if (lengths.size() == 2) len = std::make_pair(lengths[0], lengths[1]);
  auto d = trace::DiffSummaries(*sa, *sb, len);
  if (!d.ok()) {
    fmt::print(stderr, "vouch trace diff: {}\n", d.error().message);
    return kExitUsage;
  }
  if (!WriteMarkdownFile(
          markdown, [&] { return trace::RenderDiffMarkdown(*d, c.top); }, "trace diff"))
    return kExitError;
  if (c.json)
    fmt::print("{}\n", DumpJson(trace::DiffToJson(*d), 2));
  else if (markdown == "-")
    fmt::print("{}", trace::RenderDiffMarkdown(*d, c.top));
  else
    fmt::print("{}", trace::RenderDiffText(*d, c.top));
  return kExitOk;
}

}  // namespace vouch::cli
