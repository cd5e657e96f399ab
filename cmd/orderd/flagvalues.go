package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/orderd/internal/api"
)

// timeFlag is a flag.Value for an instant, written RFC 3339 or as a UTC date.
type timeFlag time.Time

// String and Set are called on the flags' own non-nil values: fs.Usage is ours, not PrintDefaults.
func (f *timeFlag) String() string {
	return time.Time(*f).UTC().Format(time.RFC3339)
}

func (f *timeFlag) Set(s string) error {
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			*f = timeFlag(t)
			return nil
		}
	}
	return fmt.Errorf("want RFC 3339 (2027-07-01T00:00:00Z) or a date (2027-07-01)")
}

// cidrsFlag is a flag.Value for a comma-separated list of CIDRs; a bare address is one host.
type cidrsFlag []*net.IPNet

func (f *cidrsFlag) String() string {
	parts := make([]string, len(*f))
	for i, n := range *f {
		parts[i] = n.String()
	}
	return strings.Join(parts, ",")
}

func (f *cidrsFlag) Set(s string) error {
	var out cidrsFlag
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			if ip := net.ParseIP(part); ip != nil && ip.To4() != nil {
				part += "/32"
			} else {
				part += "/128"
			}
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return fmt.Errorf("%q is not a CIDR or an address", part)
		}
		out = append(out, n)
	}
	*f = out
	return nil
}

// originsFlag is a flag.Value for a comma-separated list of exact origins (api.CheckOrigin).
type originsFlag []string

func (f *originsFlag) String() string { return strings.Join(*f, ",") }

func (f *originsFlag) Set(s string) error {
	var out originsFlag
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if err := api.CheckOrigin(part); err != nil {
			return err
		}
		out = append(out, part)
	}
	*f = out
	return nil
}

// durationsFlag is a flag.Value for a comma-separated list of durations: 5s,30s,2m.
type durationsFlag []time.Duration

func (f *durationsFlag) String() string {
	parts := make([]string, len(*f))
	for i, d := range *f {
		parts[i] = shortDuration(d)
	}
	return strings.Join(parts, ",")
}

func (f *durationsFlag) Set(s string) error {
	var out durationsFlag
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("%q is not a duration (5s, 2m, 1h)", part)
		}
		out = append(out, d)
	}
	*f = out
	return nil
}

// shortDuration writes d without its zero units: 2m, not 2m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// checkAddr checks host:port to listen on: an empty host is every interface, port 0 a free one.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port (127.0.0.1:8080, :8080), not %q", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q of %q is not a number from 0 to 65535", port, addr)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("host %q of %q is not a name or an IP address", host, addr)
	}
	return nil
}
