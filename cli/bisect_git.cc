#include "bisect_git.h"

#include <fmt/format.h>

#include <filesystem>

#include "leg/executor.h"
#include "util/fs.h"
#include "util/strings.h"

namespace vouch::cli {

namespace fs = std::filesystem;

Result<Captured> RunCaptured(const std::vector<std::string>& argv, const std::string& cwd,
                             const std::string& scratch_dir, const std::string& log_path,
                             bool shell) {
  LegSpec spec;
  spec.argv = argv;
  spec.shell = shell;
  spec.cwd = cwd;
  spec.label = argv.empty() ? "" : argv.front();
  const std::string out_path = !log_path.empty() ? log_path : scratch_dir + "/captured.out";
  spec.stdout_path = out_path;
  spec.stderr_path = log_path.empty() ? scratch_dir + "/captured.err" : log_path;
  LocalExecutor ex;
  auto r = ex.Run(spec, nullptr);
  if (!r) return r.error();
  Captured c;
  c.ok = r->Succeeded();
  c.interrupted = r->interrupted;
  c.described = r->Describe();
  c.seconds = static_cast<double>(r->wall_ns) / 1e9;
  auto text = ReadFile(out_path, 16ull << 20);
  if (text) c.out = *text;
  if (!c.ok && log_path.empty())
    if (auto err = ReadFile(scratch_dir + "/captured.err", 4096); err && !err->empty())
      c.described += ": " + std::string(Trim(*err));
  return c;
}

namespace {

Result<std::string> Git(const std::string& repo, std::vector<std::string> args,
                        const std::string& scratch) {
  args.insert(args.begin(), {"git", "-C", repo});
  auto c = RunCaptured(args, "", scratch);
  if (!c) return c.error();
  if (!c->ok) return MakeError("{}: {}", fmt::format("{}", fmt::join(args, " ")), c->described);
  return c->out;
}

}  // namespace

Result<std::string> GitTopLevel(const std::string& dir, const std::string& scratch) {
  auto out = Git(dir, {"rev-parse", "--show-toplevel"}, scratch);
  if (!out) return MakeError("{} is not in a git repository ({})", dir, out.error().message);
  return std::string(Trim(*out));
}

Result<std::string> GitCommit(const std::string& repo, const std::string& rev,
                              const std::string& scratch) {
  auto out = Git(repo, {"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"},
                 scratch);
  if (!out) return MakeError("'{}' is not a commit of {}", rev, repo);
  return std::string(Trim(*out));
}

Result<std::vector<bisect::CommitInfo>> GitRange(const std::string& repo, const std::string& good,
                                                 const std::string& bad,
                                                 const std::string& scratch) {
  auto log =
      Git(repo, {"log", "--first-parent", "--reverse", "--format=%H %P%x09%s", good + ".." + bad},
          scratch);
  if (!log) return log.error();
  std::vector<bisect::CommitInfo> commits;
  auto subject = Git(repo, {"log", "-1", "--format=%s", good}, scratch);
  commits.push_back({good, subject ? std::string(Trim(*subject)) : ""});
  std::string prev = good;
  for (const auto& line : Split(*log, '\n')) {
    if (line.empty()) continue;
    const auto tab = line.find('\t');
    const auto head = line.substr(0, tab);
    const auto sp = head.find(' ');
    const std::string sha = head.substr(0, sp);
    const std::string parents = sp == std::string::npos ? "" : head.substr(sp + 1);
    if (parents.substr(0, parents.find(' ')) != prev)
      return MakeError(
          "--good {} is not on the first-parent history of --bad {}: the commits between them "
          "have no order to bisect (give a --good that --bad descends from)",
          good.substr(0, 12), bad.substr(0, 12));
    commits.push_back({sha, tab == std::string::npos ? "" : line.substr(tab + 1)});
    prev = sha;
  }
  if (commits.size() < 2)
    return MakeError("--bad {} is not after --good {}: nothing to bisect", bad.substr(0, 12),
                     good.substr(0, 12));
  return commits;
}

Status AddWorktree(const std::string& repo, const std::string& dir, const std::string& sha,
                   const std::string& scratch) {
  std::error_code ec;
  if (fs::exists(dir, ec)) RemoveWorktree(repo, dir, scratch);
  (void)Git(repo, {"worktree", "prune"}, scratch);
  auto out = Git(repo, {"worktree", "add", "--detach", "--quiet", dir, sha}, scratch);
  if (!out) return out.error();
  return OkStatus();
}

void RemoveWorktree(const std::string& repo, const std::string& dir, const std::string& scratch) {
  (void)Git(repo, {"worktree", "remove", "--force", dir}, scratch);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace vouch::cli
