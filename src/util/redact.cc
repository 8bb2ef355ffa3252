// Redaction by the shape of the value (issue 36; README "What is redacted"), besides the names
// and forms util/redact.h lists:
// - IsSecretName also takes PASSPHRASE, SIGNATURE, COOKIE and AUTHORIZATION anywhere in a name,
//   and PASS, PWD, AUTH and SIG as a whole word of it ("--pass", "DB_PWD", "sig"; never
//   "--passes", "--author", "--significance");
// - a KEY=VALUE pair with such a key inside any value or argument: libpq keyword strings
//   ("host=db password=X", a quoted value to its quote), ODBC strings ("Server=s;Pwd=X"),
//   cookies ("sid=1; session_token=X"), query strings of signed URLs ("?sig=X",
//   "X-Amz-Signature=X", "X-Goog-Signature=X", "access_token=X");
// - an environment variable's value whose name is no secret's: those pairs, then its words as
//   a command line (RedactText);
// - curl's credentials: the password of "--user alice:X", "-u", "--proxy-user", "-U" (a
//   uid:gid pair of numbers is kept) and the cookies of "-b 'name=X'" (a cookie file is kept)
//   and "--cookie".
#include "util/redact.h"

#include <cctype>

namespace vouch {

namespace {

std::string Lower(std::string_view s) {
  std::string u;
  for (char c : s) u += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return u;
}

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Where a URL ends inside a longer text: at a space or a quote.
bool EndsUrl(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\'' || c == '"' || c == '`' || c == '>';
}

// S with the part [B, E) replaced by <redacted>, counted, unless it is empty or already that.
void Hide(std::string& s, std::size_t b, std::size_t e, int* n) {
  if (b >= e || s.compare(b, e - b, kRedacted) == 0) return;
  s.replace(b, e - b, kRedacted);
  ++*n;
}

// A header whose value is a credential, by its name.
bool IsSecretHeader(std::string_view name) {
  const std::string l = Lower(name);
  return l == "authorization" || l == "proxy-authorization" || l == "cookie" || l == "set-cookie" ||
         IsSecretName(name);
}

// The length of a header name ending in ':' at the start of S ("Authorization:"), or 0.
std::size_t HeaderNameLength(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (IsAlnum(s[i]) || s[i] == '-' || s[i] == '_')) ++i;
  if (i == 0 || i >= s.size() || s[i] != ':') return 0;
  return IsSecretHeader(s.substr(0, i)) ? i + 1 : 0;
}

// A scheme word before a credential ("Bearer", "Basic", "Token").
bool IsSchemeWord(std::string_view w) {
  if (w.empty() || w.size() > 20) return false;
  for (char c : w)
    if (!std::isalpha(static_cast<unsigned char>(c))) return false;
  return true;
}

// "Authorization: Bearer X" (a whole header, quotes around it allowed) with X hidden, or ""
// when ARG is no such header.
std::string RedactHeader(const std::string& arg, int* n) {
  std::size_t start = arg.find_first_not_of(" '\"");
  if (start == std::string::npos) return "";
  const std::size_t name = HeaderNameLength(std::string_view(arg).substr(start));
  if (name == 0) return "";
  std::string out = arg;
  std::size_t v = out.find_first_not_of(' ', start + name);
  if (v == std::string::npos) return out;  // "Authorization:" alone: the value comes next
  std::size_t end = out.find_last_not_of("'\"");
  end = end == std::string::npos || end < v ? out.size() : end + 1;
  // Keep the scheme: "Bearer <redacted>".
  const std::size_t sp = out.find(' ', v);
  if (sp != std::string::npos && sp < end && IsSchemeWord(std::string_view(out).substr(v, sp - v)))
    v = out.find_first_not_of(' ', sp);
  if (v != std::string::npos && v < end) Hide(out, v, end, n);
  return out;
}

// Where a header would start in ARG: after "--header=" (a flag's value), else at 0.
std::size_t HeaderStart(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  return !arg.empty() && arg[0] == '-' && eq != std::string::npos ? eq + 1 : 0;
}

// ARG with the header in it redacted, or "" when it holds none.
std::string RedactHeaderArg(const std::string& arg, int* n) {
  const std::size_t at = HeaderStart(arg);
  std::string h = RedactHeader(arg.substr(at), n);
  return h.empty() ? h : arg.substr(0, at) + h;
}

// A word of a command line without the shell quotes around it.
std::string_view Unquoted(std::string_view w) {
  while (!w.empty() && (w.front() == '\'' || w.front() == '"')) w.remove_prefix(1);
  while (!w.empty() && (w.back() == '\'' || w.back() == '"')) w.remove_suffix(1);
  return w;
}

// WORD hidden, its shell quotes kept ("'hunter2'" -> "'<redacted>'").
std::string HideWord(const std::string& word, int* n) {
  const std::string_view core = Unquoted(word);
  if (core.empty() || core == kRedacted) return word;
  const std::size_t b = static_cast<std::size_t>(core.data() - word.data());
  std::string out = word;
  Hide(out, b, b + core.size(), n);
  return out;
}

// "--password", "--hf-token", "-token": a flag whose name is a secret's, its value next. A
// single dash and one letter ("-p") carries no name.
bool IsSecretFlag(const std::string& arg) {
  if (arg.size() < 3 || arg[0] != '-' || arg.find('=') != std::string::npos) return false;
  const std::string_view name = std::string_view(arg).substr(arg[1] == '-' ? 2 : 1);
  return name.size() >= 2 && IsSecretName(name);
}

// Where a KEY=VALUE pair may start inside a text: its start, or after a space, a quote or one
// of the separators of connection strings (libpq's spaces, ODBC's ';'), cookies ("; ") and
// query strings ('?', '&').
bool StartsPair(char c) {
  return c == ' ' || c == '\t' || c == ';' || c == ',' || c == '&' || c == '?' || c == '=' ||
         c == '\'' || c == '"' || c == '(' || c == '\n';
}
bool EndsPairValue(char c) {
  return c == ' ' || c == '\t' || c == ';' || c == '&' || c == '\'' || c == '"' || c == '\n';
}

// Every KEY=VALUE inside S whose KEY is a secret's name, its value hidden, wherever it stands:
// "host=db user=u password=X" (libpq), "Server=s;Pwd=X" (ODBC), "a=1&sig=X" (a query string),
// "--token=X" inside a shell line. A quoted value ("password='a b'") is hidden to its quote.
void HidePairs(std::string& s, int* n) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && !StartsPair(s[i - 1])) continue;
    std::size_t k = i;
    while (k < s.size() && (IsAlnum(s[k]) || s[k] == '_' || s[k] == '-' || s[k] == '.')) ++k;
    if (k == i || k >= s.size() || s[k] != '=' ||
        !IsSecretName(std::string_view(s).substr(i, k - i)))
      continue;
    std::size_t v = k + 1, e;
    if (v < s.size() && (s[v] == '\'' || s[v] == '"')) {
      e = s.find(s[v], v + 1);
      ++v;
      if (e == std::string::npos) e = s.size();
    } else {
      e = v;
      while (e < s.size() && !EndsPairValue(s[e])) ++e;
    }
    Hide(s, v, e, n);
    i = v;
  }
}

