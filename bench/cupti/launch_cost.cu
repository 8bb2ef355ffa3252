// launch_cost: what a tracer adds to each kernel launch, seen from the launching thread.
// Launches an empty kernel N times (or for S seconds), spinning H microseconds of host work
// between launches, and times each cudaLaunchKernel call on the steady clock. Prints one JSON
// line: launches per second over the loop and the launch call's median, mean, p90 and p99.
//
//   launch_cost [--host-us H] [--launches N | --seconds S] [--label L]
//
// Run it untraced and with CUDA_INJECTION64_PATH set (bench/cupti/screen.sh): the difference in
// the call's time is the tracer's cost per launch, with no Python and no allocator in between.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(x)                                                                 \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "launch_cost: %s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)

__global__ void Empty(int* p) {
  if (p && threadIdx.x == 1024) *p = 1;  // never true: an empty kernel the compiler keeps
}

using Clock = std::chrono::steady_clock;

static double Ns(Clock::duration d) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

int main(int argc, char** argv) {
  double host_us = 0, seconds = 0;
  long launches = 0;
  std::string label = "run";
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "launch_cost: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--host-us"))
      host_us = std::atof(next());
    else if (!std::strcmp(argv[i], "--launches"))
      launches = std::atol(next());
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(next());
    else if (!std::strcmp(argv[i], "--label"))
      label = next();
    else {
      std::fprintf(stderr,
                   "usage: launch_cost [--host-us H] [--launches N | --seconds S] [--label L]\n");
      return 2;
    }
  }
  if (launches <= 0 && seconds <= 0) launches = 20000;
  int* p = nullptr;
  CHECK(cudaMalloc(&p, sizeof(int)));
  for (int i = 0; i < 1000; ++i) Empty<<<1, 32>>>(p);  // warm-up: module load, tracer set-up
  CHECK(cudaDeviceSynchronize());

  std::vector<double> call_ns;
  call_ns.reserve(launches > 0 ? static_cast<std::size_t>(launches) : 1u << 20);
  auto gap = std::chrono::nanoseconds(static_cast<long long>(host_us * 1000));
  auto t0 = Clock::now();
  auto stop = t0 + std::chrono::nanoseconds(static_cast<long long>(seconds * 1e9));
  long n = 0;
  for (;;) {
    if (launches > 0 ? n >= launches : Clock::now() >= stop) break;
    auto a = Clock::now();
    Empty<<<1, 32>>>(p);
    auto b = Clock::now();
    call_ns.push_back(Ns(b - a));
    ++n;
    if (n % 1000 == 0) CHECK(cudaStreamSynchronize(0));  // the queue never fills up
    auto until = b + gap;
    while (Clock::now() < until) {
    }
  }
  CHECK(cudaDeviceSynchronize());
  double wall = Ns(Clock::now() - t0) / 1e9;
  CHECK(cudaGetLastError());
  std::vector<double> s = call_ns;
  std::sort(s.begin(), s.end());
  auto q = [&](double f) {
    return s.empty() ? 0.0 : s[static_cast<std::size_t>(f * (s.size() - 1))];
  };
  double mean = 0;
  for (double v : s) mean += v;
  mean = s.empty() ? 0 : mean / static_cast<double>(s.size());
  std::printf(
      "{\"label\":\"%s\",\"host_us\":%.1f,\"launches\":%ld,\"seconds\":%.4f,\"launches_per_s\":%."
      "1f,"
      "\"call_ns_median\":%.0f,\"call_ns_mean\":%.1f,\"call_ns_p90\":%.0f,\"call_ns_p99\":%.0f}\n",
      label.c_str(), host_us, n, wall, static_cast<double>(n) / wall, q(0.5), mean, q(0.9),
      q(0.99));
  CHECK(cudaFree(p));
  return 0;
}
