// Package webhook sends the log of order events to the endpoints operators register, signed
// as Standard Webhooks 1.0 says: the Endpoint, the Store of endpoints and their delivery state,
// and the Deliverer each instance runs (docs/design.md, Webhooks).
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/petstore/orderd/internal/order"
)

// Status says whether an endpoint is delivered to.
type Status string

const (
	// StatusActive endpoints are delivered to.
	StatusActive Status = "active"
	// StatusFailing endpoints gave up on an event (its retries ran out, or the log no longer
	// keeps it): they keep their state and are no longer delivered to.
	StatusFailing Status = "failing"
	// StatusDisabled endpoints answered 410 Gone: their receiver wants no more.
	StatusDisabled Status = "disabled"
)

// Endpoint is a receiver of events and where its delivery stands.
type Endpoint struct {
	ID        string
	URL       string
	Types     []order.EventType // none: every type
	Secret    string            // whsec_…, shown once at creation
	CreatedAt time.Time
	Delivery
}

// Delivery is an endpoint's state in the log, written only by the holder of its lease.
type Delivery struct {
	Status Status
	// Position is the id of the last event the endpoint is done with: delivered, or not of its
	// types. It starts at the log's newest when the endpoint is created.
	Position string
	// Attempts are the failed attempts at the event after Position; FirstFailure the first of them.
	Attempts     int
	FirstFailure time.Time
	NextAttempt  time.Time // zero: now
	LastAttempt  time.Time // zero: never
	LastStatus   int       // the HTTP status of the last attempt; 0 when it had none
	LastError    string    // why the last attempt or the endpoint failed; "" after a success
}

// Store keeps the endpoints and their delivery state, shared by every instance.
type Store interface {
	// Create adds e, whose ID is new.
	Create(ctx context.Context, e Endpoint) error
	// List returns every endpoint, the oldest first.
	List(ctx context.Context) ([]Endpoint, error)
	// Get returns the endpoint id. Refusal: ErrNotFound.
	Get(ctx context.Context, id string) (Endpoint, error)
	// Delete removes the endpoint id, its state and its lease. Refusal: ErrNotFound.
	Delete(ctx context.Context, id string) error
	// Lease takes the endpoint's lease for owner for ttl, or renews it when owner holds it,
	// atomically: it reports false when another owner holds an unexpired lease. Refusal: ErrNotFound.
	Lease(ctx context.Context, id, owner string, ttl time.Duration) (bool, error)
	// Renew extends owner's lease by ttl while owner holds it, unexpired, atomically. A lease
	// that expired is lost though no one took it: another owner may have taken it, written
	// and released it meanwhile, so what owner read under it may be old. Refusals:
	// ErrLeaseLost, ErrNotFound.
	Renew(ctx context.Context, id, owner string, ttl time.Duration) error
	// Release gives the lease up if owner holds it, so another instance can take it at once.
	Release(ctx context.Context, id, owner string) error
	// Save writes d as the endpoint's delivery state if owner holds its lease, atomically.
	// Refusals: ErrLeaseLost, ErrNotFound.
	Save(ctx context.Context, id, owner string, d Delivery) error
	// Enable makes a failing or disabled endpoint active again, its position moved from from
	// to to and its attempts and failure cleared (its last attempt and status are kept), in
	// one step with the checks: it is an operator's, under no lease, and no deliverer writes
	// an endpoint that is not active. Refusals: ErrNotFound, ErrActive, ErrMoved.
	Enable(ctx context.Context, id, from, to string) error
}

var (
	// ErrNotFound refuses an endpoint id no endpoint has.
	ErrNotFound = errors.New("no such webhook endpoint")
	// ErrLeaseLost refuses a write by an owner whose lease expired or was taken.
	ErrLeaseLost = errors.New("the webhook endpoint's lease is held by another instance")
	// ErrActive refuses to enable an endpoint that is active: its deliverer owns its state.
	ErrActive = errors.New("the webhook endpoint is already active")
	// ErrMoved refuses to enable an endpoint whose position is no longer the one checked.
	ErrMoved = errors.New("the webhook endpoint's position changed meanwhile")
)

// NewEndpoint checks rawURL and types and returns an active endpoint with a new id and secret,
// delivered the events after position (the log's newest, for a new endpoint).
func NewEndpoint(rawURL string, types []order.EventType, position string, now time.Time) (Endpoint, error) {
	if err := CheckURL(rawURL); err != nil {
		return Endpoint{}, err
	}
	for _, t := range types {
		if !slices.Contains(order.EventTypes, t) {
			return Endpoint{}, fmt.Errorf("unknown event type %q (want one of %v)", t, order.EventTypes)
		}
	}
	if len(types) > 0 {
		types = slices.Compact(slices.Sorted(slices.Values(types)))
	}
	id := make([]byte, 8)
	rand.Read(id) // never fails (crypto/rand)
	return Endpoint{
		ID: "wh_" + hex.EncodeToString(id), URL: rawURL, Types: types, Secret: NewSecret(),
		CreatedAt: now.UTC(), Delivery: Delivery{Status: StatusActive, Position: position},
	}, nil
}

// CheckURL accepts an absolute http or https URL with a host. Where it points is checked when
// it is dialed (Dialer), for a name may resolve elsewhere by then.
func CheckURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil:
		return fmt.Errorf("webhook URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("webhook URL %q: want http or https, not %q", rawURL, u.Scheme)
	case u.Hostname() == "":
		return fmt.Errorf("webhook URL %q: no host", rawURL)
	case u.User != nil:
		return fmt.Errorf("webhook URL %q: credentials in a URL are refused: they would be shown by webhooks list", rawURL)
	}
	return nil
}

// Wants reports whether the endpoint receives events of type t.
func (e Endpoint) Wants(t order.EventType) bool {
	return len(e.Types) == 0 || slices.Contains(e.Types, t)
}
