// Kineto (PyTorch profiler) Chrome trace, then the summary over it.
#include "fuzz_util.h"
#include "trace/kineto_reader.h"
#include "trace/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto t = vouch::trace::ParseKinetoJson(vouch::fuzz::AsText(data, size), "fuzz.json", 4096);
  if (t) {
    vouch::trace::SummaryOptions o;
    auto s = vouch::trace::Summarize(*t, o);
    if (s) (void)vouch::trace::RenderSummaryText(*s);
  }
  return 0;
}
