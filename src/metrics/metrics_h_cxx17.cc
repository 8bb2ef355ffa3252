// Compiled as C++17 with the project's warnings (see CMakeLists.txt): proves that
// include/vouch/metrics.h stays usable from the C++17 benchmarks it is meant for.
#include <vouch/metrics.h>

#if __cplusplus != 201703L
#error "this file must be compiled as C++17"
#endif

void VouchMetricsHeaderCompilesAsCxx17() {
  vouch::begin();
  vouch::report("x", 1.0, "s", "lower");
  vouch::report_text("sha", "abc");
  vouch::end();
}
