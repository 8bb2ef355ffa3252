// Shared by the tests that drive the real vouch binary.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace vouch::testing_util {

struct ShellResult {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

// Runs SCRIPT with /bin/sh, stderr folded into stdout. The caller's CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER are cleared: they choose the GPUs vouch samples, and a test sets its own.
inline ShellResult Shell(const std::string& script) {
  ShellResult r;
  FILE* p =
      ::popen(("unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER; " + script + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

}  // namespace vouch::testing_util
