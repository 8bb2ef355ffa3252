// A closed stdout or stderr (`vouch run ... 2>&1 | head -1`, a terminal that went away) must
// never cost evidence: vouch goes on with the run, writes its record and only stops printing.
#pragma once

namespace vouch::cli {

// Ignores SIGPIPE (legs get it back: the executor restores the default in each child), so that
// a write to a closed pipe fails with EPIPE instead of killing vouch. The streams that replace
// stdout and stderr (terminal_guard.h) treat EPIPE as "output closed": the write is dropped,
// later writes to that stream too, and no error reaches the caller (fmt::print would otherwise
// throw mid-run). Call once, first thing in main, before GuardTerminalOutput.
void GuardClosedOutput();

}  // namespace vouch::cli
