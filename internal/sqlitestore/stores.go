package sqlitestore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/pagetoken"
)

// Orders is an order.Store in the orders table.
type Orders struct{ db *DB }

// NewOrders returns the order store of db.
func NewOrders(db *DB) *Orders { return &Orders{db: db} }

const orderColumns = "id, pet_id, quantity, ship_date, complete, status"

// Load reads every order and the log's newest position in one read transaction: one state of the file.
func (s *Orders) Load(ctx context.Context, add func(order.Order)) (m order.Mark, err error) {
	err = s.db.readTx(ctx, "orders", func(tx *sql.Tx) error {
		var newest int64
		if err := tx.QueryRowContext(ctx, "SELECT value, "+newestEventID+" FROM orders_version").Scan(&m.Epoch, &newest); err != nil {
			return s.db.fail(ctx, err)
		}
		m.Position = strconv.FormatInt(newest, 10)
		rows, err := tx.QueryContext(ctx, "SELECT "+orderColumns+" FROM orders ORDER BY id")
		return s.db.fail(ctx, eachRow(rows, err, func(r scanner) (order.Order, error) { return scanOrder(r) }, add))
	})
	return m, err
}

// Since reads the events after m, in one read transaction with the epoch (orders_version,
// which only a DELETE moves): a new epoch is order.ErrReload.
func (s *Orders) Since(ctx context.Context, m order.Mark, limit int) ([]order.Event, order.Mark, bool, error) {
	var page order.EventPage
	err := s.db.readTx(ctx, "order_events", func(tx *sql.Tx) (err error) {
		var epoch uint64
		if err := tx.QueryRowContext(ctx, "SELECT value FROM orders_version").Scan(&epoch); err != nil {
			return s.db.fail(ctx, err)
		} else if epoch != m.Epoch {
			return order.ErrReload
		}
		page, err = NewEvents(s.db).read(ctx, tx, order.EventQuery{After: m.Position, Limit: limit})
		return err
	})
	if err != nil {
		return nil, m, false, err
	}
	return page.Events, order.Mark{Position: page.Last, Epoch: m.Epoch}, page.More, nil
}

// Cancel applies order.Order.Cancel in a write transaction, one step for every process.
func (s *Orders) Cancel(ctx context.Context, id int64) (after order.Order, changed bool, err error) {
	ctx, end := s.db.span(ctx, "UPDATE", "orders")
	defer func() { end(err) }()
	err = s.db.write(ctx, func(tx *sql.Tx) error {
		before, err := scanOrder(tx.QueryRowContext(ctx, "SELECT "+orderColumns+" FROM orders WHERE id = ?", id))
		if err != nil {
			return s.db.fail(ctx, err, order.ErrNotFound)
		} else if after, err = before.Cancel(); err != nil {
			return err
		} else if after.Status == before.Status {
			return errNoWrite
		}
		_, err = tx.ExecContext(ctx, "UPDATE orders SET status = ? WHERE id = ?", after.Status, id)
		changed = err == nil
		return s.db.fail(ctx, err)
	})
	if err != nil && !errors.Is(err, order.ErrAlreadyShipped) {
		return order.Order{}, false, err
	}
	return after, changed, err
}

// Events is an order.EventLog in the order_events table, which the triggers on orders write in the statement of
// each change, whoever makes it (schema.go). A position is an event's id in decimal; "0" begins a log never written.
type Events struct{ db *DB }

// NewEvents returns the event log of db.
func NewEvents(db *DB) *Events { return &Events{db: db} }

// Events reads the bounds and the rows in one read transaction: a Trim between would drop events unwarned.
func (e *Events) Events(ctx context.Context, q order.EventQuery) (page order.EventPage, err error) {
	if q.Limit < 1 {
		return page, fmt.Errorf("an event query's limit is at least 1, not %d", q.Limit)
	}
	err = e.db.readTx(ctx, "order_events", func(tx *sql.Tx) (err error) {
		page, err = e.read(ctx, tx, q)
		return err
	})
	return page, err
}

