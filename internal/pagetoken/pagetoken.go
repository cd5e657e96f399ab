// Package pagetoken makes and reads the page tokens of v2's find: opaque to clients,
// tamper-evident, and bound to the filter they were made with. A token is 41 bytes,
// base64url without padding (55 characters):
//
//	format (1) | after (8, big-endian id) | filter digest (16) | MAC (16)
//
// The MAC (HMAC-SHA256 under the deployment's secret) says the server made it; the digest
// (SHA-256 of the canonical filter) that it was made for this filter: two refusals apart.
package pagetoken

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/petstore/orderd/internal/order"
)

const (
	Format       = byte(2) // the first byte of every token this version of the service makes
	MinSecretLen = 32      // HMAC-SHA256's output size
	// RereadEvery is the least time between two reads of the store's secret for tokens that
	// do not verify: forged tokens cost the store one read per RereadEvery at most.
	RereadEvery = time.Second
	bodyLen     = 1 + 8 + 16 // what the MAC covers
	tokenLen    = bodyLen + 16
)

// The ways a token is refused; each Read error wraps one of them and ErrInvalid.
var (
	ErrInvalid      = errors.New("invalid page token") // a client's error (400)
	ErrMalformed    = errors.New("malformed")          // not base64url, or not 41 bytes
	ErrOtherVersion = errors.New("made by another version of the API")
	ErrAltered      = errors.New("altered") // the MAC does not hold
	ErrOtherFilter  = errors.New("made with other filters")
)

// SecretStore holds the deployment's one secret, so every instance accepts every token.
type SecretStore interface {
	// PageTokenSecret returns the secret, first making a random one of at least
	// MinSecretLen bytes if there is none: the same for every caller until the store loses it.
	PageTokenSecret(ctx context.Context) ([]byte, error)
}

// Codec makes and reads tokens under a fixed secret or its SecretStore's, read on first use
// and again when a token does not verify.
type Codec struct {
	store    SecretStore
	now      func() time.Time
	secret   atomic.Pointer[[]byte] // in use; nil until the store's is read
	reads    singleflight.Group     // one read of the store at a time, its answer shared
	lastRead time.Time              // when the last read began; touched by reads' one call only
}

// For returns the Codec under secret when it is set (every instance is given the same, of at
// least MinSecretLen bytes: its maker checks), else under the one store holds, which every
// instance on it shares untold.
func For(secret string, store SecretStore) *Codec {
	if secret == "" {
		return &Codec{store: store, now: time.Now}
	}
	c := &Codec{}
	c.secret.Store(new([]byte(secret)))
	return c
}

// FromStore returns a Codec whose secret is the one store holds.
func FromStore(store SecretStore) *Codec { return For("", store) }

// Make returns the token of the page that starts after the id after, for filter f.
func (c *Codec) Make(ctx context.Context, f order.Filter, after int64) (string, error) {
	secret, err := c.current(ctx, false)
	return makeToken(secret, Format, f, after), err // with an error, a token no one reads
}

func makeToken(secret []byte, format byte, f order.Filter, after int64) string {
	b := append(binary.BigEndian.AppendUint64([]byte{format}, uint64(after)), digest(f)...)
	return base64.RawURLEncoding.EncodeToString(append(b, mac(secret, b)...))
}

// Read returns the id a token made for f starts after; a refusal wraps ErrInvalid and why.
func (c *Codec) Read(ctx context.Context, token string, f order.Filter) (int64, error) {
	refuse := func(why error) (int64, error) { return 0, fmt.Errorf("%w: %w", ErrInvalid, why) }
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if len(token) != base64.RawURLEncoding.EncodedLen(tokenLen) || err != nil || len(b) != tokenLen { // the length too: the decoder skips CR and LF
		return refuse(ErrMalformed)
	}
	secret, err := c.current(ctx, false)
	verified := err == nil && hmac.Equal(b[bodyLen:], mac(secret, b[:bodyLen]))
	if err == nil && !verified && c.store != nil { // perhaps the store holds a newer secret than this instance read
		secret, err = c.current(ctx, true)
		verified = err == nil && hmac.Equal(b[bodyLen:], mac(secret, b[:bodyLen]))
	}
	switch {
	case err != nil:
		return 0, err
	case !verified:
		return refuse(ErrAltered)
	case b[0] != Format: // checked only once the MAC holds: before that the byte says nothing
		return refuse(ErrOtherVersion)
	case !hmac.Equal(digest(f), b[9:bodyLen]):
		return refuse(ErrOtherFilter)
	}
	return int64(binary.BigEndian.Uint64(b[1:9])), nil
}

// InUse names the secret now in use (nil before the first is known): a token that verified
// under it, or was made under it, verifies while it is the one in use.
func (c *Codec) InUse() *[]byte { return c.secret.Load() }

// current returns the secret in use, lock-free once one is known; else, or on a recheck
// (more than RereadEvery after the last read), the store's: callers meanwhile share one
// read, which runs to its end whatever the starter's context.
func (c *Codec) current(ctx context.Context, recheck bool) ([]byte, error) {
	if p := c.secret.Load(); p != nil && !recheck {
		return *p, nil
	}
	secret, err, _ := c.reads.Do("", func() (any, error) {
		if p := c.secret.Load(); p != nil && (!recheck || c.now().Sub(c.lastRead) < RereadEvery) {
			return *p, nil
		}
		c.lastRead = c.now()
		secret, err := c.store.PageTokenSecret(context.WithoutCancel(ctx)) // which checks its length
		if err != nil {
			return nil, fmt.Errorf("page token secret: %w", err)
		}
		c.secret.Store(&secret)
		return secret, nil
	})
	b, _ := secret.([]byte)
	return b, err
}

func mac(secret, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(body)
	return h.Sum(nil)[:16]
}

// digest hashes f canonically: states in any order or repeated, instants in any zone.
// Seconds and nanoseconds: UnixNano would overflow outside 1678–2262.
func digest(f order.Filter) []byte {
	var b []byte
	for _, s := range slices.Compact(slices.Sorted(slices.Values(f.Statuses))) {
		b = append(append(append(b, 's'), s...), 0)
	}
	if f.PetID != nil {
		b = binary.BigEndian.AppendUint64(append(b, 'p'), uint64(*f.PetID))
	}
	for i, t := range []*time.Time{f.ShipFrom, f.ShipBefore} {
		if t != nil {
			b = binary.BigEndian.AppendUint64(append(b, "fb"[i]), uint64(t.Unix()))
			b = binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
		}
	}
	sum := sha256.Sum256(b)
	return sum[:16]
}
