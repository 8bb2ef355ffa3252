// Test helpers for src/metrics: a scratch directory and the recorded tool outputs.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "util/fs.h"

namespace vouch::metrics_test {

// A fresh directory under the system temp dir, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("vouch_metrics_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
                .string();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::string path_;
};

inline std::string DataPath(const std::string& name) {
  return std::string(VOUCH_SOURCE_DIR) + "/tests/data/metrics/" + name;
}

inline std::string ReadData(const std::string& name) {
  auto r = ReadFile(DataPath(name));
  return r ? *r : std::string();
}

}  // namespace vouch::metrics_test
