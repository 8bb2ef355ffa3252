// vouch's own files read back: records (show, gate), window summaries (clock check, pair),
// baselines (gate) and telemetry sample streams (clock replay).
#include "clock/window.h"
#include "fuzz_util.h"
#include "gate/baseline.h"
#include "record/record.h"
#include "telemetry/sample.h"
#include "util/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Built once per reader with VOUCH_FUZZ_PICK set (fuzz/CMakeLists.txt).
  const auto text = vouch::fuzz::AsText(data, size);
  switch (VOUCH_FUZZ_PICK) {
    case 0: {
      // The reader `show` and `gate` use: bounded open, parse, version, journal, schema.
      vouch::fuzz::TempInput in(data, size, "record.json");
      auto j = vouch::ReadRecordJson(in.path());
      if (j) {
        (void)vouch::RenderRecordText(*j);
        (void)vouch::RecordMedians(*j, "run", in.path());
        (void)vouch::RecordClockState(*j, "run");
      }
      break;
    }
    case 1: {
      auto j = vouch::ParseJson(text, "window.json");
      if (j) {
        auto w = vouch::WindowSummaryFromJson(*j, "window.json");
        if (w) {
          w->verdict = vouch::JudgeWindow(*w);
          (void)vouch::RenderWindowText(*w);
          (void)vouch::PairWindows(*w, *w, w->policy, false);
        }
      }
      break;
    }
    case 2:
      (void)vouch::ParseBaseline(text, "baseline.json");
      break;
    default: {
      vouch::fuzz::TempInput in(data, size, "samples.jsonl");
      auto s = vouch::ReadSampleStream(in.path());
      if (s) {
        vouch::Policy p;
        (void)vouch::FoldWindow(*s, p);
      }
      break;
    }
  }
  return 0;
}
