#include "leg/interrupt.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "leg/executor.h"

namespace vouch {
namespace {

// Lock-free atomics are async-signal-safe; so is write(2).
std::atomic<int> g_interrupt_count{0};
std::atomic<int> g_wake_read_fd{-1};
std::atomic<int> g_wake_write_fd{-1};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void OnInterruptSignal(int) {
  const int saved_errno = errno;
  g_interrupt_count.fetch_add(1);
  const int fd = g_wake_write_fd.load();
  if (fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

Status InstallInterruptHandler() {
  if (g_wake_read_fd.load() < 0) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      return MakeError("cannot install the interrupt handler: pipe: {}", std::strerror(errno));
    }
    g_wake_read_fd.store(fds[0]);
    g_wake_write_fd.store(fds[1]);
  }
  struct sigaction sa {};
  sa.sa_handler = OnInterruptSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM}) {
    if (::sigaction(sig, &sa, nullptr) != 0) {
      return MakeError("cannot install the interrupt handler for {}: {}", SignalName(sig),
                       std::strerror(errno));
    }
  }
  std::signal(SIGPIPE, SIG_IGN);
  return OkStatus();
}

bool Interrupted() { return g_interrupt_count.load() > 0; }

void ClearInterrupted() {
  g_interrupt_count.store(0);
  leg_detail::DrainInterruptWakeFd();
}

namespace leg_detail {

int InterruptWakeFd() { return g_wake_read_fd.load(); }
int InterruptCount() { return g_interrupt_count.load(); }

void DrainInterruptWakeFd() {
  const int fd = g_wake_read_fd.load();
  if (fd < 0) return;
  char buf[64];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
}

}  // namespace leg_detail
}  // namespace vouch
