package sqlitestore

import "errors"

// The wal-index header says, without a query, whether any process has committed since
// (docs/design.md, "Modes and data flow"). SQLite writes the copy at 48 first and a reader
// trusts 0 and 48 only if equal (wal.c, walIndexTryHdr): a torn read counts as a change.

// walHeader is one copy of the wal-index header, as twelve words in the host's byte order.
type walHeader [12]uint32

// walIndexVersion is iVersion, the first word of a header a commit wrote; a new -shm is zeros.
const walIndexVersion = 3007000

const walIndexHeaderSize = 2 * 48 // both copies

// ErrReadCacheUnsupported is why the cache is off by design: off unix, or memory pages over 32 KiB.
var ErrReadCacheUnsupported = errors.New("the wal-index cannot be mapped on this system")
