package redisstore

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// halfRecords reports orders that another system left half-written: data without a status,
// or a status without data. Such an order does not exist for listing or cancelling (the rest
// of the list is served), and each is logged once, not on every request: the ids logged are
// remembered, up to maxHalfRecords, after which one line says that more are not logged.
type halfRecords struct {
	log    atomic.Pointer[slog.Logger]
	mu     sync.Mutex
	logged map[string]struct{}
	full   bool
}

// maxHalfRecords bounds the memory that remembering logged ids may take.
const maxHalfRecords = 1000

// report logs the order with id field as half-written (what: "no-data" or "no-status"),
// unless it has been already.
func (h *halfRecords) report(field, what string) {
	h.mu.Lock()
	_, seen := h.logged[field]
	first := !seen && !h.full
	if first {
		if h.logged == nil {
			h.logged = map[string]struct{}{}
		}
		h.logged[field] = struct{}{}
		h.full = len(h.logged) >= maxHalfRecords
	}
	nowFull := first && h.full
	h.mu.Unlock()
	if !first {
		return
	}
	log := h.log.Load()
	if log == nil {
		log = packageLogger()
	}
	missing := "status"
	if what == "no-data" {
		missing = "data"
	}
	log.Warn("order in redis is half-written, so it is neither listed nor cancelled",
		slog.String("order", field), slog.String("missing", missing))
	if nowFull {
		log.Warn("more half-written orders are not logged", slog.Int("logged", maxHalfRecords))
	}
}
