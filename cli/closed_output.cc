#include "closed_output.h"

#include <csignal>

namespace vouch::cli {

void GuardClosedOutput() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace vouch::cli
