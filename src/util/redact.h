// The one redaction of secrets that every writer of vouch's files uses (records, leg.json,
// window.json, the lock file, `lock status`): a value is a secret when the name it is given
// under contains TOKEN, KEY, SECRET, PASSWORD, PASSWD or CREDENTIAL (any case), as for
// environment variables (SPEC "Records").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vouch {

inline constexpr std::string_view kRedacted = "<redacted>";

// Names whose values are secrets.
bool IsSecretName(std::string_view name);

// One argument in the NAME=VALUE forms: "--token=abc", "--api-key=abc", "HF_TOKEN=abc"
// give "--token=<redacted>"...; anything else is returned as is.
std::string RedactArg(const std::string& arg);

// A whole command line: the NAME=VALUE forms above, and the two-word form, where a flag
// with a secret name and no '=' ("--password", "--hf-token") hides the next argument
// ("--password <redacted>"). Short flags ("-p") carry no name and are kept. An argument
// holding spaces (a `sh -c` line) is redacted word by word. COUNT, when given, receives how
// many values were hidden.
std::vector<std::string> RedactArgv(const std::vector<std::string>& argv, int* count = nullptr);

// The same over a line split at spaces (a --shell command, a holder's command line).
std::string RedactCommandLine(const std::string& line, int* count = nullptr);

}  // namespace vouch
