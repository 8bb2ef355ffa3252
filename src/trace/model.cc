#include "trace/model.h"

#include <algorithm>
#include <limits>

namespace vouch::trace {

std::uint32_t NameTable::Intern(std::string_view name) {
  auto it = index_.find(name);
  if (it != index_.end()) return it->second;
  auto id = static_cast<std::uint32_t>(names_->size());
  names_->emplace_back(name);
  index_.emplace(std::string(name), id);
  return id;
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
