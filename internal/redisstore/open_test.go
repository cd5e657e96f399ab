package redisstore

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestOpen(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string
	}{
		{"redis://127.0.0.1:6379/0", "*redis.Client"},
		{"rediss://user:pw@redis.example:6380", "*redis.Client"},
		{"redis://127.0.0.1:26379?master_name=main&addr=127.0.0.1:26380", "*redis.Client"}, // a failover client is a *redis.Client
		{"redis+cluster://127.0.0.1:7000?addr=127.0.0.1:7001", "*redis.ClusterClient"},
	} {
		c, err := Open(tc.url, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if got := typeName(c); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.url, got, tc.want)
		}
		c.Close()
	}
	for _, bad := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:6379?bogus=1", "::", "redis://127.0.0.1:6379?max_retries=3",
		"redis+cluster://127.0.0.1:6379?read_only=true", "redis+cluster://127.0.0.1:6379?route_by_latency=true",
		"redis+cluster://127.0.0.1:6379?route_randomly=true", "redis://127.0.0.1:6379?master_name=m&replica_only=true"} {
		if _, err := Open(bad, 0); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	c, _ := Open("redis://127.0.0.1:6379?read_timeout=7s", 2*time.Second)
	o := c.(*redis.Client).Options()
	if o.ReadTimeout != 7*time.Second || o.WriteTimeout != 2*time.Second {
		t.Errorf("timeouts: read %v write %v", o.ReadTimeout, o.WriteTimeout)
	}
	if o.MaxRetries != 0 { // -1 before go-redis reads it: no retry
		t.Errorf("MaxRetries %d; want none", o.MaxRetries)
	}
}

func typeName(c redis.UniversalClient) string {
	switch c.(type) {
	case *redis.ClusterClient:
		return "*redis.ClusterClient"
	case *redis.Client:
		return "*redis.Client"
	}
	return "?"
}
