#include "ab/protocol.h"

#include <fmt/format.h>

#include <random>
#include <set>
#include <utility>

#include "clock/window.h"
#include "metrics/headline.h"
#include "metrics/reserved.h"

namespace vouch {

int AbMeasuredBlocks(const AbPlan& plan) {
  return plan.max_pairs ? (*plan.max_pairs + 1) / 2 : (plan.pairs + 1) / 2;
}
int AbCalibrationBlocks(const AbPlan& plan) { return (plan.calibrate + 1) / 2; }
int AbPlannedLegs(const AbPlan& plan) {
  return 2 * plan.warmup + 4 * AbCalibrationBlocks(plan) + 4 * AbMeasuredBlocks(plan);
}

namespace {

MetricDirection Direction(Better b) {
  return b == Better::kLower ? MetricDirection::kLowerIsBetter : MetricDirection::kHigherIsBetter;
}

// Over several GPUs, the slowest busy GPU's clock paces the leg (clock/window.h).
double MeanClock(const LegRecord& l) { return PacingClockMean(l.window).value_or(0); }

// The pair of legs IA (arm A's side) and IB: both legs valid, the headline in both, and
// every pairing rule holding (or waived).
AbPairResult Judge(const std::vector<LegRecord>& legs, int ia, int ib, const std::string& headline,
                   const Policy& policy, bool cross_boot) {
  const auto& la = legs[static_cast<size_t>(ia)];
  const auto& lb = legs[static_cast<size_t>(ib)];
  AbPairResult p;
  p.a_leg = ia;
  p.b_leg = ib;
  std::vector<std::string> why;
  // Messages count legs from 1, as the progress lines do; a_leg/b_leg stay indices.
  const int na = ia + 1, nb = ib + 1;
  if (!la.valid)
    why.push_back(fmt::format("leg {} (A) invalid: {}", na, fmt::join(la.reasons, "; ")));
  if (!lb.valid)
    why.push_back(fmt::format("leg {} (B) invalid: {}", nb, fmt::join(lb.reasons, "; ")));
  const Metric* ma = FindMetric(la.metrics, headline);
  const Metric* mb = FindMetric(lb.metrics, headline);
  if (la.valid && !ma) why.push_back(fmt::format("leg {} has no '{}'", na, headline));
  if (lb.valid && !mb) why.push_back(fmt::format("leg {} has no '{}'", nb, headline));
  if (why.empty()) {
    auto pv = PairWindows(la.window, lb.window, policy, cross_boot);
    if (!pv.paired)
      for (const auto& r : pv.rules)
        if (!r.pass && !r.waived)
          why.push_back(fmt::format("pairing rule '{}' failed: A {} / B {}", r.rule, r.a, r.b));
  }
  if (!why.empty()) {
    p.reason = fmt::format("pair of legs {} and {}: {}", na, nb, fmt::join(why, "; "));
    return p;
  }
  p.valid = true;
  p.a = ma->value;
  p.b = mb->value;
  p.clock_a = MeanClock(la);
  p.clock_b = MeanClock(lb);
  return p;
}

ArmClock ClockOf(const std::vector<LegRecord>& legs, const std::string& arm) {
  std::vector<double> med, mean;
  for (const auto& l : legs)
    if (l.arm == arm && l.role == "measured" && l.valid && PacingClockMedian(l.window) &&
        PacingClockMean(l.window)) {
      med.push_back(*PacingClockMedian(l.window));
      mean.push_back(*PacingClockMean(l.window));
    }
  double m1 = 0, m2 = 0;
  for (double x : med) m1 += x;
  for (double x : mean) m2 += x;
  return {med.empty() ? 0 : m1 / static_cast<double>(med.size()),
          mean.empty() ? 0 : m2 / static_cast<double>(mean.size())};
}

// The protocol's state while it runs: the legs so far and the orientation generator.
class Protocol {
 public:
  Protocol(const AbPlan& plan, const LegRunner& run_leg, AbOutcome& out)
      : plan_(plan), run_leg_(run_leg), out_(out), rng_(plan.seed) {
    out_.headline = plan.headline;
    if (!plan.headline.empty()) out_.headline_reason = "given with --headline";
  }

  // Runs one leg; false when the protocol must stop.
  bool Leg(const Arm& arm, const char* role) {
    LegStep step = run_leg_(arm, role);
    if (step.leg) out_.legs.push_back(*step.leg);
    if (step.leg && !CheckHeadline(out_.legs.back())) return false;
    return step.leg && !step.stop;
  }

  bool headline_refused() const { return !refusal_.empty(); }
  const std::string& refusal() const { return refusal_; }

