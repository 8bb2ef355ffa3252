// The run folder: its default name, and claiming it so that no other live run can write or
// remove it (a flock on the folder itself, held until vouch ends, SIGKILL included).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "run_common.h"
#include "util/fs.h"
#include "util/host.h"
#include "util/strings.h"

namespace vouch::cli {

std::string DefaultRunDir(const std::string& kind) {
  std::string t = IsoTimeUtc(UnixNowSeconds());
  std::string c;
  for (char ch : t)
    if (ch != ':' && ch != '-' && ch != 'Z') c += ch == 'T' ? '-' : ch;
  return fmt::format("vouch-{}-{}", kind, c);
}

RunDirHold& RunDirHold::operator=(RunDirHold&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

RunDirHold::~RunDirHold() {
  if (fd_ >= 0) ::close(fd_);  // drops the flock
}

namespace {

// Takes the flock on DIR (opened without following a symlink put in its place).
Result<RunDirHold> HoldRunDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return MakeError("cannot open run directory '{}': {}; give another --out", dir,
                     std::strerror(errno));
  RunDirHold hold(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      return MakeError(
          "run directory '{}' is held by another vouch run that is still running (its "
          "evidence is left untouched, --overwrite included); give another --out",
          dir);
    return MakeError("cannot claim run directory '{}': flock: {}; give another --out", dir,
                     std::strerror(errno));
  }
  return hold;
}

}  // namespace

Result<std::string> ClaimRunDir(const std::string& dir, bool is_default, bool overwrite,
                                RunDirHold* hold) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (is_default) {
    if (const fs::path parent = fs::path(dir).parent_path(); !parent.empty())
      if (auto s = MakeDirs(parent.string()); !s) return s.error();
    // mkdir is the claim: of two runs started in the same second, one gets the -2.
    std::string d = dir;
    for (int n = 2; ::mkdir(d.c_str(), 0777) != 0; ++n) {
      if (errno != EEXIST)
        return MakeError("cannot create run directory '{}': {}", d, std::strerror(errno));
      d = fmt::format("{}-{}", dir, n);
    }
    auto h = HoldRunDir(d);
    if (!h) return h.error();
    *hold = std::move(*h);
    return d;
  }
  auto st = fs::symlink_status(dir, ec);
  if (!fs::exists(st)) {
    if (auto s = MakeDirs(dir); !s) return s.error();
    st = fs::symlink_status(dir, ec);
  }
  if (!fs::is_directory(st))
    return MakeError("run directory '{}' exists and is not a directory; give another --out", dir);
  // Claimed before it is read or emptied: a live run's folder is never judged or replaced.
  auto h = HoldRunDir(dir);
  if (!h) return h.error();
  *hold = std::move(*h);
  if (fs::is_empty(dir, ec)) return dir;
  const bool holds_run = fs::exists(fs::path(dir) / "record.json", ec);
  if (!overwrite)
    return MakeError(
        "run directory '{}' already holds {}: a new run there would read the old legs' files and "
        "overwrite the old record; give another --out, or pass --overwrite to replace {}",
        dir, holds_run ? "a run (record.json)" : "files", holds_run ? "that run" : "them");
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name != "record.json" && name != "legs" && name != kLegJournalFile)
      return MakeError(
          "run directory '{}' holds '{}', which is not part of a vouch run: --overwrite replaces "
          "only a run (record.json, {} and legs/); give another --out",
          dir, name, kLegJournalFile);
  }
  fs::remove(fs::path(dir) / "record.json", ec);
  if (ec) return MakeError("cannot remove {}/record.json: {}", dir, ec.message());
  fs::remove(fs::path(dir) / kLegJournalFile, ec);
  if (ec) return MakeError("cannot remove {}/{}: {}", dir, kLegJournalFile, ec.message());
  fs::remove_all(fs::path(dir) / "legs", ec);
  if (ec) return MakeError("cannot remove {}/legs: {}", dir, ec.message());
  return dir;
}

}  // namespace vouch::cli
