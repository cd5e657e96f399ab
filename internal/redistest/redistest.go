// Package redistest runs a real redis-server for a test; a missing one fails it (never skips).
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process.
type Server struct {
	Addr string
	dir  string
	args []string // redis-server's options beyond its port and files
	cmd  *exec.Cmd
}

// StartPersistent runs a redis-server that fsyncs every write first: a Restart loses nothing.
func StartPersistent(tb testing.TB) *Server {
	tb.Helper()
	return Start(tb, "--appendonly", "yes", "--appendfsync", "always")
}

// Start runs a redis-server with options args (persisting nothing unless they say) for the test.
func Start(tb testing.TB, args ...string) *Server {
	tb.Helper()
	s, err := Launch(tb.TempDir(), args...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Launch runs a redis-server persisting nothing (unless args say) in dir, for a non-test; see Stop.
func Launch(dir string, args ...string) (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("redis-server is not installed: run `make test` (it installs it), or `apt-get install redis-server`")
	}
	s := &Server{dir: dir, args: args}
	var err error
	for range 5 { // a free port can be taken between finding it and binding it
		l, lerr := net.Listen("tcp", "127.0.0.1:0")
		if lerr != nil {
			return nil, lerr
		}
		s.Addr = l.Addr().String()
		l.Close()
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("starting redis-server: %w", err)
}

// URL is the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr }

func (s *Server) start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	args := []string{"--bind", "127.0.0.1", "--port", port, "--save", "", "--dir", s.dir, "--logfile", s.log()}
	s.cmd = exec.Command("redis-server", append(args, s.args...)...)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if r, err := do(s.Addr, 500*time.Millisecond, "PING"); err == nil && r == "PONG" {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("redis-server on %s did not answer: %s", s.Addr, s.lastLog())
}

func (s *Server) log() string { return filepath.Join(s.dir, "redis.log") }

func (s *Server) lastLog() string {
	b, _ := os.ReadFile(s.log())
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// Stop kills the server, as an outage would. Data is lost: nothing is persisted.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGCONT) // a paused process must wake to die
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Pause freezes the server (SIGSTOP): connections stay open and nothing answers.
func (s *Server) Pause(tb testing.TB) { s.signal(tb, syscall.SIGSTOP) }

// Resume undoes Pause.
func (s *Server) Resume(tb testing.TB) { s.signal(tb, syscall.SIGCONT) }

func (s *Server) signal(tb testing.TB, sig os.Signal) {
	if err := s.cmd.Process.Signal(sig); err != nil {
		tb.Fatal(err)
	}
}

// Restart starts the server again on the same port.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Stop()
	var err error
	for range 50 { // the port may linger briefly
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("restarting redis-server: %v", err)
}

var (
	prefixes    atomic.Int64
	unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
)

// Prefix returns a key prefix of the test's own, for a shared server.
func Prefix(tb testing.TB) string {
	name := unsafeChars.ReplaceAllString(tb.Name(), "_")
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return fmt.Sprintf("t%d_%s", prefixes.Add(1), name)
}

// Cluster is a Redis Cluster of three primaries, stopped at the end of the test.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts three redis-servers and joins them with `redis-cli --cluster create`.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	c := &Cluster{}
	create := []string{"--cluster", "create", "--cluster-replicas", "0", "--cluster-yes"}
	for range 3 {
		s := Start(tb, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
		c.Nodes = append(c.Nodes, s)
		create = append(create, s.Addr)
	}
	if out, err := exec.Command("redis-cli", create...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v: %s", err, out)
	}
	for _, s := range c.Nodes {
		s.await(tb, 20*time.Second, "cluster_state:ok", "CLUSTER", "INFO")
	}
	return c
}

// URL is the redis+cluster:// URL that names every node.
func (c *Cluster) URL() string {
	var more []string
	for _, s := range c.Nodes[1:] {
		more = append(more, "addr="+s.Addr)
	}
	return "redis+cluster://" + c.Nodes[0].Addr + "?" + strings.Join(more, "&")
}

// Do sends one command on a connection of its own, to set faults up: the reply's text, or "-CODE message".
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

// await sends args to s until the reply contains want, for at most d.
func (s *Server) await(tb testing.TB, d time.Duration, want string, args ...string) {
	tb.Helper()
	for deadline := time.Now().Add(d); !strings.Contains(s.Do(tb, args...), want); {
		if time.Now().After(deadline) {
			tb.Fatalf("redis %v on %s: no %q within %v; log: %s", args, s.Addr, want, d, s.lastLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// do sends args on a bare connection (RESP2, nothing sent before).
func do(addr string, timeout time.Duration, args ...string) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	defer c.Close()
	cmd := make([]any, len(args))
	for i, a := range args {
		cmd[i] = a
	}
	reply, err := c.Do(context.Background(), cmd...).Result()
	var rerr redis.Error
	switch {
	case errors.As(err, &rerr):
		return "-" + rerr.Error(), nil
	case errors.Is(err, redis.Nil):
		return "", nil
	case err != nil:
		return "", err
	}
	return fmt.Sprint(reply), nil
}
