// Shared by the fuzz targets: the input as a string, and a temporary file for readers that
// take a path (SQLite, the bounded opener).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace vouch::fuzz {

inline std::string_view AsText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Writes the input to NAME in a fresh temporary folder (nothing else is beside it: a record's
// reader looks for its journal there); both are removed when this goes out of scope.
class TempInput {
 public:
  TempInput(const std::uint8_t* data, std::size_t size, const char* name) {
    const char* tmp = std::getenv("TMPDIR");
    dir_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/vouch-fuzz-XXXXXX";
    if (::mkdtemp(dir_.data()) == nullptr) std::abort();
    path_ = dir_ + "/" + name;
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) std::abort();
    std::size_t off = 0;
    while (off < size) {
      const ssize_t n = ::write(fd, data + off, size - off);
      if (n <= 0) std::abort();
      off += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  ~TempInput() {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  TempInput(const TempInput&) = delete;
  TempInput& operator=(const TempInput&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

}  // namespace vouch::fuzz
