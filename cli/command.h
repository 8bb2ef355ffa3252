// The command table: every subcommand is one entry (name, summary, function), after
// ninja's kTools[]. Commands live one per file in cli/cmd_*.cc.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace vouch::cli {

// Exit codes shared by every command (README "Exit codes").
enum Exit : int {
  kExitOk = 0,
  kExitError = 1,          // bad input, I/O failure, a refused pairing or gate failure
  kExitIdleWindow = 2,     // the window saw no busy GPU: no summary, evidence kept
  kExitInvalidWindow = 3,  // the window failed a rule: summary with reasons
  kExitCommandFailed = 4,  // the measured command failed, timed out or was killed
  kExitInterrupted = 130,  // Ctrl-C; other signals give 128 + N (InterruptExitCode)
  kExitUsage = 64,         // wrong arguments
};

struct GlobalOptions {
  std::string sim_path;    // simulated device stream (--sim or VOUCH_SIM); empty: NVML
  std::string sim_origin;  // "--sim" or "VOUCH_SIM", said in outputs
  std::string lock_path;   // lock file (--lock-file or VOUCH_LOCK_FILE)
};

using CommandFn = int (*)(const GlobalOptions&, std::vector<std::string> args);

struct Command {
  const char* name;     // one or two words: "doctor", "clock sample"
  const char* summary;  // one line for `vouch help`
  CommandFn run;
};

const std::vector<Command>& Commands();

// Parses ARGS into APP the CLI11 way; returns -1 to go on, or the exit code to return
// (0 after --help, kExitUsage after a parse error, with the message printed).
int Parse(CLI::App& app, std::vector<std::string> args);
// Splits "a b -- c d" into {a b} and {c d}; the second is empty without "--".
std::pair<std::vector<std::string>, std::vector<std::string>> SplitAtDoubleDash(
    const std::vector<std::string>& args);

}  // namespace vouch::cli
