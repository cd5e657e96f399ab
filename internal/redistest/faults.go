package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// This file makes a running server refuse work the ways a real deployment can, each with
// the error reply Redis gives for it: read-only replicas, long scripts, memory limits, ACLs.

// Do sends one command to s on a connection of its own and returns the reply: a status or
// an integer as its text, a bulk string as its contents, an error reply as "-CODE message".
// Arrays are not read; Do is for setting faults up, not for reading data.
func (s *Server) Do(tb testing.TB, args ...string) string {
	tb.Helper()
	reply, err := do(s.Addr, 5*time.Second, args...)
	if err != nil {
		tb.Fatalf("redis %v: %v", args, err)
	}
	return reply
}

// MustDo is Do that fails the test on an error reply.
func (s *Server) MustDo(tb testing.TB, args ...string) string {
	tb.Helper()
	reply := s.Do(tb, args...)
	if strings.HasPrefix(reply, "-") {
		tb.Fatalf("redis %v: %s", args, reply)
	}
	return reply
}

func do(addr string, timeout time.Duration, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	return roundTrip(c, bufio.NewReader(c), args...)
}

func roundTrip(c net.Conn, r *bufio.Reader, args ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return line, nil
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("reply %q is not read by Do", line)
}

// StartReplica runs a redis-server that replicates primary, and waits until it has synced:
// writes to it are refused with READONLY, as those to an old primary after a failover are.
func StartReplica(tb testing.TB, primary *Server) *Server {
	tb.Helper()
	host, port, _ := net.SplitHostPort(primary.Addr)
	primary.MustDo(tb, "CONFIG", "SET", "repl-diskless-sync-delay", "0") // sync now, not in 5s
	s := start(tb, false, "--replicaof", host, port)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.Do(tb, "INFO", "replication"), "master_link_status:up") {
		if time.Now().After(deadline) {
			tb.Fatal("the replica did not sync with its primary")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// Busy runs a script that loops forever on a connection of its own, after lowering the
// threshold past which Redis answers everyone else BUSY, and returns once it does. The
// returned function (also run when the test ends) kills the script.
func (s *Server) Busy(tb testing.TB) (stop func()) {
	tb.Helper()
	s.MustDo(tb, "CONFIG", "SET", "busy-reply-threshold", "20")
	c, err := net.Dial("tcp", s.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		roundTrip(c, bufio.NewReader(c), "EVAL", "while true do end", "0")
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.HasPrefix(s.Do(tb, "PING"), "-BUSY") {
		if time.Now().After(deadline) {
			tb.Fatal("redis did not become busy")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		for range 100 {
			if r, err := do(s.Addr, time.Second, "SCRIPT", "KILL"); err == nil && !strings.HasPrefix(r, "-BUSY") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		<-done
	}
	tb.Cleanup(stop)
	return stop
}

// User creates an ACL user with password pass and the given rules (as ACL SETUSER takes
// them, e.g. "~other:*", "+@read"), for tests of a deployment whose user may not do what the
// service needs.
func (s *Server) User(tb testing.TB, name, pass string, rules ...string) {
	tb.Helper()
	s.MustDo(tb, append([]string{"ACL", "SETUSER", name, "reset", "on", ">" + pass}, rules...)...)
}

// FailSaves makes a snapshot fail, with a save schedule set, so that Redis refuses writes
// with MISCONF as it does when its disk fails. The server's directory is removed to that end:
// the server cannot be restarted afterwards.
func (s *Server) FailSaves(tb testing.TB) {
	tb.Helper()
	s.MustDo(tb, "CONFIG", "SET", "save", "3600 1")
	s.MustDo(tb, "CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
	if err := os.RemoveAll(s.dir); err != nil {
		tb.Fatal(err)
	}
	s.MustDo(tb, "BGSAVE")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.Do(tb, "INFO", "persistence"), "rdb_last_bgsave_status:err") {
		if time.Now().After(deadline) {
			tb.Fatal("the snapshot did not fail")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
