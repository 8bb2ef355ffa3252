#include "trace/sqlite_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "util/number.h"

namespace vouch {
namespace {

constexpr const char* kVfsName = "vouch-fd";
constexpr const char* kPrefix = "vouch-fd-";  // the "file name" is this and the descriptor

// Pages are read through one buffer of a 64 KiB chunk: SQLite asks for one 4 KiB page at a time,
// in file order within a table, and a pread per page is a system call per 4 KiB (a 533 MB
// export of 5 M + 5 M rows: 200,000 calls). The tables' pages are somewhat interleaved, so a
// chunk also holds pages the reader does not want: 64 KiB chunks read 1.08x the file in 10,552
// calls, 256 KiB 1.34x, 1 MiB 1.87x. No mapping: a file another process truncates while it
// is mapped would kill vouch with SIGBUS, where a read just comes back short.
constexpr sqlite3_int64 kChunkBytes = 64 << 10;

// sqlite3_file is the base: SQLite allocates szOsFile bytes and xOpen fills them in.
struct FdFile {
  sqlite3_file base;
  int fd;
  char* chunk;                // kChunkBytes, or null until the first read
  sqlite3_int64 chunk_start;  // file offset of chunk[0]
  sqlite3_int64 chunk_bytes;  // how many of its bytes hold the file (short at the end)
};

FdFile* Of(sqlite3_file* f) { return reinterpret_cast<FdFile*>(f); }

int Close(sqlite3_file* f) {
  FdFile* p = Of(f);
  delete[] p->chunk;
  p->chunk = nullptr;
  if (p->fd >= 0) ::close(p->fd);
  p->fd = -1;
  return SQLITE_OK;
}

// Up to AMOUNT bytes at OFFSET into DST: how many there were before the end, or -1.
sqlite3_int64 PreadAll(int fd, char* dst, sqlite3_int64 amount, sqlite3_int64 offset) {
  sqlite3_int64 got = 0;
  while (got < amount) {
    const ssize_t n = ::pread(fd, dst + got, static_cast<std::size_t>(amount - got),
                              static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += n;
  }
  return got;
}

int Read(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  FdFile* p = Of(f);
  auto* dst = static_cast<char*>(out);
  if (amount < 0 || offset < 0) return SQLITE_IOERR_READ;
  sqlite3_int64 got;
  const bool cached =
      p->chunk && offset >= p->chunk_start && offset + amount <= p->chunk_start + p->chunk_bytes;
  if (cached) {
    got = amount;
    std::memcpy(dst, p->chunk + (offset - p->chunk_start), static_cast<std::size_t>(amount));
  } else if (amount > kChunkBytes / 2) {
    got = PreadAll(p->fd, dst, amount, offset);  // a large read: straight in
  } else {
    if (!p->chunk) p->chunk = new (std::nothrow) char[kChunkBytes];
    if (!p->chunk) return SQLITE_IOERR_NOMEM;
    // The chunk holding OFFSET, or starting at it where the read would cross its end.
    sqlite3_int64 start = offset - offset % kChunkBytes;
    if (offset + amount > start + kChunkBytes) start = offset;
    const sqlite3_int64 n = PreadAll(p->fd, p->chunk, kChunkBytes, start);
    p->chunk_start = start;
    p->chunk_bytes = n < 0 ? 0 : n;
    if (n < 0) return SQLITE_IOERR_READ;
    got = std::min<sqlite3_int64>(amount, std::max<sqlite3_int64>(0, start + n - offset));
    std::memcpy(dst, p->chunk + (offset - start), static_cast<std::size_t>(got));
  }
  if (got < 0) return SQLITE_IOERR_READ;
  if (got == amount) return SQLITE_OK;
  // SQLite's contract: the part past the end zeroed, and the short read said.
  std::memset(dst + got, 0, static_cast<std::size_t>(amount - got));
  return SQLITE_IOERR_SHORT_READ;
}

int Write(sqlite3_file*, const void*, int, sqlite3_int64) { return SQLITE_READONLY; }
int Truncate(sqlite3_file*, sqlite3_int64) { return SQLITE_READONLY; }
int Sync(sqlite3_file*, int) { return SQLITE_OK; }

int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  struct stat st {};
  if (::fstat(Of(f)->fd, &st) != 0) return SQLITE_IOERR_FSTAT;
  *size = static_cast<sqlite3_int64>(st.st_size);
  return SQLITE_OK;
}

// Immutable: nobody else writes it, so no lock is taken or needed.
int Lock(sqlite3_file*, int) { return SQLITE_OK; }
int Unlock(sqlite3_file*, int) { return SQLITE_OK; }
int CheckReservedLock(sqlite3_file*, int* out) {
  *out = 0;
  return SQLITE_OK;
}
int FileControl(sqlite3_file*, int, void*) { return SQLITE_NOTFOUND; }
int SectorSize(sqlite3_file*) { return 4096; }
int DeviceCharacteristics(sqlite3_file*) { return SQLITE_IOCAP_IMMUTABLE; }

// No shared memory: an immutable file is read without its WAL index.
int ShmMap(sqlite3_file*, int, int, int, void volatile**) { return SQLITE_IOERR_SHMMAP; }
int ShmLock(sqlite3_file*, int, int, int) { return SQLITE_IOERR_SHMLOCK; }
void ShmBarrier(sqlite3_file*) {}
int ShmUnmap(sqlite3_file*, int) { return SQLITE_OK; }

// Version 2: no xFetch, so SQLite never maps the file (its PRAGMA mmap_size does nothing).
const sqlite3_io_methods kMethods = {
    .iVersion = 2,
    .xClose = Close,
    .xRead = Read,
    .xWrite = Write,
    .xTruncate = Truncate,
    .xSync = Sync,
    .xFileSize = FileSize,
    .xLock = Lock,
    .xUnlock = Unlock,
    .xCheckReservedLock = CheckReservedLock,
    .xFileControl = FileControl,
    .xSectorSize = SectorSize,
    .xDeviceCharacteristics = DeviceCharacteristics,
    .xShmMap = ShmMap,
    .xShmLock = ShmLock,
    .xShmBarrier = ShmBarrier,
    .xShmUnmap = ShmUnmap,
    .xFetch = nullptr,  // never mapped
    .xUnfetch = nullptr,
};

// Opens "vouch-fd-N": a duplicate of descriptor N, the main database only, read-only. No
// other file (a journal, a WAL, a temporary file) is opened through this VFS.
int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  f->pMethods = nullptr;  // nothing for SQLite to close if this fails
  const std::string_view n = name ? name : "";
  if (!(flags & SQLITE_OPEN_MAIN_DB) || (flags & (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) ||
      !n.starts_with(kPrefix))
    return SQLITE_CANTOPEN;
  auto fd = ParseInt64In(n.substr(std::strlen(kPrefix)), 0, INT32_MAX, "descriptor");
  if (!fd) return SQLITE_CANTOPEN;
  const int dup = ::fcntl(static_cast<int>(*fd), F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return SQLITE_CANTOPEN;
  FdFile* p = Of(f);
  p->fd = dup;
  p->chunk = nullptr;
  p->chunk_start = 0;
  p->chunk_bytes = 0;
  p->base.pMethods = &kMethods;
  if (out_flags) *out_flags = SQLITE_OPEN_READONLY;
  return SQLITE_OK;
}

int Delete(sqlite3_vfs*, const char*, int) { return SQLITE_IOERR_DELETE; }

// No journal, WAL or other file beside it exists, as far as SQLite is told.
int Access(sqlite3_vfs*, const char*, int, int* out) {
  *out = 0;
  return SQLITE_OK;
}

// The name as given: no path to resolve (the unix VFS would follow links back to a path).
int FullPathname(sqlite3_vfs*, const char* name, int size, char* out) {
  const std::size_t len = std::strlen(name);
  if (size <= 0 || len >= static_cast<std::size_t>(size)) return SQLITE_CANTOPEN;
  std::memcpy(out, name, len + 1);
  return SQLITE_OK;
}

// The VFS, registered once; its clock, randomness and sleep are the default VFS's.
sqlite3_vfs* Vfs() {
  static sqlite3_vfs* vfs = [] {
    static sqlite3_vfs v{};
    sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    if (!base) return static_cast<sqlite3_vfs*>(nullptr);
    v.iVersion = 2;
    v.szOsFile = sizeof(FdFile);
    v.mxPathname = 64;
    v.zName = kVfsName;
    v.xOpen = Open;
    v.xDelete = Delete;
    v.xAccess = Access;
    v.xFullPathname = FullPathname;
    v.pAppData = base;
    v.xDlOpen = [](sqlite3_vfs*, const char*) -> void* { return nullptr; };  // no extensions
    v.xDlError = [](sqlite3_vfs*, int n, char* msg) {
      if (n > 0) msg[0] = '\0';
    };
    v.xDlSym = [](sqlite3_vfs*, void*, const char*) -> void (*)(void) { return nullptr; };
    v.xDlClose = [](sqlite3_vfs*, void*) {};
    v.xRandomness = [](sqlite3_vfs* s, int n, char* out) {
      auto* b = static_cast<sqlite3_vfs*>(s->pAppData);
      return b->xRandomness(b, n, out);
    };
    v.xSleep = [](sqlite3_vfs* s, int us) {
      auto* b = static_cast<sqlite3_vfs*>(s->pAppData);
      return b->xSleep(b, us);
    };
    v.xCurrentTime = [](sqlite3_vfs* s, double* t) {
      auto* b = static_cast<sqlite3_vfs*>(s->pAppData);
      return b->xCurrentTime(b, t);
    };
    v.xGetLastError = [](sqlite3_vfs* s, int n, char* out) {
      auto* b = static_cast<sqlite3_vfs*>(s->pAppData);
      return b->xGetLastError ? b->xGetLastError(b, n, out) : 0;
    };
    v.xCurrentTimeInt64 = [](sqlite3_vfs* s, sqlite3_int64* t) {
      auto* b = static_cast<sqlite3_vfs*>(s->pAppData);
      if (b->iVersion >= 2 && b->xCurrentTimeInt64) return b->xCurrentTimeInt64(b, t);
      double d = 0;
      const int rc = b->xCurrentTime(b, &d);
      *t = static_cast<sqlite3_int64>(d * 86400000.0);
      return rc;
    };
    return sqlite3_vfs_register(&v, 0) == SQLITE_OK ? &v : nullptr;
  }();
  return vfs;
}

}  // namespace

bool IsVirtualTableSql(std::string_view sql) {
  std::string squeezed;
  for (char c : sql) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    squeezed += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (squeezed.size() == 13) break;
  }
  return squeezed == "CREATEVIRTUAL";
}

int OpenSqliteOnDescriptor(int fd, sqlite3** db, int flags) {
  *db = nullptr;
  if (!Vfs()) return SQLITE_ERROR;
  const std::string name = kPrefix + std::to_string(fd);
  return sqlite3_open_v2(name.c_str(), db, SQLITE_OPEN_READONLY | flags, kVfsName);
}

}  // namespace vouch
