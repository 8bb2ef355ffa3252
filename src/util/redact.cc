#include "util/redact.h"

#include <cctype>

namespace vouch {

bool IsSecretName(std::string_view name) {
  std::string u;
  for (char c : name) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* w : {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"})
    if (u.find(w) != std::string::npos) return true;
  return false;
}

std::string RedactArg(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos) return arg;
  const auto start = arg.find_first_not_of('-');
  if (start == std::string::npos || start >= eq) return arg;
  if (!IsSecretName(std::string_view(arg).substr(start, eq - start))) return arg;
  if (arg.compare(eq + 1, std::string::npos, kRedacted) == 0) return arg;
  return arg.substr(0, eq + 1) + std::string(kRedacted);
}

namespace {

// "--password", "--hf-token": a long flag whose name is a secret's, its value next.
bool IsSecretFlag(const std::string& arg) {
  return arg.size() > 2 && arg[0] == '-' && arg[1] == '-' && arg.find('=') == std::string::npos &&
         IsSecretName(std::string_view(arg).substr(2));
}

}  // namespace

std::vector<std::string> RedactArgv(const std::vector<std::string>& argv, int* count) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  int n = 0;
  bool hide_next = false;
  for (const auto& a : argv) {
    if (hide_next && a != "--") {
      out.emplace_back(kRedacted);
      n += a != kRedacted;
      hide_next = false;
      continue;
    }
    hide_next = false;
    // A whole command line in one argument (sh -c '...', --shell): its words.
    std::string r = a.find(' ') != std::string::npos ? RedactCommandLine(a) : RedactArg(a);
    n += r != a;
    hide_next = IsSecretFlag(a);
    out.push_back(std::move(r));
  }
  if (count) *count = n;
  return out;
}

std::string RedactCommandLine(const std::string& line, int* count) {
  std::vector<std::string> words;
  std::string out;
  // Split at spaces, keeping the spaces so that the line reads as it was.
  std::vector<std::string> parts;  // words and runs of spaces, alternating
  for (char c : line) {
    const bool space = c == ' ';
    if (parts.empty() || (parts.back()[0] == ' ') != space) parts.emplace_back();
    parts.back() += c;
  }
  for (const auto& p : parts)
    if (p[0] != ' ') words.push_back(p);
  const auto redacted = RedactArgv(words, count);
  std::size_t w = 0;
  for (const auto& p : parts) out += p[0] == ' ' ? p : redacted[w++];
  return out;
}

}  // namespace vouch
