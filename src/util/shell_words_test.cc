#include "util/shell_words.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace vouch {
namespace {

using Words = std::vector<std::string>;

TEST(ShellWords, QuotesAndEscapesAsShDoes) {
  EXPECT_EQ(*SplitShellWords("echo a\\ b"), (Words{"echo", "a b"}));
  EXPECT_EQ(*SplitShellWords("./bench  --n 'a b' \"\" x\ty"),
            (Words{"./bench", "--n", "a b", "", "x", "y"}));
  EXPECT_EQ(*SplitShellWords("printf '%s\\n' \"a \\\"q\\\" b\""),
            (Words{"printf", "%s\\n", "a \"q\" b"}));
  EXPECT_EQ(*SplitShellWords("a 'x|y' '$(id)'"), (Words{"a", "x|y", "$(id)"}));
  EXPECT_TRUE(SplitShellWords("")->empty());
  ::setenv("VOUCH_SHELL_WORDS_TEST", "v 1", 1);
  EXPECT_EQ(*SplitShellWords("a $VOUCH_SHELL_WORDS_TEST \"$VOUCH_SHELL_WORDS_TEST\""),
            (Words{"a", "v", "1", "v 1"}));
}

TEST(ShellWords, RefusesWhatWouldRunSomethingElse) {
  auto sub = SplitShellWords("bench $(id)");
  ASSERT_FALSE(sub);
  EXPECT_EQ(sub.error().message,
            "'bench $(id)': command substitution ($(...) or backticks) is not allowed; run it "
            "yourself and pass the result, or use --shell");
  EXPECT_FALSE(SplitShellWords("bench `id`"));
  EXPECT_FALSE(SplitShellWords("bench \"$(id)\""));
  auto op = SplitShellWords("bench | tee x");
  ASSERT_FALSE(op);
  EXPECT_NE(op.error().message.find("unquoted shell operator"), std::string::npos);
  auto quote = SplitShellWords("run 'oops");
  ASSERT_FALSE(quote);
  EXPECT_EQ(quote.error().message,
            "'run 'oops': shell syntax error (an unbalanced quote or a trailing backslash)");
  ::unsetenv("VOUCH_SHELL_WORDS_UNSET");
  auto undef = SplitShellWords("a $VOUCH_SHELL_WORDS_UNSET");
  ASSERT_FALSE(undef);
  EXPECT_NE(undef.error().message.find("not set"), std::string::npos);
}

}  // namespace
}  // namespace vouch
