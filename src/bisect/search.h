// The search of `vouch bisect`, pure: a state machine over the commits of a range, fed one
// step result at a time. Commits are numbered in first-parent order, 0 the good end and N-1
// the bad end. The first step confirms the ends (the bad end against the good one: a
// regression must be seen before it is searched for); then each step tests the commit
// nearest the middle of the range still in doubt, as git bisect does. A commit that cannot be
// tested (its build or its benchmark failed) is skipped, like `git bisect skip`, and the next
// nearest is tried. An undecided step ends the search: the range still in doubt is named
// rather than guessed.
//
// Error control: the steps are a family of tests; each is run at the level alpha / m, m the
// planned decisions (ceil(log2(N-1)) halvings plus the confirmation), so that by Bonferroni
// the chance that any step decides wrongly, and so the chance of naming a wrong commit, is at
// most alpha. Skips can make the search need more decisions than planned; the bound then
// reached (decisions x per-step alpha) is reported, not hidden (FamilyBound).
#pragma once

#include <cstddef>      // size_t
#include <optional>     // no next commit
#include <set>          // skipped commits
#include <string>       // texts
#include <string_view>  // names
#include <vector>       // commits in doubt

#include "stats/ab_stats.h"
#include "util/result.h"

namespace vouch::bisect {

enum class StepVerdict {
  kLikeGood,   // the commit performs as the good end
  kLikeBad,    // as the bad end
  kUndecided,  // the A/B could not tell at the step's level: the search stops
  kSkipped,    // could not be tested (build or benchmark failed): another commit is tried
};
std::string_view ToString(StepVerdict v);  // "like good", "like bad", "undecided", "skipped"
std::optional<StepVerdict> StepVerdictFromString(std::string_view s);

// The step's A/B is the good end (arm A) against the commit (arm B), its noise band at half
// the regression the confirmation measured (MidpointBand): the commit's interval inside the
// band is like good, wholly beyond it on the slow side like bad. Faster than the good end by
// more than half the regression is not what a regression search can place: undecided.
StepVerdict ClassifyStep(AbVerdict commit_vs_good);
// The confirmation (good end against the bad end, with the smallest effect of interest as its
// band): `B slower` confirms the regression (kLikeBad); anything else does not.
StepVerdict ClassifyConfirmation(AbVerdict bad_vs_good);
// Half of the regression the confirmation measured (|mean log ratio| / 2), as a band.
NoiseBand MidpointBand(double confirmation_mean_log);

struct FamilyPlan {
  std::size_t planned_decisions = 0;  // ceil(log2(N - 1)) + 1
  double alpha = 0.05;                // family-wise
  double per_step_alpha = 0;          // alpha / planned_decisions (Bonferroni)
  double per_step_confidence() const { return 1 - per_step_alpha; }
};
// nullopt unless commits >= 2 and 0 < alpha < 1.
std::optional<FamilyPlan> PlanFamily(std::size_t commits, double alpha);
// The bound on the family-wise error actually held after DECISIONS decided steps:
// min(1, decisions x per-step alpha); equals alpha when the plan was kept.
double FamilyBound(const FamilyPlan& plan, std::size_t decisions);

class Search {
 public:
  enum class State {
    kConfirming,    // the ends are to be told apart first
    kSearching,     // Next() is a commit inside the range
    kFound,         // FirstBad() is the first commit like bad
    kUndecided,     // a step was undecided: the first bad commit is in Doubt()
    kOnlySkipped,   // every commit left untested was skipped: it is in Doubt()
    kEndsNotApart,  // the confirmation did not show the bad end slower: nothing to search
  };
  // COMMITS >= 2 (checked by the caller: PlanFamily).
  explicit Search(std::size_t commits);

  State state() const { return state_; }
  // The commit to test next; nullopt once the search has ended.
  std::optional<std::size_t> Next() const;
  // Feeds the result for commit I, which must be Next() (so a record replayed into a fresh
  // search either reproduces it exactly or is refused).
  Status Feed(std::size_t i, StepVerdict v);

  std::size_t last_good() const { return lo_; }  // the last commit known like good
  std::size_t first_bad() const { return hi_; }  // the first commit known like bad
  // The commits the first bad one may still be: last_good()+1 .. first_bad().
  std::vector<std::size_t> Doubt() const;
  std::size_t decisions() const { return decisions_; }  // steps that were decided
  std::size_t steps() const { return steps_; }          // every step fed, skips included
  const std::set<std::size_t>& skipped() const { return skipped_; }
  std::optional<std::size_t> undecided_at() const { return undecided_at_; }

 private:
  void Advance();  // from kSearching: found, only skipped, or a next commit
  std::size_t n_;
  std::size_t lo_ = 0, hi_;
  State state_ = State::kConfirming;
  std::set<std::size_t> skipped_;
  std::optional<std::size_t> next_, undecided_at_;
  std::size_t decisions_ = 0, steps_ = 0;
};
std::string_view ToString(Search::State s);  // "confirming", "searching", "found", ...

}  // namespace vouch::bisect
