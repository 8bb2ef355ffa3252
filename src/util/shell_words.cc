#include "util/shell_words.h"

#include <wordexp.h>

namespace vouch {

Result<std::vector<std::string>> SplitShellWords(const std::string& command) {
  wordexp_t w{};
  int rc = ::wordexp(command.c_str(), &w, WRDE_NOCMD | WRDE_UNDEF);
  switch (rc) {
    case 0: {
      std::vector<std::string> out(w.we_wordv, w.we_wordv + w.we_wordc);
      ::wordfree(&w);
      return out;
    }
    case WRDE_CMDSUB:
      return MakeError(
          "'{}': command substitution ($(...) or backticks) is not allowed; run it yourself and "
          "pass the result, or use --shell",
          command);
    case WRDE_BADCHAR:
      return MakeError(
          "'{}': an unquoted shell operator (| ; & < > ( ) {{ }} or a newline); vouch runs the "
          "command without a shell: quote it, or use --shell",
          command);
    case WRDE_BADVAL:
      return MakeError("'{}': a variable it names is not set (set it, or quote the $)", command);
    case WRDE_SYNTAX:
      return MakeError("'{}': shell syntax error (an unbalanced quote or a trailing backslash)",
                       command);
    case WRDE_NOSPACE:
      ::wordfree(&w);
      return MakeError("'{}': out of memory while splitting the words", command);
    default:
      return MakeError("'{}': wordexp failed with code {}", command, rc);
  }
}

}  // namespace vouch
