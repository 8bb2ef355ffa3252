#include "util/host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "util/strings.h"

namespace vouch {

HostInfo ReadHostInfo() {
  HostInfo h;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) h.hostname = name;
  struct utsname u {};
  if (::uname(&u) == 0) h.kernel = std::string(u.sysname) + " " + u.release;
  std::ifstream b("/proc/sys/kernel/random/boot_id");
  std::getline(b, h.boot_id);
  h.boot_id = Trim(h.boot_id);
  std::ifstream c("/proc/cpuinfo");
  for (std::string line; std::getline(c, line);) {
    if (StartsWith(line, "model name")) {
      auto pos = line.find(':');
      if (pos != std::string::npos) h.cpu = Trim(line.substr(pos + 1));
      break;
    }
  }
  h.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
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

}  // namespace vouch
