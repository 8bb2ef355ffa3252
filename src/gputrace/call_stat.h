// Calls of one instrumented op (a kernel, a traced call) and their total time: what the GPU
// trace measures per arm and the arms check (ab/arms.h) compares for identity.
#pragma once

#include <cstdint>

namespace vouch {

struct CallStat {
  std::int64_t calls = 0;
  double time_ns = 0;
};

}  // namespace vouch