// read is Events in the read transaction tx.
func (e *Events) read(ctx context.Context, tx *sql.Tx, q order.EventQuery) (page order.EventPage, err error) {
	after, err := strconv.ParseInt(q.After, 10, 64)
	if q.After != "" && (err != nil || strconv.FormatInt(after, 10) != q.After) { // the log's own form only
		return page, fmt.Errorf("%w: %q is not a position of this log", order.ErrEventsExpired, q.After)
	}
	var dropped, newest int64
	var known bool // Ids have gaps (nextEventID): a position between the bounds may be of a history this file
	// does not have (restored from a backup), whose events a client would miss unwarned.
	// The newest and the newest dropped are positions whether or not their row is kept.
	err = tx.QueryRowContext(ctx, "SELECT last_dropped, "+newestEventID+", EXISTS (SELECT 1 FROM order_events WHERE id = ?) FROM order_events_cut",
		after).Scan(&dropped, &newest, &known)
	if err != nil {
		return page, e.db.fail(ctx, err, corrupt("the row of order_events_cut is missing"))
	}
	page.Last = q.After
	switch {
	case q.After == "":
		after, page.Last = dropped, strconv.FormatInt(newest, 10)
	case after < dropped:
		return page, fmt.Errorf("%w: events after %d were dropped, up to %d", order.ErrEventsExpired, after, dropped)
	case after > newest:
		return page, fmt.Errorf("%w: %d is past the newest event, %d", order.ErrEventsExpired, after, newest)
	case after > dropped && after < newest && !known:
		return page, fmt.Errorf("%w: %d is no event of this log", order.ErrEventsExpired, after)
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, type, time, order_id, pet_id, quantity, ship_date, complete, status FROM order_events WHERE id > ? ORDER BY id LIMIT ?", after, q.Limit)
	events, err := scanRows(rows, err, scanEvent)
	if err != nil {
		return order.EventPage{}, e.db.fail(ctx, err)
	}
	if page.More = len(events) == q.Limit; len(events) > 0 {
		page.Last = events[len(events)-1].ID
	}
	page.Events = slices.DeleteFunc(events, func(ev order.Event) bool { return len(q.Types) > 0 && !slices.Contains(q.Types, ev.Type) })
	return page, nil
}

// scanEvent reads an event's id, type and time, then the order's; an unusable one is ErrCorrupt, named.
func scanEvent(row scanner) (ev order.Event, err error) {
	var id int64
	var typ, at string
	if ev.Order, err = scanOrder(row, &id, &typ, &at); errors.Is(err, order.ErrCorrupt) {
		return ev, fmt.Errorf("event %d: %w", id, err)
	} else if err != nil {
		return ev, err
	}
	ev.ID, ev.Type = strconv.FormatInt(id, 10), order.EventType(typ)
	if !slices.Contains(order.EventTypes, ev.Type) {
		return ev, corrupt("event %d: type %q is none of the log's", id, typ)
	}
	if ev.Time, err = time.Parse(timestampLayout, at); err != nil {
		return ev, corrupt("event %d: time %q: %w", id, at, err)
	}
	return ev, nil
}

// LastEventID returns the newest id ever given, "0" before any.
func (e *Events) LastEventID(ctx context.Context) (string, error) {
	var id int64
	err := e.db.sql.QueryRowContext(ctx, "SELECT "+newestEventID).Scan(&id)
	return strconv.FormatInt(id, 10), e.db.fail(ctx, err)
}

// Trim drops the oldest events (a prefix) and records the newest id dropped in the same write transaction:
// positions below it are refused from then on, every other is read on from without a gap. By age, the log is
// cut before its first event within MaxAge: an older event after it (a writer's clock behind) stays until it goes.
func (e *Events) Trim(ctx context.Context, r order.Retention) (n int64, err error) {
	if r.MaxAge <= 0 && r.MaxCount <= 0 {
		return 0, nil
	}
	const upTo = "SELECT max(coalesce(CASE WHEN ?1 > 0 THEN (SELECT id FROM order_events ORDER BY id DESC LIMIT 1 OFFSET ?1) END, 0), " +
		"coalesce(CASE WHEN ?2 > 0 THEN (SELECT max(id) FROM order_events WHERE id < coalesce(" +
		"(SELECT id FROM order_events WHERE time >= ?3 ORDER BY id LIMIT 1), 9223372036854775807)) END, 0))"
	cutoff := time.Now().Add(-r.MaxAge).UTC().Format(timestampLayout) // text order is time order
	err = e.db.write(ctx, func(tx *sql.Tx) error {
		var last int64 // the newest id to drop; 0: none
		if err := tx.QueryRowContext(ctx, upTo, r.MaxCount, int64(r.MaxAge), cutoff).Scan(&last); err != nil {
			return e.db.fail(ctx, err)
		} else if last == 0 {
			return errNoWrite
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM order_events WHERE id <= ?", last)
		if err == nil {
			n, _ = res.RowsAffected() // never fails in modernc.org/sqlite
			_, err = tx.ExecContext(ctx, "UPDATE order_events_cut SET last_dropped = max(last_dropped, ?)", last)
		}
		return e.db.fail(ctx, err)
	})
	return n, err
}

// WaitForEvents waits until the newest id is not after (an event follows it, or Events refuses it), querying
// only when the wal-index header moved or is not mapped. A failed query returns nil: the read after reports it.
func (e *Events) WaitForEvents(ctx context.Context, after string) error {
	var seen walHeader
	for first := true; ; first = false {
		h, ok := e.db.cache.wal.header() // before the query: a commit after it moves it
		if first || !ok || h != seen {
			// A point read: its context is not watched (cachedRead says why).
			if newest, err := e.LastEventID(context.WithoutCancel(ctx)); err != nil || newest != after {
				return nil
			}
			seen = h
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Pets is an order.PetStore in the pets table.
type Pets struct{ db *DB }

// NewPets returns the pet store of db.
func NewPets(db *DB) *Pets { return &Pets{db: db} }

// Pet reads one pet.
func (s *Pets) Pet(ctx context.Context, id int64) (_ order.Pet, err error) {
	ctx, end := s.db.span(ctx, "SELECT", "pets")
	defer func() { end(err) }()
	p := order.Pet{ID: id}
	err = s.db.sql.QueryRowContext(ctx, "SELECT name, status FROM pets WHERE id = ?", id).Scan(&p.Name, &p.Status)
	if err != nil {
		return order.Pet{}, s.db.fail(ctx, err, order.ErrPetNotFound)
	} else if err := p.Validate(); err != nil {
		return order.Pet{}, corrupt("%w", err)
	}
	return p, nil
}

// Keys is an order.KeyStore in the api_keys table; other processes' changes count from the next request.
type Keys struct{ db *DB }

// NewKeys returns the key store of db.
func NewKeys(db *DB) *Keys { return &Keys{db: db} }

const keyColumns = "name, plan, per_minute, per_day, prefix, hash, created_at"

// Add stores k if no key has its name, in one statement (atomic for every process); CHECK keeps years 0000-9999.
func (s *Keys) Add(ctx context.Context, k order.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "INSERT INTO api_keys ("+keyColumns+") VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING name",
			k.Name, string(k.Plan), k.Custom.PerMinute, k.Custom.PerDay, k.Prefix, string(k.Hash), k.CreatedAt.UTC().Format(timestampLayout)).Scan(new(string))
		return s.db.fail(ctx, err, fmt.Errorf("%w: %q", order.ErrNameTaken, k.Name))
	})
}

// List returns every key, sorted by name.
func (s *Keys) List(ctx context.Context) ([]order.Key, error) {
	rows, err := s.db.sql.QueryContext(ctx, "SELECT "+keyColumns+" FROM api_keys ORDER BY name")
	keys, err := scanRows(rows, err, scanKey)
	return keys, s.db.fail(ctx, err)
}

// Revoke removes the key named nameOrPrefix, else the first by name with that prefix: a name, chosen, wins.
func (s *Keys) Revoke(ctx context.Context, nameOrPrefix string) (k order.Key, err error) {
	const q = "DELETE FROM api_keys WHERE name = coalesce((SELECT name FROM api_keys WHERE name = ?1), " +
		"(SELECT name FROM api_keys WHERE ?2 AND prefix = ?1 ORDER BY name LIMIT 1)) RETURNING " + keyColumns
	err = s.db.write(ctx, func(tx *sql.Tx) (err error) {
		k, err = scanKey(tx.QueryRowContext(ctx, q, nameOrPrefix, order.LooksLikePrefix(nameOrPrefix)))
		return s.db.fail(ctx, err, fmt.Errorf("%w: %q", order.ErrKeyNotFound, nameOrPrefix))
	})
	return k, err
}

// scanKey reads the keyColumns of a row; one the service cannot use is ErrCorrupt, named.
func scanKey(row scanner) (k order.Key, err error) {
	var planName, hash, createdAt string
	if err := row.Scan(&k.Name, &planName, &k.Custom.PerMinute, &k.Custom.PerDay, &k.Prefix, &hash, &createdAt); err != nil {
		return order.Key{}, err
	}
	k.Plan, k.Hash = order.Plan(planName), order.Hash(hash)
	if k.CreatedAt, err = time.Parse(timestampLayout, createdAt); err != nil {
		return order.Key{}, corrupt("key %q: createdAt %q: %w", k.Name, createdAt, err)
	}
	if err := k.ValidateStored(); err != nil { // a name from before CheckName's rules still reads
		return order.Key{}, corrupt("%w", err)
	}
	return k, nil
}

// Secrets is a pagetoken.SecretStore in the settings table, shared by every process and restart.
type Secrets struct{ db *DB }

// NewSecrets returns the secret store of db.
func NewSecrets(db *DB) *Secrets { return &Secrets{db: db} }

// PageTokenSecret returns the file's secret, making it if there is none, unless another
// process's insert comes first: the insert then returns that one.
func (s *Secrets) PageTokenSecret(ctx context.Context) (secret []byte, err error) {
	err = s.db.sql.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = 'page_token_secret'").Scan(&secret)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.db.write(ctx, func(tx *sql.Tx) error {
			return s.db.fail(ctx, tx.QueryRowContext(ctx, "INSERT INTO settings (name, value) VALUES ('page_token_secret', ?) "+
				"ON CONFLICT (name) DO UPDATE SET value = value RETURNING value", []byte(rand.Text()+rand.Text())).Scan(&secret)) // 52 bytes, 260 random bits
		})
	}
	if err != nil {
		return nil, s.db.fail(ctx, err)
	} else if len(secret) < pagetoken.MinSecretLen {
		return nil, corrupt("setting page_token_secret: %d bytes, want at least %d", len(secret), pagetoken.MinSecretLen)
	}
	return secret, nil
}

