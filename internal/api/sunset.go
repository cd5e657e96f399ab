package api

import (
	"net/http"
	"strconv"
	"time"
)

// Sunset is the schedule of the deprecated pets operation.
type Sunset struct {
	DeprecatedAt time.Time
	SunsetAt     time.Time
	Link         string // migration notes

	headers sunsetHeaders
}

// sunsetHeaders are the values every answer of the operation carries, made once.
type sunsetHeaders struct {
	deprecation string // RFC 9745
	sunset      string // RFC 8594
	link        string
}

func (s *Sunset) prepare() {
	s.headers = sunsetHeaders{
		deprecation: "@" + strconv.FormatInt(s.DeprecatedAt.Unix(), 10),
		sunset:      s.SunsetAt.UTC().Format(http.TimeFormat),
		link:        "<" + s.Link + `>; rel="sunset"`,
	}
}

// Passed reports whether the operation is retired at now.
func (s *Sunset) Passed(now time.Time) bool { return !now.Before(s.SunsetAt) }
