#include "util/file_claim.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace vouch {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("vouch_file_claim_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(FileClaim, ASecondClaimOfOneFileIsRefusedWhileTheFirstHoldsIt) {
  const std::string f = (Scratch("second") / "base.json").string();
  auto first = FileClaim::Claim(f, false, "baseline");
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(fs::exists(f));
  auto second = FileClaim::Claim(f, true, "baseline");
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().message,
            f + " is claimed by another vouch command that is still running (it will write its "
                "baseline there); give another file, or wait for that command to end");
  // Nothing written: the empty claim goes with it, and the file can be claimed again.
  *first = FileClaim();
  EXPECT_FALSE(fs::exists(f));
  EXPECT_TRUE(FileClaim::Claim(f, false, "baseline"));
}

TEST(FileClaim, AWrittenFileIsKeptAndNotReplacedWithoutOverwrite) {
  const std::string f = (Scratch("kept") / "base.json").string();
  {
    auto c = FileClaim::Claim(f, false, "baseline");
    ASSERT_TRUE(c);
    std::ofstream(f) << "{}";
    c->Keep();
  }
  ASSERT_TRUE(fs::exists(f));
  auto again = FileClaim::Claim(f, false, "baseline");
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("already exists"), std::string::npos);
  EXPECT_TRUE(FileClaim::Claim(f, true, "baseline"));
  EXPECT_TRUE(fs::exists(f)) << "an --overwrite claim leaves the old file until the new one";
  fs::create_symlink("base.json", fs::path(f).parent_path() / "link.json");
  auto link = FileClaim::Claim((fs::path(f).parent_path() / "link.json").string(), true, "b");
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().message.find("symbolic link"), std::string::npos);
}

}  // namespace
}  // namespace vouch
