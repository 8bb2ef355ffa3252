#include "util/escape.h"

#include <gtest/gtest.h>

#include "util/strings.h"  // MarkdownCell was declared there: its users still compile

namespace vouch {
namespace {

// What a hostile metric name holds: an OSC 52 clipboard write, a colour and a fake verdict.
const std::string kHostile = "\x1b]52;c;ZXZpbA==\x07\x1b[32mgate: PASS\x1b[0m";

TEST(Escape, TerminalSafeShowsEveryControlAndKeepsUtf8) {
  EXPECT_EQ(TerminalSafe(kHostile), "\\x1b]52;c;ZXZpbA==\\x07\\x1b[32mgate: PASS\\x1b[0m");
  EXPECT_EQ(TerminalSafe("a\nb\rc\td\x7f"), "a\\x0ab\\x0dc\\x09d\\x7f");
  // C1 controls (U+009B is a one-character CSI) as their UTF-8 bytes; a lone 0x9b byte and
  // other invalid UTF-8 (a cut sequence, an overlong '/', a surrogate) as bytes too.
  EXPECT_EQ(TerminalSafe("x\xc2\x9b"
                         "31my"),
            "x\\xc2\\x9b31my");
  EXPECT_EQ(TerminalSafe("\x9b"
                         "31m"),
            "\\x9b31m");
  EXPECT_EQ(TerminalSafe("\xe2\x82"), "\\xe2\\x82");
  EXPECT_EQ(TerminalSafe("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  // Bidirectional overrides reorder what is shown: named.
  EXPECT_EQ(TerminalSafe("ab\xe2\x80\xae"
                         "cd"),
            "ab\\u202ecd");
  // So are the characters a terminal shows as nothing: "vouch<U+200B>.wall_s" is seen to differ.
  EXPECT_EQ(TerminalSafe("vouch\xe2\x80\x8b.wall_s \xef\xbb\xbfx\xc2\xad"),
            "vouch\\u200b.wall_s \\ufeffx\\u00ad");
  // Valid UTF-8 (accents, CJK, emoji, U+00A0) is kept.
  const std::string text =
      "d\xc3\xa9"
      "bit \xe4\xb8\xad \xf0\x9f\x9a\x80 \xc2\xa0 <&>|`";
  EXPECT_EQ(TerminalSafe(text), text);
  EXPECT_EQ(TerminalText("line 1\n\tline 2\x1b[2J\r\n"), "line 1\n\tline 2\\x1b[2J\\x0d\n");
}

TEST(Escape, MarkdownCellEscapesMarkupCellsAndControls) {
  EXPECT_EQ(MarkdownCell("a|b\nc"), "a\\|b c");
  EXPECT_EQ(MarkdownCell("<h1>gate: PASS</h1><img src=x onerror=alert(1)>"),
            "&lt;h1&gt;gate: PASS&lt;/h1&gt;&lt;img src=x onerror=alert(1)&gt;");
  EXPECT_EQ(MarkdownCell("a & b `code` c\\|d"), "a &amp; b &#96;code&#96; c\\\\\\|d");
  EXPECT_EQ(MarkdownCell(kHostile), "\\x1b]52;c;ZXZpbA==\\x07\\x1b[32mgate: PASS\\x1b[0m");
  EXPECT_EQ(MarkdownCell("tok_s"), "tok_s");
}

TEST(Escape, MarkdownCodeFencesPastEveryBacktickRun) {
  EXPECT_EQ(MarkdownCode("void k<float>(int&)"), "`void k<float>(int&)`");
  EXPECT_EQ(MarkdownCode("a`b"), "``a`b``");
  EXPECT_EQ(MarkdownCode("``x``"), "``` ``x`` ```");
  EXPECT_EQ(MarkdownCode("a|b\nc\x1b"), "`a\\|b c\\x1b`");
  EXPECT_EQ(MarkdownCode(" x "), "`  x  `");
}

TEST(Escape, HtmlEscape) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(Escape, TerminalVerbatimFindsOneByteAnywhere) {
  EXPECT_TRUE(TerminalVerbatim(""));
  std::string plain = "\n\t";
  for (int c = 0x20; c < 0x7f; ++c) plain += static_cast<char>(c);
  for (std::size_t at = 0; at < plain.size(); ++at) EXPECT_TRUE(TerminalVerbatim(plain.substr(at)));
  for (std::size_t n : {1, 63, 64, 65, 200}) {
    std::string s(n, 'a');
    s[n / 2] = '\n';
    EXPECT_TRUE(TerminalVerbatim(s)) << n;
    for (std::size_t at = 0; at < n; ++at)
      for (char bad : {'\x1b', '\x1f', '\x7f', '\x80', '\xff', '\r', '\0'}) {
        std::string t = s;
        t[at] = bad;
        ASSERT_FALSE(TerminalVerbatim(t)) << n << " " << at << " " << int(bad);
      }
  }
}

}  // namespace
}  // namespace vouch
