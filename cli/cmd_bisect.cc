// vouch bisect: which commit of a range made the benchmark slower? Each step builds one commit
// in its own git worktree and runs vouch's paired, sequential A/B of the good end against it
// (src/ab/protocol.h), at a per-step level that holds the family-wise error of the whole
// search (src/bisect/search.h); the search itself is pure and fed step by step. The record
// (bisect.json) is written after every step, and an interrupted bisect given the same --out
// resumes from it. Each step's A/B is a full vouch record under steps/.
#include <fmt/format.h>

#include <filesystem>
#include <random>

#include "ab/protocol.h"
#include "ab_verdict.h"
#include "bisect/record.h"
#include "bisect/search.h"
#include "bisect_git.h"
#include "leg/executor.h"
#include "run_common.h"
#include "util/fs.h"
#include "util/json_io.h"
#include "verdict/ab.h"
#include "verdict/ab_record.h"

namespace vouch::cli {
namespace {

namespace fs = std::filesystem;
using bisect::BisectRecord;
using bisect::BisectStep;
using bisect::Search;
using bisect::StepVerdict;

struct BisectArgs {
  std::string good, bad, build, git_repo, markdown, headline;
  double alpha = 0.05, min_effect_pct = 1;
  int max_pairs = 96;
  std::optional<std::uint64_t> seed;
  bool keep_worktrees = false, not_on_gpu = false;
};

// Where a commit's build and worktree go.
struct Layout {
  std::string dir, scratch;
  std::string Worktree(const std::string& sha) const {
    return dir + "/worktrees/" + sha.substr(0, 12);
  }
  std::string BuildLog(const std::string& sha) const {
    return dir + "/builds/" + sha.substr(0, 12) + ".log";
  }
};

std::string ShortSha(const std::string& sha) { return sha.substr(0, 12); }

// The step's A/B figures, for the record and the summary.
nlohmann::json AbFigures(const AbOutcome& out) {
  nlohmann::json j;
  j["verdict"] = std::string(ToString(out.decision.verdict));
  j["pairs"] = out.decision.valid_pairs;
  j["band_pct"] = out.decision.band.Percent();
  j["looks"] = out.looks;
  if (const auto& iv = out.decision.interval) {
    j["ratio"] = iv->Ratio();
    j["ratio_lo"] = iv->RatioLo();
    j["ratio_hi"] = iv->RatioHi();
    j["confidence"] = iv->confidence;
    j["mean_log"] = iv->mean_log;
  }
  j["headline"] = out.headline;
  j["reasons"] = out.decision.reasons;
  return j;
}

class Bisector {
 public:
  Bisector(const GlobalOptions& g, RunFlags& f, const BisectArgs& a, Layout layout,
           BisectRecord& rec, const bisect::FamilyPlan& plan)
      : g_(g), f_(f), a_(a), lay_(std::move(layout)), rec_(rec), plan_(plan) {}

  // Runs steps until the search ends; returns -1, or an exit code when it must stop.
  int Run(Search& search);

 private:
  void Say(const std::string& m) const { fmt::print(stderr, "vouch bisect: {}\n", m); }
  // Builds commit I in its worktree (once per process); false with WHY when it did not build.
  bool Build(std::size_t i, std::string* why, nlohmann::json* evidence);
  // One A/B step of the good end against commit I; -1 or an exit code.
  int Step(Search& search, std::size_t i);
  void Save() const;

