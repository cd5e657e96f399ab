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
//   - anything else (cannot open, I/O error, SQLITE_BUSY past the busy timeout, a closed
//     DB): store.ErrUnavailable.
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
	if isConstraint(err) {
		return fmt.Errorf("%s: refused by the schema: %w", db.path, err)
	}
	return fmt.Errorf("%w: sqlite %s: %w", store.ErrUnavailable, db.path, err)
}

// isConstraint reports whether err is SQLite refusing a row: UNIQUE, CHECK, NOT NULL…
func isConstraint(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// corrupt reports a row that the service cannot use; the message names it ("order 7: …").
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %w", store.ErrCorrupt, fmt.Errorf(format, args...))
}
