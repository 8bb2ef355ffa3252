// The GPU trace readers, then the summary over what they read: Kineto (PyTorch profiler)
// Chrome trace JSON (pick 0) and vouch's CUPTI tracer's JSON lines (pick 1).
#include "fuzz_util.h"
#include "trace/cupti_reader.h"
#include "trace/kineto_reader.h"
#include "trace/summary.h"

namespace {
std::string Dump(const vouch::trace::Summary& s) {
  return vouch::trace::SummaryToJson(s).dump(-1, ' ', false,
                                             nlohmann::json::error_handler_t::replace);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Built once per reader with VOUCH_FUZZ_PICK set (fuzz/CMakeLists.txt).
  const auto text = vouch::fuzz::AsText(data, size);
  auto t = VOUCH_FUZZ_PICK == 0 ? vouch::trace::ParseKinetoJson(text, "fuzz.json", 4096)
                                : vouch::trace::ParseCuptiTrace(text, "gpu-trace.jsonl");
  std::string whole;
  if (t) {
    vouch::trace::SummaryOptions o;
    auto s = vouch::trace::Summarize(*t, o);
    if (s) (void)vouch::trace::RenderSummaryText(*s);
    whole = s ? Dump(*s) : s.error().message;
  } else {
    whole = t.error().message;
  }
  if (VOUCH_FUZZ_PICK == 0) {
    // The folded whole-trace summary (`trace summarize` without --window) must be the same,
    // and so must its errors.
    auto folded = vouch::trace::SummarizeKinetoJson(text, "fuzz.json", 4096);
    if (whole != (folded ? Dump(*folded) : folded.error().message)) __builtin_trap();
  }
  return 0;
}
