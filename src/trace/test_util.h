// Helpers shared by the trace tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace vouch::trace::testing {

inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "vouch_trace_" + std::to_string(::getpid()) + "_" + name;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void Spit(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary);
  f << content;
}

inline std::string DataPath(const std::string& name) {
  return std::string(VOUCH_SOURCE_DIR) + "/tests/data/trace/" + name;
}

// Runs a shell command; returns its stdout and sets *rc to its exit status.
inline std::string RunCommand(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    *rc = -1;
    return out;
  }
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = ::pclose(p);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace vouch::trace::testing
