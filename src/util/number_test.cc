#include "util/number.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "util/number_range.h"

namespace vouch {
namespace {

TEST(ParseFiniteDouble, TakesWholeFiniteTokensOnly) {
  EXPECT_EQ(*ParseFiniteDouble("5", "x"), 5);
  EXPECT_EQ(*ParseFiniteDouble("-2.5e3", "x"), -2500);
  EXPECT_EQ(*ParseFiniteDouble("+0.25", "x"), 0.25);
  EXPECT_EQ(*ParseFiniteDouble("1e-400", "x"), 0);  // underflow is a (tiny) number
  for (const char* bad : {"5xyz", "7.5.5", "", " 5", "5 ", "nan", "inf", "-inf", "Infinity",
                          "1e400", "-1e309", "0x10", "--1", "+-1", "e5"}) {
    auto r = ParseFiniteDouble(bad, "f.json:3 \"dur\"");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("f.json:3 \"dur\""), std::string::npos);
    }
  }
  EXPECT_EQ(ParseFiniteDouble("7.5.5", "f:2 dur").error().message,
            "f:2 dur '7.5.5' is not a number");
  EXPECT_EQ(ParseFiniteDouble("1e400", "f:2 dur").error().message,
            "f:2 dur '1e400' is not a finite number");
}

TEST(ParseInt64, WholeTokenInRange) {
  EXPECT_EQ(*ParseInt64("9007199254740993", "x"), 9007199254740993);
  EXPECT_EQ(*ParseInt64("-9223372036854775808", "x"), std::numeric_limits<std::int64_t>::min());
  for (const char* bad : {"9223372036854775808", "1.0", "1e3", "12a", "", "-", " 1"})
    EXPECT_FALSE(ParseInt64(bad, "x").ok()) << bad;
  EXPECT_EQ(ParseInt64("9223372036854775808", "n").error().message,
            "n '9223372036854775808' is out of range for a 64-bit integer");
  EXPECT_EQ(*ParseUint64("18446744073709551615", "x"), UINT64_MAX);
  EXPECT_EQ(ParseUint64("-1", "drops").error().message,
            "drops '-1' is negative; a count cannot be");
  EXPECT_FALSE(ParseInt64In("70000", 0, 65535, "port").ok());
  EXPECT_EQ(*ParseInt64In("7", 0, 65535, "port"), 7);
  EXPECT_TRUE(IsIntegerToken("-12"));
  EXPECT_FALSE(IsIntegerToken("12.0"));
}

TEST(ScaleFinite, RefusesOverflowAfterTheScale) {
  EXPECT_EQ(*ScaleFinite(2.5, 1e3, "x"), 2500);
  auto r = ScaleFinite(1e300, 1e9, "kernel 1 duration");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("kernel 1 duration"), std::string::npos);
  EXPECT_FALSE(ScaleFinite(std::nan(""), 1, "x").ok());
}

TEST(CheckedInt64, RefusesWhatTheCastWouldBreak) {
  EXPECT_EQ(*CheckedInt64(2.6, "x"), 3);
  EXPECT_FALSE(CheckedInt64(1e300, "x").ok());
  EXPECT_FALSE(CheckedInt64(std::nan(""), "x").ok());
  EXPECT_EQ(*SecondsToNs(1.5, "x"), 1500000000);
  EXPECT_FALSE(SecondsToNs(1e300, "marker").ok());
  EXPECT_FALSE(SecondsToNs(5e9, "marker").ok());  // beyond 2^62 ns
  EXPECT_FALSE(CheckedAdd(INT64_MAX, 1, "x").ok());
  EXPECT_EQ(*CheckedAdd(2, 3, "x"), 5);
}

TEST(Number, ParseNumberInRefusesWhatIsNotInItsRange) {
  const NumberRange pct{0, 100};
  EXPECT_EQ(*ParseNumberIn("5", pct, "--x"), 5.0);
  EXPECT_EQ(*ParseNumberIn("100", pct, "--x"), 100.0);
  for (const char* bad : {"nan", "inf", "-1", "100.5", "5xyz", "", "0x10", "1e400"}) {
    auto r = ParseNumberIn(bad, pct, "--max-spread-pct");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().message,
              fmt::format("--max-spread-pct '{}' is not a number from 0 to 100", bad));
  }
  const NumberRange fraction{0, 1, true, true};
  EXPECT_FALSE(ParseNumberIn("1", fraction, "--confidence"));
  EXPECT_FALSE(ParseNumberIn("0", fraction, "--confidence"));
  EXPECT_EQ(ParseNumberIn("2", fraction, "--confidence").error().message,
            "--confidence '2' is not a number above 0 and below 1");
  const NumberRange count{1, 1000, false, false, true};
  EXPECT_EQ(*ParseNumberIn("7", count, "--trials"), 7.0);
  EXPECT_EQ(ParseNumberIn("7.5", count, "--trials").error().message,
            "--trials '7.5' is not a whole number from 1 to 1000");
}

}  // namespace
}  // namespace vouch
