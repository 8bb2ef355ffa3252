// Facts about the host that a record needs: boot id, kernel, hostname, CPU, load.
#pragma once

#include <string>

namespace vouch {

struct HostInfo {
  std::string hostname;
  std::string kernel;   // uname -sr
  std::string boot_id;  // /proc/sys/kernel/random/boot_id
  std::string cpu;      // model name from /proc/cpuinfo
  int cpu_count = 0;
};

HostInfo ReadHostInfo();
// 1-minute load average, or a negative value when unknown.
double LoadAverage1m();
// Wall-clock seconds since the Unix epoch.
double UnixNowSeconds();
// ISO-8601 UTC time for records.
std::string IsoTimeUtc(double unix_s);

}  // namespace vouch
