// Nsight Compute CSV (raw and details pages), rendered as text, Markdown and JSON. Seeded with
// a raw page whose stall metric name is 60 KB and with two exports appended into one file.
// The export is also fed in chunks (of 1 to 64 bytes, by its first byte; issue 39 reads it
// so): any chunking must give the same table, or the same error, as the whole text.
#include <algorithm>
#include <cstdlib>

#include "fuzz_util.h"
#include "ncu/ncu_csv.h"
#include "ncu/ncu_stream.h"
#include "util/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = vouch::fuzz::AsText(data, size);
  auto r = vouch::ncu::ParseNcuCsv(text, "fuzz.csv");
  std::string whole = r ? vouch::DumpJson(vouch::ncu::NcuToJson(*r), 2) : r.error().message;
  if (r) {
    (void)vouch::ncu::RenderNcuText(*r);
    (void)vouch::ncu::RenderNcuMarkdown(*r);
    std::string pieces;  // --json, a kernel at a time: the same text
    vouch::ncu::WriteNcuJson(*r, [&](std::string_view p) { pieces += p; });
    if (pieces != whole + "\n") std::abort();
  }
  const std::size_t step = size ? 1 + data[0] % 64 : 1;
  vouch::ncu::NcuCsvStream stream("fuzz.csv");
  std::string chunked;
  bool failed = false;
  for (std::size_t at = 0; at < text.size() && !failed; at += step)
    if (auto st = stream.Feed(text.substr(at, std::min(step, text.size() - at))); !st) {
      chunked = st.error().message;
      failed = true;
    }
  if (!failed) {
    auto c = stream.Finish();
    chunked = c ? vouch::DumpJson(vouch::ncu::NcuToJson(*c), 2) : c.error().message;
  }
  if (chunked != whole) std::abort();
  return 0;
}
