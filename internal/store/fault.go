package store

// Fault is a failure of the storage that an operator must see: one that retrying does not
// mend (a corrupt file, a file replaced under the service) or that only an operator can end
// (a full disk). The store that finds it reports it (a log line, a metric) and, when it is
// Lasting, the service is not ready from then on. Err wraps ErrCorrupt or ErrUnavailable, which decide the
// answer to a request, and names the file and the storage's own message, for the log; Public
// says what it is in general terms, for answers to clients, which must not learn paths.
type Fault struct {
	Kind   string // a word for metrics and logs: corrupt, full, replaced…
	Public string
	Err    error
	// Lasting is a fault that lasts until an operator mends the storage and restarts the
	// service: while it lasts the service is not ready.
	Lasting bool
}

func (f *Fault) Error() string { return f.Err.Error() }

func (f *Fault) Unwrap() error { return f.Err }
