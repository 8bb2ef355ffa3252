// The CUPTI tracer's switches (libvouch_cupti.so, docs/gpu-trace.md), read once from the
// environment at InitializeInjection, and the small JSON helpers the header and the writer
// share. No CUPTI here: vouch_tests compiles this file too (options_test.cc). Internal to the
// library (hidden symbols).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace vouch_cupti {

// The VOUCH_GPU_TRACE* switches, each recorded in the header.
struct Options {
  std::string path;                     // VOUCH_GPU_TRACE, %p replaced by the process id
  std::size_t buffer_bytes = 2u << 20;  // VOUCH_GPU_TRACE_BUFFER_MB (1..1024)
  // VOUCH_GPU_TRACE_API=on: launch-API records ("a" lines), about 1.2 us per launch on the
  // H200 when launches come back to back. Off by default since 2026-12-02 (issue 24): the reader
  // then counts launches by the kernels' correlation ids.
  bool api = false;
  const char* api_from = "default";  // "default" or "VOUCH_GPU_TRACE_API"
  bool timestamp_callback = true;    // VOUCH_GPU_TRACE_CLOCK=cupti: off
  long flush_ms = 0;                 // VOUCH_GPU_TRACE_FLUSH_MS: a forced flush every N ms
  // The tracer's own kernel-launch count (counter.h), how a second CUPTI client is found: on by
  // default; VOUCH_GPU_TRACE_COUNT=off turns it off (the leg's gpu.* figures are then judged by
  // the sampler's rule alone). Its count lines come every count_ms
  // (VOUCH_GPU_TRACE_COUNT_MS, 10..60000, default 100) while launches go on.
  bool count = true;
  const char* count_from = "default";  // "default" or "VOUCH_GPU_TRACE_COUNT"
  long count_ms = 100;
};

// Reads the switches; an unknown value of VOUCH_GPU_TRACE_API is said on stderr and left at
// the default (off).
Options ReadOptions(pid_t pid);

// /proc/self/cmdline as a JSON array of strings.
std::string CommandLineJson();

// Appends S as a JSON string (quoted, escaped).
void AppendEscaped(std::string* out, const char* s);

}  // namespace vouch_cupti