type scanner interface{ Scan(...any) error }

// eachRow calls fn with each row of a query's rows, read with scan, unless err.
func eachRow[T any](rows *sql.Rows, err error, scan func(scanner) (T, error), fn func(T)) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return err
		}
		fn(v)
	}
	return rows.Err()
}

// scanRows reads every row of a query's rows with scan, unless err; the list is never nil.
func scanRows[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	out := []T{}
	if err := eachRow(rows, err, scan, func(v T) { out = append(out, v) }); err != nil {
		return nil, err
	}
	return out, nil
}

// scanOrder reads a row's dest columns, then its orderColumns; an unusable one is ErrCorrupt, named.
func scanOrder(row scanner, dest ...any) (order.Order, error) {
	var o order.Order
	var quantity, complete int64
	var shipDate, status string
	if err := row.Scan(append(dest, &o.ID, &o.PetID, &quantity, &shipDate, &complete, &status)...); err != nil {
		return order.Order{}, err
	}
	if quantity < 0 || quantity > math.MaxInt32 {
		return order.Order{}, corrupt("order %d: quantity %d is not an int32", o.ID, quantity)
	}
	if complete != 0 && complete != 1 {
		return order.Order{}, corrupt("order %d: complete is %d, not 0 or 1", o.ID, complete)
	}
	var err error
	if o.ShipDate, err = time.Parse(timestampLayout, shipDate); err != nil {
		return order.Order{}, corrupt("order %d: shipDate %q: %w", o.ID, shipDate, err)
	}
	o.Quantity, o.Complete, o.Status = int32(quantity), complete == 1, order.Status(status)
	if err := o.Validate(); err != nil {
		return order.Order{}, corrupt("%w", err)
	}
	return o, nil
}

