// wakeup_bench: what a thread that only wakes every N ms costs, as a share of one core: the
// floor under the sampler's CPU (issue 24), measured on the machine itself (a VM's timer exits
// cost more than bare metal's).
//
//   wakeup_bench [--seconds S] [--interval-ms MS] [--slack-us US] [--pin]
//
// Two ways of waiting, each for S seconds: a condition variable's wait_until (what
// vouch::Sampler does: the futex) and clock_nanosleep(TIMER_ABSTIME); for each, the thread's
// CPU time (CLOCK_THREAD_CPUTIME_ID) over its wall time, in % of one core, and its wake-ups.
// --slack-us sets each waiting thread's timer slack (prctl PR_SET_TIMERSLACK; Linux's default
// 50 us): how late the kernel may wake it, so that its wake-up can share another's interrupt.
// The line also gives the median lateness of the wake-ups past their deadline.
// Standalone (no vouch library): g++ -O2 -std=c++20 -pthread wakeup_bench.cc.
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Result {
  double cpu_pct = 0;
  long wakeups = 0;
  double late_us_median = 0;
};

double g_slack_us = -1;  // < 0: the default
bool g_pin = false;

// The waiting thread's set-up: its timer slack, and with --pin its affinity to the CPU it starts
// on (its timer then fires where it runs: no wake-up sent to another CPU). A refusal ends the
// bench: its line would name a setting that was not in force.
void SetUpWaiter() {
  if (g_slack_us >= 0 &&
      ::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(g_slack_us * 1000)) != 0) {
    std::perror("wakeup_bench: prctl(PR_SET_TIMERSLACK)");
    std::exit(1);
  }
  if (g_pin) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
      std::perror("wakeup_bench: sched_setaffinity");
      std::exit(1);
    }
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

Result RunCondvar(double seconds, double interval_ms) {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  Result r;
  std::thread t([&] {
    SetUpWaiter();
    std::vector<double> late;
    using clock = std::chrono::steady_clock;
    auto interval = std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double, std::milli>(interval_ms));
    auto t0 = clock::now();
    double c0 = ThreadCpuSeconds();
    auto next = t0;
    auto end =
        t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
    while (clock::now() < end) {
      next += interval;
      std::unique_lock<std::mutex> l(mu);
      cv.wait_until(l, next, [&] { return stop; });
      late.push_back(std::chrono::duration<double, std::micro>(clock::now() - next).count());
      ++r.wakeups;
    }
    r.late_us_median = Median(late);
    double wall = std::chrono::duration<double>(clock::now() - t0).count();
    r.cpu_pct = 100.0 * (ThreadCpuSeconds() - c0) / wall;
  });
  t.join();
  return r;
}

Result RunNanosleep(double seconds, double interval_ms) {
  Result r;
  std::thread t([&] {
    SetUpWaiter();
    std::vector<double> late;
    timespec next{};
    clock_gettime(CLOCK_MONOTONIC, &next);
    timespec start = next;
    double c0 = ThreadCpuSeconds();
    long step_ns = static_cast<long>(interval_ms * 1e6);
    long n = static_cast<long>(seconds * 1e3 / interval_ms);
    for (long i = 0; i < n; ++i) {
      next.tv_nsec += step_ns;
      while (next.tv_nsec >= 1000000000L) {
        next.tv_nsec -= 1000000000L;
        ++next.tv_sec;
      }
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
      timespec woke{};
      clock_gettime(CLOCK_MONOTONIC, &woke);
      late.push_back(static_cast<double>(woke.tv_sec - next.tv_sec) * 1e6 +
                     static_cast<double>(woke.tv_nsec - next.tv_nsec) * 1e-3);
      ++r.wakeups;
    }
    r.late_us_median = Median(late);
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    double wall = static_cast<double>(now.tv_sec - start.tv_sec) +
                  static_cast<double>(now.tv_nsec - start.tv_nsec) * 1e-9;
    r.cpu_pct = 100.0 * (ThreadCpuSeconds() - c0) / wall;
  });
  t.join();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10, interval_ms = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--pin") {
      g_pin = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "wakeup_bench: %s needs a value\n", a.c_str());
      return 64;
    }
    char* end = nullptr;
    double v = std::strtod(argv[++i], &end);
    if (*end != '\0' || !(v >= 0) || v > 1e6 || (v == 0 && a != "--slack-us")) {
      std::fprintf(stderr, "wakeup_bench: %s: not a positive number: %s\n", a.c_str(), argv[i]);
      return 64;
    }
    if (a == "--seconds") {
      seconds = v;
    } else if (a == "--interval-ms") {
      interval_ms = v;
    } else if (a == "--slack-us") {
      g_slack_us = v;
    } else {
      std::fprintf(
          stderr, "usage: wakeup_bench [--seconds S] [--interval-ms MS] [--slack-us US] [--pin]\n");
      return 64;
    }
  }
  Result cv = RunCondvar(seconds, interval_ms);
  Result ns = RunNanosleep(seconds, interval_ms);
  std::printf(
      "{\"interval_ms\": %g, \"seconds\": %g, \"slack_us\": %g, \"pinned\": %d, "
      "\"condvar_cpu_pct\": %.4f, "
      "\"condvar_wakeups\": %ld, \"condvar_late_us\": %.1f, \"nanosleep_cpu_pct\": %.4f, "
      "\"nanosleep_wakeups\": %ld, \"nanosleep_late_us\": %.1f}\n",
      interval_ms, seconds, g_slack_us, g_pin ? 1 : 0, cv.cpu_pct, cv.wakeups, cv.late_us_median,
      ns.cpu_pct, ns.wakeups, ns.late_us_median);
  return 0;
}
