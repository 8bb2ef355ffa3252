// vouch lock status: who holds the measurement lock.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "command.h"
#include "lock/lock.h"
#include "util/json_io.h"

namespace vouch::cli {

int CmdLockStatus(const GlobalOptions& g, std::vector<std::string> args) {
  CLI::App app{
      "Show who holds the measurement lock (the lock file is --lock-file or VOUCH_LOCK_FILE)",
      "lock status"};
  bool json = false;
  app.add_flag("--json", json, "machine-readable output");
  if (int rc = Parse(app, args); rc >= 0) return rc;
  auto s = ReadLockState(g.lock_path);
  if (!s) {
    fmt::print(stderr, "vouch lock status: {}\n", s.error().message);
    return kExitError;
  }
  if (json) {
    nlohmann::json j = {{"lock_file", g.lock_path}, {"held", s->held}};
    if (s->holder)
      j["holder"] = {{"pid", s->holder->pid},
                     {"command", s->holder->command},
                     {"start_unix_s", s->holder->start_unix_s},
                     {"host", s->holder->host}};
    fmt::print("{}\n", DumpJson(j, 2));
    return kExitOk;
  }
  if (s->held)
    fmt::print("lock {}: HELD by {}\n", g.lock_path,
               s->holder ? DescribeHolder(*s->holder) : std::string("an unknown process"));
  else if (s->holder)
    fmt::print("lock {}: free (last held by {})\n", g.lock_path, DescribeHolder(*s->holder));
  else
    fmt::print("lock {}: free\n", g.lock_path);
  return kExitOk;
}

}  // namespace vouch::cli