// Imported counts the rows an Import wrote; rows already as imported are in none.
type Imported struct {
	OrdersAdded, OrdersUpdated int
	PetsAdded, PetsUpdated     int
}

// An import adds new rows and updates those that differ, but never an order's status (it never
// undoes a cancel): one that changes nothing records nothing. OR ROLLBACK: an error undoes the
// whole import, so SQLite need not journal each statement's pages to undo it alone.
const (
	upsertOrders = "INSERT OR ROLLBACK INTO orders (" + orderColumns + ") VALUES %s ON CONFLICT (id) DO UPDATE SET " +
		"pet_id = excluded.pet_id, quantity = excluded.quantity, ship_date = excluded.ship_date, complete = excluded.complete " +
		"WHERE (pet_id, quantity, ship_date, complete) IS NOT (excluded.pet_id, excluded.quantity, excluded.ship_date, excluded.complete)"
	upsertPets = "INSERT OR ROLLBACK INTO pets (id, name, status) VALUES %s ON CONFLICT (id) DO UPDATE SET " +
		"name = excluded.name, status = excluded.status WHERE (name, status) IS NOT (excluded.name, excluded.status)"
)

// rowsPerStatement: a statement a record cost more than the row; 6 × 5000 < 32766 parameters.
const rowsPerStatement = 5000

// Import adds or updates orders and pets in one transaction, except an existing order's status (the
// service's). Ids must be distinct within each list: a record refused writes nothing.
func (db *DB) Import(ctx context.Context, orders []order.Order, pets []order.Pet) (Imported, error) {
	return db.ImportBatches(ctx, order.Slice(orders, rowsPerStatement), order.Slice(pets, rowsPerStatement))
}

