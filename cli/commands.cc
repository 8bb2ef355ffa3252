// The one table of subcommands. Add a command here and its file in cli/CMakeLists.txt.
#include "command.h"

namespace vouch::cli {

// One declaration per cmd_*.cc file.

const std::vector<Command>& Commands() {
  static const std::vector<Command> table = {
  };
  return table;
}

}  // namespace vouch::cli