// A user:password pair (curl's --user, -u, --proxy-user, -U), the password hidden: "alice:X"
// -> "alice:<redacted>". A pair of numbers is a uid:gid (docker --user 1000:1000) and is kept.
std::string HideUserPassword(const std::string& word, int* n) {
  const std::string_view core = Unquoted(word);
  const std::size_t colon = core.find(':');
  if (colon == std::string_view::npos || colon + 1 >= core.size()) return word;
  const auto digits = [](std::string_view d) {
    return !d.empty() && d.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (digits(core.substr(0, colon)) && digits(core.substr(colon + 1))) return word;
  const std::size_t b = static_cast<std::size_t>(core.data() - word.data()) + colon + 1;
  std::string out = word;
  Hide(out, b, static_cast<std::size_t>(core.data() - word.data()) + core.size(), n);
  return out;
}

// A flag whose value is a user:password pair.
bool IsUserFlag(std::string_view flag) {
  return flag == "-u" || flag == "-U" || flag == "--user" || flag == "--proxy-user";
}

// TEXT that may hold a command line or a connection string: its secret KEY=VALUE pairs, then
// its words as RedactCommandLine reads them.
std::string RedactText(std::string_view text, int* count = nullptr) {
  std::string s(text);
  int n = 0, words = 0;
  HidePairs(s, &n);
  s = RedactCommandLine(s, &words);
  if (count) *count = n + words;
  return s;
}

}  // namespace

bool IsSecretName(std::string_view name) {
  std::string u;
  for (char c : name) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* w : {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                        "SIGNATURE", "COOKIE", "AUTHORIZATION"})
    if (u.find(w) != std::string::npos) return true;
  // Short names only as a whole word of the name ("--pass", "--auth", "sig=", "DB_PWD"), never
  // inside another ("--passes", "--author", "--significance").
  for (std::size_t b = 0; b < u.size();) {
    std::size_t e = b;
    while (e < u.size() && IsAlnum(u[e])) ++e;
    const std::string_view word = std::string_view(u).substr(b, e - b);
    if (word == "PASS" || word == "PWD" || word == "AUTH" || word == "SIG") return true;
    b = e + 1;
  }
  return false;
}

