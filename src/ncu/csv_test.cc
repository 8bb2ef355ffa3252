#include "ncu/csv.h"

#include <gtest/gtest.h>

namespace vouch::ncu {
namespace {

TEST(Csv, Rfc4180QuotingCommasNewlinesAndCrlf) {
  auto r = ParseCsv("a,\"b,c\",\"say \"\"hi\"\"\"\r\n1,,\"two\nlines\"\n", "t.csv");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], (CsvRow{"a", "b,c", "say \"hi\""}));
  EXPECT_EQ((*r)[1], (CsvRow{"1", "", "two\nlines"}));
}

TEST(Csv, EmptyFieldsLastLineWithoutNewlineAndBlankLines) {
  auto r = ParseCsv("x,\n\n\"\",y", "t.csv");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], (CsvRow{"x", ""}));
  EXPECT_EQ((*r)[1], (CsvRow{"", "y"}));
  auto empty = ParseCsv("", "t.csv");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(Csv, UnterminatedQuoteIsAnErrorWithTheLine) {
  auto r = ParseCsv("a,b\n\"c,d\nmore", "cut.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cut.csv"), std::string::npos);
  EXPECT_NE(r.error().message.find("line 2"), std::string::npos);
}

}  // namespace
}  // namespace vouch::ncu
