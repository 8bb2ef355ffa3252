#include "metrics/expect.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

Metric Num(const std::string& name, double v) {
  return Metric{name, v, "", Better::kNone, "test", {}, std::nullopt};
}
Metric Text(const std::string& name, const std::string& t) {
  return Metric{name, 0, "", Better::kNone, "test", {}, t};
}

TEST(Expect, Parse) {
  auto e = ParseExpect("fc2.dispatches=600");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, Expectation::Kind::kEqualTo);
  EXPECT_EQ(e->name, "fc2.dispatches");
  ASSERT_TRUE(e->value);
  EXPECT_EQ(*e->value, 600);
  auto t = ParseExpect("video_sha256=c62d23a4");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->value);
  EXPECT_EQ(*t->text, "c62d23a4");
  EXPECT_FALSE(ParseExpect("fc2.dispatches"));
  EXPECT_FALSE(ParseExpect("=3"));
  EXPECT_FALSE(ParseExpect("a="));
  auto q = ParseExpectEqual("video_sha256");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->kind, Expectation::Kind::kEqualAcrossLegs);
  EXPECT_FALSE(ParseExpectEqual(""));
  auto wrong = ParseExpectEqual("a=1");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("use --expect NAME=N"), std::string::npos);
}

// The shape of seed 003: latent checksums equal across measured runs, 600 FC2 dispatches
// per run.
TEST(Expect, ChecksumsAndDispatchCounts) {
  std::vector<std::vector<Metric>> legs = {
      {Text("video_sha256", "c62d"), Num("fc2.successes", 600)},
      {Text("video_sha256", "c62d"), Num("fc2.successes", 600)},
      {Text("video_sha256", "ffff"), Num("fc2.successes", 599)},
  };
  std::vector<Expectation> ex = {*ParseExpectEqual("video_sha256"),
                                 *ParseExpect("fc2.successes=600")};
  auto v = CheckExpectations(ex, legs);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].leg, 2u);
  EXPECT_EQ(v[0].metric, "video_sha256");
  EXPECT_EQ(v[0].expected, "the value of leg 1 (c62d)");
  EXPECT_EQ(v[0].got, "ffff");
  // Messages count legs from 1, as the progress lines do.
  EXPECT_EQ(v[0].message,
            "leg 3: metric 'video_sha256' expected the value of leg 1 (c62d), got ffff");
  // The run passes its own leg numbers (warm-up legs come first).
  auto numbered = CheckExpectations(ex, legs, {2, 3, 4});
  ASSERT_EQ(numbered.size(), 2u);
  EXPECT_EQ(numbered[0].message,
            "leg 4: metric 'video_sha256' expected the value of leg 2 (c62d), got ffff");
  EXPECT_EQ(v[1].leg, 2u);
  EXPECT_EQ(v[1].expected, "600");
  EXPECT_EQ(v[1].got, "599");
}

TEST(Expect, AllAgreeMeansNoViolations) {
  std::vector<std::vector<Metric>> legs = {{Num("sum", 1.5)}, {Num("sum", 1.5)}};
  EXPECT_TRUE(CheckExpectations({*ParseExpectEqual("sum"), *ParseExpect("sum=1.5")}, legs).empty());
  EXPECT_TRUE(CheckExpectations({*ParseExpectEqual("sum")}, {}).empty());
}

TEST(Expect, MissingIsAViolationNeverAZero) {
  std::vector<std::vector<Metric>> legs = {{}, {Num("n", 0)}};
  auto v = CheckExpectations({*ParseExpect("n=0"), *ParseExpectEqual("n")}, legs);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].leg, 0u);
  EXPECT_EQ(v[0].got, "missing");
  EXPECT_EQ(v[1].leg, 0u);
  EXPECT_EQ(v[1].expected, "the value of leg 2 (0)");
  EXPECT_EQ(v[1].got, "missing");
  auto nowhere = CheckExpectations({*ParseExpectEqual("absent")}, {{}, {}});
  ASSERT_EQ(nowhere.size(), 2u);
  EXPECT_EQ(nowhere[1].expected, "a value in every leg");
}

TEST(Expect, TextAndNumberNeverCompareEqual) {
  std::vector<std::vector<Metric>> legs = {{Text("n", "600")}, {Num("n", 600)}};
  auto v = CheckExpectations({*ParseExpect("n=600"), *ParseExpectEqual("n")}, legs);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].leg, 0u);  // "600" text is not the number 600
  EXPECT_EQ(v[1].leg, 1u);
}

TEST(Expect, IntegersAreComparedAsIntegers) {
  // 2^53 + 1 rounds to 2^53 as a double: --expect ops=2^53+1 passed a leg reporting 2^53.
  auto e = ParseExpect("ops=9007199254740993");
  ASSERT_TRUE(e);
  ASSERT_TRUE(e->integer);
  EXPECT_EQ(*e->integer, 9007199254740993);
  auto v = CheckExpectations({*e}, {{Num("ops", 9007199254740992.0)}});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].expected, "9007199254740993");
  EXPECT_EQ(v[0].got, "9007199254740992");
  Metric exact = Num("ops", 9007199254740992.0);
  exact.integer = 9007199254740993;  // what the channel keeps from the JSON integer
  EXPECT_TRUE(CheckExpectations({*e}, {{exact}}).empty());
  // Across legs too: two integers one double apart differ.
  Metric low = Num("ops", 9007199254740992.0);
  low.integer = 9007199254740992;
  EXPECT_EQ(CheckExpectations({*ParseExpectEqual("ops")}, {{exact}, {low}}).size(), 1u);
  EXPECT_FALSE(ParseExpect("ops=99999999999999999999"));  // beyond int64: no silent rounding
  EXPECT_EQ(*ParseExpect("ops=2.5")->value, 2.5);
  EXPECT_TRUE(ParseExpect("ops=5xyz")->text);  // not a number: compared as text
}

}  // namespace
}  // namespace vouch
