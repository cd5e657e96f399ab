package order

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strings"
	"testing"
	"time"
)

func TestNewKey(t *testing.T) {
	k1, rec, err := NewKey("a", Pro, Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	k2, _, _ := NewKey("b", Pro, Limits{}, time.Now())
	if k1 == k2 || !strings.HasPrefix(k1, "osk_") || len(k1) != 4+43 {
		t.Fatalf("keys %q and %q: want distinct osk_ keys of 256 bits", k1, k2)
	}
	if rec.Hash != HashOf(k1) || strings.Contains(string(rec.Hash), k1) || rec.Prefix != k1[:ShownPrefixLen] {
		t.Fatalf("record %+v does not match key", rec)
	}
	if err := rec.Validate(); err != nil {
		t.Fatal(err)
	}
	if rec.Limits() != (Limits{PerMinute: 300, PerDay: 10_000}) {
		t.Fatalf("pro limits %+v", rec.Limits())
	}
}

func TestKeyValidate(t *testing.T) {
	_, good, _ := NewKey("x", Enterprise, Limits{PerMinute: 5, PerDay: 50}, time.Now())
	if err := good.Validate(); err != nil || good.Limits().PerDay != 50 {
		t.Fatalf("enterprise key: %v %+v", err, good.Limits())
	}
	for name, change := range map[string]func(*Key){
		"no name":                 func(k *Key) { k.Name = "" },
		"unknown plan":            func(k *Key) { k.Plan = "gold" },
		"enterprise no limits":    func(k *Key) { k.Custom = Limits{} },
		"free with custom limits": func(k *Key) { k.Plan = Free },
		"per-day above the cap":   func(k *Key) { k.Custom.PerDay = MaxLimit + 1 },
		"short hash":              func(k *Key) { k.Hash = "abc" },
		"upper-case hash":         func(k *Key) { k.Hash = Hash(strings.ToUpper(string(k.Hash))) },
	} {
		k := good
		change(&k)
		if err := k.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, k)
		}
		if err := k.ValidateStored(); (err == nil) != (name == "per-day above the cap") {
			t.Errorf("%s: ValidateStored: %v (a limit above the cap is read as capped)", name, err)
		}
	}
}

// TestKeyNames: a name may not be taken for a prefix, nor break a row of `keys list`, and is
// at most MaxNameLen bytes; a record stored before these rules still reads (ValidateStored).
func TestKeyNames(t *testing.T) {
	_, good, _ := NewKey("x", Pro, Limits{}, time.Now())
	for _, name := range []string{"a", "shop-embedded", "shop embedded", "café ☕", "key-Ku2xWs", "OSK_Ku2xWs", "my osk_Ku2xWs", strings.Repeat("n", MaxNameLen)} {
		k := good
		k.Name = name
		if err := k.Validate(); err != nil {
			t.Errorf("Validate refused the name %q: %v", name, err)
		}
	}
	for _, name := range []string{
		"osk_Ku2xWs", "osk_", "osk_a longer name", // as keys start: taken for a prefix
		"two\nlines", "crlf\r", "tab\tbed", "esc\x1b[31m", "nul\x00", "del\x7f", "c1\u0085", "line\u2028sep", "nbsp\u00a0", "bidi\u202e", "bad\xffutf8",
		strings.Repeat("n", MaxNameLen+1),
	} {
		k := good
		k.Name = name
		if err := k.Validate(); err == nil {
			t.Errorf("Validate accepted the name %q", name)
		}
		if err := k.ValidateStored(); err != nil {
			t.Errorf("ValidateStored refused a stored key named %q: %v", name, err)
		}
	}
}

// TestHashOf: the SHA-256 of the key in lowercase hex, for a short key, a key as NewKey makes
// them (both known answers), and a long one (against the standard library's hex).
func TestHashOf(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"osk_" + strings.Repeat("a", 43), "66c419b9c6f2d3f7c1ccd6fb329d854209d2cd292ed8a3c06489b357c1b1f0cf"},
		{strings.Repeat("k", 300), ""},
	} {
		sum := sha256.Sum256([]byte(c.key))
		want := hex.EncodeToString(sum[:])
		if c.want != "" {
			want = c.want
		}
		if got := HashOf(c.key); string(got) != want {
			t.Errorf("HashOf(%.10q…): %s, want %s", c.key, got, want)
		}
	}
}

func TestLimitsFor(t *testing.T) {
	for _, tc := range []struct {
		plan   Plan
		custom Limits
		want   Limits
		ok     bool
	}{
		{Free, Limits{}, Limits{60, 1_000}, true},
		{Pro, Limits{}, Limits{300, 10_000}, true},
		{Business, Limits{}, Limits{1_000, 100_000}, true},
		{Enterprise, Limits{5, 50}, Limits{5, 50}, true},
		{Enterprise, Limits{}, Limits{}, false},
		{Enterprise, Limits{0, 50}, Limits{}, false},
		{Enterprise, Limits{60, 50}, Limits{}, false},
		{Enterprise, Limits{MaxLimit, MaxLimit}, Limits{MaxLimit, MaxLimit}, true},
		{Enterprise, Limits{5, MaxLimit + 1}, Limits{}, false},
		{Enterprise, Limits{MaxLimit + 1, MaxLimit + 1}, Limits{}, false},
		{Enterprise, Limits{math.MaxInt64, math.MaxInt64}, Limits{}, false},
		{Free, Limits{5, 50}, Limits{}, false},
		{"gold", Limits{}, Limits{}, false},
	} {
		got, err := LimitsFor(tc.plan, tc.custom)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("LimitsFor(%s, %+v) = %+v, %v", tc.plan, tc.custom, got, err)
		}
	}
	if got := (Limits{5, math.MaxInt64}).Capped(); got != (Limits{5, MaxLimit}) {
		t.Errorf("Capped = %+v", got)
	}
	for _, s := range []string{"free", "pro", "business", "enterprise"} {
		if p, err := ParsePlan(s); err != nil || string(p) != s {
			t.Errorf("ParsePlan(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParsePlan("Free"); err == nil {
		t.Error("Parse accepted Free")
	}
}
