#include "leg/proc_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace vouch::leg_detail {

TEST(ProcStat, ParsesCommWithSpacesAndParentheses) {
  const std::string text =
      "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
      "987654 12345678 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  ProcStat s;
  ASSERT_TRUE(ParseProcStat(text, &s));
  EXPECT_EQ(s.pid, 4242);
  EXPECT_EQ(s.comm, "my (odd) name");
  EXPECT_EQ(s.state, 'S');
  EXPECT_EQ(s.ppid, 17);
  EXPECT_EQ(s.pgrp, 4242);
  EXPECT_EQ(s.start_ticks, 987654u);
  EXPECT_EQ(s.rss_pages, 2560u);
}

TEST(ProcStat, RefusesTruncatedAndGarbage) {
  ProcStat s;
  EXPECT_FALSE(ParseProcStat("", &s));
  EXPECT_FALSE(ParseProcStat("12 (x) S 1 2", &s));
  EXPECT_FALSE(ParseProcStat("no parentheses at all", &s));
  EXPECT_FALSE(ParseProcStat(")( S 1 2 3", &s));
}

TEST(ProcStat, ReadsOurselves) {
  ProcStat s;
  ASSERT_TRUE(ReadProcStat(::getpid(), &s));
  EXPECT_EQ(s.pid, ::getpid());
  EXPECT_EQ(s.ppid, ::getppid());
  EXPECT_GT(s.rss_pages, 0u);
  EXPECT_FALSE(ReadProcStat(-5, &s));
}

}  // namespace vouch::leg_detail
