package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
)

// MaxHeaderBytes bounds a request's line and header fields, counted as the lines
// "METHOD target HTTP/1.1" and "Name: value", each with its CRLF. http.Server.MaxHeaderBytes
// reads 4096 bytes past it before it refuses a request (in plain text); limitHeaders refuses
// what lies between, exactly, as a JSON Error. It counts the request as Go parsed it, which is
// all a handler sees: trimmed whitespace around a value (RFC 9110 §5.5), a folded line's break
// and a repeated or overridden Content-Length are not counted; Transfer-Encoding is.
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

// headerBytes is the size MaxHeaderBytes bounds; Go keeps Host and Transfer-Encoding apart
// from the other fields, so each is counted as the field it was.
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
