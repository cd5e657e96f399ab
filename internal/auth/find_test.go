package auth

import (
	"errors"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/plan"
)

func TestFind(t *testing.T) {
	_, a, _ := NewKey("alpha", plan.Free, plan.Limits{}, time.Now())
	_, b, _ := NewKey("", plan.Pro, plan.Limits{}, time.Now())
	b.Name = DefaultName(b.Prefix)
	// A key whose name is another key's prefix: the name wins.
	_, c, _ := NewKey(a.Prefix, plan.Business, plan.Limits{}, time.Now())
	keys := []Key{a, b, c}
	for _, tc := range []struct {
		query string
		want  Key
	}{
		{"alpha", a},
		{b.Name, b},
		{b.Prefix, b},
		{a.Prefix, c},
	} {
		if got, err := Find(keys, tc.query); err != nil || got != tc.want {
			t.Errorf("Find(%q) = %q, %v; want %q", tc.query, got.Name, err, tc.want.Name)
		}
	}
	for _, query := range []string{"nobody", "osk_nobody", b.Prefix[len("osk_"):], ""} {
		if _, err := Find(keys, query); !errors.Is(err, ErrKeyNotFound) {
			t.Errorf("Find(%q): %v, want ErrKeyNotFound", query, err)
		}
	}
}

func TestDefaultName(t *testing.T) {
	_, k, _ := NewKey("", plan.Free, plan.Limits{}, time.Now())
	if got, want := DefaultName(k.Prefix), "key-"+k.Prefix[len("osk_"):]; got != want || !LooksLikePrefix(k.Prefix) || LooksLikePrefix(got) {
		t.Fatalf("DefaultName(%q) = %q, want %q", k.Prefix, got, want)
	}
}
