// Small file helpers: atomic writes and whole-file reads with errors that name the file.
#pragma once

#include <cstdint>
#include <string>

#include "util/result.h"

namespace vouch {

// Writes to PATH.tmp.<pid> then renames over PATH, so a reader never sees half a file.
Status WriteFileAtomic(const std::string& path, const std::string& content);
// Reads a whole regular file through BoundedFile (util/bounded_file.h): refuses FIFOs,
// devices, directories and files above max_bytes with an error naming the file.
Result<std::string> ReadFile(const std::string& path, std::uint64_t max_bytes = 1ull << 30);
// mkdir -p.
Status MakeDirs(const std::string& path);
// Free bytes on the filesystem holding PATH.
Result<std::uint64_t> FreeDiskBytes(const std::string& path);

}  // namespace vouch
