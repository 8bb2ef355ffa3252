// The one table of subcommands. Add a command here and its file in cli/CMakeLists.txt.
#include "command.h"

namespace vouch::cli {

// One declaration per cmd_*.cc file.
int CmdTraceSummarize(const GlobalOptions&, std::vector<std::string> args);
int CmdTraceDiff(const GlobalOptions&, std::vector<std::string> args);
int CmdNcu(const GlobalOptions&, std::vector<std::string> args);

const std::vector<Command>& Commands() {
  static const std::vector<Command> table = {
      {"trace summarize", "where the time goes in a profile (Kineto JSON or nsys SQLite)", CmdTraceSummarize},
      {"trace diff", "two profiles side by side per component and kernel", CmdTraceDiff},
      {"ncu", "per-kernel table from an Nsight Compute CSV export", CmdNcu},
  };
  return table;
}

}  // namespace vouch::cli
