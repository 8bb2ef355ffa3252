#include "util/fs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace vouch {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Issue 21, class 9: the temporary file of an atomic write was PATH.tmp.PID opened with
// O_CREAT|O_TRUNC, so a symlink planted there (a shared folder) redirected the write into
// its target and then became PATH itself.
TEST(WriteFileAtomic, NeverFollowsASymlinkPlantedAtATemporaryName) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("vouch_fs_atomic_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path victim = dir / "victim.txt";
  std::ofstream(victim) << "precious";
  const fs::path target = dir / "record.json";
  // Every name the old scheme could pick, and a few neighbours.
  for (int pid = ::getpid() - 2; pid <= ::getpid() + 2; ++pid)
    fs::create_symlink(victim, fmt::format("{}.tmp.{}", target.string(), pid));
  ASSERT_TRUE(WriteFileAtomic(target.string(), "{\"ok\":true}").ok());
  EXPECT_EQ(Slurp(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_EQ(Slurp(target), "{\"ok\":true}");
  // Nothing but the planted links, the victim and the file itself: no temporary left over.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 5 + 2);
  // Rewriting goes through a fresh name each time.
  ASSERT_TRUE(WriteFileAtomic(target.string(), "second", FileSync::kNoFsync).ok());
  EXPECT_EQ(Slurp(target), "second");
  EXPECT_EQ(Slurp(victim), "precious");
  fs::remove_all(dir);
}

TEST(WriteFileAtomic, ErrorNamesTheFileAskedFor) {
  auto s = WriteFileAtomic("/nonexistent-vouch-dir/x.json", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/nonexistent-vouch-dir/x.json"), std::string::npos);
}

}  // namespace
}  // namespace vouch

namespace vouch {
namespace {

TEST(ListDir, NamesEachEntryWithItsOwnTypeAndNeverFollowsUnlessAsked) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("vouch_fs_list_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "file") << "x";
  fs::create_symlink(dir / "sub", dir / "link");
  auto l = ListDir(dir.string(), false);
  ASSERT_TRUE(l.ok()) << l.error().message;
  std::map<std::string, DirEntry::Type> got;
  for (const auto& e : *l) got[e.name] = e.type;
  EXPECT_EQ(got, (std::map<std::string, DirEntry::Type>{{"file", DirEntry::Type::kFile},
                                                        {"link", DirEntry::Type::kSymlink},
                                                        {"sub", DirEntry::Type::kDir}}));
  EXPECT_EQ(ListDir(dir.string(), false, 2)->size(), 2u);
  // A link to a folder is listed only when following is asked for.
  auto no = ListDir((dir / "link").string(), false);
  ASSERT_FALSE(no.ok());
  EXPECT_NE(no.error().message.find((dir / "link").string()), std::string::npos);
  auto yes = ListDir((dir / "link").string(), true);
  ASSERT_TRUE(yes.ok());
  EXPECT_TRUE(yes->empty());
  EXPECT_FALSE(ListDir((dir / "file").string(), true).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vouch
