#include "bisect/search.h"

#include <cmath>

namespace vouch::bisect {

std::string_view ToString(StepVerdict v) {
  switch (v) {
    case StepVerdict::kLikeGood:
      return "like good";
    case StepVerdict::kLikeBad:
      return "like bad";
    case StepVerdict::kUndecided:
      return "undecided";
    case StepVerdict::kSkipped:
      return "skipped";
  }
  return "?";
}

std::optional<StepVerdict> StepVerdictFromString(std::string_view s) {
  for (auto v : {StepVerdict::kLikeGood, StepVerdict::kLikeBad, StepVerdict::kUndecided,
                 StepVerdict::kSkipped})
    if (ToString(v) == s) return v;
  return std::nullopt;
}

std::string_view ToString(Search::State s) {
  switch (s) {
    case Search::State::kConfirming:
      return "confirming";
    case Search::State::kSearching:
      return "searching";
    case Search::State::kFound:
      return "found";
    case Search::State::kUndecided:
      return "undecided";
    case Search::State::kOnlySkipped:
      return "only skipped commits left";
    case Search::State::kEndsNotApart:
      return "ends not told apart";
  }
  return "?";
}

StepVerdict ClassifyStep(AbVerdict commit_vs_good) {
  switch (commit_vs_good) {
    case AbVerdict::kNoChange:
      return StepVerdict::kLikeGood;
    case AbVerdict::kBSlower:
      return StepVerdict::kLikeBad;
    default:
      return StepVerdict::kUndecided;
  }
}

StepVerdict ClassifyConfirmation(AbVerdict bad_vs_good) {
  return bad_vs_good == AbVerdict::kBSlower ? StepVerdict::kLikeBad : StepVerdict::kUndecided;
}

NoiseBand MidpointBand(double confirmation_mean_log) {
  NoiseBand b;
  b.source = NoiseBand::Source::kGiven;
  b.half_width_log = std::abs(confirmation_mean_log) / 2;
  return b;
}

std::optional<FamilyPlan> PlanFamily(std::size_t commits, double alpha) {
  if (commits < 2 || !(alpha > 0 && alpha < 1)) return std::nullopt;
  FamilyPlan p;
  std::size_t halvings = 0;
  while ((std::size_t{1} << halvings) < commits - 1) ++halvings;  // ceil(log2(N - 1))
  p.planned_decisions = halvings + 1;
  p.alpha = alpha;
  p.per_step_alpha = alpha / static_cast<double>(p.planned_decisions);
  return p;
}

double FamilyBound(const FamilyPlan& plan, std::size_t decisions) {
  return std::min(1.0, static_cast<double>(decisions) * plan.per_step_alpha);
}

Search::Search(std::size_t commits) : n_(commits), hi_(commits - 1) { next_ = hi_; }

std::optional<std::size_t> Search::Next() const { return next_; }

std::vector<std::size_t> Search::Doubt() const {
  std::vector<std::size_t> d;
  for (std::size_t i = lo_ + 1; i <= hi_; ++i) d.push_back(i);
  return d;
}

void Search::Advance() {
  next_.reset();
  if (hi_ == lo_ + 1) {
    state_ = State::kFound;
    return;
  }
  // The untested commit nearest the middle; of two at the same distance, the lower.
  const std::size_t mid = lo_ + (hi_ - lo_) / 2;
  auto open = [&](std::size_t c) { return c > lo_ && c < hi_ && !skipped_.count(c); };
  for (std::size_t dist = 0; dist < hi_ - lo_; ++dist) {
    if (dist <= mid && open(mid - dist)) {
      next_ = mid - dist;
      return;
    }
    if (open(mid + dist)) {
      next_ = mid + dist;
      return;
    }
  }
  state_ = State::kOnlySkipped;
}

Status Search::Feed(std::size_t i, StepVerdict v) {
  if (!next_)
    return MakeError("the search has ended ({}): no commit is to be tested", ToString(state_));
  if (i != *next_)
    return MakeError("commit #{} was tested, but the search's next commit is #{}", i, *next_);
  ++steps_;
  if (state_ == State::kConfirming) {
    if (v == StepVerdict::kSkipped)
      return MakeError("the ends cannot be skipped: the bad end must be measured");
    ++decisions_;
    if (v != StepVerdict::kLikeBad) {
      state_ = State::kEndsNotApart;
      next_.reset();
      return OkStatus();
    }
    state_ = State::kSearching;
    Advance();
    return OkStatus();
  }
  switch (v) {
    case StepVerdict::kLikeGood:
      ++decisions_;
      lo_ = i;
      break;
    case StepVerdict::kLikeBad:
      ++decisions_;
      hi_ = i;
      break;
    case StepVerdict::kSkipped:
      skipped_.insert(i);
      break;
    case StepVerdict::kUndecided:
      ++decisions_;
      undecided_at_ = i;
      state_ = State::kUndecided;
      next_.reset();
      return OkStatus();
  }
  Advance();
  return OkStatus();
}

}  // namespace vouch::bisect
