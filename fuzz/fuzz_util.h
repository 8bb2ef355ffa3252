// Shared by the fuzz targets: the input as a string, and a temporary file for readers that
// take a path (SQLite, the bounded opener).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace vouch::fuzz {

inline std::string_view AsText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Writes the input to a fresh temporary file; removed when this goes out of scope.
class TempInput {
 public:
  TempInput(const std::uint8_t* data, std::size_t size, const char* suffix = "") {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/vouch-fuzz-XXXXXX" + suffix;
    const int fd = ::mkstemps(path_.data(), static_cast<int>(std::string_view(suffix).size()));
    if (fd < 0) std::abort();
    std::size_t off = 0;
    while (off < size) {
      const ssize_t n = ::write(fd, data + off, size - off);
      if (n <= 0) std::abort();
      off += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  ~TempInput() { ::unlink(path_.c_str()); }
  TempInput(const TempInput&) = delete;
  TempInput& operator=(const TempInput&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace vouch::fuzz
