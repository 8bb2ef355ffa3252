// The tracer's own count of kernel launches (docs/gpu-trace.md, "Another CUPTI client"). A
// second CUPTI client in the process (torch.profiler's Kineto, nsys, a sanitizer) takes the
// activity records by registering its own buffer callbacks, or tears CUPTI down at its end;
// the trace then misses work without a word. The launch callbacks of the callback API stay the
// tracer's (CUPTI keeps one subscriber, the first), so the tracer counts every kernel launch
// there and the reader compares the count with the kernel records (gputrace/trust.h).
//
// Counted: a launch call (runtime or driver, the outermost on its thread) that returned
// success and created no graph node (a launch inside stream capture runs nothing). Graph
// launches are counted apart: their kernels are not compared.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace vouch_cupti {

struct CounterStatus {
  bool on = false;               // subscribed, launch callbacks enabled
  std::string subscribe_error;   // the CUPTI result name when cuptiSubscribe failed
  std::string other_subscriber;  // who holds CUPTI, when CUPTI said (cuptiSubscribe_v2)
  int callbacks = 0;             // launch callbacks enabled
};

// Subscribes (cuptiSubscribe_v2 named "vouch" where the CUPTI has it) and enables the launch
// callbacks of both API domains and the graph-node resource callback.
CounterStatus StartLaunchCounter();

// Launch-API activity records (VOUCH_GPU_TRACE_API=on): the launch calls only, selected by
// name; the number enabled.
int EnableLaunchApiRecords();

std::uint64_t KernelLaunches();
std::uint64_t GraphLaunches();

// A thread that, every PERIOD_MS while the process is PID, writes {"t":"lc","ts":..,"k":..}
// through LINE when the count moved, and once {"t":"lost",...} should the subscription vanish
// (cuptiGetCallbackState failing or the callback found disabled). StopHeartbeat ends it.
void StartHeartbeat(void (*line)(const std::string&), pid_t pid, long period_ms);
void StopHeartbeat();

}  // namespace vouch_cupti
