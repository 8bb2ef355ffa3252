#include "command.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/strings.h"

namespace vouch::cli {
namespace {

// "did you mean" for each unknown option CLI11 left over (after hyperfine, which suggests
// --runs for --runz): the nearest of APP's own option names by edit distance.
void SuggestOptions(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& n : o->get_lnames()) names.push_back("--" + n);
    for (const auto& n : o->get_snames()) names.push_back("-" + n);
  }
  for (const auto& a : app.remaining()) {
    if (a.size() < 2 || a[0] != '-') continue;
    std::string flag = a.substr(0, a.find('='));
    if (auto near = ClosestMatch(flag, names); !near.empty())
      fmt::print(stderr, "vouch {}: unknown option '{}', did you mean '{}'?\n", app.get_name(),
                 flag, near);
  }
}

// The commands that run a command given after `--`.
bool TakesCommand(const std::string& name) {
  for (const char* n : {"run", "baseline", "gate", "ab", "clock sample"})
    if (name == n) return true;
  return name.rfind("fleet ", 0) == 0;
}

// `vouch run python bench.py`: the command was given without `--` before it. Said with the
// line that works (the options as given, then `--`, then the command).
void HintDoubleDash(const CLI::App& app, const std::vector<std::string>& given) {
  if (!TakesCommand(app.get_name())) return;
  const auto extra = app.remaining();
  // The first word given that CLI11 left over and that is not an option: the command.
  auto first = std::find_if(given.begin(), given.end(), [&](const std::string& a) {
    return !a.empty() && a[0] != '-' && std::find(extra.begin(), extra.end(), a) != extra.end();
  });
  if (first == given.end()) return;
  std::vector<std::string> opts(given.begin(), first), cmd(first, given.end());
  fmt::print(stderr,
             "the command to measure goes after `--` (what follows it is never read as an "
             "option): vouch {} {}{}-- {}\n",
             app.get_name(), fmt::join(opts, " "), opts.empty() ? "" : " ", fmt::join(cmd, " "));
}

}  // namespace

int Parse(CLI::App& app, std::vector<std::string> args) {
  // The standard streams, before the one code that could use them (CLI11 prints deprecation
  // warnings to std::cout): no file of vouch constructs them at start-up (util/no_ioinit.h).
  static const std::ios_base::Init streams;
  const std::vector<std::string> given = args;  // CLI11 consumes ARGS
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
    // CLI11 checks required options before it reports arguments it did not know, so `gate
    // --bogus` said "--baseline is required": an unknown argument is said first, whatever else
    // is wrong.
    const bool is_extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
    if (auto extra = app.remaining(); is_extras || !extra.empty()) {
      fmt::print(stderr, "vouch {}: unexpected argument{}: {}\n", app.get_name(),
                 extra.size() > 1 ? "s" : "", fmt::join(extra, " "));
      SuggestOptions(app);
      HintDoubleDash(app, given);
    }
    if (!is_extras) fmt::print(stderr, "vouch {}: {}\n", app.get_name(), e.what());
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
