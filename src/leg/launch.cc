// PrepareLaunch and StartLegProcess (launch.h): the steps of a leg's start, in the order their
// errors are reported.
#include "leg/launch.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "leg/guard.h"

extern char** environ;

namespace vouch::leg_detail {

namespace {

Status CheckWorkingDirectory(const LegSpec& spec, const std::string& label) {
  if (spec.cwd.empty()) return OkStatus();
  struct stat st {};
  if (::stat(spec.cwd.c_str(), &st) != 0) {
    return MakeError("working directory '{}' of {} does not exist: {}", spec.cwd, label,
                     std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError("working directory '{}' of {} is not a directory", spec.cwd, label);
  }
  return OkStatus();
}

// The environment: inherited, with the additions replacing same-named variables, and the
// leg's marker. Also the PATH that argv[0] is looked up in.
Status BuildEnvironment(const LegSpec& spec, const std::string& label, LaunchPlan* plan) {
  plan->path_value = "/usr/local/bin:/usr/bin:/bin";
  if (const char* p = ::getenv("PATH")) plan->path_value = p;
  for (const auto& [name, value] : spec.env) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return MakeError(
          "bad environment variable name '{}' for {}: it must be non-empty and have no '='", name,
          label);
    }
    if (name == "PATH") plan->path_value = value;
  }
  std::vector<std::string>& env_strings = plan->env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const std::string_view name = kv.substr(0, kv.find('='));
    const bool replaced =
        name == "VOUCH_LEG_ID" || std::any_of(spec.env.begin(), spec.env.end(),
                                              [&](const auto& add) { return add.first == name; });
    if (!replaced) env_strings.emplace_back(kv);
  }
  for (const auto& [name, value] : spec.env) {
    if (name != "VOUCH_LEG_ID") env_strings.push_back(name + "=" + value);  // vouch's own
  }
  // Marks the leg's processes, so that one that escapes its group and parents is still found.
  static std::atomic<unsigned> leg_counter{0};
  plan->marker =
      fmt::format("VOUCH_LEG_ID={}-{}-{}", ::getpid(), leg_counter.fetch_add(1), UnixNs());
  env_strings.push_back(plan->marker);
  for (auto& s : env_strings) plan->envp.push_back(s.data());
  plan->envp.push_back(nullptr);
  return OkStatus();
}

void BuildArgv(const std::vector<std::string>& argv, LaunchPlan* plan) {
  plan->argv_strings = argv;
  for (auto& s : plan->argv_strings) plan->argvp.push_back(s.data());
  plan->argvp.push_back(nullptr);
}

Result<int> OpenOutput(const std::string& path, const char* stream, const std::string& label) {
  if (path.empty()) return -1;
  // No O_APPEND: splice(2) refuses appending files.
  // O_NOFOLLOW: a leg may plant a symlink where a later leg's output goes.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    return MakeError(
        "cannot write the {} of {} to '{}': {}; check that the folder exists and is writable",
        stream, label, path, std::strerror(errno));
  }
  return fd;
}

Status OpenOutputFiles(const LegSpec& spec, const std::string& label, LaunchPlan* plan) {
  auto out_file = OpenOutput(spec.stdout_path, "stdout", label);
  if (!out_file) return out_file.error();
  plan->out_file.fd = *out_file;
  if (!spec.stderr_path.empty() && spec.stderr_path == spec.stdout_path) {
    // One file for both (2>&1): share the open file, hence its offset, or the two streams
    // would overwrite each other from offset 0.
    plan->err_file.fd = ::fcntl(plan->out_file.fd, F_DUPFD_CLOEXEC, 0);
  } else {
    auto err_file = OpenOutput(spec.stderr_path, "stderr", label);
    if (!err_file) return err_file.error();
    plan->err_file.fd = *err_file;
  }
  return OkStatus();
}

