package redistest

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Cutter is a TCP proxy in front of a Server that can lose one reply: armed with Cut, it
// forwards the next request that contains a marker to Redis, waits for Redis to answer, drops
// the answer and closes the client's connection. The command ran; the client only learns
// that its connection broke, which is what a network failure between the two looks like.
// Every other byte is forwarded as it is.
type Cutter struct {
	Addr   string // where clients connect
	target string
	ln     net.Listener

	mu     sync.Mutex
	marker []byte            // lower case; nil when not armed
	open   map[net.Conn]bool // closed when the test ends
	cuts   atomic.Int64
}

// Cutter starts a Cutter in front of s, stopped at the end of the test.
func (s *Server) Cutter(tb testing.TB) *Cutter {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Cutter{Addr: ln.Addr().String(), target: s.Addr, ln: ln, open: map[net.Conn]bool{}}
	go p.accept()
	tb.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for c := range p.open {
			c.Close()
		}
	})
	return p
}

// Cut arms p: the next request whose bytes contain marker (in any case, e.g. "evalsha") runs
// in Redis and its client's connection is closed before the reply reaches it.
func (p *Cutter) Cut(marker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.marker = bytes.ToLower([]byte(marker))
}

// Cuts is how many connections p has cut.
func (p *Cutter) Cuts() int { return int(p.cuts.Load()) }

// take reports whether request is the one to cut, and disarms p if so.
func (p *Cutter) take(request []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.marker == nil || !bytes.Contains(bytes.ToLower(request), p.marker) {
		return false
	}
	p.marker = nil
	p.cuts.Add(1) // before the client can see its connection closed
	return true
}

func (p *Cutter) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.open[c] = true
		p.mu.Unlock()
		go func() {
			p.serve(c)
			p.mu.Lock()
			delete(p.open, c)
			p.mu.Unlock()
		}()
	}
}

// serve forwards one connection. Its clients (go-redis) send a request and wait for its
// replies before they send the next, so when a request is cut no other reply is owed.
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
			if n > 0 {
				if _, err := client.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 && p.take(buf[:n]) {
			cutting.Store(true)
			if _, err := server.Write(buf[:n]); err == nil {
				select {
				case <-answered:
				case <-time.After(5 * time.Second):
				}
			}
			return
		}
		if n > 0 {
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
