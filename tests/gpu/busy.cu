// busy: keeps one GPU busy for a given time or a given amount of work, compute-bound or
// memory-bound, and reports its throughput. The GPU checks and A/B runs measure it.
//
//   busy --mode compute|memory [--seconds S | --iters N] [--work-scale X]
//        [--idle-before S] [--markers] [--all-devices]
//
// --all-devices: the same work on every GPU CUDA lets it see, at once, from this one process
// (as a tensor-parallel engine loads its GPUs); the rate is the slowest GPU's.
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
#include <vector>

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
  bool markers = false, all_devices = false;
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
    else if (a == "--all-devices") all_devices = true;
    else {
      std::fprintf(stderr, "busy: unknown argument %s\n", a.c_str());
      return 64;
    }
  }
  if ((seconds <= 0) == (iters <= 0) || (mode != "compute" && mode != "memory")) {
    std::fprintf(stderr, "usage: busy --mode compute|memory (--seconds S | --iters N) [--work-scale X]\n");
    return 64;
  }
  int ndev = 1;
  if (all_devices) CHECK(cudaGetDeviceCount(&ndev));
  struct Dev {
    float* out = nullptr;
    char *src = nullptr, *dst = nullptr;
    int blocks = 0;
    cudaEvent_t e0, e1;
  };
  std::vector<Dev> devs(ndev);
  size_t bytes = static_cast<size_t>(1ull << 30) * scale;  // memory mode: 1 GiB copies x scale
  int fma_iters = static_cast<int>(200000 * scale);
  for (int d = 0; d < ndev; ++d) {
    CHECK(cudaSetDevice(d));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, d));
    Dev& g = devs[d];
    g.blocks = prop.multiProcessorCount * 8;
    CHECK(cudaMalloc(&g.out, sizeof(float)));
    if (mode == "memory") {
      CHECK(cudaMalloc(&g.src, bytes));
      CHECK(cudaMalloc(&g.dst, bytes));
      CHECK(cudaMemset(g.src, 1, bytes));
    }
    CHECK(cudaEventCreate(&g.e0));
    CHECK(cudaEventCreate(&g.e1));
    std::printf("busy: device %d: %s, PCI %02x:%02x\n", d, prop.name, prop.pciBusID, prop.pciDeviceID);
  }
  auto step = [&](int d) {
    Dev& g = devs[d];
    if (mode == "compute")
      fma_loop<<<g.blocks, 256>>>(g.out, fma_iters);
    else
      CHECK(cudaMemcpyAsync(g.dst, g.src, bytes, cudaMemcpyDeviceToDevice));
  };
  auto sync_all = [&]() {
    for (int d = 0; d < ndev; ++d) {
      CHECK(cudaSetDevice(d));
      CHECK(cudaDeviceSynchronize());
    }
  };
  for (int d = 0; d < ndev; ++d) {  // warm: module load, first launch
    CHECK(cudaSetDevice(d));
    step(d);
  }
  sync_all();
  if (idle_before > 0) std::this_thread::sleep_for(std::chrono::duration<double>(idle_before));
  char line[512];
  if (markers) {
    std::snprintf(line, sizeof line, "{\"event\":\"begin\",\"unix_s\":%.6f}", Now());
    Emit(line);
  }
  for (int d = 0; d < ndev; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaEventRecord(devs[d].e0));
  }
  auto t0 = std::chrono::steady_clock::now();
  long done = 0;
  while (true) {
    for (int d = 0; d < ndev; ++d) {
      CHECK(cudaSetDevice(d));
      for (int k = 0; k < 4; ++k) step(d);
    }
    done += 4;
    sync_all();
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (iters > 0 ? done >= iters : el >= seconds) break;
  }
  float ms = 0;
  for (int d = 0; d < ndev; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaEventRecord(devs[d].e1));
    CHECK(cudaEventSynchronize(devs[d].e1));
    float dms = 0;
    CHECK(cudaEventElapsedTime(&dms, devs[d].e0, devs[d].e1));
    if (ndev > 1) std::printf("busy: device %d gpu_ms=%.3f\n", d, dms);
    if (dms > ms) ms = dms;
  }
  if (markers) {
    std::snprintf(line, sizeof line, "{\"event\":\"end\",\"unix_s\":%.6f}", Now());
    Emit(line);
  }
  double per_s = done / (ms / 1000.0);
  std::printf("busy: mode=%s devices=%d iters=%ld gpu_ms=%.3f iters_per_s=%.4f scale=%.4f\n",
              mode.c_str(), ndev, done, ms, per_s, scale);
  std::snprintf(line, sizeof line,
                "{\"name\":\"iters_per_s\",\"value\":%.6f,\"unit\":\"1/s\",\"better\":\"higher\"}", per_s);
  Emit(line);
  std::snprintf(line, sizeof line, "{\"name\":\"gpu_ms\",\"value\":%.6f,\"unit\":\"ms\",\"better\":\"lower\"}", ms);
  Emit(line);
  if (mode == "memory") {
    double gbs = 2.0 * bytes * done * ndev / (ms / 1000.0) / 1e9;
    std::printf("busy: copy_gb_per_s=%.1f\n", gbs);
    std::snprintf(line, sizeof line, "{\"name\":\"copy_gb_per_s\",\"value\":%.6f,\"unit\":\"GB/s\",\"better\":\"higher\"}", gbs);
    Emit(line);
  }
  return 0;
}
