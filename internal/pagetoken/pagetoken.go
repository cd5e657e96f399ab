// Package pagetoken makes and reads the page tokens of v2's find: opaque to clients,
// tamper-evident, and bound to the filter they were made with.
//
// A token is 41 bytes, base64url without padding (55 characters):
//
//	format (1) | after (8, big-endian id) | filter digest (16) | MAC (16)
//
// The MAC is HMAC-SHA256, cut to 128 bits, of the 25 bytes before it, under the deployment's
// secret. The filter digest is SHA-256, cut to 128 bits, of the filter in one canonical form,
// so that a token read with other filters is told apart from one that was altered: the MAC
// says whether the server made the token, the digest whether it was made for this filter.
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

	"github.com/petstore/orderd/internal/order"
)

// Format is the first byte of every token this version of the service makes: a token with
// another first byte was made by another version of the API (or is not a token).
const Format byte = 2

const (
	digestLen = 16
	macLen    = 16
	tokenLen  = 1 + 8 + digestLen + macLen
	// encodedLen is the length of every token's text: base64url of tokenLen bytes, unpadded.
	encodedLen = (tokenLen*8 + 5) / 6
)

// MinSecretLen is the fewest bytes a secret may have: 32, the size of HMAC-SHA256's output.
const MinSecretLen = 32

// The ways a token is refused; each Read error wraps one of them and ErrInvalid.
var (
	// ErrInvalid is any refused token: a client's error (400), never the service's.
	ErrInvalid = errors.New("invalid page token")
	// ErrMalformed is a token that is not one in form: not base64url, or not 41 bytes.
	ErrMalformed = errors.New("malformed")
	// ErrOtherVersion is a token made by another version of the API.
	ErrOtherVersion = errors.New("made by another version of the API")
	// ErrAltered is a token whose MAC does not hold: changed, or not made by this service.
	ErrAltered = errors.New("altered")
	// ErrOtherFilter is a genuine token sent with other filters than it was made with.
	ErrOtherFilter = errors.New("made with other filters")
)

// SecretStore holds the deployment's one page-token secret, so that every instance accepts
// the tokens of every other.
type SecretStore interface {
	// PageTokenSecret returns the secret, first making one (random, at least MinSecretLen
	// bytes) if the store holds none; every caller, in every process, gets the same secret
	// until the store loses it.
	PageTokenSecret(ctx context.Context) ([]byte, error)
}

// Codec makes and reads tokens under one secret: a fixed one (a setting), or the one its
// SecretStore holds. The store's is read on first use, and read again when a token does not
// verify under it, so that an instance follows a store that lost its secret and made a new
// one (another instance's, made after this one read the old); but at most once per
// RereadEvery, so that altered tokens, sent as fast as a client may, cost the store nothing.
type Codec struct {
	store SecretStore
	now   func() time.Time

	secret atomic.Pointer[[]byte] // the secret in use; nil until the store's is read
	// reading is the read of the store under way, if any: the callers that need the secret
	// meanwhile wait for it rather than read again.
	reading atomic.Pointer[storeRead]
	// lastRead is when (UnixNano) the last read of the store began.
	lastRead atomic.Int64
}

// RereadEvery is the least time between two reads of the store's secret for tokens that do
// not verify: a secret another instance made is followed within it, and forged tokens cost
// one read of the store per RereadEvery at most, however many arrive.
const RereadEvery = time.Second

// storeRead is one read of the store's secret, shared by every caller that asks while it runs.
type storeRead struct {
	done   chan struct{} // closed when secret and err are set
	secret []byte
	err    error
}

// errUnfinished is the outcome of a read that did not return (the store panicked).
var errUnfinished = errors.New("page token secret: the read of the store did not finish")

// New returns a Codec with a fixed secret of at least MinSecretLen bytes.
func New(secret []byte) (*Codec, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("page token secret: %d bytes, want at least %d", len(secret), MinSecretLen)
	}
	c := &Codec{}
	fixed := slices.Clone(secret)
	c.secret.Store(&fixed)
	return c, nil
}

// FromStore returns a Codec whose secret is the one store holds.
func FromStore(store SecretStore) *Codec { return &Codec{store: store, now: time.Now} }

// Make returns the token of the page that starts after the id after, for filter f.
func (c *Codec) Make(ctx context.Context, f order.Filter, after int64) (string, error) {
	secret, err := c.current(ctx)
	if err != nil {
		return "", err
	}
	return makeToken(secret, Format, f, after), nil
}

