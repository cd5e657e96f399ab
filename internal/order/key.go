package order

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// keyPrefix marks a key, for secret scanners; ShownPrefixLen characters identify it in listings.
const keyPrefix, ShownPrefixLen = "osk_", len("osk_") + 6

// Hash is the SHA-256 of a key, in hex: the only form in which a key is stored.
type Hash string

// HashOf returns the hash of the key k.
func HashOf(k string) Hash {
	sum := sha256.Sum256([]byte(k))
	return Hash(hex.EncodeToString(sum[:]))
}

// Key is what the service knows of an API key: never the key itself.
type Key struct {
	Name      string    `json:"name"`
	Plan      Plan      `json:"plan"`
	Custom    Limits    `json:"limits,omitzero"` // enterprise only
	Prefix    string    `json:"prefix"`
	Hash      Hash      `json:"hash"`
	CreatedAt time.Time `json:"createdAt"`
}

// NewKey makes a random 256-bit key, shown to its owner once, and its record, which is kept.
func NewKey(name string, p Plan, custom Limits, now time.Time) (string, Key, error) {
	var b [32]byte
	rand.Read(b[:]) // never fails since Go 1.24: it crashes the program instead
	k := keyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return k, Key{Name: name, Plan: p, Custom: custom, Prefix: k[:ShownPrefixLen], Hash: HashOf(k), CreatedAt: now.UTC()}, nil
}

// Errors of a KeyStore.
var (
	ErrKeyNotFound = errors.New("no such key")
	ErrNameTaken   = errors.New("a key with this name exists")
)

// KeyStore keeps the keys, safe for concurrent use.
type KeyStore interface {
	Lookup(ctx context.Context, h Hash) (Key, error)              // or ErrKeyNotFound
	Add(ctx context.Context, k Key) error                         // or ErrNameTaken
	List(ctx context.Context) ([]Key, error)                      // sorted by name
	Revoke(ctx context.Context, nameOrPrefix string) (Key, error) // by name, else by shown prefix
}

// MaxNameLen bounds a key's name, in bytes: it is a label in listings and logs.
const MaxNameLen = 100

// CheckName reports why name may not name a new key: one that starts as keys do would be taken
// for a prefix, one not printable would break or fake a row of `orderd keys list`.
func CheckName(name string) error {
	switch {
	case name == "" || len(name) > MaxNameLen:
		return fmt.Errorf("key name %.40q: want 1 to %d bytes", name, MaxNameLen)
	case LooksLikePrefix(name):
		return fmt.Errorf("key name %q: starts with %q as keys do, so it would be taken for a key's prefix", name, keyPrefix)
	case !Printable(name):
		return fmt.Errorf("key name %q: want printable text, without control characters, tabs or line breaks", name)
	}
	return nil
}

// Printable reports whether s is UTF-8 of printable characters and spaces only.
func Printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) })
}

// Validate reports the first way in which k is not a key record that may be stored now.
func (k Key) Validate() error {
	if err := CheckName(k.Name); err != nil {
		return err
	}
	if _, err := LimitsFor(k.Plan, k.Custom); err != nil { // uncapped, unlike ValidateStored
		return fmt.Errorf("key %q: %w", k.Name, err)
	}
	return k.ValidateStored()
}

// ValidateStored is Validate for a record read back: any name, and limits capped at MaxLimit, as older keys have.
func (k Key) ValidateStored() error {
	if k.Name == "" {
		return errors.New("key has no name")
	}
	if _, err := LimitsFor(k.Plan, k.Custom.Capped()); err != nil {
		return fmt.Errorf("key %q: %w", k.Name, err)
	}
	if len(k.Hash) != 2*sha256.Size || strings.Trim(string(k.Hash), "0123456789abcdef") != "" {
		return fmt.Errorf("key %q: hash must be 64 lowercase hex digits", k.Name)
	}
	return nil
}

// Limits returns the limits of the key's plan, capped at MaxLimit.
func (k Key) Limits() Limits {
	l, _ := LimitsFor(k.Plan, k.Custom.Capped()) // zero only for a record that fails ValidateStored
	return l
}

// LooksLikePrefix reports whether s starts as every key does: a shown prefix, not a name.
func LooksLikePrefix(s string) bool { return strings.HasPrefix(s, keyPrefix) }

// DefaultName is the name of a key made without one: "key-" and its prefix's random part.
func DefaultName(prefix string) string { return "key-" + strings.TrimPrefix(prefix, keyPrefix) }

// Plan is the name of a plan: the request limits of the keys that have it (enterprise: the key's own).
type Plan string

const (
	Free       Plan = "free"
	Pro        Plan = "pro"
	Business   Plan = "business"
	Enterprise Plan = "enterprise"
)

// Limits are the requests a caller may make per UTC minute and per UTC day.
type Limits struct {
	PerMinute int64 `json:"perMinute"`
	PerDay    int64 `json:"perDay"`
}

// MaxLimit bounds each enterprise limit: RateLimit-Policy's integers have at most 15 digits; rate.lua uses doubles.
const MaxLimit = 999_999_999_999_999

// Capped returns l with each limit above MaxLimit lowered to it.
func (l Limits) Capped() Limits {
	return Limits{PerMinute: min(l.PerMinute, MaxLimit), PerDay: min(l.PerDay, MaxLimit)}
}

var fixed = map[Plan]Limits{
	Free:       {PerMinute: 60, PerDay: 1_000},
	Pro:        {PerMinute: 300, PerDay: 10_000},
	Business:   {PerMinute: 1_000, PerDay: 100_000},
	Enterprise: {}, // the key's own
}

// ParsePlan returns the plan named s.
func ParsePlan(s string) (Plan, error) {
	if _, ok := fixed[Plan(s)]; !ok {
		return "", fmt.Errorf("unknown plan %q (want free, pro, business or enterprise)", s)
	}
	return Plan(s), nil
}

// LimitsFor returns the limits of plan p: custom for enterprise, else the fixed ones (custom zero).
func LimitsFor(p Plan, custom Limits) (Limits, error) {
	l, ok := fixed[p]
	switch {
	case !ok:
		_, err := ParsePlan(string(p))
		return Limits{}, err
	case p != Enterprise && custom != (Limits{}):
		return Limits{}, fmt.Errorf("plan %s has fixed limits; per-minute and per-day are for enterprise only", p)
	case p != Enterprise:
		return l, nil
	case custom.PerMinute < 1 || custom.PerDay < 1:
		return Limits{}, fmt.Errorf("plan enterprise needs both limits, each at least 1")
	case custom.PerMinute > MaxLimit || custom.PerDay > MaxLimit:
		return Limits{}, fmt.Errorf("plan enterprise: each limit at most 999,999,999,999,999 (per-minute %d, per-day %d)", custom.PerMinute, custom.PerDay)
	case custom.PerMinute > custom.PerDay:
		return Limits{}, fmt.Errorf("per-minute limit %d is above the per-day limit %d", custom.PerMinute, custom.PerDay)
	}
	return custom, nil
}