// ImportBatches is Import of records read in batches, in one transaction still: a record
// refused (order.CheckEach checks each as it is read) or any error writes nothing.
func (db *DB) ImportBatches(ctx context.Context, orders order.Batches[order.Order], pets order.Batches[order.Pet]) (n Imported, err error) {
	err = db.write(ctx, func(tx *sql.Tx) error {
		// Validate passed every record, which holds each CHECK (TestImportKeepsTheTablesChecks): SQLite
		// checking again cost much of the inserts' time. The connection's setting, undone before commit or rollback.
		defer tx.ExecContext(context.WithoutCancel(ctx), "PRAGMA ignore_check_constraints = false")
		// Into an empty orders table, the order.created trigger is dropped, and made again after bulkEvents.
		var trigger string // "": not a bulk load; a trigger dropped by hand (NULL) fails the import
		err := tx.QueryRowContext(ctx, "SELECT (SELECT sql FROM sqlite_schema WHERE name = 'orders_insert_records_event') "+
			"WHERE NOT EXISTS (SELECT 1 FROM orders)").Scan(&trigger)
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		} else if err == nil {
			_, err = tx.ExecContext(ctx, "DROP TRIGGER orders_insert_records_event")
		}
		if err == nil {
			_, err = tx.ExecContext(ctx, "PRAGMA ignore_check_constraints = true")
		}
		if err != nil {
			return db.fail(ctx, err)
		}
		if n.OrdersAdded, n.OrdersUpdated, err = upsert(ctx, db, tx, "orders", upsertOrders, orders, func(args []any, o order.Order) []any {
			// Validate kept the year to the four digits timestampLayout needs; a bool binds as 0 or 1.
			return append(args, o.ID, o.PetID, int64(o.Quantity), o.ShipDate.UTC().Format(timestampLayout), o.Complete, string(o.Status))
		}); err != nil {
			return err
		}
		if n.PetsAdded, n.PetsUpdated, err = upsert(ctx, db, tx, "pets", upsertPets, pets, func(args []any, p order.Pet) []any {
			return append(args, p.ID, p.Name, string(p.Status))
		}); err != nil || trigger == "" {
			return err
		}
		_, err = tx.ExecContext(ctx, bulkEvents)
		if err == nil {
			_, err = tx.ExecContext(ctx, trigger)
		}
		return db.fail(ctx, err)
	})
	if err != nil {
		return Imported{}, err
	}
	return n, nil
}

// upsert writes the records read into table, rowsPerStatement a statement, and counts the rows added (the
// table's growth) and updated (the others changed). SQLite's errors go through db.fail, reading's as they are.
func upsert[T order.Record](ctx context.Context, db *DB, tx *sql.Tx, table, upsert string, read order.Batches[T],
	args func([]any, T) []any) (added, updated int, err error) {
	var before, after, rows int
	var changed int64
	var values []any // of the rows not yet written
	flush := func() error {
		row := "(?" + strings.Repeat(", ?", len(values)/rows-1) + ")"
		res, err := tx.ExecContext(ctx, fmt.Sprintf(upsert, row+strings.Repeat(", "+row, rows-1)), values...)
		if err == nil {
			n, _ := res.RowsAffected() // never fails in modernc.org/sqlite
			changed += n
		}
		values, rows = values[:0], 0
		return db.fail(ctx, err)
	}
	count := func(n *int) error {
		return db.fail(ctx, tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(n))
	}
	if err = count(&before); err == nil {
		err = read(order.CheckEach[T](), func(batch []T) error {
			for _, r := range batch {
				if values, rows = args(values, r), rows+1; rows == rowsPerStatement {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	if err == nil && rows > 0 {
		err = flush()
	}
	if err == nil {
		err = count(&after)
	}
	return after - before, int(changed) - (after - before), err
}

// bulkEvents records every order's order.created after a bulk load. The first event's id is the
// trigger's (nextEventID: a log Trim emptied would start at 1 again), each next one SQLite's, the
// newest plus one; all have the statement's time, as the trigger's events of one statement do.
const bulkEvents = "INSERT INTO order_events (id, type, time, order_id, pet_id, quantity, ship_date, complete, status) " +
	"SELECT CASE WHEN id = (SELECT min(id) FROM orders) THEN " + nextEventID + " END, 'order.created', " + eventTime + ", " +
	orderColumns + " FROM orders ORDER BY id"
