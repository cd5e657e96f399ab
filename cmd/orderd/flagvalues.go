package main

import (
	"fmt"
	"net"
	"net/netip"
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

// listFlag is a flag.Value for a comma-separated list of items, each read by parse and
// written by format; empty items are skipped.
type listFlag[T any] struct {
	list   *[]T
	parse  func(string) (T, error)
	format func(T) string
}

func (f listFlag[T]) String() string {
	parts := make([]string, len(*f.list))
	for i, v := range *f.list {
		parts[i] = f.format(v)
	}
	return strings.Join(parts, ",")
}

func (f listFlag[T]) Set(s string) error {
	var out []T
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		v, err := f.parse(part)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	*f.list = out
	return nil
}

// cidrsFlag reads CIDRs; a bare address is one host.
func cidrsFlag(list *[]*net.IPNet) listFlag[*net.IPNet] {
	return listFlag[*net.IPNet]{list, func(part string) (*net.IPNet, error) {
		if a, err := netip.ParseAddr(part); err == nil {
			part = netip.PrefixFrom(a, a.BitLen()).String()
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR or an address", part)
		}
		return n, nil
	}, (*net.IPNet).String}
}

// originsFlag reads exact origins (api.CheckOrigin).
func originsFlag(list *[]string) listFlag[string] {
	return listFlag[string]{list, func(s string) (string, error) { return s, api.CheckOrigin(s) }, strings.Clone}
}

// durationsFlag reads durations: 5s,30s,2m.
func durationsFlag(list *[]time.Duration) listFlag[time.Duration] {
	return listFlag[time.Duration]{list, func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (5s, 2m, 1h)", s)
		}
		return d, nil
	}, shortDuration}
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
