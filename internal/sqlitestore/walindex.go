package sqlitestore

import "errors"

// The wal-index header tells this process, without a query, that no connection of any process
// has committed since it last read the file (docs/design.md, "Modes and data flow"). SQLite's
// writer writes the copy at 48 first; a reader reads 0 then 48 and trusts them only if equal
// (wal.c, walIndexTryHdr), so a torn read counts as a change. The -shm stays the one mapped
// while the DB's pinned connection holds its SHARED lock (TestCacheSeesOtherProcesses).

// walHeader is one copy of the wal-index header, as twelve words in the host's byte order.
type walHeader [12]uint32

// walIndexVersion is iVersion, the first word of a header a commit wrote; a new -shm is zeros.
const walIndexVersion = 3007000

const walIndexHeaderSize = 2 * 48 // both copies

// ErrReadCacheUnsupported is why the read cache is off where the wal-index cannot be mapped
// by design: off unix, or where a memory page is larger than the -shm SQLite sized (32 KiB).
var ErrReadCacheUnsupported = errors.New("the wal-index cannot be mapped on this system")
