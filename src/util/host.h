// Facts about the host that a record needs: boot id, kernel, hostname, CPU, load.
#pragma once

#include <cstdint>
#include <string>

namespace vouch {

struct HostInfo {
  std::string hostname;
  std::string kernel;   // uname -sr
  std::string boot_id;  // /proc/sys/kernel/random/boot_id
  std::string cpu;      // model name from /proc/cpuinfo
  int cpu_count = 0;
};

// The CPU's model and count are read once per process (they cannot change under it); hostname,
// kernel and boot id on every call.
HostInfo ReadHostInfo();
// The boot id alone (/proc/sys/kernel/random/boot_id, trimmed; empty where unreadable).
std::string ReadBootId();
// 1-minute load average, or a negative value when unknown.
double LoadAverage1m();
// Wall-clock seconds since the Unix epoch.
double UnixNowSeconds();
// ISO-8601 UTC time for records.
std::string IsoTimeUtc(double unix_s);

// A process named so that a later reader can tell whether it still runs: its pid, the boot
// it ran in and its start time in clock ticks since that boot (a reused pid starts later).
struct ProcessStamp {
  int pid = 0;
  std::string host, boot_id;
  std::uint64_t start_ticks = 0;
};
ProcessStamp SelfProcessStamp();
enum class Liveness { kAlive, kGone, kUnknown };
// kGone: same host, and another boot, or no process with that pid and start time now;
// kUnknown: another host (or no boot id), which this machine cannot see.
Liveness ProcessLiveness(const ProcessStamp& p);

}  // namespace vouch
