// busy: keeps one GPU busy for a given time or a given amount of work, compute-bound or
// memory-bound, and reports its throughput. The GPU checks and A/B runs measure it.
//
//   busy --mode compute|memory [--seconds S | --iters N] [--work-scale X]
//        [--idle-before S] [--markers]
//
// With VOUCH_METRICS set, it appends {"name","value","unit","better"} lines (and
// {"event":"begin"}/{"event":"end"} around the timed loop with --markers).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "busy: %s: %s\n", #x, cudaGetErrorString(e_));        \
      std::exit(2);                                                               \
    }                                                                             \
  } while (0)

__global__ void fma_loop(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x * 1e-4f;
  for (int i = 0; i < iters; ++i) {
    a = fmaf(a, b, c);
    d = fmaf(d, c, b);
    b = fmaf(b, a, -d) * 1e-7f + 1.0001f;
  }
  if (a + d == 12345.0f) out[0] = a + b + c + d;  // keeps the loop alive
}

static double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

static void Emit(const char* line) {
  const char* path = std::getenv("VOUCH_METRICS");
  if (!path || !*path) return;
  FILE* f = std::fopen(path, "a");
  if (!f) return;
  std::fputs(line, f);
  std::fputc('\n', f);
  std::fclose(f);
}

int main(int argc, char** argv) {
  std::string mode = "compute";
  double seconds = 0, scale = 1.0, idle_before = 0;
  long iters = 0;
  bool markers = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "busy: %s needs a value\n", a.c_str());
        std::exit(64);
      }
      return argv[++i];
    };
    if (a == "--mode") mode = next();
    else if (a == "--seconds") seconds = std::atof(next());
    else if (a == "--iters") iters = std::atol(next());
    else if (a == "--work-scale") scale = std::atof(next());
    else if (a == "--idle-before") idle_before = std::atof(next());
    else if (a == "--markers") markers = true;
    else {
      std::fprintf(stderr, "busy: unknown argument %s\n", a.c_str());
      return 64;
    }
  }
  if ((seconds <= 0) == (iters <= 0) || (mode != "compute" && mode != "memory")) {
    std::fprintf(stderr, "usage: busy --mode compute|memory (--seconds S | --iters N) [--work-scale X]\n");
    return 64;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  float* out;
  CHECK(cudaMalloc(&out, sizeof(float)));
  size_t bytes = static_cast<size_t>(1ull << 30) * scale;  // memory mode: 1 GiB copies x scale
  char *src = nullptr, *dst = nullptr;
  if (mode == "memory") {
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMemset(src, 1, bytes));
  }
  int fma_iters = static_cast<int>(200000 * scale);
  int blocks = prop.multiProcessorCount * 8;
  auto step = [&]() {
    if (mode == "compute")
      fma_loop<<<blocks, 256>>>(out, fma_iters);
    else
      CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
  };
  step();  // warm: module load, first launch
  CHECK(cudaDeviceSynchronize());
  if (idle_before > 0) std::this_thread::sleep_for(std::chrono::duration<double>(idle_before));
  char line[512];
  if (markers) {
    std::snprintf(line, sizeof line, "{\"event\":\"begin\",\"unix_s\":%.6f}", Now());
    Emit(line);
  }
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventRecord(e0));
  auto t0 = std::chrono::steady_clock::now();
  long done = 0;
  while (true) {
    for (int k = 0; k < 4; ++k, ++done) step();
    CHECK(cudaDeviceSynchronize());
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (iters > 0 ? done >= iters : el >= seconds) break;
  }
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  if (markers) {
    std::snprintf(line, sizeof line, "{\"event\":\"end\",\"unix_s\":%.6f}", Now());
    Emit(line);
  }
  double per_s = done / (ms / 1000.0);
  std::printf("busy: mode=%s iters=%ld gpu_ms=%.3f iters_per_s=%.4f scale=%.4f\n", mode.c_str(), done,
              ms, per_s, scale);
  std::snprintf(line, sizeof line,
                "{\"name\":\"iters_per_s\",\"value\":%.6f,\"unit\":\"1/s\",\"better\":\"higher\"}", per_s);
  Emit(line);
  std::snprintf(line, sizeof line, "{\"name\":\"gpu_ms\",\"value\":%.6f,\"unit\":\"ms\",\"better\":\"lower\"}", ms);
  Emit(line);
  if (mode == "memory") {
    double gbs = 2.0 * bytes * done / (ms / 1000.0) / 1e9;
    std::printf("busy: copy_gb_per_s=%.1f\n", gbs);
    std::snprintf(line, sizeof line, "{\"name\":\"copy_gb_per_s\",\"value\":%.6f,\"unit\":\"GB/s\",\"better\":\"higher\"}", gbs);
    Emit(line);
  }
  return 0;
}
