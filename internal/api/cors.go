package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// CORS lets pages of the configured origins call the versions' bases (docs/design.md,
// "The HTTP pipeline's other rules"). Not echo's CORS middleware: it answers 204 to any OPTIONS, for refused
// origins and unknown paths too. No credentials mode: keys travel in Authorization.
const (
	corsAllowHeaders  = "Authorization, If-None-Match, Last-Event-ID, X-Request-Id, traceparent, tracestate"
	corsExposeHeaders = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, " +
		"Retry-After, ETag, Link, X-Request-Id, Orders-Event-Id, Deprecation, Sunset, WWW-Authenticate, Allow"
	corsMaxAge = "600" // seconds a browser may keep a preflight's answer
)

// origins are the exact origins allowed; none: CORS off, no header written.
type origins map[string]bool

func newOrigins(list []string) (origins, error) {
	o := origins{}
	for _, s := range list {
		if err := CheckOrigin(s); err != nil {
			return nil, fmt.Errorf("api: CORS origin: %w", err)
		}
		o[s] = true
	}
	return o, nil
}

// CheckOrigin accepts an origin as a browser sends it, any other would never match; not "*":
// with keys, each page allowed to call the API from a visitor's browser is a choice.
func CheckOrigin(s string) error {
	if s == "*" {
		return fmt.Errorf(`"*" is not accepted: the API is called with API keys, so name each origin allowed to call it`)
	}
	u, err := url.Parse(s)
	host, port := "", ""
	if err == nil {
		host, port = strings.ToLower(u.Hostname()), u.Port()
	}
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.String()
		if a.Is6() {
			host = "[" + host + "]"
		}
	} else if strings.Trim(host, "0123456789.") == "" {
		host = "" // an IPv4 address in a form the parse refuses ("127.1")
	}
	if n, err := strconv.Atoi(port); port != "" && (err != nil || n < 1 || n > 65535 ||
		map[string]int{"http": 80, "https": 443}[u.Scheme] == n) {
		host = ""
	} else if port != "" {
		host += ":" + strconv.Itoa(n)
	}
	if host == "" || (u.Scheme != "http" && u.Scheme != "https") || s != u.Scheme+"://"+host {
		return fmt.Errorf("%q is no origin as a browser sends it: want scheme://host[:port] in lower case, http or https, "+
			"no path, no default port, the port and an IP address in their shortest forms (https://shop.example)", s)
	}
	return nil
}

// allowed is the request's Origin when it is one of o, else "".
func (o origins) allowed(r *http.Request) string {
	if origin := r.Header.Get("Origin"); o[origin] {
		return origin
	}
	return ""
}

// preflight, before admit (a browser sends it without the key: it spends no quota), answers
// 204 a preflight from an allowed origin to a known route; any other OPTIONS goes on to conform.
func preflight(o origins) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.Method != http.MethodOptions || req.Header.Get("Access-Control-Request-Method") == "" ||
				o.allowed(req) == "" || !exchangeOf(req.Context()).base {
				return next(c)
			}
			methods := allowOf(c)
			if methods == "" || !matchesTemplate(c) || headerBytes(req) > MaxHeaderBytes {
				return next(c) // conform's 404, 405 or 431
			}
			h := c.Response().Header()
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			return c.NoContent(http.StatusNoContent)
		}
	}
}
