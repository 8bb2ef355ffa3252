#include "util/strings.h"

#include <gtest/gtest.h>

namespace vouch {

TEST(Strings, EditDistance) {
  EXPECT_EQ(EditDistance("doctor", "doctor"), 0);
  EXPECT_EQ(EditDistance("docter", "doctor"), 1);
  EXPECT_EQ(EditDistance("", "abc"), 3);
}

TEST(Strings, ClosestMatchNeedsToBeClose) {
  std::vector<std::string> cmds = {"doctor", "clock", "lock", "help"};
  EXPECT_EQ(ClosestMatch("doctr", cmds), "doctor");
  EXPECT_EQ(ClosestMatch("lokc", cmds), "lock");
  EXPECT_EQ(ClosestMatch("zzzzzz", cmds), "");
}

TEST(Strings, ShellQuoteRoundTrips) {
  EXPECT_EQ(ShellQuote("plain-arg"), "plain-arg");
  EXPECT_EQ(ShellQuote("two words"), "'two words'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

TEST(Strings, HumanBytes) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(3.0 * 1024 * 1024 * 1024), "3.0 GiB");
}

TEST(Strings, HumanDuration) {
  EXPECT_EQ(HumanDuration(12e-9), "12 ns");
  EXPECT_EQ(HumanDuration(3.44e-6), "3.4 us");
  EXPECT_EQ(HumanDuration(0.0125), "12.5 ms");
  EXPECT_EQ(HumanDuration(4.2), "4.2 s");
  EXPECT_EQ(HumanDuration(59.97), "1 min 00 s");  // not "60.0 s"
  EXPECT_EQ(HumanDuration(125), "2 min 05 s");
  EXPECT_EQ(HumanDuration(3780), "1 h 03 min");
  EXPECT_EQ(HumanDuration(-0.5), "-500.0 ms");
  EXPECT_EQ(HumanDuration(0), "0 ns");
}

}  // namespace vouch

namespace vouch {
namespace {

TEST(LineReader, LinesNumbersAndAnUnterminatedLast) {
  LineReader r("a\n\nbc\r\nlast");
  LineReader::Line l;
  std::vector<std::string> text;
  std::vector<int> numbers;
  std::vector<bool> terminated;
  while (r.Next(&l)) {
    text.emplace_back(l.text);
    numbers.push_back(l.number);
    terminated.push_back(l.terminated);
  }
  EXPECT_EQ(text, (std::vector<std::string>{"a", "", "bc\r", "last"}));
  EXPECT_EQ(numbers, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(terminated, (std::vector<bool>{true, true, true, false}));
  LineReader empty("");
  EXPECT_FALSE(empty.Next(&l));
  LineReader one("x\n");
  ASSERT_TRUE(one.Next(&l));
  EXPECT_TRUE(l.terminated);
  EXPECT_FALSE(one.Next(&l));  // no phantom empty line after the final newline
}

TEST(Strings, StartsAndEndsWith) {
  EXPECT_TRUE(StartsWith("tg128.tokens_per_s", "tg"));
  EXPECT_FALSE(StartsWith("t", "tg"));
  EXPECT_TRUE(EndsWith("tg128.tokens_per_s", ".tokens_per_s"));
  EXPECT_TRUE(EndsWith("x", ""));
  EXPECT_FALSE(EndsWith("s", ".tokens_per_s"));
  EXPECT_FALSE(EndsWith("a.tokens_per_", ".tokens_per_s"));
}

}  // namespace
}  // namespace vouch
