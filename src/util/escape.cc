#include "util/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace vouch {

namespace {

// The length of the valid UTF-8 sequence at the start of S, or 0 when it is not one (an
// overlong form, a surrogate, past U+10FFFF, cut short, or a stray continuation byte).
std::size_t Utf8Length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  return n;
}

// The code point of one valid UTF-8 sequence of 2 to 4 bytes.
std::uint32_t CodePoint(std::string_view u) {
  const auto b = [&](std::size_t k) { return static_cast<std::uint32_t>(u[k]) & 0x3Fu; };
  const auto c = static_cast<unsigned char>(u[0]);
  if (u.size() == 2) return ((c & 0x1Fu) << 6) | b(1);
  if (u.size() == 3) return ((c & 0x0Fu) << 12) | (b(1) << 6) | b(2);
  return ((c & 0x07u) << 18) | (b(1) << 12) | (b(2) << 6) | b(3);
}

// Code points a terminal shows as nothing, or that reorder what it shows: the soft hyphen, the
// zero-width spaces and joiners, the directional marks, embeddings, overrides and isolates, the
// line and paragraph separators, the word joiner and invisible operators, the byte order mark,
// the Arabic letter mark and the Mongolian vowel separator. Named as "\uXXXX", so that a name
// that holds one is seen to (and cannot pass for vouch's own).
bool Invisible(std::uint32_t cp) {
  return cp == 0x00AD || cp == 0x061C || cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF;
}

void Hex(std::string& out, std::string_view bytes) {
  for (char c : bytes) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
}

// Appends S to OUT made safe; KEEP_LINES keeps '\n' and '\t'. Each ASCII character that is
// not a control goes through PLAIN (the medium's own escapes).
// Whether C is printable ASCII (or, with KEEP_LINES, a newline or tab): what a terminal shows
// as it is.
bool PlainAscii(unsigned char c, bool keep_lines) {
  return (c >= 0x20 && c < 0x7F) || (keep_lines && (c == '\n' || c == '\t'));
}

void Verbatim(std::string& out, char c) { out += c; }

template <typename Plain>
void Escape(std::string& out, std::string_view s, bool keep_lines, Plain plain) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    // Verbatim: a run of printable ASCII goes in at once (a megabyte of JSON through the
    // terminal guard was a call per byte).
    if constexpr (std::is_same_v<Plain, void (*)(std::string&, char)>) {
      if (plain == &Verbatim && PlainAscii(c, keep_lines)) {
        std::size_t j = i + 1;
        while (j < s.size() && PlainAscii(static_cast<unsigned char>(s[j]), keep_lines)) ++j;
        out.append(s.substr(i, j - i));
        i = j;
        continue;
      }
    }
    if (c < 0x80) {
      if (keep_lines && (c == '\n' || c == '\t'))
        out += static_cast<char>(c);
      else if (c < 0x20 || c == 0x7F)
        Hex(out, s.substr(i, 1));
      else
        plain(out, static_cast<char>(c));
      ++i;
      continue;
    }
    const std::size_t n = Utf8Length(s.substr(i));
    if (n == 0) {
      Hex(out, s.substr(i, 1));
      ++i;
      continue;
    }
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (n == 2 && c == 0xC2 && b1 < 0xA0) {  // U+0080..U+009F, the C1 controls
      Hex(out, s.substr(i, 2));
    } else if (const std::uint32_t cp = CodePoint(s.substr(i, n)); Invisible(cp)) {
      out += fmt::format("\\u{:04x}", cp);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
}

}  // namespace

bool TerminalVerbatim(std::string_view s) {
  // Eight bytes at a time: a word with no byte below 0x20 and none from 0x7F up is plain; a
  // word with one (a newline, often) is looked at byte by byte. The guard reads every byte
  // vouch prints (30 MB for a trend of 100,000 points).
  constexpr std::uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    const std::uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
    const std::uint64_t from_del = ((w + kOnes) | w) & kHigh;
    if ((below_space | from_del) == 0) continue;
    for (std::size_t k = i; k < i + 8; ++k)
      if (!PlainAscii(static_cast<unsigned char>(s[k]), true)) return false;
  }
  for (; i < s.size(); ++i)
    if (!PlainAscii(static_cast<unsigned char>(s[i]), true)) return false;
  return true;
}

