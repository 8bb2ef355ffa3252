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

// The one value that SQL gives on DB, as text, or the error's text.
std::string One(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return sqlite3_errmsg(db);
  std::string out;
  const int rc = sqlite3_step(st);
  const auto* text = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : nullptr;
  out = text ? reinterpret_cast<const char*>(text) : sqlite3_errmsg(db);
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

TEST(SqliteOnDescriptor, ChunkedReadsGiveEveryRowWhateverTheMapSetting) {
  // Rows past one 256 KiB chunk and read in and out of order (an index, then the table).
  const std::string path = TempPath("fd_chunks.sqlite");
  std::remove(path.c_str());
  testing::MakeSqliteDb(path, std::string(kRows) +
                                  "CREATE TABLE big (k INTEGER PRIMARY KEY, v TEXT);"
                                  "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
                                  "WHERE n < 20000) INSERT INTO big SELECT n, printf('%0200d', n) "
                                  "FROM r; CREATE INDEX big_v ON big (v);");
  ASSERT_GT(std::filesystem::file_size(path), 4u << 20);
  auto f = BoundedFile::Open(path, 1 << 30);
  ASSERT_TRUE(f.ok());
  for (const char* mmap : {"PRAGMA mmap_size=0", "PRAGMA mmap_size=1073741824"}) {
    Closer c;
    ASSERT_EQ(OpenSqliteOnDescriptor(f->fd(), &c.db, SQLITE_OPEN_NOMUTEX), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(c.db, mmap, nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(One(c.db, "SELECT sum(x) FROM t"), "12502500") << mmap;
    EXPECT_EQ(One(c.db, "SELECT sum(k) FROM big"), "200010000") << mmap;
    EXPECT_EQ(One(c.db, "SELECT sum(length(v)) FROM big INDEXED BY big_v WHERE v > ''"), "4000000")
        << mmap;
    EXPECT_EQ(One(c.db, "SELECT k FROM big WHERE v = printf('%0200d', 12345)"), "12345") << mmap;
    EXPECT_EQ(One(c.db, "PRAGMA integrity_check"), "ok") << mmap;
  }
  std::remove(path.c_str());
}

TEST(SqliteOnDescriptor, AFileTruncatedWhileReadIsAnErrorNotSigbus) {
  // Another process truncates the export half-way through the read: a mapped file would end
  // vouch with SIGBUS; read through the descriptor, the rest is a short read and an error.
  const std::string path = TempPath("fd_truncated.sqlite");
  std::remove(path.c_str());
  testing::MakeSqliteDb(path,
                        "CREATE TABLE big (k INTEGER PRIMARY KEY, v TEXT);"
                        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
                        "WHERE n < 20000) INSERT INTO big SELECT n, printf('%0200d', n) "
                        "FROM r;");
  auto f = BoundedFile::Open(path, 1 << 30);
  ASSERT_TRUE(f.ok());
  Closer c;
  ASSERT_EQ(OpenSqliteOnDescriptor(f->fd(), &c.db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(c.db, "PRAGMA mmap_size=1073741824", nullptr, nullptr, nullptr),
            SQLITE_OK);
  // Half-way through one statement, past the pages SQLite has read: it has sized the file.
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(c.db, "SELECT k, v FROM big", -1, &st, nullptr), SQLITE_OK);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  ASSERT_EQ(::truncate(path.c_str(), 64 << 10), 0);
  int rc, rows = 100;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) ++rows;
  sqlite3_finalize(st);
  EXPECT_EQ(rc, SQLITE_CORRUPT) << sqlite3_errstr(rc);
  EXPECT_LT(rows, 20000);
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

TEST(SqliteOnDescriptor, AVirtualTableIsToldInAnyCaseAndSpacing) {
  EXPECT_TRUE(IsVirtualTableSql("CREATE VIRTUAL TABLE t USING fts5(x)"));
  EXPECT_TRUE(IsVirtualTableSql("  create\n\tvirtual table t using rtree(id, a, b)"));
  EXPECT_FALSE(IsVirtualTableSql("CREATE TABLE virtual_things (x)"));
  EXPECT_FALSE(IsVirtualTableSql("CREATE TEMP TABLE t (x)"));
  EXPECT_FALSE(IsVirtualTableSql(""));
}

}  // namespace
}  // namespace vouch::trace
