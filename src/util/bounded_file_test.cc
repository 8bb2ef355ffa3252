#include "util/bounded_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "util/fs.h"

namespace vouch {
namespace {

namespace fs = std::filesystem;

class BoundedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("vouch_bounded_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string P(const std::string& n) const { return (dir_ / n).string(); }
  fs::path dir_;
};

TEST_F(BoundedFileTest, ReadsARegularFile) {
  std::ofstream(P("a.txt")) << "hello\n";
  auto r = ReadBoundedFile(P("a.txt"), 100);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "hello\n");
}

TEST_F(BoundedFileTest, AFileThatGrowsAfterItsOpenIsReadWholeUpToTheCap) {
  std::ofstream(P("g.txt")) << "ab";
  auto f = BoundedFile::Open(P("g.txt"), 10000, FileKinds::kRegular);
  ASSERT_TRUE(f.ok()) << f.error().message;
  std::ofstream(P("g.txt"), std::ios::app) << std::string(5000, 'c');
  auto r = f->ReadAll();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "ab" + std::string(5000, 'c'));
  EXPECT_EQ(ReadBoundedFile(P("g.txt"), kNoSizeCap).value(), *r);  // no cap: no overflow
  auto g = BoundedFile::Open(P("g.txt"), 6000, FileKinds::kRegular);
  ASSERT_TRUE(g.ok());
  std::ofstream(P("g.txt"), std::ios::app) << std::string(1000, 'd');
  auto over = g->ReadAll();
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message,
            P("g.txt") + ": is over the limit of 5.9 KiB (it grew while being read, or is a pipe)");
}

TEST_F(BoundedFileTest, AFileWhoseSizeSaysNothingIsReadToItsEnd) {
  // procfs gives a size of 0: the read goes on to the read that returns 0, not stopping at
  // the size (which a regular file's short read at its size does).
  auto r = ReadBoundedFile("/proc/self/status", 1 << 20);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->find("\nVmRSS:"), std::string::npos) << *r;
  EXPECT_EQ(r->back(), '\n');
  std::ofstream(P("exact.txt")) << std::string(4096, 'x');  // a size of a whole buffer
  EXPECT_EQ(ReadBoundedFile(P("exact.txt"), 1 << 20).value(), std::string(4096, 'x'));
  std::ofstream(P("empty.txt")).flush();
  EXPECT_EQ(ReadBoundedFile(P("empty.txt"), 1 << 20).value(), "");
}

TEST_F(BoundedFileTest, ReadIntoKeepsItsBufferForTheNextFile) {
  std::ofstream(P("long.txt")) << std::string(9000, 'l');
  std::ofstream(P("short.txt")) << "short";
  std::string buf;
  auto f = BoundedFile::Open(P("long.txt"), 100000, FileKinds::kRegular);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->ReadInto(buf).value(), 9000u);
  EXPECT_EQ(buf.substr(0, 9000), std::string(9000, 'l'));
  const std::size_t kept = buf.size();
  auto g = BoundedFile::Open(P("short.txt"), 100000, FileKinds::kRegular);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->ReadInto(buf).value(), 5u);
  EXPECT_EQ(buf.substr(0, 5), "short");
  EXPECT_EQ(buf.size(), kept);  // not shrunk: the next file needs no new pages
}

TEST_F(BoundedFileTest, RefusesAFileOverItsCapWithTheSizes) {
  std::ofstream(P("big.txt")) << std::string(3000, 'x');
  auto r = ReadBoundedFile(P("big.txt"), 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, P("big.txt") + ": is 2.9 KiB, the limit is 1 KiB");
}

TEST_F(BoundedFileTest, RefusesACharacterDeviceAtOnce) {
  auto r = ReadFile("/dev/zero");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "/dev/zero: is a character device; give a regular file");
}

TEST_F(BoundedFileTest, RefusesASymlinkToADevice) {
  fs::create_symlink("/dev/zero", P("metrics.json"));
  auto r = ReadBoundedFile(P("metrics.json"), 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("metrics.json: is a character device"), std::string::npos);
}

TEST_F(BoundedFileTest, RefusesAFifoWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo(P("fifo").c_str(), 0600), 0);
  auto t0 = std::chrono::steady_clock::now();
  auto r = ReadBoundedFile(P("fifo"), 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, P("fifo") + ": is a FIFO (named pipe); give a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST_F(BoundedFileTest, RefusesADirectory) {
  auto r = ReadBoundedFile(dir_.string(), 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, dir_.string() + ": is a directory; give a regular file");
}

TEST_F(BoundedFileTest, ReadsAPipeWhereAllowedUpToTheCap) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "abc", 3), 3);
  ::close(fds[1]);
  std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
  auto refused = ReadBoundedFile(path, 1 << 20);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("is a FIFO"), std::string::npos);
  auto r = ReadBoundedFile(path, 1 << 20, FileKinds::kRegularOrPipe);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "abc");
  ::close(fds[0]);

  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "abcdef", 6), 6);
  ::close(fds[1]);
  auto over =
      ReadBoundedFile("/proc/self/fd/" + std::to_string(fds[0]), 4, FileKinds::kRegularOrPipe);
  ::close(fds[0]);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message.find("over the limit of 4 bytes"), std::string::npos);
}

TEST(DescribeSize, ReadsLikeAPerson) {
  EXPECT_EQ(DescribeSize(12), "12 bytes");
  EXPECT_EQ(DescribeSize(1ull << 30), "1 GiB");
  EXPECT_EQ(DescribeSize(2254857830ull), "2.1 GiB");
  EXPECT_EQ(DescribeSize(256ull << 20), "256 MiB");
}

}  // namespace
}  // namespace vouch
