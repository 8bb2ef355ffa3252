#include "trace/reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "trace/cupti_reader.h"
#include "trace/kineto_reader.h"
#include "trace/nsys_reader.h"

namespace vouch::trace {

Result<Trace> ReadTrace(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return MakeError("{}: cannot open: {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return MakeError("{}: is a directory; give a trace file (.json, .json.gz or .sqlite)", path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return MakeError("{}: cannot open: {}", path, std::strerror(errno));
  char head[512] = {};
  std::size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  if (n >= 16 && std::memcmp(head, "SQLite format 3", 16) == 0) return ReadNsysSqlite(path);
  if (LooksLikeCuptiTrace(std::string_view(head, n))) return ReadCuptiTrace(path);
  return ReadKinetoTrace(path);
}

}  // namespace vouch::trace
