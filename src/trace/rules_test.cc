// Component rules are RE2 (issue 21): linear in the kernel name, and a pattern RE2 rejects is
// an error naming the rules file, the component and the pattern.
#include "trace/rules.h"

#include <gtest/gtest.h>

#include <string>

namespace vouch::trace {
namespace {

TEST(RulesRe2, AMegabyteNameIsClassifiedWithoutRecursion) {
  // std::regex recursed once per character of (a|b)* and overflowed the stack here.
  auto r = ParseRules("gemm = ^gemm_(a|b)*c$\nnorm = norm\n", "rules.txt");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string body(1 << 20, 'a');
  EXPECT_EQ(r->Classify("GEMM_" + body + "c"), "gemm");  // case-insensitive
  EXPECT_EQ(r->Classify("gemm_" + body), "other");
  EXPECT_EQ(r->Classify(body + "_LayerNorm"), "norm");
  EXPECT_EQ(DefaultRules().Classify("ampere_fp16_S1688GEMM_" + body), "gemm");
}

TEST(RulesRe2, APatternRe2RejectsNamesTheFileComponentAndPattern) {
  // ECMAScript lookahead and backreferences were accepted (and can backtrack exponentially).
  auto look = ParseRules("# mine\nattn = flash(?=_fwd)\n", "/tmp/my_rules.txt");
  ASSERT_FALSE(look.ok());
  const std::string& m = look.error().message;
  EXPECT_NE(m.find("/tmp/my_rules.txt"), std::string::npos) << m;
  EXPECT_NE(m.find("component 'attn'"), std::string::npos) << m;
  EXPECT_NE(m.find("flash(?=_fwd)"), std::string::npos) << m;
  EXPECT_NE(m.find("not a valid regular expression (RE2: "), std::string::npos) << m;
  auto back = ParseRules(R"({"components":[{"name":"dup","pattern":"(ab)\\1"}]})", "r.json");
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("r.json: the pattern of component 'dup'"), std::string::npos)
      << back.error().message;
  EXPECT_NE(back.error().message.find("(ab)\\1"), std::string::npos) << back.error().message;
}

}  // namespace
}  // namespace vouch::trace
