#include "util/unicode_name.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

std::string Why(std::string_view name) {
  auto s = CheckNameShape(name);
  return s ? "" : s.error().message;
}

TEST(UnicodeName, NamesThatLookLikeOthersAreRefusedSayingWhy) {
  EXPECT_EQ(Why("tok_s"), "");
  EXPECT_EQ(Why("decode[ms=10].mean"), "");
  EXPECT_EQ(Why("sleep 0.1.mean"), "") << "a space inside a name is a space";
  EXPECT_EQ(Why("latency_µs"), "") << "one script per label: 'latency' and 'µs'";
  EXPECT_EQ(Why("durée_ms"), "");
  EXPECT_EQ(Why("吞吐量_トークン"), "") << "Han and Katakana are one script here";
  EXPECT_EQ(Why("vouch\u200b.wall_s"), "it holds an invisible character (U+200B)");
  EXPECT_EQ(Why("x\u202egnp.tok_s"), "it holds an invisible character (U+202E)");
  EXPECT_EQ(Why("a\u00adb"), "it holds an invisible character (U+00AD)");
  EXPECT_EQ(Why(" vouch.wall_s"), "it starts or ends with a space");
  EXPECT_EQ(Why("tok_s\u3000"), "it starts or ends with a space");
  EXPECT_EQ(Why("tok\nleg 2 of 2: valid"), "it holds a control character (U+000A)");
  EXPECT_EQ(Why("g\xd1\x80u.active_ns"),
            "its label 'g\xd1\x80u' mixes Latin and Cyrillic letters (U+0440): a label is "
            "written in one script");
  EXPECT_EQ(Why("tok\xff"), "it is not valid UTF-8 (byte 4 of 4)");
  EXPECT_EQ(Why(""), "it is empty");
}

TEST(UnicodeName, FoldedNamesCompareAsTheyRead) {
  EXPECT_EQ(FoldedName("VOUCH.Wall_s"), "vouch.wall_s");
  EXPECT_EQ(FoldedName("\uff36\uff2f\uff35\uff23\uff28.wall_s"), "vouch.wall_s");
  EXPECT_EQ(FoldedName("vouch\u200b.wall_s"), "vouch.wall_s");
  EXPECT_EQ(FoldedName("\xff"), "\xff");
}

}  // namespace
}  // namespace vouch
