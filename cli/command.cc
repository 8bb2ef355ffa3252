#include "command.h"

#include <fmt/format.h>

#include <algorithm>

namespace vouch::cli {

int Parse(CLI::App& app, std::vector<std::string> args) {
  bool global_after_command = false;
  for (const auto& a : args)
    if (a == "--sim" || a == "--lock-file" || a.rfind("--sim=", 0) == 0 ||
        a.rfind("--lock-file=", 0) == 0)
      global_after_command = true;
  std::reverse(args.begin(), args.end());  // CLI11 takes its vector back to front
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "vouch {}: {}\n", app.get_name(), e.what());
    if (global_after_command)
      fmt::print(stderr,
                 "--sim and --lock-file are global options: put them before the command "
                 "(vouch --sim FILE {} ...)\n",
                 app.get_name());
    fmt::print(stderr, "`vouch help {}` shows the options\n", app.get_name());
    return kExitUsage;
  }
  return -1;
}

std::pair<std::vector<std::string>, std::vector<std::string>> SplitAtDoubleDash(
    const std::vector<std::string>& args) {
  auto it = std::find(args.begin(), args.end(), "--");
  if (it == args.end()) return {args, {}};
  return {std::vector<std::string>(args.begin(), it), std::vector<std::string>(it + 1, args.end())};
}

}  // namespace vouch::cli
