// Package keyfile keeps API keys in a JSON file: the key store of the embedded mode. The file
// holds hashes only, so it can be read by anyone who may see the configuration.
package keyfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/jsonfile"
)

var _ auth.KeyStore = (*Store)(nil)

// Store is an auth.KeyStore on a file. Lookups are served from memory; Reload picks up
// changes that another process (`orderd keys create`) wrote to the file.
type Store struct {
	path string

	mu     sync.RWMutex
	byHash map[auth.Hash]auth.Key
	stamp  stamp
}

// stamp tells whether the file changed since it was last read.
type stamp struct {
	mod  time.Time
	size int64
}

// Open reads the keys file at path. With create, a missing file is an empty store, written
// on the first Add; without it, a missing file is an error.
func Open(path string, create bool) (*Store, error) {
	s := &Store{path: path, byHash: map[auth.Hash]auth.Key{}}
	if _, err := s.Reload(); err != nil {
		if !create || !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return s, nil
}

// Reload re-reads the file if it changed since it was last read. A bad file leaves the keys
// as they were, so a half-edited file never locks every client out.
func (s *Store) Reload() (changed bool, err error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		return false, err
	}
	st := stamp{mod: fi.ModTime(), size: fi.Size()}
	s.mu.RLock()
	same := st == s.stamp
	s.mu.RUnlock()
	if same {
		return false, nil
	}
	keys, err := read(s.path)
	if err != nil {
		return false, err
	}
	byHash := make(map[auth.Hash]auth.Key, len(keys))
	for _, k := range keys {
		byHash[k.Hash] = k
	}
	s.mu.Lock()
	s.byHash, s.stamp = byHash, st
	s.mu.Unlock()
	return true, nil
}

// Watch calls Reload every interval until ctx ends, so that keys created or revoked with the
// command line take effect on a running server within that interval.
func (s *Store) Watch(ctx context.Context, interval time.Duration, onReload func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if changed, err := s.Reload(); changed || err != nil {
				onReload(err)
			}
		}
	}
}

// Lookup returns the key with hash h. The presented key was hashed before this call, so the
// time a lookup takes depends on the hash only and reveals nothing about the key's content.
func (s *Store) Lookup(_ context.Context, h auth.Hash) (auth.Key, error) {
	s.mu.RLock()
	k, ok := s.byHash[h]
	s.mu.RUnlock()
	if !ok {
		return auth.Key{}, auth.ErrKeyNotFound
	}
	return k, nil
}

// List returns every key, sorted by name.
func (s *Store) List(context.Context) ([]auth.Key, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return sortedKeys(s.byHash), nil
}

// Add writes k to the file. It reads the file first, so that it never drops a key another
// process added since this store was opened.
func (s *Store) Add(_ context.Context, k auth.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return s.update(func(keys []auth.Key) ([]auth.Key, error) {
		for _, old := range keys {
			if old.Name == k.Name {
				return nil, fmt.Errorf("%w: %q", auth.ErrNameTaken, k.Name)
			}
		}
		return append(keys, k), nil
	})
}

// Revoke removes the key that auth.Find finds for nameOrPrefix.
func (s *Store) Revoke(_ context.Context, nameOrPrefix string) (auth.Key, error) {
	var revoked auth.Key
	err := s.update(func(keys []auth.Key) ([]auth.Key, error) {
		k, err := auth.Find(keys, nameOrPrefix)
		if err != nil {
			return nil, err
		}
		revoked = k
		return slices.DeleteFunc(keys, func(old auth.Key) bool { return old.Name == k.Name }), nil
	})
	return revoked, err
}

func (s *Store) update(change func([]auth.Key) ([]auth.Key, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys, err := read(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		keys, err = nil, nil
	}
	if err != nil {
		return err
	}
	keys, err = change(keys)
	if err != nil {
		return err
	}
	slices.SortFunc(keys, func(a, b auth.Key) int { return strings.Compare(a.Name, b.Name) })
	if err := jsonfile.WriteArray(s.path, keys, 0o600); err != nil {
		return err
	}
	s.byHash = make(map[auth.Hash]auth.Key, len(keys))
	for _, k := range keys {
		s.byHash[k.Hash] = k
	}
	if fi, err := os.Stat(s.path); err == nil {
		s.stamp = stamp{mod: fi.ModTime(), size: fi.Size()}
	}
	return nil
}

func read(path string) ([]auth.Key, error) {
	seen := map[string]bool{}
	return jsonfile.ReadArray(path, func(k auth.Key) error {
		if err := k.Validate(); err != nil {
			return err
		}
		if seen[k.Name] {
			return fmt.Errorf("key %q: duplicate name", k.Name)
		}
		seen[k.Name] = true
		return nil
	})
}

func sortedKeys(m map[auth.Hash]auth.Key) []auth.Key {
	keys := make([]auth.Key, 0, len(m))
	for _, k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b auth.Key) int { return strings.Compare(a.Name, b.Name) })
	return keys
}
