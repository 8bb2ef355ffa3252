// Nsight Systems SQLite export: the input is written to a file that SQLite opens. The whole
// trace is summarised from the trace read whole, and the decode_step window both ways (read
// whole, and streamed into a WindowFold): the two must give the same summary or error.
#include <cstdlib>

#include "fuzz_util.h"
#include "trace/nsys_reader.h"
#include "trace/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vouch::fuzz::TempInput in(data, size, "trace.sqlite");
  auto t = vouch::trace::ReadNsysSqlite(in.path());
  vouch::trace::SummaryOptions window;
  window.window = "decode_step";
  auto streamed = vouch::trace::SummarizeNsysSqlite(in.path(), window);
  if (t) {
    vouch::trace::SummaryOptions o;
    auto s = vouch::trace::Summarize(*t, o);
    if (s) (void)vouch::trace::RenderSummaryText(*s);
    auto w = vouch::trace::Summarize(*t, window);
    const std::string a = w ? vouch::trace::RenderSummaryText(*w) : w.error().message;
    const std::string b =
        streamed ? vouch::trace::RenderSummaryText(*streamed) : streamed.error().message;
    if (a != b)
      std::abort();  // the streamed window differs from the window of the trace read whole
  }
  return 0;
}
