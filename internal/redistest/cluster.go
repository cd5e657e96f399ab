package redistest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of three primaries on loopback ports, stopped at the end of the
// test.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts three cluster-enabled redis-servers and joins them, with every slot
// assigned, the way `redis-cli --cluster create` does it.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatal("redis-server is not installed: run `make test` (it installs it), or `apt-get install redis-server`")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		tb.Fatal("redis-cli is not installed (it comes with redis-server)")
	}
	c := &Cluster{}
	var addrs []string
	for range 3 {
		s := &Server{bin: bin, dir: tb.TempDir(), cluster: true}
		var startErr error
		for range 5 {
			port, err := freePort()
			if err != nil {
				tb.Fatal(err)
			}
			s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			if startErr = s.start(); startErr == nil {
				break
			}
		}
		if startErr != nil {
			tb.Fatalf("starting a cluster node: %v", startErr)
		}
		tb.Cleanup(s.Stop)
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr)
	}
	out, err := exec.Command(cli, append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redis-cli --cluster create: %v: %s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range c.Nodes {
		for {
			info, _ := exec.Command(cli, "-h", "127.0.0.1", "-p", port(s.Addr), "cluster", "info").Output()
			if strings.Contains(string(info), "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
				tb.Fatalf("cluster not ok on %s: %s", s.Addr, lastLine(log))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// URL is the redis+cluster:// URL that names every node.
func (c *Cluster) URL() string {
	u := "redis+cluster://" + c.Nodes[0].Addr
	for i, s := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + s.Addr
	}
	return u
}

// Addrs are the nodes' addresses.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		out[i] = s.Addr
	}
	return out
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
