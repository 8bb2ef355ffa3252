// What a leg's result says of itself: its signal's name, whether it succeeded, and the sentences
// the run prints for it and for the processes it left behind. Split from local_executor.cc,
// which starts and watches the leg.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <string>
#include <vector>

#include "leg/executor.h"
#include "util/redact.h"

namespace vouch {

std::string SignalName(int signal_number) {
#if __GLIBC__ == 2 && __GLIBC_MINOR__ < 32
  // glibc 2.31 (Debian 11, the release build) has no sigabbrev_np: its names for 1 to 31.
  static const char* const kNames[] = {
      nullptr, "HUP",  "INT",  "QUIT", "ILL",    "TRAP",   "ABRT",  "BUS",  "FPE",  "KILL", "USR1",
      "SEGV",  "USR2", "PIPE", "ALRM", "TERM",   "STKFLT", "CHLD",  "CONT", "STOP", "TSTP", "TTIN",
      "TTOU",  "URG",  "XCPU", "XFSZ", "VTALRM", "PROF",   "WINCH", "POLL", "PWR",  "SYS"};
  const char* abbrev = signal_number > 0 && signal_number < 32 ? kNames[signal_number] : nullptr;
#else
  const char* abbrev = ::sigabbrev_np(signal_number);
#endif
  if (abbrev) return std::string("SIG") + abbrev;
  return fmt::format("SIG{}", signal_number);
}

bool LegResult::Succeeded() const {
  return exit_code && *exit_code == 0 && !timed_out && !interrupted && !killed_for_output_error &&
         out.write_error.empty() && err.write_error.empty();
}

std::string LegResult::Describe() const {
  std::string how;
  if (exit_code) {
    how = fmt::format("exited with status {}", *exit_code);
  } else if (term_signal) {
    how = fmt::format("killed by {}", signal_name);
  } else {
    how = "ended in an unknown way";
  }
  std::string s;
  if (timed_out) {
    s = fmt::format("timed out after {:.1f} s ({})", static_cast<double>(wall_ns) / 1e9, how);
  } else if (interrupted) {
    s = fmt::format("interrupted ({})", how);
  } else if (killed_for_output_error) {
    s = fmt::format("stopped because its output could not be written ({})", how);
  } else {
    s = how;
  }
  for (const StreamResult* st : {&out, &err}) {
    if (!st->write_error.empty())
      s += "; " + st->write_error;
    else if (st->dropped_bytes > 0) {
      s += fmt::format("; {} bytes of '{}' over the cap were dropped", st->dropped_bytes, st->path);
    }
  }
  if (!leftovers.empty()) s += "; " + DescribeLeftovers();
  return s;
}

std::string LeftoverProcess::Describe() const {
  std::string what = argv.empty() ? name : fmt::format("{}", fmt::join(RedactArgv(argv), " "));
  if (what.size() > 200) what = what.substr(0, 197) + "...";
  return fmt::format("{} (pid {})", what, pid);
}

std::string LegResult::DescribeLeftovers() const {
  if (leftovers.empty()) return "";
  std::vector<std::string> names;
  bool all_ended = true;
  for (const auto& p : leftovers) {
    names.push_back(p.Describe());
    all_ended = all_ended && !p.ended_by.empty();
  }
  const bool one = leftovers.size() == 1;
  return fmt::format("left {} process{} running after it exited: {}; {}", leftovers.size(),
                     one ? "" : "es", fmt::join(names, ", "),
                     all_ended ? (one ? "ended it" : "ended them")
                               : "could not end every one of them (see the notes)");
}

}  // namespace vouch
