package sqlitestore

import (
	"context"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/petstore/orderd/internal/store"
)

// fail sorts an error of the database into the kinds the service tells apart:
//   - the caller's context ended: its own error, as is; the storage did not fail.
//   - a row refused by the schema (a constraint): the data was wrong, not the storage; the
//     stores check what they write first, so this is a bug or a race they report plainly.
//   - the file is damaged or not a database (SQLITE_CORRUPT, SQLITE_NOTADB): store.ErrCorrupt,
//     reported as a FaultCorrupt, which lasts. Retrying will not mend it.
//   - no room to write (SQLITE_FULL): store.ErrUnavailable, reported as a FaultFull.
//   - anything else (cannot open, I/O error, SQLITE_BUSY past the busy timeout, a closed
//     DB): store.ErrUnavailable.
//
// The errors name the file and keep SQLite's message, for the log.
func (db *DB) fail(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrCorrupt) {
		return err
	}
	switch primaryCode(err) {
	case sqlite3.SQLITE_CONSTRAINT:
		return fmt.Errorf("%s: refused by the schema: %w", db.path, err)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		f := &store.Fault{Kind: FaultCorrupt, Lasting: true, Public: "the database file is corrupt",
			Err: fmt.Errorf("%w: sqlite %s: %w", store.ErrCorrupt, db.path, err)}
		db.reportFault(f)
		return f
	case sqlite3.SQLITE_FULL:
		f := &store.Fault{Kind: FaultFull, Public: "the disk of the database file is full",
			Err: fmt.Errorf("%w: sqlite %s: %w", store.ErrUnavailable, db.path, err)}
		db.faults.full.Store(f)
		db.reportFault(f)
		return f
	}
	return fmt.Errorf("%w: sqlite %s: %w", store.ErrUnavailable, db.path, err)
}

// primaryCode is SQLite's primary result code of err (SQLITE_CONSTRAINT for a UNIQUE, a CHECK,
// a NOT NULL…), or 0 when err is not SQLite's.
func primaryCode(err error) int {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return 0
	}
	return e.Code() & 0xff
}

// corrupt reports a row that the service cannot use; the message names it ("order 7: …").
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %w", store.ErrCorrupt, fmt.Errorf(format, args...))
}
