// What `vouch ab` and `vouch ab --from RECORD` share after the legs: the plan as the record
// keeps it (extra.ab_plan), the GPU-trace comparison of the arms, the verdict printed as
// text, JSON or Markdown, and the exit code of a verdict.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ab/arms.h"
#include "ab/protocol.h"
#include "gputrace/compare.h"
#include "util/result.h"

namespace vouch::cli {

enum AbExit { kAbDecided = 0, kAbInconclusive = 2, kAbRefused = 3, kAbFailOn = 5 };

// The plan of an A/B run, written into its record before the first leg (extra.ab_plan), so that
// `vouch ab --from RECORD` can replay the protocol over the record's legs. A_ENV and B_ENV: the
// arms' own K=V as given (a secret's value redacted), for the arms line.
nlohmann::json AbPlanJson(const AbPlan& plan, bool change_not_on_gpu,
                          const std::vector<std::string>& a_env,
                          const std::vector<std::string>& b_env);
struct RecordedAbPlan {
  AbPlan plan;
  bool change_not_on_gpu = false;
  std::vector<std::string> a_env, b_env;
};
// REC: a record document (ReadRecordJson); WHERE names it in errors.
Result<RecordedAbPlan> AbPlanFromRecord(const nlohmann::json& rec, const std::string& where);

// The arms' kernel multisets and per-kernel diff (--gpu-trace), with the identity rule applied
// to OUT's decision. Problems go into CAVEATS and are printed; ARMS_CHECK_GPU (when not null)
// gets the arms check fed with the kernels.
struct AbGpu {
  std::optional<gputrace::GpuComparison> gpu;
  std::string attribution;
};
AbGpu CompareAbGpu(AbOutcome& out, const AbPlan& plan, ArmInput arms_a, ArmInput arms_b,
                   bool not_on_gpu, std::vector<std::string>& caveats,
                   nlohmann::json* arms_check_gpu);
nlohmann::json AbGpuJson(const AbGpu& g, bool not_on_gpu);

// Prints the verdict V (--json), its Markdown (--markdown -) or its text block, and writes a
// --markdown FILE. False when the file cannot be written.
bool PrintAbVerdict(const AbPlan& plan, const AbOutcome& out, const nlohmann::json& v,
                    const AbReportContext& report, const AbGpu& gpu, bool json,
                    const std::string& markdown);

// vouch ab --from RECORD: the protocol replayed over RECORD's legs with its recorded plan
// (HEADLINE, when given, instead of the recorded one); no leg is run and the record is left
// as it is. Prints the verdict as `vouch ab` does and returns its exit code.
int AbFromRecord(const std::string& record, const std::string& headline, bool json,
                 const std::string& markdown, const std::string& fail_on);
// For `vouch show` of an A/B record at PATH: how to recompute its verdict about another
// metric, with the metrics its legs report ("" for a record of another kind).
std::string AbRecomputeHint(const nlohmann::json& rec, const std::string& path);

// The exit code of a verdict (FAIL_ON "slower": B slower exits 5).
int AbExitCode(AbVerdict v, const std::string& fail_on);

}  // namespace vouch::cli
