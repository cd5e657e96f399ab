package sqlitestore

import "errors"

// The wal-index header: how this process learns, without a query, that no connection of any
// process has committed since it last read the file.
//
// In WAL mode every connection to the file, in every process, shares the wal-index: the
// file's "-shm" file, which each maps into memory (modernc.org/sqlite is SQLite's C code
// translated to Go, and its unix VFS maps the -shm with mmap(MAP_SHARED) as os_unix.c
// does). Its first 96 bytes are the wal-index header, twice: bytes 0..47 and 48..95 hold
// the same 48 bytes (https://www.sqlite.org/walformat.html, "The WAL-Index Header"):
// iVersion, iChange (a counter moved by every commit), isInit, the page size, mxFrame (the
// last committed frame of the WAL), the database size, the running checksum of the WAL's
// frames, the WAL's salts (new on every restart of the WAL: salt-1 is incremented) and the
// header's own checksum. The format is fixed: processes built with different SQLite
// versions share it.
//
// What the argument rests on, from SQLite's wal.c (walIndexWriteHdr, sqlite3WalFrames,
// walRestartHdr):
//   - Every commit that writes anything appends frames to the WAL and, before the commit
//     returns, writes a new header with a larger mxFrame and iChange + 1. A restart of the
//     WAL (after a checkpoint, or PRAGMA wal_checkpoint(RESTART|TRUNCATE)) writes one with
//     mxFrame 0 and new salts. So the header never comes back to an earlier value, and two
//     reads of the same header bound a span of time in which nobody committed.
//   - A checkpoint copies frames into the database file without changing its content: it
//     leaves the header alone, and a cache keyed on it stays true.
//   - The writer writes the copy at 48 first, then the one at 0; a reader reads 0, then 48,
//     and trusts them only if they are equal (SQLite's own walIndexTryHdr). A read torn by a
//     concurrent commit makes them differ: this package then treats the header as changed.
//
// So a value read from the file by a query that started after the header was read, and
// stored with that header, is the file's current value for as long as the header reads the
// same. A change acknowledged before a request starts (a 204, a command that exited 0) has
// already written its header, so that request reads a different one and queries the file.
//
// The -shm file must be the live one for as long as the mapping is used. SQLite deletes it
// only when the last connection to the file, in any process, closes: that connection must
// obtain the EXCLUSIVE lock on the database file, and in WAL mode every connection holds a
// SHARED lock on it from its first read until it closes. A DB pins one connection for its
// lifetime (see Open), so the -shm this process maps cannot be deleted, truncated or
// re-created under it (TestCacheSeesOtherProcesses). Nor can another process take the
// file out of WAL mode: that too needs the EXCLUSIVE lock.

// walHeader is one copy of the wal-index header: 48 bytes, as twelve words in the host's
// byte order. Only its equality matters here.
type walHeader [12]uint32

// walIndexVersion is iVersion, the first word of a header that a commit has written
// (WALINDEX_MAX_VERSION); a -shm file that nobody has initialised yet holds zeros.
const walIndexVersion = 3007000

// walIndexHeaderSize is the size of the two copies of the header together.
const walIndexHeaderSize = 2 * 48

// ErrReadCacheUnsupported is why the read cache is off where the wal-index cannot be mapped
// by design (DB.ReadCache): on a system that is not unix, or whose memory page is larger
// than the -shm file SQLite sized (a 64 KiB page, against SQLite's 32 KiB regions).
var ErrReadCacheUnsupported = errors.New("the wal-index cannot be mapped on this system")
