// What `vouch ab` adds to its verdict's words (issue 37): what an interrupted run's finished
// pairs say (a Ctrl-C after ten minutes of legs is not silence), and what A and B were in the
// pull request's Markdown.
#pragma once

#include <string>
#include <vector>

#include "ab/protocol.h"

namespace vouch::cli {

// Lines for stderr: how many pairs finished of PLANNED, the headline's B/A ratio so far with
// its interval (or each valid pair's values when fewer than two), and that it is no verdict.
// "" when no pair finished.
std::string InterruptedAbSummary(const AbOutcome& out, std::size_t planned_pairs,
                                 const std::string& a_name, const std::string& b_name,
                                 const std::string& record_path);

// Markdown table rows naming the arms: "| A (name) | `cmd args` `K=V` |", secrets redacted;
// A_ENV and B_ENV the arms' own K=V as given.
std::string AbArmsMarkdownRows(const AbPlan& plan, const std::vector<std::string>& a_env,
                               const std::vector<std::string>& b_env);

// MD (RenderAbMarkdown's block) with those rows after its table's header line.
std::string WithArmsRows(std::string md, const std::string& rows);

}  // namespace vouch::cli