std::string TerminalSafe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  Escape(out, s, false, Verbatim);
  return out;
}

std::string TerminalText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  Escape(out, s, true, Verbatim);
  return out;
}

namespace {

// Newlines read as spaces in Markdown text and code alike: a cell stays one cell.
std::string OneLine(std::string_view s) {
  std::string t(s);
  for (char& c : t)
    if (c == '\n' || c == '\r') c = ' ';
  return t;
}

}  // namespace

namespace {

void AppendCellText(std::string& out, std::string_view s) {
  Escape(out, OneLine(s), false, [](std::string& o, char c) {
    switch (c) {
      case '|':
        o += "\\|";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '`':
        o += "&#96;";
        break;
      default:
        o += c;
    }
  });
}

bool MdAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool MdDigit(char c) { return c >= '0' && c <= '9'; }

// The length of a token GitHub would link at S[I], or 0: a mention ("@team", "@org/team": it
// notifies them) unless the '@' follows a letter or digit (an address), or a reference ("#12",
// "GH-12": it links the issue, and "fixes #12" closes it).
std::size_t LinkedToken(std::string_view s, std::size_t i) {
  std::size_t j = i;
  if (s[i] == '@' && i + 1 < s.size() && MdAlnum(s[i + 1]) && (i == 0 || !MdAlnum(s[i - 1]))) {
    j = i + 1;
    while (j < s.size() && (MdAlnum(s[j]) || s[j] == '-' || s[j] == '_' || s[j] == '/')) ++j;
  } else if (s[i] == '#' && i + 1 < s.size() && MdDigit(s[i + 1])) {
    j = i + 1;
    while (j < s.size() && MdDigit(s[j])) ++j;
  } else if ((s.substr(i, 3) == "GH-" || s.substr(i, 3) == "gh-") && i + 3 < s.size() &&
             MdDigit(s[i + 3]) && (i == 0 || !MdAlnum(s[i - 1]))) {
    j = i + 3;
    while (j < s.size() && MdDigit(s[j])) ++j;
  }
  return j - i;
}

}  // namespace

// Besides what util/escape.h says (issue 36): a mention ("@team") and an issue reference ("#12",
// "GH-12") become code spans ("`@team`"), which GitHub never links, so that a name cannot ping a
// team or close an issue from a pull request comment; and TerminalSafe names the code points a
// terminal shows as nothing (Invisible above) as "\uXXXX".
std::string MarkdownCell(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  // Mentions and references become code spans, where GitHub links neither.
  std::size_t plain = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = LinkedToken(s, i);
    if (n == 0) {
      ++i;
      continue;
    }
    AppendCellText(out, s.substr(plain, i - plain));
    out += '`';
    out.append(s.substr(i, n));
    out += '`';
    i += n;
    plain = i;
  }
  AppendCellText(out, s.substr(plain));
  return out;
}

std::string MarkdownCode(std::string_view s) {
  std::string body;
  body.reserve(s.size());
  Escape(body, OneLine(s), false, [](std::string& o, char c) {
    if (c == '|') o += '\\';
    o += c;
  });
  // The fence: one backtick more than the longest run inside.
  std::size_t longest = 0, run = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  // A code span drops one space at each end when both have one, and a backtick at an end
  // would join the fence: pad.
  const bool pad = body.empty() || body.front() == '`' || body.back() == '`' ||
                   (body.front() == ' ' && body.back() == ' ');
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

std::string HtmlEscape(std::string_view t) {
  std::string o;
  o.reserve(t.size());
  for (char c : t) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

}  // namespace vouch
