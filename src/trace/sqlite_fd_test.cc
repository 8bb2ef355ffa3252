// SQLite on a checked descriptor (sqlite_fd.h): what it reads is the file behind the
// descriptor, whatever the path names by then; nothing is written, no other file is opened.
#include "trace/sqlite_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "trace/sqlite_test_util.h"
#include "trace/test_util.h"
#include "util/bounded_file.h"

namespace vouch::trace {
namespace {

using testing::TempPath;

// The one integer that SQL gives on DB, or the error's text.
std::string One(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return sqlite3_errmsg(db);
  std::string out;
  const int rc = sqlite3_step(st);
  out = rc == SQLITE_ROW ? std::to_string(sqlite3_column_int64(st, 0)) : sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return out;
}

struct Closer {
  sqlite3* db = nullptr;
  ~Closer() { sqlite3_close(db); }
};

constexpr const char* kRows =
    "CREATE TABLE t (x INTEGER);"
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5000) "
    "INSERT INTO t SELECT n FROM r;";

TEST(SqliteOnDescriptor, ReadsTheCheckedFileAfterItsPathNamesAFifo) {
  const std::string path = TempPath("fd_swap.sqlite");
  std::remove(path.c_str());
  testing::MakeSqliteDb(path, kRows);
  auto f = BoundedFile::Open(path, 1 << 30);
  ASSERT_TRUE(f.ok()) << f.error().message;
  // Another user swaps a FIFO in under the name: opened by name, SQLite would wait for ever.
  const std::string fifo = path + ".fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(std::rename(fifo.c_str(), path.c_str()), 0);
  const auto t0 = std::chrono::steady_clock::now();
  Closer c;
  ASSERT_EQ(OpenSqliteOnDescriptor(f->fd(), &c.db), SQLITE_OK) << sqlite3_errmsg(c.db);
  EXPECT_EQ(One(c.db, "SELECT sum(x) FROM t"), "12502500");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  std::remove(path.c_str());
}

TEST(SqliteOnDescriptor, MappedAndReadPagesGiveTheSameRows) {
  const std::string path = TempPath("fd_mmap.sqlite");
  std::remove(path.c_str());
  testing::MakeSqliteDb(path, kRows);
  auto f = BoundedFile::Open(path, 1 << 30);
  ASSERT_TRUE(f.ok());
  for (const char* mmap : {"PRAGMA mmap_size=0", "PRAGMA mmap_size=1073741824"}) {
    Closer c;
    ASSERT_EQ(OpenSqliteOnDescriptor(f->fd(), &c.db, SQLITE_OPEN_NOMUTEX), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(c.db, mmap, nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(One(c.db, "SELECT sum(x) FROM t"), "12502500") << mmap;
    EXPECT_EQ(One(c.db, "SELECT count(*) FROM t WHERE x % 7 = 0"), "714") << mmap;
  }
  std::remove(path.c_str());
}

TEST(SqliteOnDescriptor, WritesAreRefusedAndTheFileIsUnchanged) {
  const std::string path = TempPath("fd_ro.sqlite");
  std::remove(path.c_str());
  testing::MakeSqliteDb(path, kRows);
  const auto before = std::filesystem::file_size(path);
  auto f = BoundedFile::Open(path, 1 << 30);
  ASSERT_TRUE(f.ok());
  {
    Closer c;
    ASSERT_EQ(OpenSqliteOnDescriptor(f->fd(), &c.db), SQLITE_OK);
    EXPECT_NE(sqlite3_exec(c.db, "INSERT INTO t VALUES (1)", nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_NE(sqlite3_exec(c.db, "CREATE TABLE u (y)", nullptr, nullptr, nullptr), SQLITE_OK);
    // An attached file is another path: the VFS opens none but the descriptor given.
    const std::string other = TempPath("fd_other.sqlite");
    std::remove(other.c_str());
    const std::string attach = "ATTACH '" + other + "' AS o";
    EXPECT_NE(sqlite3_exec(c.db, attach.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_FALSE(std::filesystem::exists(other));
  }
  EXPECT_EQ(std::filesystem::file_size(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-journal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  // The caller's descriptor is still its own and open: SQLite closed its duplicate.
  EXPECT_GE(::fcntl(f->fd(), F_GETFD), 0);
  std::remove(path.c_str());
}

TEST(SqliteOnDescriptor, AClosedDescriptorOrNonDatabaseIsAnErrorNotACrash) {
  Closer bad;
  EXPECT_EQ(OpenSqliteOnDescriptor(-1, &bad.db), SQLITE_CANTOPEN);
  const std::string path = TempPath("fd_text.sqlite");
  {
    FILE* w = std::fopen(path.c_str(), "w");
    ASSERT_NE(w, nullptr);
    std::fputs("not a database, but text long enough for a header of one hundred bytes......\n", w);
    std::fclose(w);
  }
  auto f = BoundedFile::Open(path, 1 << 30);
  ASSERT_TRUE(f.ok());
  Closer c;
  ASSERT_EQ(OpenSqliteOnDescriptor(f->fd(), &c.db), SQLITE_OK);
  EXPECT_EQ(One(c.db, "SELECT count(*) FROM sqlite_master"), "file is not a database");
  std::remove(path.c_str());
}

TEST(SqliteOnDescriptor, AWalModeFileIsReadAsItStands) {
  // nsys writes rollback-journal files; a WAL-mode one (checkpointed) is still read, with no
  // -wal or -shm file opened or made beside it.
  const std::string path = TempPath("fd_wal.sqlite");
  std::remove(path.c_str());
  testing::MakeSqliteDb(path, std::string("PRAGMA journal_mode=WAL;") + kRows);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  auto f = BoundedFile::Open(path, 1 << 30);
  ASSERT_TRUE(f.ok());
  Closer c;
  ASSERT_EQ(OpenSqliteOnDescriptor(f->fd(), &c.db), SQLITE_OK);
  EXPECT_EQ(One(c.db, "SELECT max(x) FROM t"), "5000");
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace vouch::trace
