// The verdict of an A/B: one pure function of the protocol's outcome (the record's legs and
// pairs) and the plan the record keeps. `vouch ab`, `vouch ab --from RECORD` and the fleet's
// nodes call it, so a record gets one verdict, one exit code and one direction word however it
// is asked. The rules, in order:
//   1. the paired statistics (stats/ab_stats.h, run by ab/protocol.h) give the verdict;
//   2. with GPU traces, the identity rule: arms that ran identical kernels get no faster/slower
//      verdict unless the change is stated not to be on the GPU (gputrace/compare.h);
//   3. modes (verdict/modes_rule.h): refused, or decided by rank where the arms do not overlap;
//   4. host noise: a wall-clock headline that measures the host is said (gputrace/host_noise.h).
// A refused verdict carries no direction word anywhere (text, Markdown, JSON).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ab/protocol.h"
#include "gputrace/compare.h"
#include "verdict/modes_rule.h"

namespace vouch::verdict {

// What the record's plan says beyond AbPlan (extra.ab_plan).
struct AbRules {
  bool change_not_on_gpu = false;
  bool allow_modes = false;
};

struct AbGpu {
  std::optional<gputrace::GpuComparison> gpu;
  std::string attribution;
};

struct AbFinal {
  AbGpu gpu;
  ModesRuling modes;
  nlohmann::json host_noise;  // null when not assessed
  nlohmann::json verdict;     // record.extra.verdict, and what --json prints
  std::vector<std::string> caveats;
};

// OUT's decision is changed in place by rules 2-4; CAVEATS are the record's (a GPU trace that
// cannot be read adds one).
AbFinal FinishAb(const AbPlan& plan, AbOutcome& out, const AbRules& rules,
                 std::vector<std::string> caveats);

// The exit codes of an A/B verdict: 0 decided (B faster, B slower, no change), 2 inconclusive,
// 3 refused, 5 B slower with --fail-on slower.
enum AbExit { kAbDecided = 0, kAbInconclusive = 2, kAbRefused = 3, kAbFailOn = 5 };
int AbExitCode(AbVerdict v, bool fail_on_slower);

// The kernel-mix label of a traced leg over RANGE ("" when RANGE is not in its trace): the
// kernels per instance of its modal multiset, with a short digest of the multiset.
std::string KernelMixLabel(const gputrace::LegGpuTrace& t, const std::string& range);

}  // namespace vouch::verdict
