// Package redistest runs a real redis-server for tests, on a free loopback port, and stops it
// when the test ends. It never skips: a missing redis-server fails the test with how to get it.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Server is one redis-server process.
type Server struct {
	Addr    string
	bin     string
	dir     string
	persist bool
	cluster bool
	extra   []string // more arguments for redis-server
	cmd     *exec.Cmd
}

// Start runs a redis-server that persists nothing and is stopped at the end of the test.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return start(tb, false)
}

// StartPersistent runs a redis-server that writes every change to its append-only file
// before answering, so that a Restart loses nothing: for outage tests that must tell what the
// service lost from what Redis did.
func StartPersistent(tb testing.TB) *Server {
	tb.Helper()
	return start(tb, true)
}

func start(tb testing.TB, persist bool, extra ...string) *Server {
	tb.Helper()
	s, err := launch(tb.TempDir(), persist, extra...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Launch runs a redis-server that persists nothing, with its files in dir, for a program
// that is not a test (bench/pages); the caller stops it with Stop.
func Launch(dir string) (*Server, error) { return launch(dir, false) }

func launch(dir string, persist bool, extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not installed: run `make test` (it installs it), or `apt-get install redis-server`")
	}
	s := &Server{bin: bin, dir: dir, persist: persist, extra: extra}
	var lastErr error
	for range 5 { // a free port can be taken between finding it and binding it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("starting redis-server: %w", lastErr)
}

// URL is the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr }

func (s *Server) start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	aof := []string{"--appendonly", "no"}
	if s.persist {
		aof = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	if s.cluster {
		aof = append(aof, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
	}
	args := append([]string{"--bind", "127.0.0.1", "--port", port, "--save", "",
		"--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log")}, aof...)
	s.cmd = exec.Command(s.bin, append(args, s.extra...)...)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr) == nil {
			return nil
		}
		if s.cmd.ProcessState != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return fmt.Errorf("redis-server on %s did not answer: %s", s.Addr, lastLine(log))
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

// Pause freezes the server (SIGSTOP): connections stay open and nothing answers, the
// hardest outage for a client, which only its timeouts end.
func (s *Server) Pause(tb testing.TB) {
	tb.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatal(err)
	}
}

// Resume undoes Pause.
func (s *Server) Resume(tb testing.TB) {
	tb.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
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

var prefixes atomic.Int64

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Prefix returns a key prefix of its own for one store or limiter in a shared server, so
// that tests do not see each other's data.
func Prefix(tb testing.TB) string {
	name := unsafeChars.ReplaceAllString(tb.Name(), "_")
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return fmt.Sprintf("t%d_%s", prefixes.Add(1), name)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
