// The parts of Summarize (summary.cc) that the nsys reader's folded whole-trace summary
// (whole_fold.cc) shares: that summary keeps no GPU op or API call, only what the figures and
// the kernel table need, and must give the same summary. Internal to src/trace.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "trace/model.h"
#include "trace/summary.h"
#include "util/result.h"

namespace vouch::trace {

// The durations of the kernels in a window, grouped by name: each kernel counted first (Count,
// in op order), then placed (Fill, the same kernels in the same order) in one array. 5 M
// push_backs into growing vectors were ~10 % of a summary.
class KernelDurations {
 public:
  explicit KernelDurations(std::size_t names) : count_of_(names, 0) {}
  void Count(std::uint32_t id) {
    if (id >= count_of_.size()) count_of_.resize(std::size_t{id} + 1, 0);
    if (count_of_[id]++ == 0) first_seen_.push_back(id);
  }
  // N kernels of ID at once (N > 0): as N calls of Count(ID).
  void Count(std::uint32_t id, std::size_t n) {
    if (id >= count_of_.size()) count_of_.resize(std::size_t{id} + 1, 0);
    if (count_of_[id] == 0) first_seen_.push_back(id);
    count_of_[id] += n;
  }
  void Place();  // after the last Count
  void Fill(std::uint32_t id, std::int64_t duration_ns) { flat_[fill_at_[id]++] = duration_ns; }

 private:
  friend void FinishSummary(Summary*, const Trace&, KernelDurations&, const SummaryOptions&);
  std::vector<std::size_t> count_of_;
  std::vector<std::uint32_t> first_seen_;  // name ids in first-seen order
  std::vector<std::size_t> fill_at_;
  std::unique_ptr<std::int64_t[]> flat_;
};

// Everything a summary takes from T before its figures: path, format, window, phases,
// skipped and unknown categories, the trace's warnings; "whole trace" as the attribution when
// OPT has no window.
Summary BeginSummary(const Trace& t, const SummaryOptions& opt);
// S->total summed over S->instances; the error naming PATH and the window when the sum passes
// 2^63 ns or bytes.
std::optional<Error> AddUpInstances(Summary* s, std::string_view path, const SummaryOptions& opt);
// The whole-trace warning that a trace holds several named phases.
void AddPhasesWarning(Summary* s);
// The kernel table (names from T), components, ranking and the closing warnings, once
// S->total is set and every kernel of the window filled into DURATIONS.
void FinishSummary(Summary* s, const Trace& t, KernelDurations& durations,
                   const SummaryOptions& opt);

}  // namespace vouch::trace
