#include "fleet/slurm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "util/number.h"
#include "util/strings.h"

namespace vouch {

std::vector<std::string> SbatchArgv(const SlurmOptions& o, const std::string& job_name, int tasks,
                                    const std::string& output, const std::string& script) {
  std::vector<std::string> a = {"sbatch",
                                "--parsable",
                                "--job-name=" + job_name,
                                fmt::format("--array=0-{}", tasks - 1),
                                "--nodes=1",
                                "--ntasks=1",
                                "--exclusive",
                                "--requeue",
                                "--output=" + output};
  if (!o.partition.empty()) a.push_back("--partition=" + o.partition);
  if (!o.gres.empty()) a.push_back("--gres=" + o.gres);
  if (!o.account.empty()) a.push_back("--account=" + o.account);
  if (!o.time.empty()) a.push_back("--time=" + o.time);
  if (!o.exclude.empty()) a.push_back("--exclude=" + o.exclude);
  for (const auto& e : o.extra) a.push_back(e);
  a.push_back(script);
  return a;
}

Result<std::string> ParseSbatchJobId(const std::string& out) {
  std::string t = Trim(out);
  // The id is the last line (sbatch may warn first).
  auto nl = t.rfind('\n');
  if (nl != std::string::npos) t = t.substr(nl + 1);
  auto semi = t.find(';');
  if (semi != std::string::npos) t = t.substr(0, semi);
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
    return MakeError("sbatch printed no job id: '{}'", Trim(out));
  return t;
}

namespace {

// "0-3,5,7-8%2" -> {0,1,2,3,5,7,8}; empty on anything else.
std::vector<int> ParseTaskList(std::string s) {
  std::vector<int> out;
  if (auto pct = s.find('%'); pct != std::string::npos) s = s.substr(0, pct);
  for (const auto& part : Split(s, ',')) {
    auto dash = part.find('-');
    // Whole numbers only: "5abc" is not task 5.
    auto lo = ParseInt64In(part.substr(0, dash), 0, INT32_MAX, "");
    auto hi =
        dash == std::string::npos ? lo : ParseInt64In(part.substr(dash + 1), 0, INT32_MAX, "");
    if (!lo || !hi || *hi < *lo || *hi - *lo > 100000) return {};
    for (std::int64_t i = *lo; i <= *hi; ++i) out.push_back(static_cast<int>(i));
  }
  return out;
}

int ToInt(const std::string& s, int fallback) {
  auto v = ParseInt64In(s, INT32_MIN, INT32_MAX, "");
  return v ? static_cast<int>(*v) : fallback;
}

}  // namespace

std::vector<SlurmTask> ParseScontrolJobs(const std::string& text) {
  std::vector<SlurmTask> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> kv;
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      auto eq = w.find('=');
      if (eq != std::string::npos && !kv.count(w.substr(0, eq)))
        kv[w.substr(0, eq)] = w.substr(eq + 1);
    }
    if (!kv.count("JobId")) continue;
    SlurmTask t;
    t.array_job_id = kv.count("ArrayJobId") ? kv["ArrayJobId"] : kv["JobId"];
    t.state = kv["JobState"];
    t.reason = kv["Reason"];
    t.exit_code = kv["ExitCode"];
    t.node = kv["NodeList"] == "(null)" ? "" : kv["NodeList"];
    t.restarts = ToInt(kv["Restarts"], 0);
    std::vector<int> ids =
        kv.count("ArrayTaskId") ? ParseTaskList(kv["ArrayTaskId"]) : std::vector<int>{};
    if (ids.empty()) ids.push_back(-1);
    for (int id : ids) {
      t.task = id;
      out.push_back(t);
    }
  }
  return out;
}

std::vector<SlurmTask> ParseSacct(const std::string& text) {
  std::vector<SlurmTask> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto f = Split(Trim(line), '|');
    if (f.size() < 4) continue;
    SlurmTask t;
    std::string id = f[0];
    auto us = id.find('_');
    if (us == std::string::npos || id.find('.') != std::string::npos) continue;  // steps
    t.array_job_id = id.substr(0, us);
    auto ids = ParseTaskList(id.substr(us + 1));
    // "CANCELLED by 0" -> CANCELLED
    t.state = Split(f[1], ' ').empty() ? f[1] : Split(f[1], ' ')[0];
    t.exit_code = f[2];
    t.node = f[3] == "None assigned" ? "" : f[3];
    t.reason = f.size() > 4 ? f[4] : "";
    for (int i : ids) {
      t.task = i;
      out.push_back(t);
    }
  }
  return out;
}

bool SlurmStateFinal(const std::string& state) {
  static const std::set<std::string> final_states = {
      "COMPLETED", "FAILED",        "CANCELLED", "NODE_FAIL", "TIMEOUT",
      "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",  "SPECIAL_EXIT"};
  return final_states.count(state) > 0;
}

std::optional<SlurmGpus> GpusFromSlurm(
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
  auto nonempty = [&](const char* name) -> std::optional<std::string> {
    auto v = getenv(name);
    if (v && !Trim(*v).empty()) return Trim(*v);
    return std::nullopt;
  };
  if (auto v = nonempty("CUDA_VISIBLE_DEVICES")) {
    bool by_slurm = nonempty("SLURM_STEP_GPUS") || nonempty("SLURM_JOB_GPUS");
    return SlurmGpus{*v, by_slurm ? "CUDA_VISIBLE_DEVICES (set by Slurm)" : "CUDA_VISIBLE_DEVICES"};
  }
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"})
    if (auto v = nonempty(name)) return SlurmGpus{*v, name};
  return std::nullopt;
}

Result<std::string> RunTool(const std::vector<std::string>& argv, double timeout_s, int* rc) {
  if (argv.empty()) return MakeError("no program to run");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return MakeError("pipe: {}", std::strerror(errno));
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return MakeError("fork: {}", std::strerror(errno));
  }
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::execvp(cargv[0], cargv.data());
    const char msg[] = "cannot run the program\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (out.size() < (1u << 20)) out.append(buf, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return MakeError("{} did not answer within {} s", argv[0], timeout_s);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (*rc == 127 && Trim(out) == "cannot run the program")
    return MakeError("cannot run '{}': is it installed and on PATH?", argv[0]);
  return out;
}

}  // namespace vouch
