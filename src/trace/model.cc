#include "trace/model.h"

#include <algorithm>
#include <limits>

namespace vouch::trace {

namespace {

// A cheap slot for NAME from its length and 8 bytes at its start, middle and end (kernel
// names share long prefixes; the three together tell most apart).
std::size_t Slot(std::string_view name, std::size_t slots) {
  std::uint64_t a = 0, b = 0, c = 0;
  const std::size_t n = name.size();
  // An empty view may have no data at all (a nameless event): memcpy from null is UB even
  // for 0 bytes (found by fuzz/fuzz_kineto.cc).
  if (n == 0) return 0;
  std::memcpy(&a, name.data(), std::min<std::size_t>(n, 8));
  if (n > 8) {
    std::memcpy(&b, name.data() + n - 8, 8);
    std::memcpy(&c, name.data() + n / 2 - 4, 8);
  }
  std::uint64_t h =
      (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ (c * 0x165667B19E3779F9ull) ^ n;
  return static_cast<std::size_t>((h ^ (h >> 29)) % slots);
}

}  // namespace

std::uint32_t NameTable::Intern(std::string_view name) {
  std::uint32_t& cached = cache_[Slot(name, kCacheSlots)];
  if (cached != UINT32_MAX && (*names_)[cached] == name) return cached;
#if defined(__cpp_lib_generic_unordered_lookup)
  auto it = index_.find(name);
#else  // libstdc++ 10 (Debian 11's, the release build): no heterogeneous lookup, one copy per miss
  auto it = index_.find(std::string(name));
#endif
  if (it != index_.end()) return cached = it->second;
  auto id = static_cast<std::uint32_t>(names_->size());
  names_->emplace_back(name);
  index_.emplace(std::string(name), id);
  return cached = id;
}

bool IsLaunchApi(std::string_view name) {
  // cudaLaunchKernel, cudaLaunchKernelExC, cudaLaunchCooperativeKernel, cuLaunchKernel,
  // cuLaunchKernelEx, cuLaunchCooperativeKernel, cudaGraphLaunch, cuGraphLaunch (and _v2/_ptsz).
  return name.find("LaunchKernel") != std::string_view::npos ||
         name.find("LaunchCooperativeKernel") != std::string_view::npos ||
         name.find("GraphLaunch") != std::string_view::npos;
}

void ComputeExtent(Trace* t) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  auto see = [&](std::int64_t s, std::int64_t e) {
    lo = std::min(lo, s);
    hi = std::max(hi, e);
  };
  for (const auto& o : t->ops) see(o.start_ns, o.end_ns);
  for (const auto& a : t->api) see(a.start_ns, a.end_ns);
  for (const auto& r : t->ranges) see(r.start_ns, r.end_ns);
  if (lo > hi) lo = hi = 0;
  t->first_ns = lo;
  t->last_ns = hi;
}

}  // namespace vouch::trace

namespace vouch::trace {

Status CheckDurationTotals(const Trace& t) {
  // Every end inside +-kMaxTimeNs (the readers check it too), so each difference fits.
  auto out_of_range = [](const auto& events) {
    for (const auto& e : events)
      if (!TimeInRange(e.start_ns) || !TimeInRange(e.end_ns)) return true;
    return false;
  };
  if (out_of_range(t.ops) || out_of_range(t.api) || out_of_range(t.ranges))
    return MakeError("{}: an event's time is beyond +-2^62 ns (146 years): not a real trace",
                     t.path);
  auto too_long = [](const auto& events) {
    std::int64_t sum = 0;
    for (const auto& e : events) {
      std::int64_t d = std::max<std::int64_t>(e.end_ns - e.start_ns, 0);
      if (d >= kMaxTimeNs - sum) return true;
      sum += d;
    }
    return false;
  };
  if (too_long(t.ops)) return DurationTotalsError(t.path, /*ops=*/true);
  if (too_long(t.api)) return DurationTotalsError(t.path, /*ops=*/false);
  return OkStatus();
}

Error DurationTotalsError(const std::string& path, bool ops) {
  return Error{fmt::format(
      "{}: the {} durations add up to 2^62 ns (146 years) or more: not a real trace (corrupt "
      "times?)",
      path, ops ? "GPU operations'" : "API calls'")};
}

}  // namespace vouch::trace