std::string RedactUrl(std::string_view text, int* count) {
  std::string out(text);
  int n = 0;
  for (std::size_t scheme = out.find("://"); scheme != std::string::npos;
       scheme = out.find("://", scheme + 3)) {
    std::size_t end = scheme + 3;
    while (end < out.size() && !EndsUrl(out[end])) ++end;
    // userinfo: scheme://user:PASSWORD@host, the last '@' before the path.
    std::size_t host_end = out.find_first_of("/?#", scheme + 3);
    if (host_end == std::string::npos || host_end > end) host_end = end;
    const std::size_t at = out.rfind('@', host_end == 0 ? 0 : host_end - 1);
    if (at != std::string::npos && at > scheme + 3) {
      const std::size_t colon = out.find(':', scheme + 3);
      if (colon < at) {
        const std::size_t before = out.size();
        Hide(out, colon + 1, at, &n);
        end = end + out.size() - before;
      }
    }
    // Query parameters with a secret's name: ?password=X&sslmode=require.
    std::size_t q = out.find('?', scheme + 3);
    if (q == std::string::npos || q >= end) continue;
    std::size_t frag = out.find('#', q);
    if (frag == std::string::npos || frag > end) frag = end;
    for (std::size_t p = q + 1; p < frag;) {
      std::size_t amp = out.find('&', p);
      if (amp == std::string::npos || amp > frag) amp = frag;
      const std::size_t eq = out.find('=', p);
      if (eq < amp && IsSecretName(std::string_view(out).substr(p, eq - p))) {
        const std::size_t before = out.size();
        Hide(out, eq + 1, amp, &n);
        const std::size_t grown = out.size() - before;  // modulo 2^64: shorter works too
        amp += grown;
        frag += grown;
        end += grown;
      }
      p = amp + 1;
    }
  }
  if (count) *count = n;
  return out;
}

std::string RedactEnvValue(std::string_view name, std::string_view value) {
  if (IsSecretName(name)) return std::string(kRedacted);
  return RedactText(value);
}

std::string RedactArg(const std::string& arg) {
  int n = 0;
  const auto eq = arg.find('=');
  const auto start = arg.find_first_not_of('-');
  // A NAME=VALUE form: the name is a word ("--api-key", "HF_TOKEN"), not the head of a URL
  // ("https://h/x?X-Amz-Credential=..." keeps its other parameters).
  const auto is_name = [&] {
    for (std::size_t i = start; i < eq; ++i)
      if (!IsAlnum(arg[i]) && arg[i] != '_' && arg[i] != '-' && arg[i] != '.') return false;
    return true;
  };
  if (eq != std::string::npos && start != std::string::npos && start < eq && is_name() &&
      IsSecretName(std::string_view(arg).substr(start, eq - start))) {
    if (Unquoted(std::string_view(arg).substr(eq + 1)) == kRedacted) return arg;
    return arg.substr(0, eq + 1) + std::string(kRedacted);
  }
  // "--user=alice:X".
  if (eq != std::string::npos && IsUserFlag(std::string_view(arg).substr(0, eq)))
    return arg.substr(0, eq + 1) + HideUserPassword(arg.substr(eq + 1), &n);
  // "Authorization: Bearer X", "--header=Authorization: Bearer X".
  if (std::string h = RedactHeaderArg(arg, &n); !h.empty()) return h;
  std::string out = RedactUrl(arg);
  HidePairs(out, &n);
  return out;
}

std::vector<std::string> RedactArgv(const std::vector<std::string>& argv, int* count) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  int n = 0;
  // What the flag before said of this argument: a secret, a user:password pair, a cookie.
  enum class Next { kKeep, kSecret, kUser, kCookie } next = Next::kKeep;
  bool after_header = false;
  for (const auto& a : argv) {
    if (after_header && a != "--") {
      after_header = false;
      next = Next::kSecret;
      // "Authorization:" then "Bearer" then the credential: the scheme is kept.
      if (IsSchemeWord(Unquoted(a)) && a == Unquoted(a) && a.back() != '\'') {
        out.push_back(a);
        continue;
      }
    }
    if (next != Next::kKeep && a != "--") {
      const Next what = next;
      next = Next::kKeep;
      if (what == Next::kSecret)
        out.push_back(HideWord(a, &n));
      else if (what == Next::kUser)
        out.push_back(HideUserPassword(a, &n));
      else  // curl's -b takes a cookie ("name=X") or a file to read them from (kept)
        out.push_back(Unquoted(a).find('=') != std::string_view::npos ? HideWord(a, &n) : a);
      continue;
    }
    next = Next::kKeep;
    // A whole command line in one argument (sh -c '...', --shell): its words; a header with
    // its value is one argument ("-H", "Authorization: Bearer X").
    std::string r;
    int header_n = 0;
    if (std::string h = RedactHeaderArg(a, &header_n); !h.empty() && header_n > 0)
      r = h;
    else
      r = a.find(' ') != std::string::npos ? RedactText(a) : RedactArg(a);
    n += r != a;
    const std::string_view flag = Unquoted(a);
    if (IsSecretFlag(a))
      next = Next::kSecret;
    else if (IsUserFlag(flag))
      next = Next::kUser;
    else if (flag == "-b")
      next = Next::kCookie;
    // A header name alone ("'Authorization:" in a shell line): its value is the next word.
    const std::string_view core = Unquoted(std::string_view(a).substr(HeaderStart(a)));
    after_header = !core.empty() && core.back() == ':' && HeaderNameLength(core) == core.size();
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
