// Driver for bench/leg/run.sh.
//   leg_bench overhead N DIR   runs `true` N times through LocalExecutor (output files in DIR)
//                              and prints JSON: mean/median/min per-Run time, outside and inside.
//   leg_bench flood BYTES FILE runs `leg_bench gen BYTES` through LocalExecutor into FILE and
//                              prints JSON: bytes, VmHWM of this process before/after, wall.
//   leg_bench gen BYTES        writes BYTES of a deterministic xorshift stream to stdout.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "leg/executor.h"

namespace {

std::uint64_t VmKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string k = std::string(key) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(k, 0) == 0) return std::stoull(line.substr(k.size()));
  }
  return 0;
}

int Gen(std::uint64_t bytes) {
  std::vector<std::uint64_t> buf(1 << 13);  // 64 KiB
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  while (bytes > 0) {
    for (auto& w : buf) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w = x;
    }
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, buf.size() * 8));
    const char* p = reinterpret_cast<const char*>(buf.data());
    for (std::size_t off = 0; off < n;) {
      const ssize_t w = ::write(1, p + off, n - off);
      if (w <= 0) return 1;
      off += static_cast<std::size_t>(w);
    }
    bytes -= n;
  }
  return 0;
}

int Overhead(int n, const std::string& dir) {
  vouch::LocalExecutor exec;
  vouch::LegSpec spec;
  spec.argv = {"true"};
  spec.stdout_path = dir + "/stdout.txt";
  spec.stderr_path = dir + "/stderr.txt";
  spec.label = "bench";
  std::vector<double> outside_ms, inside_ms;
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = exec.Run(spec, nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    if (!r.ok() || !r->Succeeded()) {
      std::fprintf(stderr, "leg failed: %s\n",
                   r.ok() ? r->Describe().c_str() : r.error().message.c_str());
      return 1;
    }
    outside_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    inside_ms.push_back(static_cast<double>(r->wall_ns) / 1e6);
  }
  auto stats = [](std::vector<double> v) {
    double sum = 0;
    for (double x : v) sum += x;
    std::sort(v.begin(), v.end());
    return fmt::format("{{\"mean_ms\": {:.4f}, \"median_ms\": {:.4f}, \"min_ms\": {:.4f}}}",
                       sum / static_cast<double>(v.size()), v[v.size() / 2], v.front());
  };
  std::printf("{\"runs\": %d, \"run_call\": %s, \"leg_wall\": %s}\n", n, stats(outside_ms).c_str(),
              stats(inside_ms).c_str());
  return 0;
}

int Flood(std::uint64_t bytes, const std::string& file, const char* self) {
  vouch::LocalExecutor exec;
  vouch::LegSpec spec;
  spec.argv = {self, "gen", std::to_string(bytes)};
  spec.stdout_path = file;
  spec.stderr_path = file + ".stderr";
  spec.label = "flood";
  const std::uint64_t hwm_before = VmKb("VmHWM");
  auto r = exec.Run(spec, nullptr);
  const std::uint64_t hwm_after = VmKb("VmHWM");
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return 1;
  }
  std::printf(
      "{\"bytes\": %llu, \"written\": %llu, \"dropped\": %llu, \"vmhwm_before_kb\": %llu, "
      "\"vmhwm_after_kb\": %llu, \"wall_ms\": %.1f, \"leg_peak_rss_kb\": %llu, \"result\": "
      "\"%s\"}\n",
      static_cast<unsigned long long>(r->out.produced_bytes),
      static_cast<unsigned long long>(r->out.written_bytes),
      static_cast<unsigned long long>(r->out.dropped_bytes),
      static_cast<unsigned long long>(hwm_before), static_cast<unsigned long long>(hwm_after),
      static_cast<double>(r->wall_ns) / 1e6,
      static_cast<unsigned long long>(r->peak_rss_bytes / 1024), r->Describe().c_str());
  return r->Succeeded() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "gen" && argc == 3) return Gen(std::strtoull(argv[2], nullptr, 10));
  if (mode == "overhead" && argc == 4) return Overhead(std::atoi(argv[2]), argv[3]);
  if (mode == "flood" && argc == 4)
    return Flood(std::strtoull(argv[2], nullptr, 10), argv[3], argv[0]);
  std::fprintf(stderr, "usage: leg_bench overhead N DIR | flood BYTES FILE | gen BYTES\n");
  return 64;
}
