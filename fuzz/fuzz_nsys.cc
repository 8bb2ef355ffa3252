// Nsight Systems SQLite export: the input is written to a file that SQLite opens.
#include "fuzz_util.h"
#include "trace/nsys_reader.h"
#include "trace/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vouch::fuzz::TempInput in(data, size, "trace.sqlite");
  auto t = vouch::trace::ReadNsysSqlite(in.path());
  if (t) {
    vouch::trace::SummaryOptions o;
    auto s = vouch::trace::Summarize(*t, o);
    if (s) (void)vouch::trace::RenderSummaryText(*s);
  }
  return 0;
}
