// Shared by the tests that drive the real vouch binary.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

// A fresh scratch directory per test, named after the suite and the test, with helpers to
// fill it and read what vouch wrote there.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("vouch_") + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  std::string D(const std::string& rel = "") const { return (dir_ / rel).string(); }
  // An executable /bin/sh script NAME with BODY.
  void Script(const std::string& name, const std::string& body) const {
    std::ofstream(D(name)) << "#!/bin/sh\n" << body;
    std::filesystem::permissions(D(name), std::filesystem::perms::owner_all);
  }
  nlohmann::json Json(const std::string& rel) const {
    std::ifstream in(D(rel));
    return nlohmann::json::parse(in);
  }
  // The vouch binary run in the scratch folder on the simulated device SIM, with its own lock
  // file, under `timeout TIMEOUT_S` (a hang fails the test instead of stalling it).
  ShellResult VouchOnSim(const std::string& sim, const std::string& args, int timeout_s) const {
    return Shell("cd " + D() + " && VOUCH_LOCK_FILE=" + D() + "/lock VOUCH_SIM=" + sim +
                 " timeout " + std::to_string(timeout_s) + " " + VOUCH_BINARY + " " + args);
  }
  std::filesystem::path dir_;
};

}  // namespace vouch::testing_util