  // One block: two pairs in ABBA or BAAB order. False when it must stop (then unjudged).
  bool Block(const Arm& x, const Arm& y, std::vector<AbPairResult>& pairs, const char* role) {
    bool abba = (rng_() & 1) == 0;
    out_.orientations.push_back(abba ? "ABBA" : "BAAB");
    const Arm* order[4] = {&x, &y, &y, &x};
    if (!abba) order[0] = &y, order[1] = &x, order[2] = &x, order[3] = &y;
    int first = static_cast<int>(out_.legs.size());
    for (const Arm* arm : order)
      if (!Leg(*arm, role)) return false;
    for (int k = first; k < first + 4; ++k) DetectHeadline(out_.legs[static_cast<size_t>(k)]);
    int ia1 = abba ? first : first + 1, ib1 = abba ? first + 1 : first;
    int ia2 = abba ? first + 3 : first + 2, ib2 = abba ? first + 2 : first + 3;
    pairs.push_back(
        Judge(out_.legs, ia1, ib1, out_.headline, plan_.policy, plan_.allow_cross_boot));
    pairs.push_back(
        Judge(out_.legs, ia2, ib2, out_.headline, plan_.policy, plan_.allow_cross_boot));
    return true;
  }

 private:
  // The first leg of arm A and of arm B: can the verdict have a headline? False (with
  // refusal_ set) when it cannot, so that no further leg is run for a verdict that would be
  // refused: no --headline and the leg reports several user metrics (or none), or a
  // --headline the leg does not report. Only a leg that exited 0 is judged.
  bool CheckHeadline(const LegRecord& l) {
    if (l.arm != plan_.a.name && l.arm != plan_.b.name) return true;  // A' (calibration)
    // A leg that failed says nothing of what the command reports: the next one is checked.
    const bool ran = l.result.exit_code && *l.result.exit_code == 0 && !l.result.timed_out;
    if (!ran || !checked_.insert(l.arm).second) return true;
    std::vector<std::string> user = UserMetrics(l);
    const std::string which = fmt::format("leg {} ({} {})", l.index + 1, l.arm, l.role);
    const std::string names =
        user.empty() ? std::string("none of its own")
                     : fmt::format("{} ({})", fmt::join(user, ", "),
                                   user.size() == 1 ? "one user metric"
                                                    : fmt::format("{} user metrics", user.size()));
    if (!plan_.headline.empty()) {
      if (FindMetric(l.metrics, plan_.headline)) return true;
      refusal_ = fmt::format(
          "{} has no metric '{}' (--headline); it reported {}: give --headline with one of "
          "them{}",
          which, plan_.headline, names, user.empty() ? " (see --metric)" : "");
      return false;
    }
    DetectHeadline(l);
    if (!out_.headline.empty()) return true;
    if (user.size() >= 2) {
      refusal_ = fmt::format(
          "{} reported {}, and the verdict is about one: give --headline NAME (one of {})", which,
          names, fmt::join(user, ", "));
      return false;
    }
    if (user.empty()) {
      refusal_ = fmt::format(
          "{} reported no metric of its own, and the verdict needs a headline: report one "
          "(--metric, or a line to $VOUCH_METRICS) or name a built-in with --headline (e.g. "
          "vouch.wall_s)",
          which);
      return false;
    }
    return true;
  }

  static std::vector<std::string> UserMetrics(const LegRecord& l) {
    std::vector<std::string> user;
    for (const auto& m : l.metrics)
      if (!m.text && !IsReservedMetricName(m.name)) user.push_back(m.name);
    return user;
  }

  // Without --headline, the first leg with exactly one user metric (not text, not vouch.*/gpu.*)
  // names it, once.
  // Several: a known tool's own headline (nvbench GPU time, llama-bench tg tokens/s, ...).
  void DetectHeadline(const LegRecord& l) {
    if (!out_.headline.empty()) return;
    std::vector<std::string> user = UserMetrics(l);
    if (user.size() == 1) {
      out_.headline = user[0];
      out_.headline_reason = "the only metric the leg reported";
    } else if (auto h = ChooseHeadline(l.metrics); h && h->by_tool) {
      out_.headline = h->name;
      out_.headline_reason = h->reason;
    }
  }

