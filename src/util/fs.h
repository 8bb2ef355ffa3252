// Small file helpers: atomic writes and whole-file reads with errors that name the file.
#pragma once

#include <cstdint>
#include <string>

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
// Free bytes on the filesystem holding PATH.
Result<std::uint64_t> FreeDiskBytes(const std::string& path);

}  // namespace vouch
