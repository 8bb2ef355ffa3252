// A command given as one string (vouch ab --a 'CMD ARGS') split into argv by POSIX shell word
// rules: quotes, backslash escapes, $VAR, ~ and globs, as sh would, through glibc's
// wordexp(3). Command substitution ($(...), backticks) is refused, as are shell operators
// (| ; & < > ( ) { } and newlines) and undefined variables: each is a clear error, never a
// silently different command. Why wordexp and not Boost's split_unix: wordexp is the shell's
// own algorithm (split_unix treats a backslash inside single quotes as an escape and refuses
// `a\ b`), it is in the C library (no new dependency), and WRDE_NOCMD refuses command
// substitution by itself.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace vouch {

Result<std::vector<std::string>> SplitShellWords(const std::string& command);

}  // namespace vouch
