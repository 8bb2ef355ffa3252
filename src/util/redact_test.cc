#include "util/redact.h"

#include <gtest/gtest.h>

namespace vouch {
namespace {

using V = std::vector<std::string>;

TEST(Redact, EveryFormOfASecretInACommandLine) {
  int n = 0;
  EXPECT_EQ(RedactArgv({"bench", "--token=abc", "--api-key=k1", "--password", "hunter2", "-p",
                        "8080", "HF_TOKEN=x", "--model", "m.gguf"},
                       &n),
            (V{"bench", "--token=<redacted>", "--api-key=<redacted>", "--password", "<redacted>",
               "-p", "8080", "HF_TOKEN=<redacted>", "--model", "m.gguf"}));
  EXPECT_EQ(n, 4);
  EXPECT_EQ(RedactArgv({"run", "--env", "HF_TOKEN=abc", "--", "x"}, &n),
            (V{"run", "--env", "HF_TOKEN=<redacted>", "--", "x"}));
  EXPECT_EQ(n, 1);
  // Already redacted: not counted twice.
  EXPECT_EQ(RedactArgv({"--password", "<redacted>"}, &n), (V{"--password", "<redacted>"}));
  EXPECT_EQ(n, 0);
  EXPECT_EQ(RedactCommandLine("python b.py  --secret s3 --n 4", &n),
            "python b.py  --secret <redacted> --n 4");
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(IsSecretName("hf_token"));
  EXPECT_FALSE(IsSecretName("MODE"));
}

}  // namespace
}  // namespace vouch
