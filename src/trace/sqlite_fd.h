// SQLite on a descriptor: the database in a file vouch has already opened and checked
// (BoundedFile: a regular file of bounded size) is read through that descriptor, never
// opened again by its path. By path, a file swapped in between the check and SQLite's own
// open (a FIFO that another user put there, on which the open would wait for ever) would be
// what SQLite read; SQLite resolves /proc/self/fd links back to the path and opens with
// O_NOFOLLOW, so only a VFS of its own closes that gap.
//
// The VFS ("vouch-fd") is read-only and immutable: no locks, no journal, no WAL, no file
// but the one given. Its pages are read with pread(2), a chunk at a time, never mapped: a
// file truncated by another process while mapped would end vouch with SIGBUS; read, it gives
// a short read and SQLite's "malformed" error.
#pragma once

#include <sqlite3.h>

#include <string_view>

namespace vouch {

// Opens the SQLite database in FD, which stays the caller's (SQLite reads a duplicate of it
// and closes that). FLAGS are added to SQLITE_OPEN_READONLY (SQLITE_OPEN_NOMUTEX, say). As
// sqlite3_open_v2: an SQLite result code, and *DB set even on failure (close it).
int OpenSqliteOnDescriptor(int fd, sqlite3** db, int flags = 0);

// Whether SQL, a CREATE statement from such a file's sqlite_master, makes a virtual table
// (whose reads run a module's code, not the file's pages): "CREATE VIRTUAL", in any case and
// spacing. A reader of a hostile file reads plain tables only.
bool IsVirtualTableSql(std::string_view sql);

}  // namespace vouch
