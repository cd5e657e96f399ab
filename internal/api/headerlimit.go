package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/gen"
)

// MaxHeaderBytes bounds a request's line and header fields, each line with its CRLF, as Go
// parsed them (docs/security.md). http.Server.MaxHeaderBytes reads 4096 bytes past it before
// it refuses, in plain text; limitHeaders refuses what lies between as a JSON Error.
const MaxHeaderBytes = 16 << 10

var errHeaderTooLarge = &problem{http.StatusRequestHeaderFieldsTooLarge, gen.ErrorCodeHeaderTooLarge,
	fmt.Sprintf("the request line and header fields exceed %d bytes", MaxHeaderBytes)}

func limitHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if headerBytes(c.Request()) > MaxHeaderBytes {
			return errHeaderTooLarge
		}
		return next(c)
	}
}

// headerBytes is the size MaxHeaderBytes bounds; Go keeps Host and Transfer-Encoding apart.
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
