// The one redaction of secrets that every writer of vouch's files uses (records, leg.json,
// window.json, the lock file, `lock status`), by name and by the shape of the value
// (SPEC "Records"):
// - a value given under a name that contains TOKEN, KEY, SECRET, PASSWORD, PASSWD or
//   CREDENTIAL (any case), as an environment variable, a NAME=VALUE argument, a long flag
//   ("--password X") or a Go-style single-dash flag ("-token X");
// - the password of a URL ("https://user:PASS@host/..." -> "https://user:<redacted>@host/...")
//   and a URL query parameter with such a name ("?password=X"), wherever the URL stands (an
//   argument, "--store=URL", "DATABASE_URL=URL", a word of a shell line);
// - the value of an HTTP header that carries credentials ("Authorization: Bearer X" ->
//   "Authorization: Bearer <redacted>"; Proxy-Authorization, Cookie, and headers with such
//   a name, such as X-Api-Key).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vouch {

inline constexpr std::string_view kRedacted = "<redacted>";

// Names whose values are secrets.
bool IsSecretName(std::string_view name);

// Every URL in TEXT without its password and its secret query parameters
// ("postgresql://u:secret@h/db" -> "postgresql://u:<redacted>@h/db"). COUNT, when given,
// receives how many values were hidden.
std::string RedactUrl(std::string_view text, int* count = nullptr);

// An environment variable's value as vouch writes it: all of it when NAME is a secret's, else
// its URLs' passwords.
std::string RedactEnvValue(std::string_view name, std::string_view value);

// One argument: the NAME=VALUE forms ("--token=abc", "--api-key=abc", "HF_TOKEN=abc" give
// "--token=<redacted>"...), a credential header ("Authorization: Bearer X",
// "--header=Authorization: Bearer X") and URLs with a password; anything else as is.
std::string RedactArg(const std::string& arg);

// A whole command line: the forms above, and the two-word form, where a flag with a secret
// name and no '=' ("--password", "--hf-token", "-token") hides the next argument
// ("--password <redacted>"), as a header name word ("'Authorization:" in a shell line) hides
// the value after it (past a scheme word such as "Bearer"). Short flags ("-p") carry no name
// and are kept. An argument holding spaces (a `sh -c` line) is redacted word by word. COUNT,
// when given, receives how many values were hidden.
std::vector<std::string> RedactArgv(const std::vector<std::string>& argv, int* count = nullptr);

// The same over a line split at spaces (a --shell command, a holder's command line).
std::string RedactCommandLine(const std::string& line, int* count = nullptr);

}  // namespace vouch
