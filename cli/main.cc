// vouch: GPU benchmark numbers worth believing. main only finds the command and runs it.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "closed_output.h"
#include "command.h"
#include "help_topics.h"
#include "lock/lock.h"
#include "telemetry/sim_builtin.h"
#include "terminal_guard.h"
#include "util/strings.h"

namespace vouch::cli {
namespace {

void PrintUsage() {
  fmt::print(
      "vouch: GPU benchmark numbers worth believing\n\n"
      "usage: vouch [--sim NAME|FILE] [--lock-file PATH] COMMAND [ARGS...]\n\n"
      "global options:\n"
      "  --sim NAME|FILE   use a simulated device (no GPU needed): a built-in scenario\n"
      "                    ({}: a GPU busy at a flat clock) or FILE (JSONL telemetry);\n"
      "                    also VOUCH_SIM. FILE.static.json, if present, holds its static state;\n"
      "                    VOUCH_SIM_START=S starts the replay S seconds into the stream\n"
      "  --lock-file PATH  the exclusive measurement lock (default {};\n"
      "                    also VOUCH_LOCK_FILE)\n\ncommands:\n",
      BuiltinSimScenarioNames(), DefaultLockPath());
  for (const auto& c : Commands()) fmt::print("  {:<18} {}\n", c.name, c.summary);
  fmt::print("\nhelp topics (the documents, printed offline):\n");
  for (const auto& t : HelpTopics()) fmt::print("  {:<18} {}\n", t.name, t.summary);
  fmt::print("\n`vouch help COMMAND` shows a command's options; `vouch help TOPIC` a document.\n");
}

// Finds the longest table name made of the first one or two words of ARGS.
const Command* Find(const std::vector<std::string>& args, size_t* words) {
  for (size_t n : {2u, 1u}) {
    if (args.size() < n) continue;
    std::string name = args[0];
    if (n == 2) name += " " + args[1];
    for (const auto& c : Commands()) {
      if (name == c.name) {
        *words = n;
        return &c;
      }
    }
  }
  return nullptr;
}

// `vouch help GROUP` ("history", "clock"): the group's subcommands. False when GROUP is not
// the first word of any command.
bool PrintGroupHelp(const std::string& group) {
  std::vector<const Command*> members;
  for (const auto& c : Commands())
    if (StartsWith(c.name, group + " ")) members.push_back(&c);
  if (members.empty()) return false;
  fmt::print("vouch {}: {} subcommands\n\n", group, members.size());
  for (const auto* c : members) fmt::print("  {:<18} {}\n", c->name, c->summary);
  fmt::print("\n`vouch help {} SUBCOMMAND` shows a subcommand's options.\n", group);
  return true;
}

int NoSuchCommand(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const auto& c : Commands()) names.push_back(c.name);
  std::string tried = args[0];
  std::string near = ClosestMatch(tried, names);
  if (near.empty() && args.size() > 1) near = ClosestMatch(args[0] + " " + args[1], names);
  // A group word alone ("clock") lists its members.
  std::vector<std::string> members;
  for (const auto& n : names)
    if (StartsWith(n, tried + " ")) members.push_back(n);
  if (!members.empty()) {
    fmt::print(stderr, "vouch: '{}' needs a subcommand: {}\n", tried, fmt::join(members, ", "));
  } else if (!near.empty()) {
    fmt::print(stderr, "vouch: unknown command '{}', did you mean '{}'?\n", tried, near);
  } else {
    fmt::print(stderr, "vouch: unknown command '{}'; `vouch help` lists the commands\n", tried);
  }
  return kExitUsage;
}

int Main(std::vector<std::string> args) {
  GlobalOptions g;
  if (const char* e = std::getenv("VOUCH_SIM"); e && *e) {
    g.sim_path = e;
    g.sim_origin = "VOUCH_SIM";
  }
  // The default lock path (a stat of /run/lock) once a command needs it: not for --version.
  bool lock_given = false;
  if (const char* e = std::getenv("VOUCH_LOCK_FILE"); e && *e) {
    g.lock_path = e;
    lock_given = true;
  }
  // Global options come before the command.
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::string* {
      if (i + 1 >= args.size()) {
        fmt::print(stderr, "vouch: {} needs a value\n", flag);
        return nullptr;
      }
      return &args[++i];
    };
    if (a == "--sim") {
      auto* v = value("--sim");
      if (!v) return kExitUsage;
      g.sim_path = *v;
      g.sim_origin = "--sim";
    } else if (StartsWith(a, "--sim=")) {
      g.sim_path = a.substr(6);
      g.sim_origin = "--sim";
    } else if (a == "--lock-file") {
      auto* v = value("--lock-file");
      if (!v) return kExitUsage;
      g.lock_path = *v;
      lock_given = true;
    } else if (StartsWith(a, "--lock-file=")) {
      g.lock_path = a.substr(12);
      lock_given = true;
    } else if (a == "-h" || a == "--help") {
      PrintUsage();
      return kExitOk;
    } else if (a == "--version") {
      fmt::print("vouch 0.1.0\n");
      return kExitOk;
    } else if (StartsWith(a, "-")) {
      fmt::print(stderr, "vouch: unknown global option '{}'; `vouch help` lists them\n", a);
      return kExitUsage;
    } else {
      break;
    }
  }
  if (!lock_given) g.lock_path = DefaultLockPath();
  args.erase(args.begin(), args.begin() + static_cast<long>(i));
  if (args.empty()) {
    PrintUsage();
    return kExitUsage;
  }
  if (args[0] == "help") {
    args.erase(args.begin());
    if (args.empty()) {
      PrintUsage();
      return kExitOk;
    }
    if (const HelpTopic* t = FindHelpTopic(args[0]); t && args.size() == 1) {
      fmt::print("{}", t->text);
      return kExitOk;
    }
    size_t words = 0;
    const Command* c = Find(args, &words);
    if (!c && PrintGroupHelp(args[0])) return kExitOk;
    if (!c) return NoSuchCommand(args);
    return c->run(g, {"--help"});
  }
  size_t words = 0;
  const Command* c = Find(args, &words);
  if (!c && args.size() > 1 && (args[1] == "--help" || args[1] == "-h") && PrintGroupHelp(args[0]))
    return kExitOk;
  if (!c) return NoSuchCommand(args);
  // Relative paths, the record's cwd and the legs' working directory all start here: a
  // deleted working directory is named once, plainly, rather than failing deep inside.
  char* here = ::getcwd(nullptr, 0);  // glibc: allocated, any length
  if (here == nullptr) {
    fmt::print(stderr,
               "vouch: the current working directory no longer exists (it was deleted or "
               "cannot be read: {}); cd to a directory that exists and run again\n",
               std::strerror(errno));
    return kExitUsage;
  }
  std::free(here);
  args.erase(args.begin(), args.begin() + static_cast<long>(words));
  return c->run(g, std::move(args));
}

}  // namespace
}  // namespace vouch::cli

int main(int argc, char** argv) {
  // A closed pipe never ends vouch (closed_output.h), and nothing reaches the terminal raw: the
  // escaping of stdout and stderr (terminal_guard.h) is set up before anything is printed.
  vouch::cli::GuardClosedOutput();
  vouch::cli::GuardTerminalOutput();
  std::vector<std::string> args(argv + 1, argv + argc);
  // The last line of defence: every reader validates its input and returns an error naming
  // the file, so an exception here is a bug in vouch; it ends with a message and exit 1,
  // never an abort, and what the run wrote so far stays on disk.
  try {
    return vouch::cli::Main(std::move(args));
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "vouch: out of memory\n");
  } catch (const std::exception& e) {
    fmt::print(stderr,
               "vouch: internal error: {} (a bug in vouch: please report it with the command "
               "line; files written so far are kept)\n",
               e.what());
  }
  return vouch::cli::kExitError;
}
