// What `vouch ab` and `vouch ab --from RECORD` print of a verdict. The verdict itself is
// src/verdict/ab.h (FinishAb): one pure function of the record, so both give the same answer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ab/arms.h"
#include "ab/protocol.h"
#include "verdict/ab.h"

namespace vouch::cli {

using verdict::AbExitCode;
using verdict::kAbDecided;
using verdict::kAbFailOn;
using verdict::kAbInconclusive;
using verdict::kAbRefused;

// The arms check fed with the traced kernels (per-kernel calls and time, the multiset as a
// behavioural control): a report beside the verdict, null without a GPU comparison.
nlohmann::json ArmsCheckWithGpu(const verdict::AbGpu& g, ArmInput arms_a, ArmInput arms_b);

// Prints the verdict F (--json), its Markdown (--markdown -) or its text block, and writes a
// --markdown FILE. False when the file cannot be written.
bool PrintAbVerdict(const AbPlan& plan, const AbOutcome& out, const verdict::AbFinal& f,
                    const AbReportContext& report, bool json, const std::string& markdown);

// vouch ab --from RECORD: the protocol and the verdict's rules replayed over RECORD's legs with
// its recorded plan (HEADLINE, when given, instead of the recorded one); no leg is run and the
// record is left as it is. Prints the verdict as `vouch ab` does and returns its exit code.
int AbFromRecord(const std::string& record, const std::string& headline, bool json,
                 const std::string& markdown, const std::string& fail_on);
// For `vouch show` of an A/B record at PATH: how to recompute its verdict about another
// metric, with the metrics its legs report ("" for a record of another kind).
std::string AbRecomputeHint(const nlohmann::json& rec, const std::string& path);

}  // namespace vouch::cli