  const AbPlan& plan_;
  const LegRunner& run_leg_;
  AbOutcome& out_;
  std::mt19937_64 rng_;
  std::set<std::string> checked_;  // arms whose first leg CheckHeadline has seen
  std::string refusal_;
};

}  // namespace

AbOutcome RunAbProtocol(const AbPlan& plan, const LegRunner& run_leg, const LookObserver& on_look,
                        const BlockObserver& on_block) {
  AbOutcome out;
  Protocol proto(plan, run_leg, out);
  const int blocks = AbMeasuredBlocks(plan);
  const int cal_blocks = AbCalibrationBlocks(plan);
  out.sequential = plan.max_pairs.has_value();
  NoiseBand band = plan.calibrate > 0 ? NoiseBand{} : plan.band;

  bool go = true;
  for (int i = 0; go && i < plan.warmup; ++i)
    go = proto.Leg(plan.a, "warmup") && proto.Leg(plan.b, "warmup");
  // A/A calibration with arm A on both sides (same protocol).
  Arm a2 = plan.a;
  a2.name = plan.a.name + "'";
  for (int i = 0; go && i < cal_blocks; ++i)
    go = proto.Block(plan.a, a2, out.calibration, "calibration");
  if (go && plan.calibrate > 0) {
    std::vector<double> aa;
    for (const auto& p : out.calibration)
      if (p.valid) {
        auto d = PairLogRatio(p.a, p.b, MetricDirection::kHigherIsBetter);
        if (d) aa.push_back(*d);
      }
    auto nb = NoiseBandFromCalibration(aa);
    if (!nb) {
      out.end = AbOutcome::End::kCalibrationFailed;
      out.error = fmt::format("calibration gave {} valid A/A pairs of {}: too few for a band",
                              aa.size(), out.calibration.size());
      return out;
    }
    band = *nb;
  }

  std::optional<SequentialDesign> design;
  AbOptions ab_opts;
  ab_opts.confidence = plan.confidence;
  if (plan.max_pairs) {
    SequentialPlan sp;
    sp.max_pairs = static_cast<size_t>(blocks * 2);
    sp.confidence = plan.confidence;
    design = MakeSequentialDesign(sp);
    if (!design) {
      out.end = AbOutcome::End::kDesignFailed;
      out.error = "cannot build the sequential design";
      return out;
    }
  }
  if (proto.headline_refused()) {
    out.end = AbOutcome::End::kHeadlineRefused;
    out.error = proto.refusal();
    return out;
  }
  bool stopped_by_runner = !go;
  std::vector<AbPairResult>& res = out.pairs;
  for (int i = 0; go && i < blocks; ++i) {
    go = proto.Block(plan.a, plan.b, res, "measured");
    if (!go) stopped_by_runner = true;
    if (go && on_block) {
      for (const auto& p : res)
        if (p.valid && p.a_leg >= 0)
          if (const Metric* m =
                  FindMetric(out.legs[static_cast<size_t>(p.a_leg)].metrics, out.headline))
            out.better = m->better;
      on_block(out);
    }
    if (!go || !design || out.headline.empty()) continue;
    size_t done_pairs = res.size();
    while (out.looks < design->look_pairs.size() && done_pairs >= design->look_pairs[out.looks]) {
      ++out.looks;
      std::vector<double> d;
      std::vector<std::string> bad;
      for (const auto& p : res) {
        if (!p.valid) {
          bad.push_back(p.reason);
          continue;
        }
        const Metric* m = FindMetric(out.legs[static_cast<size_t>(p.a_leg)].metrics, out.headline);
        auto x = PairLogRatio(p.a, p.b, Direction(m->better));
        if (x) d.push_back(*x);
      }
      out.last_step = SequentialLook(d, out.looks, *design, band, bad);
      if (on_look) on_look(out.looks, done_pairs, out.last_step);
      if (out.last_step && out.last_step->stop) go = false;
    }
    if (out.last_step && out.last_step->stop) break;
  }
  if (proto.headline_refused()) {
    out.end = AbOutcome::End::kHeadlineRefused;
    out.error = proto.refusal();
    return out;
  }
  out.end = stopped_by_runner ? AbOutcome::End::kStopped : AbOutcome::End::kCompleted;
  out.band = band;

  // The verdict, plain and clock-normalised.
  std::vector<AbPair> used;
  for (const auto& p : res) {
    if (!p.valid) {
      out.refused.push_back(p.reason);
      continue;
    }
    used.push_back({p.a, p.b, p.clock_a, p.clock_b});
    const Metric* m = FindMetric(out.legs[static_cast<size_t>(p.a_leg)].metrics, out.headline);
    if (m) out.better = m->better;
  }
  out.pairs_used = used.size();
  std::vector<std::string> setup_reasons = out.refused;
  if (out.headline.empty())
    setup_reasons.push_back("no headline metric: give --headline NAME (and --metric)");
  if (out.better == Better::kNone)
    setup_reasons.push_back(
        fmt::format("metric '{}' has no direction (higher or lower is better)", out.headline));
  // A sequential verdict is at its look's corrected level (98 %, not 95 %): the
  // clock-normalised interval beside it is made at the same level, so the two read alike.
  if (design && out.last_step) ab_opts.confidence = out.last_step->nominal_confidence;
  out.comparison = CompareArms(used, Direction(out.better), band, ab_opts, setup_reasons);
  out.decision = out.comparison.plain;
  if (design && out.last_step) {
    out.decision = out.last_step->decision;  // the sequential look's verdict at its corrected level
  }
  if (out.headline.empty() || out.better == Better::kNone)
    out.decision.verdict = AbVerdict::kRefused;

  out.clock_a = ClockOf(out.legs, plan.a.name);
  out.clock_b = ClockOf(out.legs, plan.b.name);
  return out;
}

}  // namespace vouch