Status OpenOutputPipes(const std::string& label, LaunchPlan* plan) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return MakeError("cannot start {}: pipe: {}", label, std::strerror(errno));
  }
  plan->out_r.fd = out_pipe[0];
  plan->out_w.fd = out_pipe[1];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return MakeError("cannot start {}: pipe: {}", label, std::strerror(errno));
  }
  plan->err_r.fd = err_pipe[0];
  plan->err_w.fd = err_pipe[1];
  for (int fd : {plan->out_r.fd, plan->err_r.fd}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups for chatty legs; best effort
  }
  return OkStatus();
}

// The child's reports (launch.h's ChildReport): the last one read wins; none at all (the child
// died before it could write) reads as a failed setup.
ChildReport ReadChildReport(int fd) {
  ChildReport report;
  ChildReport got[2];
  std::size_t have = 0;
  for (ssize_t n; have < sizeof got &&
                  (n = ::read(fd, reinterpret_cast<char*>(got) + have, sizeof got - have)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    have += static_cast<std::size_t>(n);
  }
  if (have >= sizeof(ChildReport)) report = got[0];
  if (have >= 2 * sizeof(ChildReport)) report = got[1];
  if (have < sizeof(ChildReport)) report.step = kStepSetup, report.error = EPIPE;
  return report;
}

}  // namespace

Status PrepareLaunch(const LegSpec& spec, const std::string& label,
                     const std::vector<std::string>& argv, LaunchPlan* plan) {
  if (auto cwd_ok = CheckWorkingDirectory(spec, label); !cwd_ok) return cwd_ok.error();
  if (auto env_ok = BuildEnvironment(spec, label, plan); !env_ok) return env_ok.error();
  BuildArgv(argv, plan);
  auto program = ResolveProgram(argv[0], plan->path_value, spec.cwd, label);
  if (!program) return program.error();
  plan->program = *program;
  if (auto files_ok = OpenOutputFiles(spec, label, plan); !files_ok) return files_ok.error();
  return OpenOutputPipes(label, plan);
}

Result<StartedLeg> StartLegProcess(LaunchPlan* plan, const LegSpec& spec, const std::string& label,
                                   LegResult* result) {
  sigset_t default_set;
  sigemptyset(&default_set);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2}) {
    sigaddset(&default_set, sig);
  }
  // The child's ends above 2, so that dup2 onto 0..2 never clobbers one of them.
  Fd child_out(::fcntl(plan->out_w.fd, F_DUPFD_CLOEXEC, 3)),
      child_err(::fcntl(plan->err_w.fd, F_DUPFD_CLOEXEC, 3));
  int report_pipe[2];
  if (child_out.fd < 0 || child_err.fd < 0 || ::pipe2(report_pipe, O_CLOEXEC) != 0) {
    return MakeError("cannot start {}: {}", label, std::strerror(errno));
  }
  Fd report_r(report_pipe[0]), report_w(report_pipe[1]);
  const ChildPlan child{plan->program.c_str(), plan->argvp.data(),
                        plan->envp.data(),     spec.cwd.empty() ? nullptr : spec.cwd.c_str(),
                        child_out.fd,          child_err.fd,
                        report_w.fd,           ::getpid(),
                        &default_set};

  StartedLeg started;
  started.start_steady_ns = SteadyNs();
  result->start_unix_ns = UnixNs();
  // Not posix_spawn: the child sets PR_SET_PDEATHSIG before its exec. Signals are blocked
  // across the start so that none of vouch's handlers runs in the child.
  sigset_t all, old_mask;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  StartLegGuard();
  const pid_t pid = StartChild(child);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) {
    return MakeError("cannot start {} ({}): clone: {}", result->argv[0], label,
                     std::strerror(fork_errno));
  }
  ::close(report_w.release());
  ::close(child_out.release());
  ::close(child_err.release());
  started.report = ReadChildReport(report_r.fd);
  if (started.report.step != 0) {
    ::waitpid(pid, nullptr, 0);
    if (started.report.step == kStepChdir)
      return MakeError("cannot start {} ({}): cannot enter working directory '{}': {}",
                       result->argv[0], label, spec.cwd, std::strerror(started.report.error));
    return MakeError("cannot start {} ({}): {}", result->argv[0], label,
                     std::strerror(started.report.error));
  }
  started.pid = pid;
  return started;
}

}  // namespace vouch::leg_detail
