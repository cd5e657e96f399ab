package sqlitestore

import "errors"

// The wal-index header: how this process learns, without a query, that no connection of any
// process has committed since it last read the file (docs/design.md, "Modes and data flow").
//
// Every connection to the file in WAL mode maps its -shm file, whose first 96 bytes are the
// wal-index header twice (https://www.sqlite.org/walformat.html). In SQLite's wal.c, every
// commit writes a new header (a larger mxFrame, iChange+1) before it returns, and a restart
// of the WAL new salts, so a header never comes back; a checkpoint leaves it alone. The
// writer writes the copy at 48 first, a reader reads 0 then 48 and trusts them only if equal
// (walIndexTryHdr); a torn read is treated as a change. So a value found by a query that
// started after the header was read is current for as long as the header reads the same.
//
// SQLite deletes the -shm only when the last connection closes, which needs the EXCLUSIVE
// lock on the file; the connection a DB pins holds a SHARED one, so the mapped -shm stays the
// live one (TestCacheSeesOtherProcesses), and nobody can take the file out of WAL mode.

// walHeader is one copy of the wal-index header, as twelve words in the host's byte order.
type walHeader [12]uint32

// walIndexVersion is iVersion, the first word of a header that a commit has written; an
// uninitialised -shm holds zeros.
const walIndexVersion = 3007000

// walIndexHeaderSize is the size of the two copies of the header together.
const walIndexHeaderSize = 2 * 48

// ErrReadCacheUnsupported is why the read cache is off where the wal-index cannot be mapped
// by design: off unix, or where a memory page is larger than the -shm SQLite sized (32 KiB).
var ErrReadCacheUnsupported = errors.New("the wal-index cannot be mapped on this system")
