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

// sunsetHeaders are the header values every answer of the operation carries, made once;
// observe's header hook writes them, as the header map holds them.
type sunsetHeaders struct {
	deprecation [1]string // RFC 9745
	sunset      [1]string // RFC 8594
	link        [1]string
}

func (s *Sunset) prepare() {
	s.headers = sunsetHeaders{
		deprecation: [1]string{"@" + strconv.FormatInt(s.DeprecatedAt.Unix(), 10)},
		sunset:      [1]string{s.SunsetAt.UTC().Format(http.TimeFormat)},
		link:        [1]string{"<" + s.Link + `>; rel="sunset"`},
	}
}

// Passed reports whether the operation is retired at now.
func (s *Sunset) Passed(now time.Time) bool { return !now.Before(s.SunsetAt) }
