package keyfile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/keyfile"
	"github.com/petstore/orderd/internal/plan"
)

func newKey(t *testing.T, name string) (string, auth.Key) {
	t.Helper()
	k, rec, err := auth.NewKey(name, plan.Free, plan.Limits{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return k, rec
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.json")
	if _, err := keyfile.Open(path, false); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open of a missing file without create: %v", err)
	}
	s, err := keyfile.Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	k1, r1 := newKey(t, "one")
	_, r2 := newKey(t, "two")
	for _, r := range []auth.Key{r2, r1} {
		if err := s.Add(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(ctx, r1); !errors.Is(err, auth.ErrNameTaken) {
		t.Fatalf("second Add of a name: %v", err)
	}
	if got, err := s.Lookup(ctx, auth.HashOf(k1)); err != nil || got.Name != "one" {
		t.Fatalf("Lookup = %+v, %v", got, err)
	}
	if _, err := s.Lookup(ctx, auth.HashOf("osk_other")); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Fatalf("Lookup of an unknown key: %v", err)
	}
	list, _ := s.List(ctx)
	if len(list) != 2 || list[0].Name != "one" || list[1].Name != "two" {
		t.Fatalf("List = %+v", list)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), k1) {
		t.Fatal("the file holds a key, not only its hash")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v", fi.Mode().Perm())
	}

	// Another process (the command line) revokes by prefix; a reload sees it.
	other, err := keyfile.Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := other.Revoke(ctx, r1.Prefix); err != nil || got.Name != "one" {
		t.Fatalf("Revoke by prefix = %+v, %v", got, err)
	}
	if _, err := other.Revoke(ctx, "one"); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Fatalf("second Revoke: %v", err)
	}
	forceNewStamp(t, path)
	if changed, err := s.Reload(); err != nil || !changed {
		t.Fatalf("Reload = %v, %v", changed, err)
	}
	if _, err := s.Lookup(ctx, auth.HashOf(k1)); !errors.Is(err, auth.ErrKeyNotFound) {
		t.Fatalf("a revoked key is still found: %v", err)
	}
	if changed, err := s.Reload(); err != nil || changed {
		t.Fatalf("Reload of an unchanged file = %v, %v", changed, err)
	}
}

func TestBadFileKeepsTheKeysLoaded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys.json")
	s, _ := keyfile.Open(path, true)
	k, r := newKey(t, "one")
	if err := s.Add(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("[\n  {\"name\": \"x\", \"plan\": \"gold\"}\n]"), 0o600); err != nil {
		t.Fatal(err)
	}
	forceNewStamp(t, path)
	_, err := s.Reload()
	if err == nil || !strings.Contains(err.Error(), "keys.json:2:3") {
		t.Fatalf("Reload error %v, want one with the place in the file", err)
	}
	if _, err := s.Lookup(ctx, auth.HashOf(k)); err != nil {
		t.Fatalf("the keys loaded before were dropped: %v", err)
	}
	if _, err := keyfile.Open(path, false); err == nil {
		t.Fatal("Open accepted a bad file")
	}
}

// forceNewStamp moves the file's modification time, since two writes within the file
// system's time resolution would look like one.
func forceNewStamp(t *testing.T, path string) {
	t.Helper()
	later := time.Now().Add(time.Duration(time.Now().UnixNano()%1000+1) * time.Millisecond)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}
