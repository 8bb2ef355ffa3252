// Nsight Compute CSV (raw and details pages), rendered as text, Markdown and JSON. Seeded with
// a raw page whose stall metric name is 60 KB and with two exports appended into one file.
#include "fuzz_util.h"
#include "ncu/ncu_csv.h"
#include "util/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto r = vouch::ncu::ParseNcuCsv(vouch::fuzz::AsText(data, size), "fuzz.csv");
  if (r) {
    (void)vouch::ncu::RenderNcuText(*r);
    (void)vouch::ncu::RenderNcuMarkdown(*r);
    (void)vouch::DumpJson(vouch::ncu::NcuToJson(*r), 2);
  }
  return 0;
}
