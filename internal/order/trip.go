package order

import "context"

// Trip carries what a request's first round trip to shared storage read for its later steps, so that a store
// may answer an early step (a key lookup) from memory and confirm it after the trip. Steps run in turn: no lock.
type Trip struct {
	// Carried is what the round trip read, of a type only its store knows. Confirm checks what was answered
	// before the trip against it, asks the storage again when that has moved, and fails as the step would.
	Carried interface {
		Confirm(ctx context.Context) error
	}
}

type tripKey struct{}

// Begin returns ctx with a Trip of its own.
func Begin(ctx context.Context) context.Context { return context.WithValue(ctx, tripKey{}, &Trip{}) }

// TripOf returns the Trip that Begin put in ctx, or nil.
func TripOf(ctx context.Context) *Trip {
	t, _ := ctx.Value(tripKey{}).(*Trip)
	return t
}

// Confirm confirms what ctx's Trip answered provisionally; nil if nothing waits.
func Confirm(ctx context.Context) error {
	if t := TripOf(ctx); t != nil && t.Carried != nil {
		return t.Carried.Confirm(ctx)
	}
	return nil
}
