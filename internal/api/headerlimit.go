package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
)

// MaxHeaderBytes is the most that a request's line and header fields may take together,
// counted as the lines "METHOD target HTTP/1.1" and "Name: value", each with its CRLF. The
// server gives it to http.Server.MaxHeaderBytes, which reads 4096 bytes past it before it
// refuses a request itself (in plain text); limitHeaders refuses what lies between exactly,
// as a JSON Error.
//
// What is counted is the request as Go's server parsed it (the handler sees nothing else):
// its bytes on the wire, but for what Go changes before, which counts less:
//
//   - whitespace around a field's value (not part of the value: RFC 9110 §5.5), trimmed;
//   - a value folded onto a next line (obs-fold), joined with one space;
//   - a Content-Length repeated with the same value, kept once;
//   - a Content-Length sent beside Transfer-Encoding, removed (such a request's connection
//     is closed after it: see writeHeaders).
//
// Transfer-Encoding, which Go also takes out of the fields, is counted as the field it was.
// So only those bytes can take a request past MaxHeaderBytes unrefused, and never past
// http.Server's own bound, which counts the bytes as sent.
const MaxHeaderBytes = 16 << 10

// errHeaderTooLarge is the message of a 431.
var errHeaderTooLarge = &problem{http.StatusRequestHeaderFieldsTooLarge, gen.ErrorCodeHeaderTooLarge,
	fmt.Sprintf("the request line and header fields exceed %d bytes", MaxHeaderBytes)}

// limitHeaders answers 431 a request whose line and header fields exceed MaxHeaderBytes.
func limitHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if headerBytes(c.Request()) > MaxHeaderBytes {
			return errHeaderTooLarge
		}
		return next(c)
	}
}

// headerBytes is the size of the request line and header fields as MaxHeaderBytes counts
// them. Go keeps Host and Transfer-Encoding apart from the other fields; each is counted as
// the field it was.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for _, te := range r.TransferEncoding {
		n += len("Transfer-Encoding: ") + len(te) + 2
	}
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n
}
