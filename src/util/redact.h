// The one redaction of secrets that every writer of vouch's files uses (records, leg.json,
// window.json, the lock file, `lock status`, ab_plan, summaries), by name and by the shape of
// the value (SPEC "Records"; README "What is redacted"):
// - a value given under a secret's name (IsSecretName), as an environment variable, a
//   NAME=VALUE argument, a long flag ("--password X", "--pass X", "--auth=X") or a Go-style
//   single-dash flag ("-token X");
// - a KEY=VALUE pair with such a key inside any value: libpq keyword strings ("host=db
//   password=X"), ODBC strings ("Server=s;Pwd=X"), cookies ("sid=1; session_token=X");
// - the password of a URL ("https://user:PASS@host/..." -> "https://user:<redacted>@host/...")
//   and its query parameters with such a name (signed URLs: "?sig=X", "X-Amz-Signature=X",
//   "X-Goog-Signature=X", "access_token=X"), wherever the URL stands;
// - the value of an HTTP header that carries credentials ("Authorization: Bearer X" ->
//   "Authorization: Bearer <redacted>"; Proxy-Authorization, Cookie, and headers with such
//   a name, such as X-Api-Key);
// - curl's credentials: the password of "--user alice:X" / "-u" / "--proxy-user" / "-U" (a
//   uid:gid pair of numbers is kept) and the cookies of "-b 'name=X'" / "--cookie".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vouch {

inline constexpr std::string_view kRedacted = "<redacted>";

// Names whose values are secrets: those that contain TOKEN, KEY, SECRET, PASSWORD, PASSWD,
// PASSPHRASE, CREDENTIAL, SIGNATURE, COOKIE or AUTHORIZATION, and those with PASS, PWD, AUTH or
// SIG as a whole word ("--pass", "DB_PWD", "sig"; not "--passes", "--author"), any case.
bool IsSecretName(std::string_view name);

// Every URL in TEXT without its password and its secret query parameters
// ("postgresql://u:secret@h/db" -> "postgresql://u:<redacted>@h/db"). COUNT, when given,
// receives how many values were hidden.
std::string RedactUrl(std::string_view text, int* count = nullptr);

// An environment variable's value as vouch writes it: all of it when NAME is a secret's, else
// RedactText(VALUE).
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

// Any text that may hold a command line or a connection string (an environment variable's
// value): its secret KEY=VALUE pairs (quoted values to their quote), then RedactCommandLine.
std::string RedactText(std::string_view text, int* count = nullptr);

// The same over a line split at spaces (a --shell command, a holder's command line).
std::string RedactCommandLine(const std::string& line, int* count = nullptr);

}  // namespace vouch
