// Internal side of InstallInterruptHandler (executor.h): the executor polls a self-pipe
// so that a signal wakes it at once.
#pragma once

namespace vouch::leg_detail {

// Read end of the self-pipe, or -1 when no handler is installed.
int InterruptWakeFd();
// How many SIGINT/SIGTERM arrived since the last ClearInterrupted().
int InterruptCount();
// Empties the self-pipe (non-blocking).
void DrainInterruptWakeFd();

}  // namespace vouch::leg_detail
