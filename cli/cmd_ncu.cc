#include "command.h"
namespace vouch::cli {
int CmdNcu(const GlobalOptions&, std::vector<std::string>) { return kExitError; }
}  // namespace vouch::cli
