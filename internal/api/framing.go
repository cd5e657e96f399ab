package api

import "net/http"

// closesConnection reports whether the connection must close once r is answered: when r's
// body came chunked. RFC 9112 §6.1: a server that receives both Transfer-Encoding and
// Content-Length must close the connection after answering, since a proxy in front may have
// framed the body by the other one (request smuggling). Go's server frames the body by
// Transfer-Encoding and removes Content-Length before any handler sees the request, so a
// request that came with both cannot be told from one with Transfer-Encoding alone: every
// request with a chunked body is answered with Connection: close, which Go's server honours
// by closing after the answer. No operation of the API takes a body, so a client that sends
// one chunked pays a reconnection for nothing it needed.
func closesConnection(r *http.Request) bool { return len(r.TransferEncoding) > 0 }
