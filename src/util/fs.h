// Small file helpers: atomic writes and whole-file reads with errors that name the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "util/result.h"

namespace vouch {

// kFsync: on stable storage before the rename (survives a power loss). kNoFsync: atomic for
// readers and kept when vouch is killed, but a crash of the machine may lose it: for
// per-leg evidence whose content is also in a journal that is synced (record/journal.h),
// since an fsync on a shared disk costs 0.2 to 100 ms.
enum class FileSync { kFsync, kNoFsync };
// Writes to PATH.tmp.<random> (created O_EXCL|O_NOFOLLOW: never a planted file or symlink)
// then renames over PATH, so a reader never sees half a file.
Status WriteFileAtomic(const std::string& path, const std::string& content,
                       FileSync sync = FileSync::kFsync);
// Reads a whole regular file through BoundedFile (util/bounded_file.h): refuses FIFOs,
// devices, directories and files above max_bytes with an error naming the file.
Result<std::string> ReadFile(const std::string& path, std::uint64_t max_bytes = 1ull << 30);
// The working directory, or "" when it cannot be known (it was deleted, or is unreadable):
// never throws, unlike std::filesystem::current_path().
std::string CurrentDirOrEmpty();
// mkdir -p.
Status MakeDirs(const std::string& path);
// One entry of a directory: its name, and its type as the directory reports it (a symbolic
// link is a link, never what it points to; where the file system does not say, lstat does).
struct DirEntry {
  enum class Type { kFile, kDir, kSymlink, kOther };
  std::string name;
  Type type = Type::kOther;
};
// The entries of directory PATH but . and .., in the directory's order, the first
// MAX_ENTRIES at most. FOLLOW: PATH may itself be a symbolic link to a directory; otherwise
// such a PATH is an error. One open and getdents64 into a buffer on the stack: no 32 KiB
// DIR allocated per directory and no fstat or fcntl, unlike opendir (three directories per
// node of a fleet merge).
Result<std::vector<DirEntry>> ListDir(
    const std::string& path, bool follow,
    std::size_t max_entries = std::numeric_limits<std::size_t>::max());
// Free bytes on the filesystem holding PATH.
Result<std::uint64_t> FreeDiskBytes(const std::string& path);

}  // namespace vouch
