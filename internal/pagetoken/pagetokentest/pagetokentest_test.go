package pagetokentest_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/pagetoken"
	"github.com/petstore/orderd/internal/pagetoken/pagetokentest"
)

// memory is one store's state, shared by the handles opened on it. Its ways of making the
// secret are the right one and the wrong ones the suite has to catch.
type memory struct {
	way    string
	mu     sync.Mutex
	secret []byte
	// sawNone counts the callers of checkThenSet that found no secret; met is closed when
	// two have, so that both have read before either writes: the race, every time.
	sawNone int
	met     chan struct{}
}

// handle is one handle on a memory: each open makes a new one.
type handle struct{ m *memory }

func (h handle) PageTokenSecret(context.Context) ([]byte, error) {
	m := h.m
	switch m.way {
	case "short":
		return m.insertIfAbsent(rand.Text()[:16]), nil
	case "newEveryCall":
		return []byte(rand.Text() + rand.Text()), nil
	case "constant":
		return bytes.Repeat([]byte{7}, pagetoken.MinSecretLen), nil
	case "checkThenSet":
		m.mu.Lock()
		secret := m.secret
		if secret == nil {
			if m.sawNone++; m.sawNone == 2 {
				close(m.met)
			}
		}
		m.mu.Unlock()
		if secret != nil {
			return secret, nil
		}
		select {
		case <-m.met:
		case <-time.After(100 * time.Millisecond): // a lone caller: nobody to race
		}
		secret = []byte(rand.Text() + rand.Text())
		m.mu.Lock()
		m.secret = secret
		m.mu.Unlock()
		return secret, nil
	}
	return m.insertIfAbsent(rand.Text() + rand.Text()), nil
}

// insertIfAbsent keeps fresh unless the store holds a secret, and returns the one it holds.
func (m *memory) insertIfAbsent(fresh string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.secret == nil {
		m.secret = []byte(fresh)
	}
	return m.secret
}

// newMemory is the suite's NewStore for one way; "perHandle" gives each handle a store of
// its own.
func newMemory(way string) pagetokentest.NewStore {
	return func(testing.TB) func() pagetoken.SecretStore {
		m := &memory{way: way, met: make(chan struct{})}
		return func() pagetoken.SecretStore {
			if way == "perHandle" {
				return handle{&memory{met: make(chan struct{})}}
			}
			return handle{m}
		}
	}
}

// brokenEnv names the broken way TestSuite runs the suite on, in a child process.
const brokenEnv = "PAGETOKENTEST_BROKEN"

// TestSuite runs the suite on a right store in memory, which passes it; in a child process
// of TestSuiteCatchesBrokenStores, on the broken one named by brokenEnv, which must fail it.
func TestSuite(t *testing.T) {
	pagetokentest.RunSecretStore(t, newMemory(os.Getenv(brokenEnv)))
}

// TestSuiteCatchesBrokenStores: each broken store fails the suite, in the check meant for
// its fault.
func TestSuiteCatchesBrokenStores(t *testing.T) {
	for way, check := range map[string]string{
		"short":        "MadeOnFirstCall",
		"newEveryCall": "SameOnEveryCall",
		"perHandle":    "SameThroughEveryHandle",
		"checkThenSet": "ConcurrentFirstCallsAgree",
		"constant":     "RandomPerStore",
	} {
		t.Run(way, func(t *testing.T) {
			t.Parallel()
			child := exec.Command(os.Args[0], "-test.run=^TestSuite$", "-test.count=1", "-test.v")
			child.Env = append(os.Environ(), brokenEnv+"="+way)
			out, err := child.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a store that is %s:\n%s", way, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestSuite/"+check+" ") {
				t.Fatalf("the suite did not fail %s on a store that is %s:\n%s", check, way, out)
			}
		})
	}
}
