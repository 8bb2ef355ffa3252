// vouch arms: are two arms really two arms? Artifact hashes, behavioural and source
// controls, identity, embedded build roots (seed 001, "Two arms have to BE two arms").
#include <fmt/format.h>

#include "ab/arms.h"
#include "command.h"

namespace vouch::cli {

int CmdArms(const GlobalOptions&, std::vector<std::string> args) {
  CLI::App app{
      "Check that two arms differ for a reason: equal artifact hashes are fatal, a hash-only "
      "difference is refused, at least one control must move.\nExit: 0 distinct, 1 refused",
      "arms"};
  ArmInput a, b;
  a.label = "A";
  b.label = "B";
  std::vector<std::string> controls, sources;
  bool json = false;
  app.add_option("--artifact-a", a.artifacts, "arm A's artifact (file or directory; repeatable)");
  app.add_option("--artifact-b", b.artifacts, "arm B's artifact, paired with A's by position");
  app.add_option("--root-a", a.roots,
                 "arm A's build or source root (searched for inside its artifacts)");
  app.add_option("--root-b", b.roots, "arm B's build or source root");
  app.add_option("--control", controls,
                 "NAME A B: a value each arm computed (call count, checksum)")
      ->expected(3)
      ->allow_extra_args(false);
  app.add_option("--source", sources, "NAME PATH_A PATH_B: the file the change lives in, per arm")
      ->expected(3)
      ->allow_extra_args(false);
  app.add_flag("--json", json, "JSON output");
  if (int rc = Parse(app, args); rc >= 0) return rc;
  for (size_t i = 0; i + 2 < controls.size(); i += 3) {
    a.behavioural[controls[i]] = controls[i + 1];
    b.behavioural[controls[i]] = controls[i + 2];
  }
  for (size_t i = 0; i + 2 < sources.size(); i += 3) {
    a.sources.push_back({sources[i], sources[i + 1]});
    b.sources.push_back({sources[i], sources[i + 2]});
  }
  if (a.artifacts.empty() && b.artifacts.empty() && controls.empty() && sources.empty()) {
    fmt::print(
        stderr,
        "vouch arms: nothing to check; give --artifact-a/--artifact-b, --control or --source\n");
    return kExitUsage;
  }
  auto r = CheckArms(a, b);
  if (!r) return fmt::print(stderr, "vouch arms: {}\n", r.error().message), kExitError;
  fmt::print("{}", json ? RenderArmsJson(*r) + "\n" : RenderArmsText(*r));
  return r->distinct ? kExitOk : kExitError;
}

}  // namespace vouch::cli