  const GlobalOptions& g_;
  RunFlags& f_;
  const BisectArgs& a_;
  Layout lay_;
  BisectRecord& rec_;
  const bisect::FamilyPlan& plan_;
  std::set<std::size_t> built_;
};

void Bisector::Save() const {
  auto search = bisect::Replay(rec_);
  if (!search) return;
  (void)WriteFileAtomic(lay_.dir + "/bisect.json",
                        DumpJson(bisect::BisectJson(rec_, *search, plan_), 2) + "\n");
  (void)WriteFileAtomic(lay_.dir + "/bisect.md",
                        bisect::RenderBisectMarkdown(rec_, *search, plan_));
}

bool Bisector::Build(std::size_t i, std::string* why, nlohmann::json* evidence) {
  if (built_.count(i)) return true;
  const std::string& sha = rec_.commits[i].sha;
  const std::string wt = lay_.Worktree(sha);
  if (auto s = AddWorktree(rec_.repo, wt, sha, lay_.scratch); !s) {
    *why = "no worktree: " + s.error().message;
    return false;
  }
  if (!rec_.build.empty()) {
    Say(fmt::format("building {} ({})", ShortSha(sha), rec_.commits[i].subject));
    auto c = RunCaptured({rec_.build}, wt, lay_.scratch, lay_.BuildLog(sha), true);
    const std::string log = fs::relative(lay_.BuildLog(sha), lay_.dir).string();
    if (!c) {
      *why = "the build could not start: " + c.error().message;
      return false;
    }
    (*evidence)["build"] = {
        {"ok", c->ok}, {"log", log}, {"seconds", c->seconds}, {"result", c->described}};
    if (c->interrupted) {
      *why = "interrupted";
      return false;
    }
    if (!c->ok) {
      *why = fmt::format("the build failed ({}; log {})", c->described, log);
      return false;
    }
  }
  built_.insert(i);
  return true;
}

int Bisector::Step(Search& search, std::size_t i) {
  const bool confirm = search.state() == Search::State::kConfirming;
  const auto& c = rec_.commits[i];
  BisectStep st;
  st.kind = confirm ? "confirm" : "step";
  st.index = i;
  st.commit = c.sha;
  auto record_step = [&](StepVerdict v, std::string reason) {
    st.verdict = v;
    st.reason = std::move(reason);
    (void)search.Feed(i, v);
    rec_.steps.push_back(st);
    Save();
    Say(fmt::format("step {} ({}): {} ({}): {} - {}", rec_.steps.size(), st.kind, ShortSha(c.sha),
                    c.subject, ToString(v), st.reason));
  };
  // The commit's worktree goes when the step ends, whatever its verdict (the good end's stays).
  struct Drop {
    Bisector& b;
    std::size_t i;
    ~Drop() {
      if (b.a_.keep_worktrees || i == 0) return;
      RemoveWorktree(b.rec_.repo, b.lay_.Worktree(b.rec_.commits[i].sha), b.lay_.scratch);
      b.built_.erase(i);
    }
  } drop{*this, i};
  std::string why;
  if (!Build(0, &why, &st.evidence)) {
    if (why == "interrupted") return InterruptExitCode();
    Say(fmt::format("the good end {} cannot be measured: {}", ShortSha(rec_.commits[0].sha), why));
    return kExitError;
  }
  st.evidence.erase("build");
  if (!Build(i, &why, &st.evidence)) {
    if (why == "interrupted") return InterruptExitCode();
    if (confirm) {
      Say(fmt::format("the bad end {} cannot be measured: {}", ShortSha(c.sha), why));
      return kExitError;
    }
    record_step(StepVerdict::kSkipped, why);
    return -1;
  }

  // The A/B: the good end (A) against the commit (B), each leg in its own worktree.
  AbPlan plan;
  plan.a.name = "good";
  plan.b.name = ShortSha(c.sha);
  plan.a.argv = plan.b.argv = rec_.bench;
  auto env = ParseEnv(f_.env);
  if (env) plan.a.env = plan.b.env = *env;
  plan.a.env.emplace_back("VOUCH_BISECT_COMMIT", rec_.commits[0].sha);
  plan.b.env.emplace_back("VOUCH_BISECT_COMMIT", c.sha);
  plan.a.cwd = lay_.Worktree(rec_.commits[0].sha);
  plan.b.cwd = lay_.Worktree(c.sha);
  plan.a.shell = plan.b.shell = f_.shell;
  plan.warmup = 1;
  plan.max_pairs = a_.max_pairs;
  plan.confidence = plan_.per_step_confidence();
  plan.headline = a_.headline;
  plan.seed = a_.seed ? *a_.seed + rec_.steps.size() : std::random_device{}();
  if (confirm) {
    plan.band = *NoiseBandFromPercent(rec_.min_effect_pct);
  } else {
    plan.band = bisect::MidpointBand(rec_.steps.front().evidence["ab"].value("mean_log", 0.0));
  }
  const std::string step_dir =
      fmt::format("{}/steps/{:02}-{}", lay_.dir, rec_.steps.size() + 1, ShortSha(c.sha));
  st.evidence["dir"] = fs::relative(step_dir, lay_.dir).string();
  st.evidence["seed"] = plan.seed;
  f_.out = step_dir;
  f_.overwrite = true;  // a step an interruption cut short is run again from its start
  RunContext ctx;
  std::vector<std::string> argv = {"bisect-step", rec_.good_rev, c.sha};
  if (int rc = PrepareRun(g_, f_, {plan.a, plan.b}, "ab", argv, &ctx); rc >= 0) return rc;
  plan.policy = ctx.record.policy;
  ctx.record.planned_legs = AbPlannedLegs(plan);
  ctx.planned_is_max = true;
  ctx.record.extra["seed"] = plan.seed;
  ctx.record.extra["ab_plan"] = verdict::AbPlanJson(plan, {a_.not_on_gpu, false}, {}, {});
  ctx.record.extra["bisect_step"] = {{"commit", c.sha}, {"kind", st.kind}};
  LegRunner run_leg = [&](const Arm& arm, const std::string& role) {
    size_t before = ctx.record.legs.size();
    bool go = RunOneLeg(ctx, arm, role);
    LegStep ls;
    if (ctx.record.legs.size() > before) ls.leg = &ctx.record.legs.back();
    ls.stop = !go;
    return ls;
  };
  AbOutcome out = RunAbProtocol(plan, run_leg);
  if (out.end == AbOutcome::End::kDesignFailed) return Say(out.error), kExitError;
  if (out.end == AbOutcome::End::kHeadlineRefused) {
    ctx.record.status = "failed";
    (void)FinishRun(ctx, false);
    Say(fmt::format("refused: {} (give --headline NAME)", out.error));
    return kExitUsage;
  }
  // The verdict's rules (GPU identity of the kernels under --gpu-trace, modes, host noise), as
  // vouch ab applies them: src/verdict/ab.h.
  verdict::AbFinal fin =
      verdict::FinishAb(plan, out, {a_.not_on_gpu, false}, ctx.record.caveats);
  ctx.record.caveats = fin.caveats;
  if (fin.gpu.gpu) st.evidence["gpu"] = fin.verdict["gpu"];
  ctx.record.extra["verdict"] = fin.verdict;
  const int finish = FinishRun(ctx, false);
  st.evidence["ab"] = AbFigures(out);
  if (ctx.record.status == "interrupted" || Interrupted()) {
    Say(fmt::format("interrupted at step {}; run the same command again to resume from {}",
                    rec_.steps.size() + 1, lay_.dir + "/bisect.json"));
    return finish != kExitOk ? finish : InterruptExitCode();
  }
  if (!ctx.stopped_on_failure.empty()) {
    std::string reason = "its benchmark failed: " + ctx.stopped_on_failure;
    if (confirm || out.legs.empty() || out.legs.back().arm == plan.a.name) {
      Say(fmt::format("{} ({}) - the good or bad end must run", reason,
                      out.legs.empty() ? "no leg" : out.legs.back().arm));
      return kExitCommandFailed;
    }
    record_step(StepVerdict::kSkipped, reason);
    return -1;
  }
  const StepVerdict v = confirm ? bisect::ClassifyConfirmation(out.decision.verdict)
                                : bisect::ClassifyStep(out.decision.verdict);
  std::string reason = std::string(ToString(out.decision.verdict));
  if (out.decision.interval)
    reason += fmt::format(", B/A {:.4f} [{:.4f}, {:.4f}] after {} pairs, band {:.2f} %",
                          out.decision.interval->Ratio(), out.decision.interval->RatioLo(),
                          out.decision.interval->RatioHi(), out.decision.valid_pairs,
                          out.decision.band.Percent());
  if (v == StepVerdict::kUndecided && !out.decision.reasons.empty())
    reason += "; " + out.decision.reasons.front();
  record_step(v, reason);
  return -1;
}

int Bisector::Run(Search& search) {
  while (auto next = search.Next()) {
    if (Interrupted()) return InterruptExitCode();
    if (int rc = Step(search, *next); rc >= 0) {
      rec_.status = rc == InterruptExitCode() ? "interrupted" : "stopped";
      Save();
      return rc;
    }
  }
  return -1;
}

}  // namespace

int CmdBisect(const GlobalOptions& g, std::vector<std::string> args) {
  auto [opts, cmd] = SplitAtDoubleDash(args);
  CLI::App app{
      "Which commit made the benchmark slower? Each step builds a commit in a git worktree and "
      "runs a paired sequential A/B of the good end against it; the family-wise error of the "
      "whole search is held at --alpha (Bonferroni over the planned steps). Resume an interrupted "
      "bisect with the same command and --out.\n"
      "Exit: 0 first bad commit found, 2 undecided (the range in doubt is named), 3 the ends are "
      "not told apart, 1 error",
      "bisect"};
  BisectArgs a;
  RunFlags f;
  app.add_option("--good", a.good, "a revision that is fast (required)")->required();
  app.add_option("--bad", a.bad, "a later revision that is slow (required)")->required();
  app.add_option("--build", a.build,
                 "shell command that builds a commit, run in its worktree (a failure skips it)");
  app.add_option("--git-repo", a.git_repo, "the repository (default: the current directory's)");
  app.add_option("--alpha", a.alpha, "family-wise error of the whole search (0.05)")
      ->check(CLI::Range(1e-6, 0.5));
  app.add_option("--max-pairs", a.max_pairs, "most pairs of one step's sequential A/B (96)")
      ->check(CLI::Range(4, 1000));
  app.add_option("--min-effect", a.min_effect_pct,
                 "the bad end must be slower than the good by more than this, percent (1)")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--headline", a.headline, "the metric bisected (default: the only user metric)");
  app.add_option("--seed", a.seed, "seed of the block orientations (default: random, recorded)");
  app.add_flag("--keep-worktrees", a.keep_worktrees, "keep every commit's worktree and build");
  app.add_flag("--change-not-on-gpu", a.not_on_gpu,
               "with --gpu-trace: identical kernels may still differ in time (host change)");
  AddMarkdownOption(app, a.markdown, "the summary");
  f.Add(app, false);
  if (int rc = Parse(app, opts); rc >= 0) return rc;
  auto say = [](const std::string& m) { fmt::print(stderr, "vouch bisect: {}\n", m); };
  if (cmd.empty())
    return say("no benchmark: vouch bisect --good REV --bad REV -- CMD ARGS"), kExitUsage;
  (void)InstallInterruptHandler();

  Layout lay;
  lay.dir = f.out.empty() ? DefaultRunDir("bisect") : f.out;
  std::error_code ec;
  lay.dir = fs::absolute(lay.dir, ec).lexically_normal().string();
  lay.scratch = lay.dir + "/tmp";
  for (const auto* d : {&lay.dir, &lay.scratch})
    if (auto s = MakeDirs(*d); !s) return say(s.error().message), kExitError;
  (void)MakeDirs(lay.dir + "/builds");

  BisectRecord asked;
  auto top = GitTopLevel(a.git_repo.empty() ? CurrentDirOrEmpty() : a.git_repo, lay.scratch);
  if (!top) return say(top.error().message), kExitUsage;
  asked.repo = *top;
  asked.good_rev = a.good;
  asked.bad_rev = a.bad;
  auto good = GitCommit(asked.repo, a.good, lay.scratch);
  auto bad = GitCommit(asked.repo, a.bad, lay.scratch);
  if (!good || !bad) return say((!good ? good : bad).error().message), kExitUsage;
  auto range = GitRange(asked.repo, *good, *bad, lay.scratch);
  if (!range) return say(range.error().message), kExitUsage;
  asked.commits = *range;
  asked.bench = cmd;
  asked.build = a.build;
  asked.alpha = a.alpha;
  asked.max_pairs = static_cast<std::size_t>(a.max_pairs);
  asked.min_effect_pct = a.min_effect_pct;
  auto plan = bisect::PlanFamily(asked.commits.size(), a.alpha);
  if (!plan) return say("no plan for this range"), kExitUsage;

  // A record in --out: resume it.
  BisectRecord rec = asked;
  const std::string record_path = lay.dir + "/bisect.json";
  if (fs::exists(record_path, ec)) {
    auto j = ReadJsonFile(record_path, 64ull << 20);
    if (!j) return say(j.error().message), kExitError;
    auto old = bisect::BisectRecordFromJson(*j, record_path);
    if (!old) return say(old.error().message), kExitError;
    if (auto why = bisect::ResumeMismatch(*old, asked); !why.empty())
      return say(fmt::format("{} holds another bisect ({}); give another --out", lay.dir, why)),
             kExitUsage;
    rec.steps = old->steps;
  }
  auto search = bisect::Replay(rec);
  if (!search) return say(record_path + ": " + search.error().message), kExitError;
  if (!rec.steps.empty())
    say(fmt::format("resuming from {}: {} step(s) done, {}", record_path, rec.steps.size(),
                    bisect::Conclusion(rec, *search)));
  say(fmt::format(
      "{} commits after {}; at most {} decisions planned, each at alpha {:.4f} ({:.0f} % "
      "family-wise, Bonferroni); record {}",
      rec.commits.size() - 1, ShortSha(rec.commits[0].sha), plan->planned_decisions,
      plan->per_step_alpha, 100 * a.alpha, record_path));
  rec.status = "running";

  Bisector b(g, f, a, lay, rec, *plan);
  const int rc = b.Run(*search);
  if (!a.keep_worktrees) {
    RemoveWorktree(rec.repo, lay.Worktree(rec.commits[0].sha), lay.scratch);
    (void)RunCaptured({"git", "-C", rec.repo, "worktree", "prune"}, "", lay.scratch);
  }
  if (rc >= 0) return rc;
  rec.status = "complete";
  (void)WriteFileAtomic(record_path, DumpJson(bisect::BisectJson(rec, *search, *plan), 2) + "\n");
  (void)WriteFileAtomic(lay.dir + "/bisect.md", bisect::RenderBisectMarkdown(rec, *search, *plan));
  if (a.markdown == "-")
    fmt::print("{}", bisect::RenderBisectMarkdown(rec, *search, *plan));
  else
    fmt::print("{}", bisect::RenderBisectText(rec, *search, *plan));
  if (!WriteMarkdownFile(
          a.markdown, [&] { return bisect::RenderBisectMarkdown(rec, *search, *plan); }, "bisect"))
    return kExitError;
  switch (search->state()) {
    case Search::State::kFound:
      return kExitOk;
    case Search::State::kEndsNotApart:
      return 3;
    default:
      return 2;
  }
}

}  // namespace vouch::cli
