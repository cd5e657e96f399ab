// Package sqlitestore keeps what the embedded mode owns (orders, pets, API keys, the
// page-token secret) in one SQLite file that any number of processes may open at once; each
// sees the others' commits at its next call (docs/design.md, "Modes and data flow").
//
// Failures wrap order.ErrUnavailable; a damaged file or an unusable row, order.ErrCorrupt.
// The faults an operator must see are reported to DB.OnFault (docs/design.md, Errors).
package sqlitestore
