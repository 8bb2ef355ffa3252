// vouch's own files read back: records (show, gate), window summaries (clock check, pair),
// baselines (gate), telemetry sample streams (clock replay) and the leg journal (legs.jsonl,
// read back for a run that never finished).
#include <fcntl.h>
#include <unistd.h>

#include <string_view>

#include "clock/window.h"
#include "fuzz_util.h"
#include "gate/baseline.h"
#include "record/record.h"
#include "telemetry/sample.h"
#include "util/json_io.h"

namespace {
// The journal target's input: a record.json, this line, then the legs.jsonl beside it.
constexpr std::string_view kJournalMark = "\n--legs.jsonl--\n";
}  // namespace

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
    case 4: {
      // A run that never finished: record.json says "running" and the finished legs are read
      // back from legs.jsonl (AssembleFromJournal) before the schema check.
      std::string_view all(reinterpret_cast<const char*>(data), size);
      std::size_t mark = all.find(kJournalMark);
      std::string_view record = mark == std::string_view::npos ? all : all.substr(0, mark);
      std::string_view legs = mark == std::string_view::npos
                                  ? std::string_view()
                                  : all.substr(mark + kJournalMark.size());
      vouch::fuzz::TempInput in(reinterpret_cast<const std::uint8_t*>(record.data()), record.size(),
                                "record.json");
      std::string dir = in.path().substr(0, in.path().rfind('/'));
      std::string journal = dir + "/legs.jsonl";
      const int fd = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) std::abort();
      for (std::size_t off = 0; off < legs.size();) {
        const ssize_t n = ::write(fd, legs.data() + off, legs.size() - off);
        if (n <= 0) std::abort();
        off += static_cast<std::size_t>(n);
      }
      ::close(fd);
      auto j = vouch::ReadRecordJson(dir);
      if (j) {
        (void)vouch::RenderRecordText(*j);
        (void)vouch::RecordMedians(*j, "run", dir);
      }
      ::unlink(journal.c_str());
      break;
    }
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
