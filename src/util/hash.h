#pragma once

#include <string>

#include "util/result.h"

namespace vouch {

// sha256 (hex) of bytes, of a file, or of a directory (its regular files in sorted path
// order, each contributing its relative path and content). OpenSSL's libcrypto does the hashing.
std::string Sha256Hex(std::string_view bytes);
Result<std::string> Sha256OfPath(const std::string& path);

}  // namespace vouch