func makeToken(secret []byte, format byte, f order.Filter, after int64) string {
	var b [tokenLen]byte
	b[0] = format
	binary.BigEndian.PutUint64(b[1:9], uint64(after))
	d := digest(f)
	copy(b[9:9+digestLen], d[:])
	copy(b[9+digestLen:], mac(secret, b[:9+digestLen]))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Read returns the id a token says its page starts after, if the token is one this
// deployment made for filter f. A refused token is an error wrapping ErrInvalid and the
// reason (ErrMalformed, ErrOtherVersion, ErrAltered or ErrOtherFilter); any other error is
// the secret store's.
func (c *Codec) Read(ctx context.Context, token string, f order.Filter) (int64, error) {
	// The length first: the decoder skips CR and LF wherever they are, so a token with one
	// would otherwise read as the token without it.
	if len(token) != encodedLen {
		return 0, fmt.Errorf("%w: %w", ErrInvalid, ErrMalformed)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(b) != tokenLen {
		return 0, fmt.Errorf("%w: %w", ErrInvalid, ErrMalformed)
	}
	secret, err := c.current(ctx)
	if err != nil {
		return 0, err
	}
	body, sum := b[:9+digestLen], b[9+digestLen:]
	if !hmac.Equal(sum, mac(secret, body)) {
		// Perhaps the store holds a newer secret than the one this instance read.
		newer, err := c.newer(ctx, secret)
		if err != nil {
			return 0, err
		}
		if newer == nil || !hmac.Equal(sum, mac(newer, body)) {
			return 0, fmt.Errorf("%w: %w", ErrInvalid, ErrAltered)
		}
	}
	// The format is checked only once the MAC holds: before that the byte says nothing.
	if b[0] != Format {
		return 0, fmt.Errorf("%w: %w", ErrInvalid, ErrOtherVersion)
	}
	if d := digest(f); !hmac.Equal(d[:], b[9:9+digestLen]) {
		return 0, fmt.Errorf("%w: %w", ErrInvalid, ErrOtherFilter)
	}
	return int64(binary.BigEndian.Uint64(b[1:9])), nil
}

// current returns the secret in use: the fixed one, or the store's, read when none is known
// yet. Once one is known, it is returned without a lock or a wait.
func (c *Codec) current(ctx context.Context) ([]byte, error) {
	if p := c.secret.Load(); p != nil {
		return *p, nil
	}
	return c.readStore(ctx, false)
}

// newer returns a secret other than used that the store holds, to try a token that did not
// verify under used: nil when there is none, or when the store was read less than
// RereadEvery ago (then a secret another request read since is still returned).
func (c *Codec) newer(ctx context.Context, used []byte) ([]byte, error) {
	if c.store == nil {
		return nil, nil // a fixed secret: there is no other
	}
	secret, err := c.readStore(ctx, true)
	if err != nil || slices.Equal(secret, used) {
		return nil, err
	}
	return secret, nil
}

// readStore returns the store's secret, read once for every caller that asks while it is
// read. A recheck (a token did not verify) reads only when the last read began RereadEvery
// ago or more; otherwise it returns the secret in use. The read is not the first caller's
// alone, so it does not end with that caller's request: it is bounded by the store's own
// timeout.
func (c *Codec) readStore(ctx context.Context, recheck bool) ([]byte, error) {
	for {
		if r := c.reading.Load(); r != nil {
			select {
			case <-r.done:
				return r.secret, r.err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		now := c.now().UnixNano()
		if recheck {
			last := c.lastRead.Load()
			if now-last < int64(RereadEvery) || !c.lastRead.CompareAndSwap(last, now) {
				return *c.secret.Load(), nil // read lately (a recheck follows a first read)
			}
			recheck = false // this caller's turn: if another read is under way, its answer
		}
		r := &storeRead{done: make(chan struct{}), err: errUnfinished}
		if !c.reading.CompareAndSwap(nil, r) {
			continue // another caller began a read first: wait for it
		}
		c.lastRead.Store(now)
		c.run(context.WithoutCancel(ctx), r)
		return r.secret, r.err
	}
}

// run reads the store's secret into r, and into the codec when it can be used.
func (c *Codec) run(ctx context.Context, r *storeRead) {
	defer func() {
		c.reading.Store(nil)
		close(r.done)
	}()
	secret, err := c.store.PageTokenSecret(ctx)
	switch {
	case err != nil:
		r.err = fmt.Errorf("page token secret: %w", err)
	case len(secret) < MinSecretLen:
		r.err = fmt.Errorf("page token secret: the store holds %d bytes, want at least %d", len(secret), MinSecretLen)
	default:
		c.secret.Store(&secret)
		r.secret, r.err = secret, nil
	}
}

func mac(secret, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(body)
	return h.Sum(nil)[:macLen]
}

// digest is the filter in one canonical form, hashed: the same states in any order and with
// repeats, and the same instants in any time zone, are the same filter.
func digest(f order.Filter) [digestLen]byte {
	h := sha256.New()
	var b []byte
	for _, s := range canonicalStatuses(f.Statuses) {
		b = append(b, 's')
		b = append(b, s...)
		b = append(b, 0)
	}
	if f.PetID != nil {
		b = append(b, 'p')
		b = binary.BigEndian.AppendUint64(b, uint64(*f.PetID))
	}
	if f.ShipFrom != nil {
		b = append(b, 'f')
		b = appendInstant(b, *f.ShipFrom)
	}
	if f.ShipBefore != nil {
		b = append(b, 'b')
		b = appendInstant(b, *f.ShipBefore)
	}
	h.Write(b)
	var d [digestLen]byte
	copy(d[:], h.Sum(nil))
	return d
}

// appendInstant writes t as seconds and nanoseconds: every instant RFC 3339 can name, in any
// zone, one way (UnixNano alone would overflow outside 1678–2262).
func appendInstant(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(t.Unix()))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

func canonicalStatuses(s []order.Status) []order.Status {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
