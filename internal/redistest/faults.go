package redistest

import (
	"bytes"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// StartReplica runs a synced replica of primary: it refuses writes with READONLY, as after a failover.
func StartReplica(tb testing.TB, primary *Server) *Server {
	tb.Helper()
	host, port, _ := net.SplitHostPort(primary.Addr)
	primary.MustDo(tb, "CONFIG", "SET", "repl-diskless-sync-delay", "0") // sync now, not in 5s
	s := Start(tb, "--replicaof", host, port)
	s.await(tb, 10*time.Second, "master_link_status:up", "INFO", "replication")
	return s
}

// Busy runs an endless script until Redis answers BUSY; stop (also at the test's end) kills it.
func (s *Server) Busy(tb testing.TB) (stop func()) {
	tb.Helper()
	s.MustDo(tb, "CONFIG", "SET", "busy-reply-threshold", "20")
	done := make(chan struct{})
	go func() {
		defer close(done)
		do(s.Addr, time.Minute, "EVAL", "while true do end", "0")
	}()
	s.await(tb, 5*time.Second, "-BUSY", "PING")
	stop = sync.OnceFunc(func() {
		for range 100 {
			if r, err := do(s.Addr, time.Second, "SCRIPT", "KILL"); err == nil && !strings.HasPrefix(r, "-BUSY") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		<-done
	})
	tb.Cleanup(stop)
	return stop
}

// User creates an ACL user with password pass and ACL SETUSER rules (e.g. "~other:*", "+@read").
func (s *Server) User(tb testing.TB, name, pass string, rules ...string) {
	tb.Helper()
	s.MustDo(tb, append([]string{"ACL", "SETUSER", name, "reset", "on", ">" + pass}, rules...)...)
}

// FailSaves makes Redis refuse writes with MISCONF, by removing its directory (no Restart after).
func (s *Server) FailSaves(tb testing.TB) {
	tb.Helper()
	s.MustDo(tb, "CONFIG", "SET", "save", "3600 1")
	s.MustDo(tb, "CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
	if err := os.RemoveAll(s.dir); err != nil {
		tb.Fatal(err)
	}
	s.MustDo(tb, "BGSAVE")
	s.await(tb, 10*time.Second, "rdb_last_bgsave_status:err", "INFO", "persistence")
}

// Cutter is a TCP proxy that can lose one reply (see Cut), as a network failure would.
type Cutter struct {
	Addr   string // where clients connect
	target string
	marker atomic.Pointer[[]byte] // lower case; nil when not armed
	cuts   atomic.Int64
}

// Cutter starts a Cutter in front of s, stopped at the end of the test.
func (s *Server) Cutter(tb testing.TB) *Cutter {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	p := &Cutter{Addr: ln.Addr().String(), target: s.Addr}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

// Cut arms p: the next request containing marker (any case) runs, and its connection closes unanswered.
func (p *Cutter) Cut(marker string) {
	m := bytes.ToLower([]byte(marker))
	p.marker.Store(&m)
}

// Cuts is how many connections p has cut.
func (p *Cutter) Cuts() int { return int(p.cuts.Load()) }

// take reports whether request is the one to cut, and disarms p if so.
func (p *Cutter) take(request []byte) bool {
	m := p.marker.Load()
	if m == nil || !bytes.Contains(bytes.ToLower(request), *m) || !p.marker.CompareAndSwap(m, nil) {
		return false
	}
	p.cuts.Add(1) // before the client can see its connection closed
	return true
}

// serve forwards one connection; go-redis sends no request before the last's replies.
func (p *Cutter) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	var cutting atomic.Bool
	answered := make(chan struct{})
	go func() { // Redis to the client
		defer client.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 && cutting.Load() {
				close(answered)
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil || err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		cut := n > 0 && p.take(buf[:n])
		cutting.Store(cut)
		if _, werr := server.Write(buf[:n]); werr != nil || err != nil {
			return
		}
		if cut {
			select {
			case <-answered:
			case <-time.After(5 * time.Second):
			}
			return
		}
	}
}
