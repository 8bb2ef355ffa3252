#include "util/host.h"

#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/number.h"
#include "util/strings.h"

namespace vouch {

std::string ReadBootId() {
  std::ifstream b("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(b, id);
  return Trim(id);
}

HostInfo ReadHostInfo() {
  struct Cpu {
    std::string model;
    int count = 0;
  };
  static const Cpu cpu = [] {
    Cpu c;
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
      if (StartsWith(line, "model name")) {
        auto pos = line.find(':');
        if (pos != std::string::npos) c.model = Trim(line.substr(pos + 1));
        break;
      }
    }
    c.count = static_cast<int>(std::thread::hardware_concurrency());
    return c;
  }();
  HostInfo h;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) h.hostname = name;
  struct utsname u {};
  if (::uname(&u) == 0) h.kernel = std::string(u.sysname) + " " + u.release;
  h.boot_id = ReadBootId();
  h.cpu = cpu.model;
  h.cpu_count = cpu.count;
  return h;
}

double LoadAverage1m() {
  double l[1];
  return ::getloadavg(l, 1) == 1 ? l[0] : -1.0;
}

double UnixNowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string IsoTimeUtc(double unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

// Field 22 of /proc/PID/stat (starttime, clock ticks after boot); 0 when unreadable.
std::uint64_t StartTicks(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) {
      auto v = ParseUint64(field, "");
      return v ? *v : 0;
    }
  return 0;
}

}  // namespace

ProcessStamp SelfProcessStamp() {
  HostInfo h = ReadHostInfo();
  ProcessStamp p;
  p.pid = static_cast<int>(::getpid());
  p.host = h.hostname;
  p.boot_id = h.boot_id;
  p.start_ticks = StartTicks(p.pid);
  return p;
}

Liveness ProcessLiveness(const ProcessStamp& p) {
  HostInfo h = ReadHostInfo();
  if (p.pid <= 0 || p.host != h.hostname || p.boot_id.empty() || h.boot_id.empty())
    return Liveness::kUnknown;
  if (p.boot_id != h.boot_id) return Liveness::kGone;  // the machine booted since
  if (::kill(p.pid, 0) != 0 && errno == ESRCH) return Liveness::kGone;
  std::uint64_t now = StartTicks(p.pid);
  if (now == 0) return Liveness::kGone;  // exited between the two looks
  return p.start_ticks == 0 || now == p.start_ticks ? Liveness::kAlive : Liveness::kGone;
}

}  // namespace vouch
